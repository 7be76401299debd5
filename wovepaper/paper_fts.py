"""Paper search on the embedded SQLite setup: SQLite's FTS5 full-text index.

The table (migration 0026) holds a paper's title, byline names and abstract,
stemmed and accent-folded; :func:`fts_refresh` keeps it current and
:func:`fts_query` turns the search box's web-search syntax into an FTS5 query.
Source: SQLite FTS5 documentation (https://sqlite.org/fts5.html), 3 "Full-text
Query Syntax" and 5.1.1 "The bm25() function".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from django.db import connection

TABLE = "wovepaper_paper_fts"
# bm25 weights of the columns (title, names, abstract): as PostgreSQL's A, B, C.
WEIGHTS = (10.0, 5.0, 1.0)
WEIGHT_LIST = ", ".join(str(w) for w in WEIGHTS)
# The papers matching a query (one parameter, :func:`fts_query`), and the rank
# of the paper of the outer query (-bm25: higher is better; SQLite FTS5 docs,
# 5.1.1 "The bm25() function").
MATCHING_SQL = f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH %s"  # noqa: S608
RANK_SQL = (
    f"SELECT -bm25({TABLE}, {WEIGHT_LIST}) FROM {TABLE} "  # noqa: S608
    f"WHERE {TABLE} MATCH %s AND {TABLE}.rowid = wovepaper_paper.id"
)
# A phrase in quotes, a word, or "-" before either (web-search syntax, as
# PostgreSQL's websearch_to_tsquery reads it).
_TERM = re.compile(r'(-?)(?:"([^"]*)"|(\S+))')
# What a token of unicode61 is made of: letters and digits (the rest separates).
_WORD = re.compile(r"\w+", re.UNICODE)

_REFRESH_SQL = f"""
INSERT INTO {TABLE} (rowid, title, names, abstract)
SELECT p.id, p.title,
       coalesce((SELECT group_concat(a.raw_name, ' ')
                 FROM wovepaper_authorship AS a WHERE a.paper_id = p.id), ''),
       p.abstract
FROM wovepaper_paper AS p
WHERE p.id IN (SELECT value FROM json_each(%s))
"""  # noqa: S608 - the table name is a constant


def _phrase(text: str) -> str:
    """An FTS5 phrase of the words of ``text`` ("" when it has none): every
    word quoted, so no character of the search box is FTS5 syntax."""
    words = _WORD.findall(text)
    return '"' + " ".join(words) + '"' if words else ""


def fts_query(text: str) -> str:
    """The FTS5 query of a search box text in web-search syntax.

    Words must all occur (AND), a ``"quoted phrase"`` in order, ``-word`` or
    ``-"phrase"`` must not occur (NOT), and ``or`` between two terms takes
    either (OR), as PostgreSQL's ``websearch_to_tsquery`` reads the same text.

    Args:
        text: the cleaned search text.

    Returns:
        The query, or "" when it names no word to find (only exclusions, or no
        letters or digits at all): such a search finds nothing.
    """
    wanted: list[list[str]] = []
    unwanted: list[str] = []
    either = False
    for minus, quoted, bare in _TERM.findall(text):
        source = quoted if quoted else bare
        if not quoted and not minus and source.lower() == "or":
            either = bool(wanted)
            continue
        phrase = _phrase(source)
        if not phrase:
            continue
        if minus:
            unwanted.append(phrase)
        elif either:
            wanted[-1].append(phrase)
        else:
            wanted.append([phrase])
        either = False
    if not wanted:
        return ""
    query = " AND ".join(
        group[0] if len(group) == 1 else "(" + " OR ".join(group) + ")"
        for group in wanted
    )
    for phrase in unwanted:
        query = f"({query}) NOT {phrase}"
    return query


def fts_refresh(paper_ids: Iterable[int]) -> int:
    """Rewrite the FTS5 rows of some papers from their text and byline (SQLite;
    elsewhere nothing). A paper deleted since loses its row.

    Args:
        paper_ids: papers whose title, abstract or byline names were written.

    Returns:
        How many rows were written.
    """
    ids = sorted({int(pk) for pk in paper_ids})
    if not ids or connection.vendor != "sqlite":
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {TABLE} WHERE rowid IN (SELECT value FROM json_each(%s))",  # noqa: S608
            [json.dumps(ids)],
        )
        cursor.execute(_REFRESH_SQL, [json.dumps(ids)])
        return cursor.rowcount
