"""New papers written as one JSON document a batch (PostgreSQL).

A batch of fresh papers costs three statements whatever its size: one asks the
paper id sequence for the batch's ids, one receives the whole batch as a single
``jsonb`` parameter and inserts every paper (computing its search vector on the
way, :data:`wovepaper.search.VECTOR_SQL`, from the title, the byline's names and
the abstract), and one ``COPY`` inserts every byline slot from text the prepare
workers made (:mod:`harvest.services.byline_rows`). The paper rows are made in
the server by ``jsonb_populate_record`` (PostgreSQL 15 manual, 9.16. "JSON
Functions and Operators"), which fills each column from the key of its name
with the column's own input conversion.

Why not ``COPY`` for the papers too: it was this path before, and on a bulk
harvest it left the harvest's process formatting every row in Python (psycopg's
``write_row``, a call per row and a JSON dump per JSON column), the largest
cost after parsing. Here Python makes one join of the workers' JSON texts, and
the server, which parses JSON in C, does the rest: bench/ingest.py measures
both. The slots were in this document too until their ``COPY`` text could be
made in the workers: the server fills them from it in half the time.

Rows hold the same values ``bulk_create`` would store: the caller's, else the
field's default; ``auto_now`` and ``auto_now_add`` fields get the batch's time.
A document leaves out every value equal to its column's default, and the
statement fills them from one default row, sent once a batch
(``jsonb_populate_record`` with a non-null base: "If base isn't NULL then the
values it contains will be used for unmatched columns", same manual section).

Authorships reference papers inserted in the same transaction; the foreign key
is checked at commit (Django creates PostgreSQL foreign keys ``DEFERRABLE
INITIALLY DEFERRED``).
"""

from __future__ import annotations

import datetime as dt
import json
from functools import cache
from typing import Any

import psycopg
from django.db import connection
from django.db.models import Model
from django.utils import timezone

from harvest.services.byline_rows import bylines_copy
from harvest.services.copy_rows import _columns, _plan, ids_take
from wovepaper.models import Paper
from wovepaper.search import VECTOR_SQL


def _json_value(value: object) -> str:
    """``json.dumps`` hook: dates and times as ISO 8601, which PostgreSQL reads.

    Raises:
        TypeError: any other type (a bug: only these reach rows).
    """
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a row value")


def _defaults(model: type[Model], now: dt.datetime, skip: set[str]) -> dict:
    """``model``'s defaults by column, by the plan ``COPY`` rows follow
    (:func:`~harvest.services.copy_rows._plan`): every field with a default,
    ``auto_now``/``auto_now_add`` fields at ``now`` (as ISO 8601 text, made once,
    not once a row by the ``json.dumps`` hook)."""
    values: dict[str, Any] = {}
    for _, how, field, _ in _plan(_columns(model, skip=tuple(skip))):
        if how == "now":
            values[field.column] = now.isoformat()
        elif field.has_default():
            values[field.column] = field.get_default()
    return values


@cache
def _papers_sql() -> str:
    """The statement (table and column names only are put in, no input)."""
    quote = connection.ops.quote_name
    paper_columns = [f.column for f in _columns(Paper, skip=("id", "search_vector"))]
    vector = VECTOR_SQL.format(
        title="p.title", names="(d.value->>'names')", abstract="p.abstract"
    )
    return f"""
INSERT INTO wovepaper_paper (id, {", ".join(map(quote, paper_columns))}, search_vector)
SELECT d.id, {", ".join(f"p.{quote(c)}" for c in paper_columns)}, {vector}
FROM (
    SELECT (%(ids)s::bigint[])[e.n::int] AS id, e.value
    FROM jsonb_array_elements(%(docs)s::jsonb) WITH ORDINALITY AS e(value, n)
) AS d, jsonb_populate_record(
         jsonb_populate_record(NULL::wovepaper_paper, %(paper_defaults)s::jsonb),
         d.value->'paper'
     ) AS p
"""  # noqa: S608


def row_defaults(now: dt.datetime | None = None) -> dict:
    """The defaults of a new paper row, by column (``auto_now`` fields at
    ``now``, default: the current time)."""
    return _defaults(Paper, now or timezone.now(), {"id", "search_vector"})


@cache
def _fixed_defaults() -> dict:
    """:func:`row_defaults` without the ``auto_now`` columns: what a value may be
    left out of a document for (compared only, never changed)."""
    now = {
        f.column
        for f in _columns(Paper)
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
    }
    return {k: v for k, v in row_defaults(timezone.now()).items() if k not in now}


def _unlike(values: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """``values`` but those equal to their column's default (same value and
    type: ``0`` is not ``False``)."""
    return {
        key: value
        for key, value in values.items()
        if key not in defaults
        or value != defaults[key]
        or type(value) is not type(defaults[key])
    }


def paper_doc(values: dict[str, Any], slots: list[dict[str, Any]]) -> str:
    """One new paper as the JSON text :func:`papers_insert` takes.

    Pure (made in prepare workers): no database. A value equal to its column's
    default is left out (the statement fills it from the default row): the
    server parses every byte. The byline's printed names travel with it, for
    the search vector; its slots go in as ``COPY`` text
    (:func:`harvest.services.byline_rows.byline_text`).

    Args:
        values: Paper attribute names to values (no ``id``, no
            ``search_vector``); values JSON holds, dates and datetimes.
        slots: one mapping of Authorship attribute names per byline slot, in
            byline order (only ``raw_name`` is read).

    Raises:
        TypeError: a value JSON cannot hold (a bug).
    """
    return json.dumps(
        {
            "paper": _unlike(values, _fixed_defaults()),
            "names": " ".join(slot["raw_name"] for slot in slots),
        },
        default=_json_value,
        ensure_ascii=False,
        separators=(",", ":"),
    )


def papers_insert(docs: list[str], bylines: list[str]) -> list[int]:
    """Write new papers (one statement) and their authorships (one ``COPY``);
    PostgreSQL only.

    Call inside a transaction (the deferred foreign keys are checked at its
    commit). Nothing is written for an empty list. The documents travel as
    bound parameters (server-side binding), not spliced into the statement's
    text: a batch is megabytes, which client-side binding would escape in
    Python and the server would then scan as a string literal.

    Args:
        docs: one :func:`paper_doc` per paper.
        bylines: each paper's :func:`~harvest.services.byline_rows.byline_text`,
            in the order of ``docs``.

    Returns:
        The new papers' ids, in the order given.

    Raises:
        django.db.DataError, django.db.IntegrityError: a row the database
            refuses (a value too long for its column, an identifier some paper
            already holds); the statement and the whole batch fail, as with
            ``bulk_create``.
    """
    if not docs:
        return []
    ids = ids_take(Paper, len(docs))
    now = timezone.now()
    params = {
        "ids": ids,
        "docs": f"[{','.join(docs)}]",
        "paper_defaults": json.dumps(row_defaults(now), default=_json_value),
    }
    connection.ensure_connection()
    with (
        psycopg.Cursor(connection.connection) as cursor,
        connection.wrap_database_errors,
    ):
        cursor.execute(_papers_sql(), params)
    bylines_copy(ids, bylines, now)
    return ids
