"""An incremental matching run's reads as written-out PostgreSQL statements.

:mod:`curation.selectors` builds the matcher's snapshots of a few blocks (the
unassigned authorships, the blocks' live researchers and their authorships,
their co-author bylines, their cannot-link constraints) from rows it reads here
on PostgreSQL and through the ORM elsewhere. Building and compiling those
querysets, and binding their id lists as literals, was about half of an
incremental attach (bench/matching.py, one new authorship a run with 100,000
researchers: 42 ms profiled, 22 of them in Django's query building and psycopg's
conversion); here each is one statement whose ids travel as one array. The rows
are the ORM's (same columns, same order, JSON decoded as Django's JSONField
decodes it); ``tests/curation/test_matching_sql.py`` checks both paths give equal
snapshots on real data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from django.db import connection, transaction

# The columns of curation.selectors.views._VIEW_FIELDS, in its order.
_VIEW_COLUMNS = """
    a.id, a.paper_id, a.given_name, a.family_name, a.block_key, a.orcid,
    a.affiliations, a.openalex_author_id, a.s2_author_id, p.categories, p.published
"""
_AFFILIATIONS, _CATEGORIES = 6, 9

# The pending proposal holding each slot, as curation.selectors.matchable_views
# reads it: its kind, or 'dead' (selectors.DEAD_ATTACH) for an attach whose
# researcher was merged away or retired since; a live attach first. The slot's
# proposals are read by its own id first (OFFSET 0 keeps the planner from
# starting at the pending proposals instead: with statistics taken before a
# run's shards wrote thousands of them, it expects a few dozen, and read them
# all for every slot, 5 to 11 s a shard of 100,000 authorships in
# bench/matching_workers.py).
_MATCHABLE_SQL = f"""
SELECT {_VIEW_COLUMNS},
    (SELECT CASE WHEN pr.kind = 'attach'
                  AND (r.merged_into_id IS NOT NULL OR r.retired)
                 THEN 'dead' ELSE pr.kind END AS held_as
     FROM (SELECT proposal_id, authorship_id FROM curation_proposal_authorships
           WHERE authorship_id = a.id OFFSET 0) pa
     JOIN curation_proposal pr ON pr.id = pa.proposal_id
     LEFT JOIN wovepaper_researcher r ON r.id = pr.researcher_id
     WHERE pa.authorship_id = a.id AND pr.status = 'pending'
     ORDER BY held_as LIMIT 1) AS pending
FROM wovepaper_authorship a
JOIN wovepaper_paper p ON p.id = a.paper_id
WHERE a.researcher_id IS NULL AND NOT a.is_collaboration AND NOT p.hidden
  AND a.block_key <> '' AND a.block_key = ANY(%s)
ORDER BY a.id
"""  # noqa: S608 - no input is put in the text

_OF_RESEARCHERS_SQL = f"""
SELECT a.researcher_id, {_VIEW_COLUMNS}
FROM wovepaper_authorship a
JOIN wovepaper_paper p ON p.id = a.paper_id
WHERE a.researcher_id = ANY(%s)
ORDER BY a.id
"""  # noqa: S608 - no input is put in the text


def enabled() -> bool:
    """Whether the written-out statements serve (PostgreSQL); else the ORM."""
    return connection.vendor == "postgresql"


def _json(value):
    """A JSON column as Django's JSONField reads it (text decoded; None kept)."""
    return json.loads(value) if isinstance(value, str) else value


def _decoded(row: tuple, offset: int) -> tuple:
    """A view row with its affiliations and categories decoded; the view
    columns start at ``offset``."""
    out = list(row)
    for at in (offset + _AFFILIATIONS, offset + _CATEGORIES):
        out[at] = _json(out[at])
    return tuple(out)


def _rows(sql: str, params: list) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def matchable_rows(block_keys: Iterable[str]) -> list[tuple]:
    """The rows :func:`curation.selectors.matchable_views` reads for some blocks.

    Args:
        block_keys: block keys (as stored on authorships).

    Returns:
        ``[(*view fields, pending proposal kind or None)]`` of the person
        authorships not yet assigned, on visible papers, in these blocks, by id.
    """
    # Without JIT compilation: on statistics as stale as above the planner
    # costs the statement past jit_above_cost, and compiling it took 0.5 s of
    # a 0.7 s read (PostgreSQL docs, 30.2 "When to JIT?").
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        cursor.execute(_MATCHABLE_SQL, [sorted(set(block_keys))])
        rows = cursor.fetchall()
    return [_decoded(row, 0) for row in rows]


def rows_of_researchers(researcher_ids: Iterable[int]) -> list[tuple]:
    """``[(researcher id, *view fields)]`` of these researchers' authorships, by
    authorship id (:func:`curation.selectors.profiles._build_profiles`)."""
    rows = _rows(_OF_RESEARCHERS_SQL, [sorted(set(researcher_ids))])
    return [_decoded(row, 1) for row in rows]


def byline_rows(paper_ids: Iterable[int]) -> list[tuple]:
    """``[(paper id, authorship id, name key)]``: every slot of these papers."""
    return _rows(
        "SELECT paper_id, id, name_key FROM wovepaper_authorship "
        "WHERE paper_id = ANY(%s)",
        [sorted(set(paper_ids))],
    )


def live_researcher_rows(block_keys: Iterable[str]) -> list[tuple]:
    """``[(id, block key, revision, orcid, locked, OpenAlex author id, S2 author
    id)]`` of the live researchers (not merged away, not retired) of these
    blocks (:func:`curation.selectors.researcher_snapshot`)."""
    return _rows(
        "SELECT id, block_key, revision, orcid, locked, openalex_author_id, "
        "s2_author_id FROM wovepaper_researcher "
        "WHERE merged_into_id IS NULL AND NOT retired AND block_key = ANY(%s)",
        [sorted(set(block_keys))],
    )


def cannot_link_rows(researcher_ids: Iterable[int]) -> list[tuple]:
    """``[(researcher id, authorship id, other researcher id)]`` of the active
    cannot-link constraints of these researchers
    (:func:`curation.selectors.cannot_links`)."""
    return _rows(
        "SELECT researcher_id, authorship_id, other_researcher_id "
        "FROM curation_constraint WHERE kind = 'cannot_link' AND active "
        "AND researcher_id = ANY(%s)",
        [sorted(set(researcher_ids))],
    )


def pending_attach_rows(
    researcher_ids: Iterable[int] | None, paper_ids: Iterable[int] | None
) -> list[tuple]:
    """``[(researcher id, paper id)]`` of the pending attach proposals, of
    these researchers and of slots on these papers (None: any)
    (:func:`curation.selectors.pending_attach_papers`)."""
    return _rows(
        "SELECT pr.researcher_id, a.paper_id FROM curation_proposal_authorships pa "
        "JOIN curation_proposal pr ON pr.id = pa.proposal_id "
        "JOIN wovepaper_authorship a ON a.id = pa.authorship_id "
        "WHERE pr.status = 'pending' AND pr.kind = 'attach' "
        "AND (%s::bigint[] IS NULL OR pr.researcher_id = ANY(%s::bigint[])) "
        "AND (%s::bigint[] IS NULL OR a.paper_id = ANY(%s::bigint[]))",
        [
            *(2 * [None if researcher_ids is None else sorted(set(researcher_ids))]),
            *(2 * [None if paper_ids is None else sorted(set(paper_ids))]),
        ],
    )
