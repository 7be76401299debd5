"""PostgreSQL only: a GIN index of ``Paper.categories`` for JSON containment.

A category page and a search's category filter ask ``categories @> '["hep-th"]'``;
without an index that reads every paper (a count of one category's papers took
about 100 ms on bench/pages.py's 100,000). ``jsonb_path_ops`` indexes exactly
the containment operator and is the smaller GIN opclass (PostgreSQL docs, 8.14.4
"jsonb Indexing"). Built CONCURRENTLY so a live site keeps writing papers
meanwhile, hence a non-atomic migration. SQLite (the embedded demo) has no GIN
and skips it.
"""

from django.db import migrations

INDEX = "wovepaper_paper_categories_gin"


def index_create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} "
        "ON wovepaper_paper USING gin (categories jsonb_path_ops)"
    )


def index_drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("wovepaper", "0026_paper_fts5_sqlite"),
    ]

    operations = [migrations.RunPython(index_create, index_drop)]
