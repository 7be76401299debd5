"""Full-text and name search: a stored search document on Paper and its indexes.

On PostgreSQL this adds the ``pg_trgm`` and ``unaccent`` extensions, an immutable
``wovepaper_fold(text)`` (accent folding usable in an index), a GIN index on
``wovepaper_paper.search_vector`` (kept in the row: storage MAIN) and a GIN
trigram index on the folded researcher names (display name and variants). SQLite (the embedded demo) gets the column only,
always empty: search there falls back to substring matching, and the PostgreSQL
operations are skipped rather than failing. Filling the column for existing papers
is the next (data) migration.
"""

import django.contrib.postgres.search
from django.db import migrations

# Both expressions are repeated verbatim by the search queries (wovepaper/search.py):
# PostgreSQL uses an expression index only for the same expression.
PAPER_INDEX = "wovepaper_paper_search_vector_gin"
NAME_INDEX = "wovepaper_researcher_names_trgm"


def _schema_of(cursor, extension):
    cursor.execute(
        "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = %s",
        [extension],
    )
    return cursor.fetchone()[0]


def search_support_create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        cursor.execute("CREATE EXTENSION IF NOT EXISTS unaccent")
        # unaccent() is only STABLE (its dictionary could change), so an index
        # cannot use it directly; naming the dictionary and the schema makes the
        # result depend on the argument alone (the usual recipe, PostgreSQL docs F.48).
        schema = _schema_of(cursor, "unaccent")
        cursor.execute(
            "CREATE OR REPLACE FUNCTION wovepaper_fold(text) RETURNS text "
            "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS "
            f"$$ SELECT {schema}.unaccent('{schema}.unaccent'::regdictionary, $1) $$"
        )
        # Keep the vector in the row, uncompressed where it fits: ranking reads the
        # vector of every match, and fetching it from the TOAST table (or
        # decompressing it) was most of a broad query's time; the abstract, read
        # only for display, moves out of line instead (bench/search.py).
        cursor.execute(
            "ALTER TABLE wovepaper_paper ALTER COLUMN search_vector SET STORAGE MAIN"
        )
        trgm = _schema_of(cursor, "pg_trgm")
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {PAPER_INDEX} "
            "ON wovepaper_paper USING gin (search_vector)"
        )
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {NAME_INDEX} ON wovepaper_researcher "
            "USING gin ((wovepaper_fold(display_name || ' ' || name_variants::text)) "
            f"{trgm}.gin_trgm_ops)"
        )


def search_support_drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {NAME_INDEX}")
        cursor.execute(f"DROP INDEX IF EXISTS {PAPER_INDEX}")
        cursor.execute("DROP FUNCTION IF EXISTS wovepaper_fold(text)")
        # The column goes with the AddField's reverse, and its storage with it.
        # The extensions stay: other databases objects may have come to use them.


class Migration(migrations.Migration):
    dependencies = [
        ("wovepaper", "0003_category_follow_digest_delivery"),
    ]

    operations = [
        migrations.AddField(
            model_name="paper",
            name="search_vector",
            field=django.contrib.postgres.search.SearchVectorField(
                editable=False,
                help_text="Full-text search document (PostgreSQL only): title, "
                "authors, abstract; kept by wovepaper.search.search_vectors_refresh.",
                null=True,
            ),
        ),
        migrations.RunPython(search_support_create, search_support_drop),
    ]
