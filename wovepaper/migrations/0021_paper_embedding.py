"""Paper embeddings for semantic search (issue 51): ``wovepaper_paperembedding``.

On PostgreSQL this needs the pgvector extension (``CREATE EXTENSION vector``); its
``vector(384)`` column gets an HNSW index with the cosine operator class
(pgvector README, "HNSW"; m=16 and ef_construction=64 are its defaults). When
the server lacks the extension, the migration stops with a message that says how
to build it from ``shared/vendor`` (``.ci/run`` does that). On SQLite (the
embedded demo) the column is a BLOB and search is an exact numpy scan, so the
extension and the index are skipped.
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.utils import NotSupportedError, OperationalError, ProgrammingError

import wovepaper.models.embedding

INDEX = "wovepaper_paperembedding_vector_hnsw"
NO_PGVECTOR = (
    "PostgreSQL lacks the pgvector extension, which semantic search needs. Build it "
    "from shared/vendor (as root): apt-get install -y postgresql-server-dev-15 "
    "build-essential && tar xzf shared/vendor/pgvector-0.8.6.tar.gz -C /tmp && "
    "make -C /tmp/pgvector-0.8.6 && make -C /tmp/pgvector-0.8.6 install; then "
    "migrate again. ({error})"
)


def vector_extension_create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    try:
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except (NotSupportedError, OperationalError, ProgrammingError) as exc:
        raise RuntimeError(NO_PGVECTOR.format(error=str(exc).strip())) from exc


def vector_index_create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON wovepaper_paperembedding "
            "USING hnsw (vector vector_cosine_ops)"
        )


def vector_index_drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {INDEX}")
    # The extension stays: other objects may have come to use it.


class Migration(migrations.Migration):
    dependencies = [
        ("wovepaper", "0020_researcher_summary_checked"),
    ]

    operations = [
        migrations.RunPython(vector_extension_create, migrations.RunPython.noop),
        migrations.CreateModel(
            name="PaperEmbedding",
            fields=[
                (
                    "paper",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="embedding",
                        serialize=False,
                        to="wovepaper.paper",
                    ),
                ),
                (
                    "vector",
                    wovepaper.models.embedding.EmbeddingField(dimensions=384),
                ),
                ("model", models.CharField(max_length=60)),
                ("text_sha256", models.CharField(max_length=64)),
                ("embedded_at", models.DateTimeField(auto_now=True)),
            ],
            options={"verbose_name": "paper embedding"},
        ),
        migrations.RunPython(vector_index_create, vector_index_drop),
    ]
