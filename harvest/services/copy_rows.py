"""Rows written with PostgreSQL ``COPY``: raw records in bulk.

``COPY`` is PostgreSQL's fastest way in ("Populating a Database", PostgreSQL 15
manual, 14.4.2: "Use COPY"); psycopg 3 streams the rows while the server inserts
them (psycopg docs, "Using COPY TO and COPY FROM"). It skips what Django's
``bulk_create`` spends most of its time on: compiling a statement of every value,
preparing each value field by field, and quoting them. Rows are built here from
the same field values ``bulk_create`` would store; model defaults, ``auto_now``
and ``auto_now_add`` are applied alike.

New papers go in as one JSON document instead (:mod:`harvest.services.json_rows`),
which costs the writing process less, and their bylines from ``COPY`` text the
prepare workers made (:mod:`harvest.services.byline_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection
from django.db.models import JSONField, Model
from django.utils import timezone
from psycopg.types.json import Jsonb


def _columns(model: type[Model], *, skip: Sequence[str] = ()) -> list:
    return [f for f in model._meta.concrete_fields if f.column not in skip]


def _plan(fields: list) -> list[tuple[str, str, Any, bool]]:
    """How each column of a row is filled: ``(attname, how, field, is_json)``,
    ``how`` one of ``"now"`` (``auto_now``/``auto_now_add``), ``"value"`` (the
    caller's, else the field's default) or ``"required"``."""
    plan = []
    for field in fields:
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            how = "now"
        elif field.has_default() or field.null:
            how = "value"
        else:
            how = "required"
        plan.append((field.attname, how, field, isinstance(field, JSONField)))
    return plan


def _row(plan: list, values: dict[str, Any], now) -> tuple:
    """One row from ``values`` (by attribute name), defaults filled by ``plan``.

    Raises:
        KeyError: a field with no value and no default (a NOT NULL column
            the caller forgot): a bug, not bad input.
    """
    row = []
    for attname, how, field, is_json in plan:
        if how == "now":
            value = now
        elif attname in values:
            value = values[attname]
        elif how == "value":
            value = field.get_default()
        else:
            raise KeyError(f"{field.model.__name__}.{field.name} has no value")
        if is_json and value is not None:
            value = Jsonb(value)
        row.append(value)
    return tuple(row)


def _copy(cursor, table: str, fields: list, rows: Iterable[tuple], extra=()) -> None:
    names = ", ".join(
        connection.ops.quote_name(c) for c in [*(f.column for f in fields), *extra]
    )
    with cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def ids_take(model: type[Model], count: int) -> list[int]:
    """Take ``count`` fresh ids from ``model``'s id sequence (one query).

    Returns:
        ``count`` distinct ids, ascending; ids of a rolled-back batch are not
        reused (sequences never go back), which leaves harmless gaps.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) "
            "FROM generate_series(1, %s)",
            [model._meta.db_table, count],
        )
        return sorted(row[0] for row in cursor.fetchall())


def rows_copy(model: type[Model], rows: list[dict[str, Any]]) -> list[int]:
    """Insert rows of ``model`` with ``COPY``; PostgreSQL only.

    Args:
        model: a model with an integer ``id`` from a sequence.
        rows: one mapping of attribute names to values per row (no ``id``);
            defaults, ``auto_now`` and ``auto_now_add`` are filled as Django
            would.

    Returns:
        The new rows' ids, in the order given.

    Raises:
        django.db.DataError, django.db.IntegrityError: a row the database
            refuses; no row is inserted.
    """
    if not rows:
        return []
    ids = ids_take(model, len(rows))
    now = timezone.now()
    fields = _columns(model)
    plan = _plan(fields)
    with connection.cursor() as cursor, connection.wrap_database_errors:
        _copy(
            cursor.cursor,
            model._meta.db_table,
            fields,
            (
                _row(plan, {**values, "id": pk}, now)
                for pk, values in zip(ids, rows, strict=True)
            ),
        )
    return ids
