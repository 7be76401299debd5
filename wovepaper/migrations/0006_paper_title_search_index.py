"""A GIN index on each paper's title search vector, for broad searches.

A search matching more papers than it may read (wovepaper.search.SEARCH_SAMPLE)
lists the papers whose title matches first; this index finds them without reading
the other matches. The expression is repeated verbatim by
``wovepaper.search.TitleVector`` (PostgreSQL uses an expression index only for the
same expression); ``wovepaper_fold`` is migration 0004's. SQLite (the embedded
demo) has no text search and gets nothing.
"""

from django.db import migrations

INDEX = "wovepaper_paper_title_tsv_gin"


def title_index_create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON wovepaper_paper USING gin "
            "((to_tsvector('english'::regconfig, "
            "wovepaper_fold(left(title, 100000)))))"
        )


def title_index_drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("wovepaper", "0005_paper_search_vector_fill"),
    ]

    operations = [
        migrations.RunPython(title_index_create, title_index_drop, elidable=False),
    ]
