"""``wovepaper_paper_rows_v3``: v2 (migration 0016) that also returns the
``reading`` of the evidence of the applied proposal that placed ``keep``'s
slot: an attach met across blocks (``curation.services._best_elsewhere``)
records how the authorship's name was read, and "Why is this paper here?"
says it on PostgreSQL as it does on SQLite. v2 is dropped (its only caller,
``wovepaper.profile_sql``, calls v3); the reverse creates it again.
"""

import importlib

from django.db import migrations

V2 = importlib.import_module("wovepaper.migrations.0016_paper_rows_pairs_holding")

COLUMNS_V2 = "    pairs jsonb, by_curator boolean\n"
COLUMNS_V3 = "    pairs jsonb, reading jsonb, by_curator boolean\n"
SELECT_V2 = "    END,\n    why.by_curator\n"
SELECT_V3 = "    END,\n    why.evidence -> 'reading',\n    why.by_curator\n"
assert V2.PAPER_ROWS_V2.count(COLUMNS_V2) == 1
assert V2.PAPER_ROWS_V2.count(SELECT_V2) == 1
PAPER_ROWS_V3 = (
    V2.PAPER_ROWS_V2.replace("wovepaper_paper_rows_v2(", "wovepaper_paper_rows_v3(")
    .replace(COLUMNS_V2, COLUMNS_V3)
    .replace(SELECT_V2, SELECT_V3)
)


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(PAPER_ROWS_V3)
        schema_editor.execute(
            f"DROP FUNCTION IF EXISTS wovepaper_paper_rows_v2{V2.SIGNATURE}"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(V2.PAPER_ROWS_V2)
        schema_editor.execute(
            f"DROP FUNCTION IF EXISTS wovepaper_paper_rows_v3{V2.SIGNATURE}"
        )


class Migration(migrations.Migration):
    dependencies = [("wovepaper", "0016_paper_rows_pairs_holding")]

    operations = [migrations.RunPython(forward, backward)]
