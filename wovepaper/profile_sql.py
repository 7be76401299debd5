"""The researcher page's and search's reads as single PostgreSQL statements.

:mod:`wovepaper.profile` builds the same results with the ORM in six to ten
queries, each paying Django's query compilation (about 0.5 ms here), a round
trip and PostgreSQL's planning; on PostgreSQL it reads through these instead,
so a cold researcher page costs three statements. Each calls a PL/pgSQL
function of migration ``wovepaper/0011_researcher_page_functions`` (where the
SQL is, and why functions: their plans are cached; ``paper_rows`` is its v2 of
``wovepaper/0016_paper_rows_pairs_holding``) and returns raw rows;
:mod:`wovepaper.profile` turns them into the page's dicts with the code the ORM
path uses, and ``tests/wovepaper/test_profile_sql.py`` checks both paths give
equal results on real data.

Only the applied, curated state is read (``Authorship.researcher``), and hidden
papers are left out, as in :mod:`wovepaper.profile`.
"""

from __future__ import annotations

import json
from datetime import date, datetime

from django.db import connection

# The columns of a paper row, in the statement's order (the ORM path of
# wovepaper.profile reads the same with ``.values()``).
PAPER_COLUMNS = (
    "id",
    "arxiv_id",
    "doi",
    "slug",
    "title",
    "published",
    "published_precision",
    "primary_category",
    "categories",
    "cited_by_count",
    "author_count",
)


def _json(value):
    """A json/jsonb column as Python (Django's psycopg setup returns text)."""
    return json.loads(value) if isinstance(value, str) else value


def paper_rows(
    ids: list[int], *, keep: int | None, shown: int, new_pairs: int
) -> list[dict]:
    """The visible papers among ``ids``, with short bylines, in one statement.

    Args:
        ids: paper ids (any order; unknown and hidden ones are left out).
        keep: a researcher whose own slot is always in the byline, and whose
            slot's latest applied proposal is read; None for neither.
        shown: byline slots read from the first (``position <= shown``).
        new_pairs: pairs of a ``new`` proposal's evidence read.

    Returns:
        ``[{"id", "arxiv_id", "doi", "slug", "title", "published",
        "published_precision", "primary_category", "categories",
        "cited_by_count", "author_count", "slots": [{"id", "position",
        "raw_name", "researcher_id", "researcher__slug"}] by position,
        "placed_by": None | {"id", "kind", "researcher_id", "decided_at",
        "score", "features", "contributions", "members", "pairs" (the first
        ``new_pairs`` recorded, then every later one holding ``keep``'s slot,
        in the order recorded), "reading" (an attach met across blocks: how
        the name was read), "by_curator"}}]`` in no set order:
        the shapes :mod:`wovepaper.profile` builds its paper rows and
        "why is this paper here?" from.
    """
    from curation.models import CurationEvent, Proposal

    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT * FROM wovepaper_paper_rows_v3(%s::bigint[], %s, %s, %s, %s, %s)",
            [
                list(ids),
                keep,
                shown,
                Proposal.Status.APPLIED.value,
                CurationEvent.Kind.PROPOSAL_APPLIED.value,
                new_pairs,
            ],
        )
        fetched = cursor.fetchall()
    out = []
    for row in fetched:
        paper = dict(zip(PAPER_COLUMNS, row[:11], strict=True))
        paper["categories"] = _json(paper["categories"])
        paper["slots"] = [
            {
                "id": sid,
                "position": position,
                "raw_name": name,
                "researcher_id": rid,
                "researcher__slug": slug,
            }
            for sid, position, name, rid, slug in _json(row[11]) or []
        ]
        pid, kind, rid, decided_at, score, features, contributions = row[12:19]
        members, pairs, reading, by_curator = row[19:]
        paper["placed_by"] = (
            None
            if pid is None
            else {
                "id": pid,
                "kind": kind,
                "researcher_id": rid,
                "decided_at": decided_at,
                "score": score,
                "features": _json(features) or {},
                "contributions": _json(contributions) or {},
                "members": _json(members),
                "pairs": _json(pairs) or [],
                "reading": _json(reading),
                "by_curator": by_curator,
            }
        )
        out.append(paper)
    return out


def summary_parts(researcher_id: int, *, institutions: int) -> dict:
    """What :func:`wovepaper.profile.researcher_summary` counts, in one statement.

    Args:
        researcher_id: a live researcher.
        institutions: how many institutions, most recent first.

    Returns:
        ``{"rows": [(paper id, published date | None, cited_by_count,
        categories, title rank (by title in the database's collation, then
        id), affiliations, orcid, s2, openalex, position, slots on the paper,
        unmatched person slots, whether a curator checked the slot)],
        "institutions":
        [{"institution_id", "institution__name", "institution__slug",
        "institution__ror_id", "first", "last", "papers"}] (years as ints),
        "split_events": [(created datetime, moves, fields)] newest first}``.
    """
    from curation.models import CurationEvent

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT * FROM wovepaper_researcher_summary_v3(%s, %s, %s)",
            [researcher_id, institutions, CurationEvent.Kind.SPLIT.value],
        )
        rows, found, events = cursor.fetchone()
    return {
        "rows": [
            (pid, date.fromisoformat(published) if published else None, *rest)
            for pid, published, *rest in _json(rows) or []
        ],
        "institutions": [
            {
                "institution_id": pk,
                "institution__name": name,
                "institution__slug": slug,
                "institution__ror_id": ror,
                "first": first,
                "last": last,
                "papers": papers,
            }
            for pk, name, slug, ror, first, last, papers in _json(found) or []
        ],
        "split_events": [
            (datetime.fromisoformat(created), moves, fields)
            for created, moves, fields in _json(events) or []
        ],
    }
