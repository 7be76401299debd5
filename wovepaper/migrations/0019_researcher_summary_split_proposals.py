"""``wovepaper_researcher_summary_v2``: v1 (migration 0011) whose split events
include a split proposal a curator approved (a ``proposal_applied`` event of a
``split`` proposal), as the SQLite reading does (``wovepaper.profile``): the
researcher page said "Part of this profile was split off" after the admin's
Split but not after an approved split proposal (new-user trial). v1 is
dropped (its only caller, ``wovepaper.profile_sql``, calls v2); the reverse
creates it again.
"""

import importlib

from django.db import migrations

V1 = importlib.import_module("wovepaper.migrations.0011_researcher_page_functions")

SIGNATURE = "(bigint, integer, text)"
WHERE_V1 = "     WHERE c.kind = split\n"
WHERE_V2 = (
    "     WHERE (c.kind = split OR (c.kind = 'proposal_applied' AND EXISTS (\n"
    "         SELECT 1 FROM curation_proposal pr\n"
    "         WHERE pr.id = c.proposal_id AND pr.kind = 'split')))\n"
)
assert V1.SUMMARY.count(WHERE_V1) == 1
SUMMARY_V2 = V1.SUMMARY.replace(
    "wovepaper_researcher_summary_v1(", "wovepaper_researcher_summary_v2("
).replace(WHERE_V1, WHERE_V2)


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SUMMARY_V2)
        schema_editor.execute(
            f"DROP FUNCTION IF EXISTS wovepaper_researcher_summary_v1{SIGNATURE}"
        )


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(V1.SUMMARY)
        schema_editor.execute(
            f"DROP FUNCTION IF EXISTS wovepaper_researcher_summary_v2{SIGNATURE}"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("wovepaper", "0018_paper_hidden_by"),
        ("curation", "0005_proposal_pending_proven_index"),
    ]

    operations = [migrations.RunPython(forward, backward)]
