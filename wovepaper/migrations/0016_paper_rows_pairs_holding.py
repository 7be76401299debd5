"""``wovepaper_paper_rows_v2``: v1 (migration 0011) that also returns, of the
applied ``new`` proposal that placed ``keep``'s slot, every recorded pair
holding that slot's authorship, so "Why is this paper here?" says what joined
this paper, not the cluster's strongest pair elsewhere.

A recorded pair's ``"between"`` is ``[[ids], [ids]]`` (``curation.services.
_recorded_pairs``); ``between @> [[own]]`` holds when either side lists it
(jsonb containment: PostgreSQL docs, "jsonb Containment and Existence").
The pairs come in the order recorded: the first ``pairs_read``, then any later
one holding the slot. v1 is dropped (its only caller, ``wovepaper.profile_sql``,
calls v2); the reverse creates it again.
"""

import importlib

from django.db import migrations

V1 = importlib.import_module("wovepaper.migrations.0011_researcher_page_functions")

PAIRS_V1 = "         WHERE t.n <= pairs_read)"
PAIRS_V2 = (
    "         WHERE t.n <= pairs_read\n"
    "            OR t.pair -> 'between' @> jsonb_build_array(jsonb_build_array(own.id)))"
)
assert V1.PAPER_ROWS.count(PAIRS_V1) == 1
PAPER_ROWS_V2 = V1.PAPER_ROWS.replace(
    "wovepaper_paper_rows_v1(", "wovepaper_paper_rows_v2("
).replace(PAIRS_V1, PAIRS_V2)

SIGNATURE = "(bigint[], bigint, integer, text, text, integer)"


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(PAPER_ROWS_V2)
        schema_editor.execute(f"DROP FUNCTION IF EXISTS wovepaper_paper_rows_v1{SIGNATURE}")


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(V1.PAPER_ROWS)
        schema_editor.execute(f"DROP FUNCTION IF EXISTS wovepaper_paper_rows_v2{SIGNATURE}")


class Migration(migrations.Migration):
    dependencies = [("wovepaper", "0015_empty_name_keys")]

    operations = [migrations.RunPython(forward, backward)]
