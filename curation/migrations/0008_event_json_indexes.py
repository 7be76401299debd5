"""GIN indexes on the curation event log's JSON, on PostgreSQL.

Four reads search ``curation_curationevent`` by researcher id inside its JSON:
a researcher's History (``researchers @> '[id]'``), a researcher page's split
events and a retired profile's former papers (``moves @> '[{"before": id}]'``),
and the merges a split reads (``fields ?| ids``). Without an index each is a
scan of the whole log, which grows with every curation decision;
``bench/event_log.py`` measures both ways. ``researchers`` and ``moves`` take
``jsonb_path_ops`` (smaller, and serves ``@>``); ``fields`` is searched by
top-level key (``?|``), which only the default ``jsonb_ops`` serves (PostgreSQL
docs, 8.14.4 "jsonb Indexing").

The indexes are built ``CONCURRENTLY`` (the migration is not atomic), so a
production log keeps taking events while they build; an index a failed build
left invalid is dropped and built again. SQLite (the embedded demo) has no
GIN and its log is small: the operations are skipped there.
"""

from django.db import migrations

INDEXES = {
    "curation_event_researchers_gin": "researchers jsonb_path_ops",
    "curation_event_moves_gin": "moves jsonb_path_ops",
    "curation_event_fields_gin": "fields",
}


def create_indexes(cursor, *, concurrently: bool = True) -> None:
    """Build each index that is missing or invalid (``cursor``: PostgreSQL)."""
    how = "CONCURRENTLY " if concurrently else ""
    for name, column in INDEXES.items():
        cursor.execute(
            "SELECT i.indisvalid FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
            [name],
        )
        row = cursor.fetchone()
        if row is not None and row[0]:
            continue
        if row is not None:
            cursor.execute(f"DROP INDEX {how}IF EXISTS {name}")
        cursor.execute(
            f"CREATE INDEX {how}{name} ON curation_curationevent USING gin ({column})"
        )


def drop_indexes(cursor, *, concurrently: bool = True) -> None:
    """Drop the indexes (``cursor``: PostgreSQL)."""
    how = "CONCURRENTLY " if concurrently else ""
    for name in INDEXES:
        cursor.execute(f"DROP INDEX {how}IF EXISTS {name}")


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        create_indexes(cursor)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        drop_indexes(cursor)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("curation", "0007_matcher_json_decoder"),
    ]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
