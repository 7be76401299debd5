"""Undo a whole review (a batch of events) at once, all or none
(:func:`batch_undo`), and whether History offers it.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from curation.exceptions import (
    CurationError,
    NothingToUndo,
)
from curation.history.undo import event_undo
from curation.models import CurationEvent


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
