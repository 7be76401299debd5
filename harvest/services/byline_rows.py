"""New papers' bylines as ``COPY`` text, made in the prepare workers (PostgreSQL).

A new paper's row goes in as JSON (:mod:`harvest.services.json_rows`, which
computes its search vector on the way); its byline slots, seven a paper on
average and most of the rows a harvest writes, go in with ``COPY``, the server's
cheapest way in ("Populating a Database", PostgreSQL 15 manual, 14.4.2). Filling
the same 17,648 real slots took the server 0.11 s from ``COPY`` text against
0.23 s from ``jsonb_populate_recordset`` (same table and indexes, best of
three).

``COPY`` text is what formatting rows in the harvest's own process cost too much
for before (psycopg's ``write_row``, a call per row). So a worker formats each
byline (:func:`byline_text`, pure: no database) but for the three values only
the writer knows, the paper's id and the batch's time, which
:func:`bylines_copy` puts at the head of each line with one ``str.replace`` a
paper.

The text format: columns split by a tab, rows ended by a newline, ``\\N`` for
NULL, and a backslash before a backslash, tab, newline or carriage return in a
value (PostgreSQL 15 manual, ``COPY``, "Text Format"). So a newline that is
not escaped always ends a row, which is what the replace relies on.
"""

from __future__ import annotations

import datetime as dt
import json
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import JSONField

from wovepaper.models import Authorship

_NOW = ("created", "modified")


@cache
def _fields() -> list:
    """The slot fields a worker fills, in model order: all but the id, the
    paper and the ``auto_now`` times."""
    return [
        f
        for f in Authorship._meta.concrete_fields
        if f.attname not in ("id", "paper_id", *_NOW)
    ]


@cache
def _plan() -> list[tuple[str, Any, str, bool, Any]]:
    """How :func:`byline_text` fills each of :func:`_fields`: ``(attname,
    default value, default as COPY text, holds text (not JSON), field)``."""
    return [
        (
            f.attname,
            f.get_default(),
            _copy_value(f, f.get_default()),
            not isinstance(f, JSONField),
            f,
        )
        for f in _fields()
    ]


def _text(value: str) -> str:
    return (
        value.replace("\\", "\\\\")
        .replace("\t", "\\t")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
    )


def _copy_value(field, value: Any) -> str:
    """One value as ``COPY`` text.

    Raises:
        TypeError: a type no slot field holds (a bug, not bad input).
    """
    if value is None:
        return "\\N"
    if isinstance(field, JSONField):
        return _text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _text(value)
    kind = type(value).__name__
    raise TypeError(f"Authorship.{field.name}: {kind} is not a row value")


def byline_text(slots: list[dict[str, Any]]) -> str:
    """A new paper's byline slots as ``COPY`` text without their paper and times.

    Pure (made in prepare workers). A value a slot leaves out is its field's
    default, as ``bulk_create`` would store it.

    Args:
        slots: one mapping of Authorship attribute names per slot (no ``id``,
            ``paper_id``, ``created`` or ``modified``), ``position`` included.

    Returns:
        One line a slot, each ended by a newline; "" for no slot.

    Raises:
        TypeError: a value of a type no slot field holds (a bug).
    """
    lines = []
    for slot in slots:
        cells = []
        for attname, default, default_text, is_text, field in _plan():
            value = slot.get(attname, default)
            if value == default and type(value) is type(default):
                cells.append(default_text)
            elif is_text and type(value) is str:
                cells.append(_text(value))
            else:
                cells.append(_copy_value(field, value))
        lines.append("\t".join(cells))
    return "".join(f"{line}\n" for line in lines)


def bylines_copy(ids: list[int], texts: list[str], now: dt.datetime) -> None:
    """Insert the byline slots of new papers with one ``COPY``; PostgreSQL only.

    Call inside the transaction that inserts the papers (the foreign key is
    checked at its commit).

    Args:
        ids: the papers' ids.
        texts: each paper's :func:`byline_text`, in the order of ``ids``.
        now: the batch's time, for ``created`` and ``modified``.

    Raises:
        django.db.DataError, django.db.IntegrityError: a row the database
            refuses; no slot is inserted.
    """
    quote = connection.ops.quote_name
    columns = ["paper_id", *_NOW, *(f.column for f in _fields())]
    stamp = now.isoformat()
    connection.ensure_connection()
    with connection.cursor() as cursor, connection.wrap_database_errors:
        with cursor.cursor.copy(
            f"COPY {Authorship._meta.db_table} "
            f"({', '.join(map(quote, columns))}) FROM STDIN"
        ) as copy:
            copy.write(
                "".join(
                    head + text[:-1].replace("\n", "\n" + head) + "\n"
                    for pk, text in zip(ids, texts, strict=True)
                    if text
                    for head in (f"{pk}\t{stamp}\t{stamp}\t",)
                )
            )
