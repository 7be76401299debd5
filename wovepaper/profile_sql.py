"""The researcher page's and search's reads as single PostgreSQL statements.

:mod:`wovepaper.profile` builds the same results with the ORM in six to ten
queries, each paying Django's query compilation (about 0.5 ms here) and a round
trip; on PostgreSQL it reads through these instead, so a cold researcher page
costs three statements. Each function returns raw rows; :mod:`wovepaper.profile`
turns them into the page's dicts with the code the ORM path uses, and
``tests/test_profile_sql.py`` checks both paths give equal results on real data.

Only the applied, curated state is read (``Authorship.researcher``), and hidden
papers are left out, as in :mod:`wovepaper.profile`.
"""

from __future__ import annotations

import json
from datetime import date, datetime

from django.db import connection

# One row a paper: its columns, its author count, its first ``shown`` slots plus
# the kept researcher's (as JSON), and, for the kept researcher's own slot, the
# applied proposal that last placed it (latest decided last, undecided after
# all, as the ORM's ascending order read to its end) and whether a curator
# applied it.
_ROWS = """
SELECT p.id, p.arxiv_id, p.doi, p.slug, p.title, p.published,
    p.published_precision, p.primary_category, p.categories, p.cited_by_count,
    (SELECT count(*) FROM wovepaper_authorship x WHERE x.paper_id = p.id),
    (SELECT json_agg(json_build_array(
            s.id, s.position, s.raw_name, s.researcher_id, r.slug
        ) ORDER BY s.position)
     FROM wovepaper_authorship s
     LEFT JOIN wovepaper_researcher r ON r.id = s.researcher_id
     WHERE s.paper_id = p.id
       AND (s.position <= %(shown)s OR s.researcher_id = %(keep)s)),
    why.id, why.kind, why.researcher_id, why.decided_at, why.score,
    why.evidence -> 'features', why.evidence -> 'contributions', why.by_curator
FROM wovepaper_paper p
LEFT JOIN LATERAL (
    SELECT o.id FROM wovepaper_authorship o
    WHERE o.paper_id = p.id AND o.researcher_id = %(keep)s
    ORDER BY o.position LIMIT 1
) own ON true
LEFT JOIN LATERAL (
    SELECT pr.id, pr.kind, pr.researcher_id, pr.decided_at, pr.score, pr.evidence,
        EXISTS (
            SELECT 1 FROM curation_curationevent e
            WHERE e.proposal_id = pr.id AND e.kind = %(applied_event)s
              AND e.actor_id IS NOT NULL
        ) AS by_curator
    FROM curation_proposal_authorships l
    JOIN curation_proposal pr ON pr.id = l.proposal_id
    WHERE l.authorship_id = own.id AND pr.status = %(applied)s
    ORDER BY pr.decided_at DESC NULLS FIRST, pr.id DESC
    LIMIT 1
) why ON true
WHERE p.id = ANY(%(ids)s) AND NOT p.hidden
"""

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


def paper_rows(ids: list[int], *, keep: int | None, shown: int) -> list[dict]:
    """The visible papers among ``ids``, with short bylines, in one statement.

    Args:
        ids: paper ids (any order; unknown and hidden ones are left out).
        keep: a researcher whose own slot is always in the byline, and whose
            slot's latest applied proposal is read; None for neither.
        shown: byline slots read from the first (``position <= shown``).

    Returns:
        ``[{"id", "arxiv_id", "doi", "slug", "title", "published",
        "published_precision", "primary_category", "categories",
        "cited_by_count", "author_count", "slots": [{"id", "position",
        "raw_name", "researcher_id", "researcher__slug"}] by position,
        "placed_by": None | {"id", "kind", "researcher_id", "decided_at",
        "score", "features", "contributions", "by_curator"}}]`` in no set order:
        the shapes :func:`wovepaper.profile.paper_rows` and
        :func:`wovepaper.profile.attachment_reasons` read.
    """
    from curation.models import CurationEvent, Proposal

    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            _ROWS,
            {
                "ids": list(ids),
                "keep": keep,
                "shown": shown,
                "applied": Proposal.Status.APPLIED,
                "applied_event": CurationEvent.Kind.PROPOSAL_APPLIED,
            },
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
        pid, kind, rid, decided_at, score, features, contributions, by_curator = row[
            12:
        ]
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
                "by_curator": by_curator,
            }
        )
        out.append(paper)
    return out


# Everything the researcher summary counts, in one row: the researcher's visible
# authorships (year, categories, affiliations, identifiers, position, the
# paper's slot count and unmatched person slots), its institutions (the
# ``institutions`` most recent, with first and last year and papers), and the
# split events that moved authorships off it (the latest 200).
_SUMMARY = """
SELECT
  (SELECT json_agg(json_build_array(
        a.paper_id, p.published, p.cited_by_count, p.categories, a.affiliations,
        a.orcid, a.s2_author_id, a.openalex_author_id, a.position,
        (SELECT count(*) FROM wovepaper_authorship s WHERE s.paper_id = a.paper_id),
        (SELECT count(*) FROM wovepaper_authorship s
         WHERE s.paper_id = a.paper_id AND s.researcher_id IS NULL
           AND NOT s.is_collaboration)))
   FROM wovepaper_authorship a JOIN wovepaper_paper p ON p.id = a.paper_id
   WHERE a.researcher_id = %(r)s AND NOT p.hidden),
  (SELECT json_agg(json_build_array(
        i.id, i.name, i.slug, i.ror_id, i.first, i.last, i.papers))
   FROM (
     SELECT inst.id, inst.name, inst.slug, inst.ror_id,
         EXTRACT(YEAR FROM min(p.published))::int AS first,
         EXTRACT(YEAR FROM max(p.published))::int AS last,
         count(DISTINCT a.paper_id) AS papers,
         max(p.published) AS last_date
     FROM wovepaper_authorship_institutions ai
     JOIN wovepaper_authorship a ON a.id = ai.authorship_id
     JOIN wovepaper_paper p ON p.id = a.paper_id
     JOIN wovepaper_institution inst ON inst.id = ai.institution_id
     WHERE a.researcher_id = %(r)s AND NOT p.hidden
     GROUP BY inst.id, inst.name, inst.slug, inst.ror_id
     ORDER BY last_date DESC NULLS LAST, inst.name
     LIMIT %(institutions)s
   ) i),
  (SELECT json_agg(json_build_array(e.created, e.moves, e.fields))
   FROM (
     SELECT created, moves, fields FROM curation_curationevent
     WHERE kind = %(split)s AND moves @> %(before)s::jsonb
     ORDER BY created DESC LIMIT 200
   ) e)
"""


def summary_parts(researcher_id: int, *, institutions: int) -> dict:
    """What :func:`wovepaper.profile.researcher_summary` counts, in one statement.

    Args:
        researcher_id: a live researcher.
        institutions: how many institutions, most recent first.

    Returns:
        ``{"rows": [(paper id, published date | None, cited_by_count,
        categories, affiliations, orcid, s2, openalex, position, slots on the
        paper, unmatched person slots)], "institutions":
        [{"institution_id", "institution__name", "institution__slug",
        "institution__ror_id", "first", "last", "papers"}] (years as ints),
        "split_events": [(created datetime, moves, fields)] newest first}``.
    """
    from curation.models import CurationEvent

    with connection.cursor() as cursor:
        cursor.execute(
            _SUMMARY,
            {
                "r": researcher_id,
                "institutions": institutions,
                "split": CurationEvent.Kind.SPLIT,
                "before": json.dumps([{"before": researcher_id}]),
            },
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
