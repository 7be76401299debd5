"""Semantic search, hybrid search and similar papers, over paper embeddings.

Each paper's title and abstract is embedded with the local MiniLM model
(:mod:`wovepaper.embeddings`) into ``PaperEmbedding.vector``. On PostgreSQL the
vectors live in a pgvector ``vector(384)`` column with an HNSW index (cosine),
searched approximately with ``hnsw.ef_search`` = ``settings.SEMANTIC_EF_SEARCH``
and pgvector 0.8's iterative index scan, so a filter that removes most
neighbours still fills the page (pgvector README, "Iterative Index Scans"); both
are set once per connection (``settings.DATABASES``). On SQLite (the embedded
demo) every visible paper's vector is read and ranked exactly with numpy.

Hybrid search fuses the keyword ranking (:mod:`wovepaper.search`) with the
semantic one by reciprocal rank fusion (:func:`rank_fusion`).

The same vectors give the matching engine its title and abstract evidence
(:func:`paper_vectors`; the feature is
``curation.matching.features.title_similarity``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import date

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import QuerySet

from wovepaper.embeddings import DIMENSIONS, embed, model_name, paper_text, text_digest
from wovepaper.models import Paper, PaperEmbedding
from wovepaper.selectors import in_category

logger = logging.getLogger(__name__)

# Papers a semantic search lists: the nearest this many. Past a hundred, the
# nearest papers of a short query are seldom about it.
SEMANTIC_LIMIT = 100
# Reciprocal rank fusion's constant (Cormack, Clarke and Buettcher, "Reciprocal
# rank fusion outperforms Condorcet and individual rank learning methods", SIGIR
# 2009: k = 60, chosen there on TREC runs and used unchanged since).
RRF_K = 60
# Papers a refresh reads and embeds per transaction.
REFRESH_CHUNK = 256
# How long a query's vector is reused (seconds): embedding a short query takes a
# few milliseconds of both cores, and readers repeat searches and page through.
QUERY_VECTOR_SECONDS = 24 * 3600

# The least cosine similarity a search by meaning lists: below it a paper is not
# about the text. Measured on the bundled records (all-MiniLM-L6-v2): the best
# match of a text about nothing ("asdfqwerzxcv", "the", "???", an unknown arXiv
# id, German words) scored 0.18 to 0.26, the tenth of a topical query
# ("graphene", "spin qubits", "expansion of the universe accelerating") 0.32 to
# 0.57. Similar papers are listed without it (a paper is always about itself).
MIN_SIMILARITY = 0.3

MODES = ("hybrid", "keyword", "semantic")
DEFAULT_MODE = "hybrid"
BAD_MODE = "The search mode must be hybrid, keyword or semantic."


def default_mode() -> str:
    """The search mode asked when none is (``settings.SEARCH_DEFAULT_MODE``,
    hybrid unless an operator chose otherwise; an unknown value is hybrid).

    Hybrid costs a query embedding and a vector search on top of the keyword
    search: on two cores, 100 never-seen searches a second saturate the
    machine in hybrid mode and not in keyword mode (bench/pages.py).
    """
    mode = str(getattr(settings, "SEARCH_DEFAULT_MODE", DEFAULT_MODE)).lower()
    return mode if mode in MODES else DEFAULT_MODE


def embeddings_refresh(
    *,
    papers: QuerySet[Paper] | None = None,
    chunk: int | None = None,
    progress: Callable[[int], None] | None = None,
    most: int | None = None,
) -> dict[str, int]:
    """Embed the papers whose title or abstract changed since their last embedding.

    Idempotent: a paper whose text (and the model) is what its stored vector was
    computed from (:func:`wovepaper.embeddings.text_digest`) is not embedded
    again, so a second run embeds nothing. Each chunk is its own transaction,
    so an interrupted backfill keeps what it wrote and carries on.

    Args:
        papers: the papers to consider (any filter; hidden ones included, as
            search hides them itself); None for every paper.
        chunk: papers read and embedded per transaction (at least 1; None:
            :data:`REFRESH_CHUNK`).
        progress: called with the number of papers considered in each chunk.
        most: stop after the chunk in which this many papers were embedded
            (a task's share of a large harvest; None: no bound).

    Returns:
        ``{"papers": considered, "embedded": new or changed, "unchanged": n,
        "more": 1 when it stopped at ``most`` with papers left, else 0}``.

    Raises:
        ImproperlyConfigured: the embedding model is missing
            (:func:`wovepaper.embeddings.encoder`).
    """
    papers = Paper.objects.all() if papers is None else papers
    ids = list(papers.order_by("pk").values_list("pk", flat=True))
    counts = {"papers": 0, "embedded": 0, "unchanged": 0, "more": 0}
    if most is not None:
        most = max(1, int(most))  # a share of nothing would queue itself forever
    step = max(1, chunk or REFRESH_CHUNK)
    for start in range(0, len(ids), step):
        if most is not None and counts["embedded"] >= most:
            counts["more"] = 1
            break
        batch = ids[start : start + step]
        counts = _refresh_chunk(batch, counts)
        if progress:
            progress(len(batch))
    return counts


def _refresh_chunk(ids: list[int], counts: dict[str, int]) -> dict[str, int]:
    """Embed what changed among papers ``ids``; returns the counts updated."""
    rows = Paper.objects.filter(pk__in=ids).values_list("pk", "title", "abstract")
    texts = {pk: paper_text(title, abstract) for pk, title, abstract in rows}
    stored = dict(
        PaperEmbedding.objects.filter(paper_id__in=ids).values_list(
            "paper_id", "text_sha256"
        )
    )
    digests = {pk: text_digest(text) for pk, text in texts.items()}
    stale = [pk for pk in texts if stored.get(pk) != digests[pk]]
    counts = dict(counts)
    counts["papers"] += len(texts)
    counts["unchanged"] += len(texts) - len(stale)
    if not stale:
        return counts
    vectors = dict(zip(stale, embed([texts[pk] for pk in stale]), strict=True))
    with transaction.atomic():
        # What the papers hold now, locked until the rows are written: a paper
        # whose text changed while the model ran (a harvest, a curator's edit)
        # is left to the task that change queued, and a paper deleted meanwhile
        # is skipped, rather than an older vector written over a newer one or
        # the chunk failing on its foreign key.
        now = {
            pk: text_digest(paper_text(title, abstract))
            for pk, title, abstract in Paper.objects.select_for_update()
            .filter(pk__in=stale)
            .values_list("pk", "title", "abstract")
        }
        current = [pk for pk in stale if now.get(pk) == digests[pk]]
        PaperEmbedding.objects.bulk_create(
            [
                PaperEmbedding(
                    paper_id=pk,
                    vector=vectors[pk],
                    model=model_name(),
                    text_sha256=digests[pk],
                )
                for pk in current
            ],
            update_conflicts=True,
            unique_fields=["paper"],
            update_fields=["vector", "model", "text_sha256", "embedded_at"],
        )
    counts["embedded"] += len(current)
    return counts


def query_vector(text: str) -> np.ndarray:
    """The embedding of a search text, cached for :data:`QUERY_VECTOR_SECONDS`.

    Args:
        text: the cleaned search text.

    Returns:
        float32 ``(384,)``, unit length.
    """
    key = (
        "query-vector:v1:"
        + hashlib.sha256(f"{model_name()}\x1f{text}".encode()).hexdigest()
    )
    cached = cache.get(key)
    if cached is not None:
        return np.frombuffer(cached, dtype="<f4").copy()
    vector = embed([text])[0]
    cache.set(key, vector.astype("<f4").tobytes(), QUERY_VECTOR_SECONDS)
    return vector


def nearest(
    *,
    vector: np.ndarray | None = None,
    of_paper: int | None = None,
    limit: int = SEMANTIC_LIMIT,
    category: str | None = None,
    year: int | None = None,
    exclude: int | None = None,
    floor: float = -1.0,
) -> list[tuple[int, float]]:
    """The visible papers whose embedding is nearest a vector, nearest first.

    Args:
        vector: a unit float32 ``(384,)`` (a query's), or None with ``of_paper``.
        of_paper: search near this paper's stored embedding instead (read by
            the same statement); nothing is found when it has none.
        limit: most papers returned (at least 1).
        category: keep papers carrying this arXiv category (primary or
            cross-list, :func:`wovepaper.selectors.in_category`); None for all.
        year: keep papers first published this year; None for all.
        exclude: a paper id left out (the paper whose neighbours are asked).
        floor: leave out papers less similar than this (a search's
            :data:`MIN_SIMILARITY`); -1 keeps every one.

    Returns:
        At most ``limit`` ``(paper id, cosine similarity in [-1, 1])``, most
        similar first, ties by id. Papers not yet embedded are absent.
    """
    return [
        (pk, similarity)
        for pk, similarity, _ in nearest_rows(
            vector=vector,
            of_paper=of_paper,
            limit=limit,
            category=category,
            year=year,
            exclude=exclude,
            floor=floor,
        )
    ]


def nearest_rows(
    *,
    vector: np.ndarray | None,
    of_paper: int | None = None,
    limit: int = SEMANTIC_LIMIT,
    category: str | None = None,
    year: int | None = None,
    exclude: int | None = None,
    floor: float = -1.0,
) -> list[tuple[int, float, str]]:
    """:func:`nearest` with each paper's primary category (for the facets).

    On PostgreSQL one statement: the HNSW index scan (``hnsw.ef_search`` and the
    iterative scan are set for the session by the connection's options,
    ``settings.DATABASES``), joined to the visible papers. It is approximate
    (``bench/semantic.py`` reports its recall against the exact order). On
    SQLite an exact scan (:func:`_nearest_exact`).
    """
    limit = max(1, int(limit))
    if connection.vendor != "postgresql":
        papers = Paper.objects.filter(hidden=False, embedding__model=model_name())
        if category:
            papers = papers.filter(in_category(category))
        if year is not None:
            papers = papers.filter(published__year=year)
        if exclude is not None:
            papers = papers.exclude(pk=exclude)
        if vector is None:
            vector = paper_vectors([of_paper]).get(of_paper)
            if vector is None:
                return []
        ranked = _nearest_exact(papers, vector, limit)
        primaries = dict(
            Paper.objects.filter(pk__in=[pk for pk, _ in ranked]).values_list(
                "pk", "primary_category"
            )
        )
        return [(pk, sim, primaries.get(pk, "")) for pk, sim in ranked if sim >= floor]
    if vector is not None:
        target, params = "%s::vector", [_vector_text(vector)]
    else:
        target = (
            "(SELECT vector FROM wovepaper_paperembedding "
            "WHERE paper_id = %s AND model = %s)"
        )
        params = [int(of_paper), model_name()]
    where, where_params = ["NOT p.hidden", "e.model = %s"], [model_name()]
    if category:
        where.append("p.categories @> %s::jsonb")
        where_params.append(json.dumps([category]))
    if year is not None:
        where.append("p.published BETWEEN %s AND %s")
        where_params += [date(year, 1, 1), date(year, 12, 31)]
    if exclude is not None:
        where.append("e.paper_id <> %s")
        where_params.append(int(exclude))
    sql = (
        f"SELECT e.paper_id, e.vector <=> {target} AS distance, p.primary_category "  # noqa: S608
        "FROM wovepaper_paperembedding e "
        "JOIN wovepaper_paper p ON p.id = e.paper_id "
        f"WHERE {' AND '.join(where)} ORDER BY distance LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *where_params, limit])
        rows = cursor.fetchall()
    # The iterative scan (relaxed_order) may return neighbours slightly out of
    # order; a paper without a vector gives NULL distances, dropped.
    return sorted(
        (
            (pk, 1.0 - d, primary)
            for pk, d, primary in rows
            if d is not None and 1.0 - d >= floor
        ),
        key=lambda r: (-r[1], r[0]),
    )


def _vector_text(vector: np.ndarray) -> str:
    """pgvector's text form of a vector: ``[x1,x2,...]`` (repr of each float32,
    which reads back exactly)."""
    return (
        "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"
    )


def _nearest_exact(
    papers: QuerySet[Paper], vector: np.ndarray, limit: int
) -> list[tuple[int, float]]:
    """:func:`nearest` by reading every candidate's vector (SQLite, tests)."""
    rows = list(papers.values_list("pk", "embedding__vector"))
    if not rows:
        return []
    ids = np.array([pk for pk, _ in rows])
    matrix = np.stack([_as_vector(v) for _, v in rows])
    scores = matrix @ np.asarray(vector, dtype=np.float32)
    top = np.argsort(-scores, kind="stable")[:limit]
    return sorted(
        ((int(ids[i]), float(scores[i])) for i in top), key=lambda r: (-r[1], r[0])
    )


def paper_similar(*, paper: Paper, limit: int = 10) -> list[tuple[int, float]]:
    """Visible papers nearest to a paper's own embedding, leaving the paper out.

    Args:
        paper: any paper.
        limit: most papers returned.

    Returns:
        ``(paper id, cosine similarity)``, most similar first; empty when the
        paper has no embedding yet. One statement on PostgreSQL.
    """
    return nearest(of_paper=paper.pk, limit=limit, exclude=paper.pk)


# Papers a query of paper_vectors asks for at most.
VECTORS_CHUNK = 5000


def paper_vectors(paper_ids: Iterable[int]) -> dict[int, np.ndarray]:
    """The stored embeddings of some papers (for the matching engine and pages).

    Args:
        paper_ids: paper ids (repeats and unknown ids allowed).

    Returns:
        ``{paper id: float32 (384,) unit vector}`` for those embedded by the
        model as it now runs (:func:`wovepaper.embeddings.model_name`); a
        vector of another name (made before a change of settings, until
        ``embed_papers`` has run) or of the wrong shape is left out.
    """
    ids = sorted({int(pk) for pk in paper_ids})
    out: dict[int, np.ndarray] = {}
    name = model_name()
    # In chunks: a matching run asks for a whole corpus's papers, past
    # SQLite's bound on the parameters of one statement.
    for start in range(0, len(ids), VECTORS_CHUNK):
        rows = PaperEmbedding.objects.filter(
            paper_id__in=ids[start : start + VECTORS_CHUNK], model=name
        ).values_list("paper_id", "vector")
        for pk, raw in rows:
            vector = _as_vector(raw)
            if vector.shape == (DIMENSIONS,) and np.isfinite(vector).all():
                out[pk] = vector
            else:  # a row damaged by hand: no evidence, and said
                logger.warning(
                    "paper %s: stored embedding of shape %s passed over",
                    pk,
                    vector.shape,
                )
    return out


def _as_vector(raw) -> np.ndarray:
    """A stored vector as float32 (the field converts; raw bytes are read too)."""
    if isinstance(raw, bytes | memoryview):
        return np.frombuffer(raw, dtype="<f4").copy()
    return np.asarray(raw, dtype=np.float32)


def rank_fusion(rankings: Sequence[Sequence[int]], *, k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion of rankings: score(d) = sum of 1 / (k + rank of d).

    Source: Cormack, Clarke and Buettcher, SIGIR 2009 (ranks are 1-based).

    Args:
        rankings: lists of ids, each best first (an id absent from a list adds
            nothing from it).
        k: the fusion constant (:data:`RRF_K`).

    Returns:
        Every id of any ranking, best fused score first; ties keep the earlier
        ranking's order, then the first appearance.
    """
    scores: dict[int, float] = {}
    first: dict[int, tuple[int, int]] = {}
    for which, ranking in enumerate(rankings):
        for rank, pk in enumerate(ranking, start=1):
            scores[pk] = scores.get(pk, 0.0) + 1.0 / (k + rank)
            first.setdefault(pk, (which, rank))
    return sorted(scores, key=lambda pk: (-scores[pk], first[pk]))


# Similar papers a paper page lists.
SIMILAR_ON_PAGE = 5
# What a listed similar paper shows (its link, title, date and category): not
# the abstract, a row's largest part.
LISTED_FIELDS = (
    "pk",
    "arxiv_id",
    "doi",
    "slug",
    "title",
    "published",
    "published_precision",
    "primary_category",
)


def similar_papers(*, paper: Paper, limit: int = SIMILAR_ON_PAGE) -> list[Paper]:
    """The visible papers most similar to a paper, as Paper rows, nearest first.

    Args:
        paper: any paper.
        limit: most papers returned.

    Returns:
        Papers (title, ids, dates and categories loaded; no abstract), each with
        ``similarity``, the cosine similarity in [-1, 1]; empty when the paper
        is not embedded yet.
    """
    ranked = paper_similar(paper=paper, limit=limit)
    rows = Paper.objects.only(*LISTED_FIELDS).in_bulk([pk for pk, _ in ranked])
    out = []
    for pk, similarity in ranked:
        if pk in rows:
            rows[pk].similarity = similarity
            out.append(rows[pk])
    return out
