"""Undo any curation event exactly; an undo is itself an event and can be undone."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q, QuerySet

from curation.changes import Change
from curation.edits import IDENTIFIER_FIELDS
from curation.exceptions import (
    ALREADY_UNDONE,
    NOTHING_LEFT_TO_UNDO,
    NOTHING_TO_UNDO,
    SOURCE_NOT_UNDONE,
    UNDO_CLAIM_PENDING,
    UNDO_CLAIMED,
    UNDO_DEAD,
    UNDO_FIELD,
    UNDO_HOLDS,
    UNDO_MOVED,
    UNDO_PENDING_TWIN,
    UNDO_TAKEN,
    UNREADABLE_EVENT,
    CurationError,
    NothingToUndo,
    UndoConflict,
)
from curation.models import ClaimRequest, Constraint, CurationEvent, Proposal
from wovepaper.models import Authorship, Researcher


def source_not_undone(event: CurationEvent) -> str:
    """Why a ``source`` event has no undo, naming its record."""
    record = event.extra.get("record") if isinstance(event.extra, dict) else ""
    return SOURCE_NOT_UNDONE.format(
        pk=event.pk,
        record=record if isinstance(record, str) and record else "its record",
    )


def record_source_changes(
    *,
    record: str,
    departed: list[tuple[int, int, str]],
    returned: list[tuple[int, int, str]],
    stayed_off: Sequence[tuple[int, int, str, str]] = (),
) -> list[CurationEvent]:
    """Write in the curation history what a new version of a record did to
    curated profiles, as no curator acted: slots that left its byline and took
    a paper off a researcher (their curation is kept as
    :class:`harvest.models.DepartedSlot`), and slots printed again that
    brought it back. One ``source`` event for each researcher and way
    (naming its own slots only), actor-less and never undone
    (:data:`curation.exceptions.SOURCE_NOT_UNDONE`); the History page gives
    its reason. Called by the harvest inside its transaction.

    Args:
        record: the record as curators know it ("arXiv:0704.0033",
            "doi:10.1103/...").
        departed: ``[(authorship id, researcher id, printed name)]`` of the
            rows the version deleted.
        returned: the same of the rows brought back to their researcher.
        stayed_off: ``[(authorship id, researcher id, printed name, why)]``
            of rows printed again whose researcher could not take them back:
            an event on it says so, and moves nothing.

    Returns:
        The events written (none when all three are empty); one query.
    """
    events = []
    for rows, leaving in ((departed, True), (returned, False)):
        by_researcher: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for pk, rid, name in rows:
            by_researcher[rid].append((pk, name))
        for rid, slots in sorted(by_researcher.items()):
            names = " and ".join(f"“{name}”" for _, name in slots)
            reason = (
                f"a new version of {record} no longer prints {names} there: the "
                "paper left the profile, and comes back when the source prints "
                "the name again"
                if leaving
                else f"a new version of {record} prints {names} again: the paper "
                "came back to the profile with its curation"
            )
            moves = [
                {
                    "authorship": pk,
                    "before": rid if leaving else None,
                    "after": None if leaving else rid,
                }
                for pk, _ in slots
            ]
            events.append(_source_event(rid, record, reason, moves))
    for pk, rid, name, why in stayed_off:
        reason = (
            f"a new version of {record} prints “{name}” again, but the paper did "
            f"not come back to the profile: {why}; authorship {pk} is on no "
            "researcher"
        )
        events.append(_source_event(rid, record, reason))
    return CurationEvent.objects.bulk_create(events)


def _source_event(
    researcher_id: int, record: str, reason: str, moves: list[dict] | None = None
) -> CurationEvent:
    """An unsaved actor-less ``source`` event on one researcher."""
    return CurationEvent(
        kind=CurationEvent.Kind.SOURCE,
        researchers=[researcher_id],
        moves=moves or [],
        extra={"record": record, "reason": reason},
    )


def record_source_hiding(
    *, record: str, researcher_ids: Iterable[int], hidden: bool
) -> list[CurationEvent]:
    """Write in the History of each researcher holding a slot of a paper that
    its source deleted the record (the paper is hidden: it leaves every page,
    search and feed) or sent it again (the paper shows again). One actor-less
    ``source`` event a researcher, moving nothing (the slots stay assigned);
    never undone, as :func:`record_source_changes`.

    Args:
        record: the record as curators know it ("arXiv:0704.0033").
        researcher_ids: the researchers holding a slot of the paper.
        hidden: True for a deletion, False for the record sent again.

    Returns:
        The events written; one query.
    """
    reason = (
        f"the source deleted {record}: the paper is hidden, off the profile's "
        "pages, and shows again if the source sends the record again"
        if hidden
        else f"the source sent {record} again: the paper shows on the profile again"
    )
    return CurationEvent.objects.bulk_create(
        _source_event(rid, record, reason) for rid in sorted(set(researcher_ids))
    )


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


@transaction.atomic
def event_undo(
    *,
    event: CurationEvent,
    actor: AbstractBaseUser,
    batch: CurationEvent | None = None,
) -> CurationEvent:
    """Restore the state before ``event``: its moves, fields and constraints reversed.

    Every authorship must still be where the event put it and every field must
    still hold the value it set (compare-and-swap under ``select_for_update``);
    otherwise a later change depends on it and must be undone first. Undoing an
    applied proposal marks it ``reverted`` (so matching does not propose it again
    on the same evidence), and an undone ``attach`` also forbids each authorship
    it moved on that researcher (a cannot-link, as a rejection records), so the
    next run offers it elsewhere; undoing that undo marks it ``applied`` again
    and retires those constraints. An undone merge, direct or proposed,
    records that its researchers are not one person
    (:func:`undone_merge_pairs`). Undoing a
    rejection retires its constraints and puts the proposal back in the queue
    (``pending``). Undoing an approved claim returns the claim to ``pending``.
    An authorship a re-harvest has deleted since (its person left the byline)
    is left out; the rest is undone and the undo event lists it under
    ``extra["authorships_gone"]``.

    Args:
        event: the event to undo.
        actor: the curator.
        batch: the ``batch`` event of :func:`batch_undo` it is part of.

    Returns:
        The new ``undone`` event (``undoes`` is ``event``).

    Raises:
        NothingToUndo: the event's record cannot be read (:func:`unreadable`),
            it changed nothing, was undone already, or
            moved only authorships that no longer exist.
        UndoConflict: a later change moved an authorship or altered a field the
            event set, or the result would break an invariant (see
            :func:`_check_outcome`).
        ResearcherConflict: a researcher would hold two slots of one paper.
    """
    original = CurationEvent.objects.select_for_update().get(pk=event.pk)
    problem = unreadable(original)
    if problem:
        raise NothingToUndo(UNREADABLE_EVENT.format(pk=original.pk, problem=problem))
    done = original.undone_by.order_by("pk").first()
    if done is not None:
        raise NothingToUndo(ALREADY_UNDONE.format(pk=original.pk, by=done.pk))
    if original.kind == CurationEvent.Kind.SOURCE:
        raise NothingToUndo(source_not_undone(original))
    if not original.changes_state:
        raise NothingToUndo(
            NOTHING_TO_UNDO.format(pk=original.pk, kind=original.get_kind_display())
        )
    change = Change(actor=actor)
    ids = {int(pk) for pk in original.fields}
    ids |= {m[k] for m in original.moves for k in ("before", "after") if m[k]}
    locked = change.lock(sorted(ids), live=False)

    authorships = {
        a.pk: a
        for a in Authorship.objects.select_for_update().filter(
            pk__in=[m["authorship"] for m in original.moves]
        )
    }
    # A row a re-harvest deleted since (the person left the byline of a new
    # version) has nothing to go back: the rest of the event is undone without it,
    # and the undo event names it. No curation step can restore it, so refusing
    # would leave the event undoable for good.
    gone, moves = _split_gone(original, set(authorships))
    if _nothing_left(original, gone, moves):
        raise NothingToUndo(
            NOTHING_LEFT_TO_UNDO.format(
                pk=original.pk,
                kind=original.get_kind_display(),
                ids=", ".join(map(str, gone)),
            )
        )
    for m in reversed(moves):
        now = authorships[m["authorship"]].researcher_id
        if now != m["after"]:
            raise UndoConflict(
                UNDO_MOVED.format(
                    pk=original.pk, a=m["authorship"], now=now, then=m["after"]
                )
            )
    # Fields first where the prior value is empty, so a unique identifier is freed
    # on one researcher before the other takes it back.
    restores = sorted(
        (
            (before not in (None, "", False), int(pk), field, before, after)
            for pk, fields in original.fields.items()
            for field, (before, after) in fields.items()
        ),
    )
    for _, pk, field, _before, after in restores:
        if field == "name_variants":
            continue  # derived from the authorships held; never a conflict
        now = getattr(locked[pk], field)
        if now != after:
            raise UndoConflict(
                UNDO_FIELD.format(
                    pk=original.pk, r=pk, field=field, now=now, then=after
                )
            )
    _check_outcome(original, moves, locked, restores)
    back: dict[int | None, list[Authorship]] = {}
    for m in reversed(moves):
        back.setdefault(m["before"], []).append(authorships[m["authorship"]])
    for before, group in back.items():
        change.move(group, locked[before] if before else None)
    for _, pk, field, before, _after in restores:
        if field == "name_variants":
            continue  # set below, from what each researcher holds after the moves
        change.set(locked[pk], **{field: before})
    for pk, fields in original.fields.items():
        if "name_variants" in fields:
            _restore_variants(change, locked[int(pk)], *fields["name_variants"])
    change.restore_constraints(original.constraints_off)
    change.retire_constraints(Constraint.objects.filter(pk__in=original.constraints_on))
    _forbid_undone_attach(change, original, moves)
    for lo, hi in undone_merge_pairs(event=original):
        change.constrain(Constraint.Kind.CANNOT_LINK, lo, other=hi)
    _revert_decision(original)
    return change.commit(
        kind=CurationEvent.Kind.UNDONE,
        undoes=original,
        batch=batch,
        proposal=original.proposal,
        researchers=original.researchers,
        extra={"undone_kind": original.kind}
        | ({"authorships_gone": gone} if gone else {}),
    )


def batch_to_undo(batch: CurationEvent) -> list[CurationEvent]:
    """What :func:`batch_undo` undoes of a ``batch`` event: for each of its
    changes that changes state and is in force, latest first, the event to
    undo, the change itself or, when it was undone and redone since, the
    latest redo (a hostile trial: a change undone and redone was passed
    over, and the review reported undone). None for another kind of event,
    or a bulk action still running. One query per link of each undo chain.

    Args:
        batch: any event.
    """
    if batch.kind != CurationEvent.Kind.BATCH:
        return []
    if (batch.extra or {}).get("state", "done") != "done":
        return []
    heads = []
    for member in CurationEvent.objects.filter(batch=batch).order_by("-pk"):
        if not member.changes_state:
            continue
        head, in_force = member, True
        while (
            later := CurationEvent.objects.filter(undoes=head).order_by("-pk").first()
        ) is not None:
            head, in_force = later, not in_force
        if in_force:
            heads.append(head)
    return heads


def is_review_batch(event: CurationEvent) -> bool:
    """Whether ``event`` is a block review's ``batch`` event (or the undo of
    one), which the admin undoes whole in one request: a review is a
    block's changes, applied in one request too. A bulk action of up to
    10,000 decisions is undone decision by decision there."""
    return event.kind == CurationEvent.Kind.BATCH and "review" in (
        event.extra if isinstance(event.extra, dict) else {}
    )


def review_undo_offered(event: CurationEvent) -> bool:
    """Whether the admin offers *Undo all…* (or *Redo all…*) on ``event``: a
    review's batch (:func:`is_review_batch`) with a change in force
    (:func:`batch_to_undo`); not after it was undone whole, when it led to
    "nothing left"."""
    return is_review_batch(event) and bool(batch_to_undo(event))


def batch_undo(*, batch: CurationEvent, actor: AbstractBaseUser) -> CurationEvent:
    """Undo a whole block review or bulk action (its ``batch`` event): each
    of its changes in force (:func:`batch_to_undo`), latest first, in one
    transaction.

    Undone one at a time, a review that emptied and retired a profile had
    to be undone retirement first, which left the profile public with no
    paper until the step that emptied it was undone too (a new user's
    trial); all at once, no one sees a state between.

    Args:
        batch: a ``batch`` event whose bulk action is done.
        actor: the curator.

    Returns:
        A new ``batch`` event (``extra``: ``undoes_batch``, ``undone``: the
        undo event ids, ``passed_over``: why each change with nothing left
        to undo was passed over) linking one ``undone`` event per change
        undone.

    Raises:
        NothingToUndo: ``batch`` is not a batch event, its bulk action is
            still running, or none of its changes is left to undo.
        UndoConflict, ResearcherConflict: one change cannot be undone (as
            :func:`event_undo` says, prefixed by the batch); nothing is undone.
    """
    if batch.kind != CurationEvent.Kind.BATCH:
        raise NothingToUndo(
            f"event {batch.pk} ({batch.get_kind_display()}) is not a review or "
            "bulk action; undo it on its own"
        )
    extra = batch.extra if isinstance(batch.extra, dict) else {}
    state = extra.get("state", "done")
    if state != "done":
        raise NothingToUndo(
            f"bulk action {batch.pk} is {state}; undo it once it is done"
        )
    with transaction.atomic():
        members = batch_to_undo(batch)
        if not members:
            raise NothingToUndo(
                f"batch {batch.pk} has no change left to undo: each was undone "
                "or changed nothing"
            )
        undo_batch = CurationEvent.objects.create(
            kind=CurationEvent.Kind.BATCH,
            actor=actor,
            extra={
                "undoes_batch": batch.pk,
                # What its own undo does: a redo's undo undoes the review again.
                "verb": "redone" if extra.get("verb") == "undone" else "undone",
                **{k: v for k, v in extra.items() if k == "review"},
            },
        )
        undone, passed_over = [], {}
        for event in members:
            try:
                undone.append(event_undo(event=event, actor=actor, batch=undo_batch))
            except NothingToUndo as exc:
                # Nothing of it left (its authorships dropped by a newer
                # version of their paper, say): the rest is undone without
                # it (a hostile trial: one such change refused the whole).
                passed_over[str(event.pk)] = str(exc)
            except CurationError as exc:
                raise type(exc)(f"nothing of batch {batch.pk} undone: {exc}") from exc
        if not undone:
            raise NothingToUndo(
                f"batch {batch.pk} has no change left to undo: "
                + "; ".join(passed_over.values())
            )
        touched = sorted({r for e in undone for r in e.researchers})
        CurationEvent.objects.filter(pk=undo_batch.pk).update(
            researchers=touched,
            extra={
                **undo_batch.extra,
                "undone": [e.pk for e in undone],
                **({"passed_over": passed_over} if passed_over else {}),
            },
        )
        undo_batch.refresh_from_db()
    return undo_batch


def _split_gone(
    event: CurationEvent, existing: set[int]
) -> tuple[list[int], list[dict]]:
    """``(ids of the authorships the event moved that are not in ``existing``,
    sorted; its moves of those that are)``."""
    gone = sorted({m["authorship"] for m in event.moves} - existing)
    return gone, [m for m in event.moves if m["authorship"] in existing]


def _nothing_left(event: CurationEvent, gone: list[int], moves: list[dict]) -> bool:
    """Whether an event whose moved authorships ``gone`` no longer exist has
    nothing else to undo: no move left, no field set (``name_variants`` is
    derived from the authorships held, and so is the retirement of a profile
    the moves emptied, with the identifiers it freed), no constraint left."""
    return bool(
        gone
        and not moves
        and all(
            set(f) <= {"name_variants"}
            # A profile the move emptied and retired (edits.retire_emptied)
            # stays retired: the papers it would hold again are gone.
            or (
                set(f) <= {"name_variants", "retired", *IDENTIFIER_FIELDS}
                and f.get("retired") == [False, True]
            )
            for f in event.fields.values()
        )
        and not Constraint.objects.filter(
            pk__in=[*event.constraints_on, *event.constraints_off]
        ).exists()
    )


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


class _TriedOnly(Exception):
    """Rolls back an undo :func:`undo_refusal` only tried."""


def undo_refusal(undo: Callable[[], object]) -> str:
    """Why an undo would be refused now, or "": ``undo`` (an
    :func:`event_undo` or :func:`batch_undo` call) is run in a transaction
    that is then rolled back, so its confirmation page says what the click
    would, before it (a curator read "Yes, undo it" and then the refusal:
    a new user's trial). Must not run inside an outer transaction that
    other work shares.

    Returns:
        The :class:`~curation.exceptions.CurationError` message, or "".
    """
    try:
        with transaction.atomic():
            undo()
            raise _TriedOnly
    except _TriedOnly:
        return ""
    except CurationError as exc:
        return str(exc)


def undo_preview(*, event: CurationEvent) -> tuple[list[int], str]:
    """What an undo of ``event`` would leave out, for its confirmation page.

    Args:
        event: the event a curator is about to undo.

    Returns:
        ``(ids of the authorships it moved that no longer exist, sorted; the
        reason nothing is left to undo, or "")``; a record an undo cannot
        read (:func:`unreadable`) gives ``([], why)``.
    """
    problem = unreadable(event)
    if problem:
        return [], UNREADABLE_EVENT.format(pk=event.pk, problem=problem)
    ids = [m["authorship"] for m in event.moves]
    gone, moves = _split_gone(
        event, set(Authorship.objects.filter(pk__in=ids).values_list("pk", flat=True))
    )
    if _nothing_left(event, gone, moves):
        return gone, NOTHING_LEFT_TO_UNDO.format(
            pk=event.pk, kind=event.get_kind_display(), ids=", ".join(map(str, gone))
        )
    return gone, ""


def _check_outcome(
    original: CurationEvent,
    moves: list[dict],
    locked: dict[int, Researcher],
    restores: list[tuple[bool, int, str, object, object]],
) -> None:
    """Refuse an undo whose result would break an invariant later changes rely on.

    After the undo, every authorship it moves back must land on a live researcher,
    a researcher it retires or merges away must hold nothing, and an identifier it
    restores must not belong to another researcher.

    Args:
        original: the event undone.
        moves: its moves whose authorships still exist.
        locked: the researchers it touched, locked.
        restores: ``(prior value set, researcher id, field, before, after)``
            of each field it set.

    Raises:
        UndoConflict: naming the authorship, researcher or identifier.
    """
    final = {
        pk: {
            "merged_into_id": r.merged_into_id,
            "retired": r.retired,
            "claimed_by_id": r.claimed_by_id,
        }
        for pk, r in locked.items()
    }
    for _, pk, field, before, _after in restores:
        if field in ("merged_into_id", "retired", "claimed_by_id"):
            final[pk][field] = before

    def how(pk: int) -> str:
        if final[pk]["merged_into_id"]:
            return f"merged into researcher {final[pk]['merged_into_id']}"
        return "retired" if final[pk]["retired"] else ""

    for m in moves:
        if m["before"] and how(m["before"]):
            raise UndoConflict(
                UNDO_DEAD.format(
                    pk=original.pk,
                    a=m["authorship"],
                    r=m["before"],
                    how=_how_named(m["before"], how(m["before"])),
                )
            )
    leaving = {m["authorship"] for m in moves}
    for pk in sorted(p for p in final if how(p)):
        if final[pk]["claimed_by_id"]:
            raise UndoConflict(UNDO_CLAIMED.format(pk=original.pk, r=pk, how=how(pk)))
        claim = (
            ClaimRequest.objects.filter(researcher_id=pk, status="pending")
            .values_list("pk", flat=True)
            .first()
        )
        if claim is not None and not locked[pk].retired and final[pk]["retired"]:
            # Retiring it again (a redo) would leave the claim nothing to
            # approve (a hostile trial).
            raise UndoConflict(
                UNDO_CLAIM_PENDING.format(
                    pk=original.pk, r=pk, how=how(pk), claim=claim
                )
            )
        stays = list(
            Authorship.objects.filter(researcher_id=pk)
            .exclude(pk__in=leaving)
            .values_list("pk", flat=True)[:10]
        )
        if stays:
            raise UndoConflict(
                UNDO_HOLDS.format(pk=original.pk, r=pk, how=how(pk), ids=stays)
            )
    cleared = {(pk, field) for _, pk, field, before, _ in restores if before is None}
    for _, pk, field, before, _after in restores:
        if field not in IDENTIFIER_FIELDS or before is None:
            continue
        holders = [
            other
            for other in Researcher.objects.filter(**{field: before})
            .exclude(pk=pk)
            .values_list("pk", flat=True)
            if (other, field) not in cleared
        ]
        if holders:
            raise UndoConflict(
                UNDO_TAKEN.format(
                    pk=original.pk, field=field, value=before, r=pk, other=holders[0]
                )
            )


def _how_named(pk: int, how: str) -> str:
    """``how`` researcher ``pk`` is not live, naming the change to undo first
    when it was retired: the latest event that retired it (a review's
    ``retired`` event, say), which the curator can undo from History."""
    event = retiring_event(pk) if how == "retired" else None
    if event is None:
        return how
    return f"retired (by event {event.pk}, {event.get_kind_display()})"


# How many of a researcher's latest field-setting events retiring_event
# reads: a profile's history holds a few dozen at most.
RETIREMENT_EVENTS_READ = 100


def retiring_event(researcher_id: int) -> CurationEvent | None:
    """The latest event that set researcher ``researcher_id``'s ``retired``
    from False to True (of its latest :data:`RETIREMENT_EVENTS_READ` that
    set a field), or None."""
    key = str(researcher_id)
    events = CurationEvent.objects.filter(fields__has_key=key).order_by("-pk")
    for event in events[:RETIREMENT_EVENTS_READ]:
        mine = event.fields.get(key) if isinstance(event.fields, dict) else None
        if isinstance(mine, dict) and mine.get("retired") == [False, True]:
            return event
    return None


def _restore_variants(
    change: Change, researcher: Researcher, before: list[str], after: list[str]
) -> None:
    """Restore the prior name variants, or, if a later change altered them, the
    variants printed on the authorships the researcher holds now."""
    held = list(
        Authorship.objects.filter(researcher=researcher)
        .values_list("raw_name", flat=True)
        .distinct()
        .order_by("raw_name")
    )
    # What the researcher showed before this undo's own moves added to it.
    now = change.fields.get(str(researcher.pk), {}).get(
        "name_variants", [researcher.name_variants]
    )[0]
    if now != after:
        kept = [v for v in now if v in held]
        before = kept + [v for v in held if v not in kept]
    change.set(researcher, name_variants=before)


def _forbid_undone_attach(
    change: Change, original: CurationEvent, moves: list[dict]
) -> None:
    """Record a cannot-link for each authorship an undone attach had moved.

    Undoing an applied ``attach`` is the curator's word that the authorship is
    not that researcher's, as a rejection is (:func:`curation.services.
    proposal_reject`). The proposal goes ``reverted``, so its fingerprint is not
    proposed again; without the constraint the matcher would cluster the
    authorship with the same researcher again, draft that same fingerprint,
    drop it, and leave the authorship with no proposal at all (hostile trial,
    stop 39). With it, the next run offers the authorship to another
    researcher or as a new person. The constraints are written with the undo
    event, so undoing the undo retires them. ``moves``: the moves being undone
    (those whose authorship still exists).
    """
    researcher = undo_forbids(event=original)
    for m in moves:
        if researcher and m["before"] is None and m["after"] == researcher:
            change.constrain(
                Constraint.Kind.CANNOT_LINK, researcher, authorship=m["authorship"]
            )


def undo_forbids(*, event: CurationEvent) -> int | None:
    """The researcher an undo of ``event`` forbids its authorships, or None.

    Args:
        event: an event a curator undoes or is about to undo.

    Returns:
        The id of the researcher of an applied ``attach`` proposal (an undo
        records a cannot-link for each authorship the attach moved onto it,
        :func:`_forbid_undone_attach`); None for any other event.
    """
    if event.kind != CurationEvent.Kind.PROPOSAL_APPLIED or not event.proposal_id:
        return None
    proposal = event.proposal
    if proposal.kind != Proposal.Kind.ATTACH:
        return None
    return proposal.researcher_id


def event_undone(*, event_id: int) -> bool:
    """Whether an event's effect is undone now: its latest undo stands (is
    not itself undone). One query per link of the undo chain.

    For what cannot be read from rows: a departed byline slot's constraints
    (:class:`harvest.models.DepartedSlot`) were off the database while an
    undo of their event ran."""
    undo = (
        CurationEvent.objects.filter(undoes_id=event_id)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    return undo is not None and not event_undone(event_id=undo)


def undone_merge_pairs(*, event: CurationEvent) -> list[tuple[int, int]]:
    """The researcher pairs an undo of ``event`` says are not one person.

    Undoing a merge (a curator's direct merge, or an applied ``merge``
    proposal) is the curator's word that the researchers it joined are two
    people, as rejecting a merge proposal is: each pair of them gets a
    cannot-link, written with the undo event (so undoing the undo retires
    it). An undone proposal goes ``reverted`` and is not proposed again,
    but a direct merge has no proposal: a hostile trial had the next run
    propose the same merge on an ORCID iD the survivor's papers carried
    and the identifier policy apply it, reversing the undo.

    Args:
        event: an event a curator undoes or is about to undo.

    Returns:
        ``[(lower id, higher id)]`` of the survivor and each researcher
        merged into it, and of those among themselves; ``[]`` for any event
        but a merge.
    """
    if event.kind not in (
        CurationEvent.Kind.MERGED,
        CurationEvent.Kind.PROPOSAL_APPLIED,
    ):
        return []
    joined: set[int] = set()
    for pk, fields in event.fields.items():
        change = fields.get("merged_into_id") if isinstance(fields, dict) else None
        if (
            isinstance(change, list | tuple)
            and len(change) == 2
            and change[0] is None
            and is_id(change[1])
            and _is_id_text(pk)
        ):
            joined |= {int(pk), change[1]}
    ids = sorted(joined)
    return [(a, b) for n, a in enumerate(ids) for b in ids[n + 1 :]]


def undo_would_forbid(*, event: CurationEvent) -> int | None:
    """What the confirmation page of an undo of ``event`` says it forbids:
    the researcher of :func:`undo_forbids`, when the event is not undone
    already and one of the authorships it moved is still on that researcher
    (else the undo is refused, or has nothing of it to undo); None
    otherwise. One query at most."""
    researcher = undo_forbids(event=event)
    if researcher is None or event.undone_by.exists():
        return None
    moved = [m["authorship"] for m in event.moves if m["after"] == researcher]
    if Authorship.objects.filter(pk__in=moved, researcher_id=researcher).exists():
        return researcher
    return None


def decision_after_undo(*, event: CurationEvent) -> tuple[int, str] | None:
    """What an undo of ``event`` does to the proposal it decided, for the
    undo page and its message (:func:`_revert_decision` does it).

    Returns:
        ``(proposal id, status it takes)``: an applied proposal goes
        ``reverted``, a rejected one back to ``pending`` (the queue); an
        undo of such an undo the other way; None for an event that decided
        no proposal. One query per link of the undo chain.
    """
    return _decision_of(*event.undo_chain_root())


def _decision_of(first: CurationEvent, redo: bool) -> tuple[int, str] | None:
    """:func:`decision_after_undo` from the event the undo chain starts
    from and whether the undo redoes it."""
    if not first.proposal_id:
        return None
    if first.kind == CurationEvent.Kind.PROPOSAL_APPLIED:
        return first.proposal_id, "applied" if redo else "reverted"
    if first.kind == CurationEvent.Kind.PROPOSAL_REJECTED:
        return first.proposal_id, "rejected" if redo else "pending"
    return None


def _revert_decision(original: CurationEvent) -> None:
    """Keep the proposal's or claim's status in step with the undo."""
    first, redo = original.undo_chain_root()
    decided = _decision_of(first, redo)
    if decided is not None:
        pk, new = decided
        old = {
            Proposal.Status.REVERTED: Proposal.Status.APPLIED,
            Proposal.Status.APPLIED: Proposal.Status.REVERTED,
            Proposal.Status.PENDING: Proposal.Status.REJECTED,
            Proposal.Status.REJECTED: Proposal.Status.PENDING,
        }[new]
        if new == Proposal.Status.PENDING:
            proposal = Proposal.objects.get(pk=pk)
            if Proposal.objects.filter(
                fingerprint=proposal.fingerprint, status=Proposal.Status.PENDING
            ).exists():
                raise UndoConflict(
                    UNDO_PENDING_TWIN.format(pk=original.pk, proposal=proposal.pk)
                )
        Proposal.objects.filter(pk=pk, status=old).update(status=new)
    claim = first.extra.get("claim")
    if claim and first.kind == CurationEvent.Kind.CLAIM_APPROVED:
        old, new = (
            (ClaimRequest.Status.PENDING, ClaimRequest.Status.APPROVED)
            if redo
            else (ClaimRequest.Status.APPROVED, ClaimRequest.Status.PENDING)
        )
        ClaimRequest.objects.filter(pk=claim, status=old).update(status=new)
