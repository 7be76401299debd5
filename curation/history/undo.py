"""Undo one event exactly (:func:`event_undo`), as an event that can itself
be undone.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from curation.changes import Change
from curation.exceptions import (
    ALREADY_UNDONE,
    NOTHING_LEFT_TO_UNDO,
    NOTHING_TO_UNDO,
    UNDO_FIELD,
    UNDO_MOVED,
    UNREADABLE_EVENT,
    NothingToUndo,
    UndoConflict,
)
from curation.history.checks import (
    _check_outcome,
    _forbid_undone_attach,
    _nothing_left,
    _restore_variants,
    _revert_decision,
    _split_gone,
    undone_merge_pairs,
)
from curation.history.reads import unreadable
from curation.history.sources import source_not_undone
from curation.models import Constraint, CurationEvent
from wovepaper.models import Authorship


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
