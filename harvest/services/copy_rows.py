"""New papers and their bylines written with PostgreSQL ``COPY`` (the bulk path).

A batch of fresh papers costs five statements whatever its size: one asks the
paper id sequence for the batch's ids, one ``COPY`` streams the authorships
straight into their table, one creates a staging table (temporary, dropped at
commit, so it always has the paper table's current columns), one ``COPY``
streams the papers into it, and one ``INSERT ... SELECT`` moves them into
``wovepaper_paper`` computing each search vector on the way
(:data:`wovepaper.search.VECTOR_SQL`), so every paper row and its indexes are
written once, not inserted and then updated.

``COPY`` is PostgreSQL's fastest way in ("Populating a Database", PostgreSQL 15
manual, 14.4.2: "Use COPY"); psycopg 3 streams the rows while the server inserts
them (psycopg docs, "Using COPY TO and COPY FROM"). It skips what Django's
``bulk_create`` spends most of its time on: compiling a statement of every value,
preparing each value field by field, and quoting them. Rows are built here from
the same field values ``bulk_create`` would store; model defaults, ``auto_now``
and ``auto_now_add`` are applied alike.

Authorships reference papers that do not exist yet until the last statement: the
foreign key is checked at commit (Django creates PostgreSQL foreign keys
``DEFERRABLE INITIALLY DEFERRED``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection
from django.db.models import JSONField, Model
from django.utils import timezone
from psycopg.types.json import Jsonb

from wovepaper.models import Authorship, Paper
from wovepaper.search import VECTOR_SQL

_STAGE = "wovepaper_paper_stage"
# The byline's names as printed, one string per paper, for the search vector.
_NAMES = "byline_names"


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


def papers_copy(papers: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> list[int]:
    """Write new papers and their authorships with ``COPY``; PostgreSQL only.

    Call inside a transaction (the deferred foreign keys are checked at its
    commit). Nothing is written for an empty list.

    Args:
        papers: one ``(paper_values, authorship_values)`` per paper, where
            ``paper_values`` maps Paper attribute names to values (no ``id``,
            no ``search_vector``) and ``authorship_values`` holds one mapping of
            Authorship attribute names per byline slot (no ``id`` or
            ``paper_id``), ``position`` included.

    Returns:
        The new papers' ids, in the order given.

    Raises:
        django.db.DataError, django.db.IntegrityError: a row the database
            refuses (a value too long for its column, an identifier some paper
            already holds); the statement and the whole batch fail, as with
            ``bulk_create``.
    """
    if not papers:
        return []
    ids = ids_take(Paper, len(papers))
    now = timezone.now()
    paper_fields = _columns(Paper, skip=("search_vector",))
    slot_fields = _columns(Authorship, skip=("id",))
    paper_plan, slot_plan = _plan(paper_fields), _plan(slot_fields)
    stage_columns = ", ".join(connection.ops.quote_name(f.column) for f in paper_fields)
    with connection.cursor() as cursor, connection.wrap_database_errors:
        raw = cursor.cursor  # psycopg's own cursor: COPY is not in Django's API
        _copy(
            raw,
            "wovepaper_authorship",
            slot_fields,
            (
                _row(slot_plan, {**slot, "paper_id": pk}, now)
                for pk, (_, slots) in zip(ids, papers, strict=True)
                for slot in slots
            ),
        )
        raw.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {_STAGE} "
            f"(LIKE wovepaper_paper, {_NAMES} text) ON COMMIT DROP"
        )
        _copy(
            raw,
            _STAGE,
            paper_fields,
            (
                (
                    *_row(paper_plan, {**values, "id": pk}, now),
                    " ".join(slot["raw_name"] for slot in slots),
                )
                for pk, (values, slots) in zip(ids, papers, strict=True)
            ),
            extra=(_NAMES,),
        )
        vector = VECTOR_SQL.format(
            title="s.title", names=f"s.{_NAMES}", abstract="s.abstract"
        )
        raw.execute(
            f"WITH s AS (DELETE FROM {_STAGE} RETURNING *) "  # noqa: S608
            f"INSERT INTO wovepaper_paper ({stage_columns}, search_vector) "
            f"SELECT {', '.join(f's.{c}' for c in stage_columns.split(', '))}, "
            f"{vector} FROM s"
        )
    return ids
