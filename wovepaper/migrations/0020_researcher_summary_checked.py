"""``wovepaper_researcher_summary_v3``: v2 (migration 0019) whose authorship
rows end with whether a curator checked the slot (an active must-link of the
slot on the researcher, written by an event with an actor: approving,
merging, moving, claims; the auto-apply policy writes none). The researcher
page says how many of its papers a curator checked, and marks each paper
"checked by a curator" or "automatic" (issue 47), in the one statement it
read before. v2 is dropped (its only caller, ``wovepaper.profile_sql``, calls
v3); the reverse creates it again.
"""

import importlib

from django.db import migrations

V2 = importlib.import_module("wovepaper.migrations.0019_researcher_summary_split_proposals")

SIGNATURE = V2.SIGNATURE
ROW_END_V2 = "           AND NOT s.is_collaboration)))\n   FROM (\n"
ROW_END_V3 = "           AND NOT s.is_collaboration),\n        t.checked))\n   FROM (\n"
COLUMNS_V2 = (
    "         a.affiliations, a.orcid, a.s2_author_id, a.openalex_author_id, "
    "a.position\n"
)
COLUMNS_V3 = (
    "         a.affiliations, a.orcid, a.s2_author_id, a.openalex_author_id, "
    "a.position,\n"
    "         EXISTS (SELECT 1 FROM curation_constraint k\n"
    "             JOIN curation_curationevent ev ON ev.id = k.event_id\n"
    "             WHERE k.authorship_id = a.id AND k.researcher_id = rid\n"
    "               AND k.kind = 'must_link' AND k.active\n"
    "               AND ev.actor_id IS NOT NULL) AS checked\n"
)
assert V2.SUMMARY_V2.count(ROW_END_V2) == 1
assert V2.SUMMARY_V2.count(COLUMNS_V2) == 1
SUMMARY_V3 = (
    V2.SUMMARY_V2.replace(
        "wovepaper_researcher_summary_v2(", "wovepaper_researcher_summary_v3("
    )
    .replace(ROW_END_V2, ROW_END_V3)
    .replace(COLUMNS_V2, COLUMNS_V3)
)


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SUMMARY_V3)
        schema_editor.execute(
            f"DROP FUNCTION IF EXISTS wovepaper_researcher_summary_v2{SIGNATURE}"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(V2.SUMMARY_V2)
        schema_editor.execute(
            f"DROP FUNCTION IF EXISTS wovepaper_researcher_summary_v3{SIGNATURE}"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("wovepaper", "0019_researcher_summary_split_proposals"),
        ("curation", "0005_proposal_pending_proven_index"),
    ]

    operations = [migrations.RunPython(forward, backward)]
