"""A researcher's history, and the event ids and fields an undo may read."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from curation.models import CurationEvent
from wovepaper.models import Researcher


def researcher_history(*, researcher_id: int) -> QuerySet[CurationEvent]:
    """Every event that touched the researcher, newest first.

    Args:
        researcher_id: a researcher id (merged-away and retired ones included).

    Returns:
        CurationEvents with actor, proposal and undo links selected; on
        PostgreSQL the JSON ``researchers`` list is searched with ``@>``.
    """
    return (
        CurationEvent.objects.filter(
            Q(researchers__contains=[researcher_id])
            if _json_contains_supported()
            else Q(pk__in=_events_touching_sqlite(researcher_id))
        )
        .select_related("actor", "proposal", "undoes")
        .prefetch_related("undone_by")
        .order_by("-created", "-id")
    )


def _json_contains_supported() -> bool:
    from django.db import connection

    return connection.vendor == "postgresql"


def _events_touching_sqlite(researcher_id: int) -> list[int]:
    # SQLite has no JSON containment; the embedded demo's log is small.
    return [
        pk
        for pk, ids in CurationEvent.objects.values_list("pk", "researchers")
        if researcher_id in (ids or [])
    ]


# The largest id a database row can have (PostgreSQL's bigint, SQLite's
# INTEGER): a bigger one in a record edited by hand would fail the query.
MAX_ID = 2**63 - 1
# The researcher columns a curation step sets (curation.changes.Change.set)
# and an undo may set back; its own bookkeeping is not among them.
UNDOABLE_FIELDS = frozenset(f.attname for f in Researcher._meta.concrete_fields) - {
    "id",
    "created",
    "modified",
    "revision",
}


def is_id(value: object) -> bool:
    """Whether ``value`` can be a row id: an integer (not a bool) in 1 ..
    :data:`MAX_ID`. For ids read from JSON a row may hold edited by hand."""
    return (
        isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_ID
    )


def _is_id_text(value: object) -> bool:
    """A researcher id as JSON object keys hold it: ASCII digits ("²" is a
    digit to ``str.isdigit``)."""
    text = str(value)
    return text.isascii() and text.isdigit() and is_id(int(text))


def unreadable(event: CurationEvent) -> str:
    """What is wrong with an event's record, or "" when an undo can read it.

    A curation step writes ``moves`` as ``[{"authorship": id, "before": id |
    None, "after": id | None}]``, ``fields`` as ``{researcher id: {field:
    [before, after]}}`` over :data:`UNDOABLE_FIELDS` and the constraint lists
    as ids (each in 1 .. :data:`MAX_ID`); a record edited by hand into
    another shape is refused by name rather than failing halfway through
    reading it (hostile trials: a ``TypeError`` page; an undo writing ``id``).
    """
    moves, fields = event.moves, event.fields
    if not isinstance(moves, list):
        return "its moves are not a list"
    for n, m in enumerate(moves, start=1):
        if not (
            isinstance(m, dict)
            and is_id(m.get("authorship"))
            and all(
                k in m and (m[k] is None or is_id(m[k])) for k in ("before", "after")
            )
        ):
            return f"move {n} is not an authorship with researcher ids before and after"
    if not isinstance(fields, dict):
        return "its fields are not an object"
    for pk, changed in fields.items():
        if not (_is_id_text(pk) and isinstance(changed, dict)) or not all(
            isinstance(v, list) and len(v) == 2 for v in changed.values()
        ):
            return f"its fields of researcher {pk} are not pairs of before and after"
        if set(changed) - UNDOABLE_FIELDS:
            odd = ", ".join(sorted(map(str, set(changed) - UNDOABLE_FIELDS)))
            return f"it sets {odd} of researcher {pk}, which no curation step sets"
    for name in ("constraints_on", "constraints_off"):
        if not isinstance(getattr(event, name), list) or not all(
            is_id(c) for c in getattr(event, name)
        ):
            return f"its {name} are not a list of constraint ids"
    return ""
