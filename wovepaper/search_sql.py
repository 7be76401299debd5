"""A paper search's ranked head as one PostgreSQL statement.

:func:`wovepaper.search.search_head` reads it through here on PostgreSQL: the
PL/pgSQL function of migration ``wovepaper/0012_search_head_function`` (where
the SQL is, and why a function) computes the same head as the ORM path of
:func:`wovepaper.search._search_head` (kept for SQLite) without sending the
matches to Python. ``tests/wovepaper/test_search_sql.py`` checks both paths give
equal heads on real data.
"""

from __future__ import annotations

from datetime import date

from django.db import connection


def search_head(
    text: str, *, category: str | None, year: int | None, sample: int, cap: int
) -> dict:
    """The ranked head of a search, as :func:`wovepaper.search.search_head`.

    Args:
        text: the cleaned search text (not blank).
        category: keep papers carrying this category (primary or cross-list);
            None or "" for all.
        year: keep papers first published this year (1 to 9999); None for all.
        sample: most matches read and listed
            (:data:`wovepaper.search.SEARCH_SAMPLE`).
        cap: most matches counted before the planner's estimate is used
            (:data:`wovepaper.search.COUNT_CAP`).

    Returns:
        ``{"ids": [paper id, best first], "count": int, "count_is": "exact" |
        "about" | "more", "categories": [(primary category, papers or None)]}``;
        an "about" count is the planner's estimate as it is (the caller rounds).

    Raises:
        django.db.OperationalError: a statement ran past the session's
            ``statement_timeout``. django.db.InternalError or DataError: the
            text is one PostgreSQL cannot read as a query.
    """
    first, last = (date(year, 1, 1), date(year, 12, 31)) if year else (None, None)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT * FROM wovepaper_search_head_v1("
            "%s, %s, %s::date, %s::date, %s, %s)",
            [text, category or None, first, last, sample, cap],
        )
        ids, count, count_is, broad, names, counts = cursor.fetchone()
    return {
        "ids": list(ids),
        "count": count,
        "count_is": count_is,
        "categories": [
            (name, None if broad else n)
            for name, n in zip(names or [], counts or [], strict=True)
        ],
    }
