"""A paper's sentence embedding, for semantic search and similar papers."""

from __future__ import annotations

import numpy as np
from django.db import models
from pgvector.django import VectorField

from wovepaper.embeddings import DIMENSIONS

from .paper import Paper


class EmbeddingField(VectorField):
    """A float32 vector: pgvector's ``vector(n)`` on PostgreSQL, a BLOB on SQLite.

    On PostgreSQL the value goes through pgvector's own adapter (text form
    ``[x1,x2,...]``) and an HNSW index searches it; on SQLite (the embedded demo,
    no extension) it is ``n`` little-endian float32 values and
    :mod:`wovepaper.semantic` searches exactly with numpy. Python sees a float32
    numpy array of shape ``(n,)`` either way.
    """

    def db_type(self, connection) -> str:
        if connection.vendor == "postgresql":
            return super().db_type(connection)
        return "blob"

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        if connection.vendor == "postgresql":
            return np.asarray(super().from_db_value(value, expression, connection))
        return np.frombuffer(value, dtype="<f4").copy()

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None:
            return None
        if connection.vendor == "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        vector = np.asarray(value, dtype="<f4")
        if vector.shape != (self.dimensions,):
            raise ValueError(
                f"an embedding must hold {self.dimensions} numbers, not {vector.shape}"
            )
        return vector.tobytes()


class PaperEmbedding(models.Model):
    """The embedding of one paper's title and abstract (one row a paper).

    Written by :func:`wovepaper.semantic.embeddings_refresh`; ``text_sha256``
    names the text and model it was computed from
    (:func:`wovepaper.embeddings.text_digest`), so a paper whose text did not
    change is not embedded again.
    """

    paper = models.OneToOneField(
        Paper, on_delete=models.CASCADE, primary_key=True, related_name="embedding"
    )
    vector = EmbeddingField(dimensions=DIMENSIONS)
    model = models.CharField(max_length=60)
    text_sha256 = models.CharField(max_length=64)
    embedded_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "paper embedding"

    def __str__(self) -> str:
        return f"{self.model} embedding of paper {self.paper_id}"
