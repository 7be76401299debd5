"""Undo a whole review or bulk action (a batch of events) at once, all or
none (:func:`batch_undo`): a review in the curator's request, a bulk action
by a worker (:func:`batch_undo_start`); and whether the admin offers it.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet

from curation.exceptions import (
    CurationError,
    NothingToUndo,
)
from curation.history.undo import event_undo
from curation.models import CurationEvent
from wovepaper.celery import TRANSIENT
from wovepaper.outbox import outbox_send, registered_task


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
    one), which the admin undoes whole in the curator's request: a review is
    a block's changes, applied in one request too. A bulk action's batch, of
    up to 10,000 decisions, is undone whole by a worker
    (:func:`batch_undo_start`)."""
    return event.kind == CurationEvent.Kind.BATCH and "review" in (
        event.extra if isinstance(event.extra, dict) else {}
    )


def undo_all_offered(event: CurationEvent) -> bool:
    """Whether the admin offers *Undo all…* (or *Redo all…*) on ``event``: a
    ``batch`` event, done, with a change in force; not after it was undone
    whole, when it led to "nothing left".

    A review's changes are read through their undo chains
    (:func:`batch_to_undo`); a bulk action may hold 10,000, so for it one
    query asks whether a decision of it was never undone (its stale marks,
    which change nothing, aside; one undone and redone since is found by
    the worker, which reads the chains).
    """
    if event.kind != CurationEvent.Kind.BATCH:
        return False
    extra = event.extra if isinstance(event.extra, dict) else {}
    if extra.get("state", "done") != "done":
        return False
    if is_review_batch(event):
        return bool(batch_to_undo(event))
    return bulk_in_force(event).exists()


# Members of a bulk action that change nothing to undo: a proposal found
# stale is marked so, and stays so (curation.models.CurationEvent.changes_state).
NEVER_UNDONE = (CurationEvent.Kind.PROPOSAL_STALE, CurationEvent.Kind.SOURCE)


def bulk_in_force(batch: CurationEvent) -> QuerySet[CurationEvent]:
    """The decisions of a bulk action's ``batch`` never undone (its stale
    marks aside): what its *Undo all…* offers, in one query, without reading
    undo chains as :func:`batch_to_undo` does (a decision undone and redone
    since is left out here; the worker finds it)."""
    return CurationEvent.objects.filter(batch=batch, undone_by__isnull=True).exclude(
        kind__in=NEVER_UNDONE
    )


def undo_all_asked(batch: CurationEvent) -> dict:
    """What the batch says of its *Undo all…* (``extra["undo_all"]``, written
    by :func:`batch_undo_start` and :func:`batch_undo_run`); ``{}`` when
    none, or when the row was edited by hand into something else."""
    extra = batch.extra if isinstance(batch.extra, dict) else {}
    asked = extra.get("undo_all")
    return asked if isinstance(asked, dict) else {}


def batch_undo_start(*, batch: CurationEvent, actor: AbstractBaseUser) -> str:
    """Queue :func:`batch_undo` of a bulk action's ``batch`` for a worker, so
    the curator's request returns at once (issue 47: a bulk action of 10,000
    decisions; one transaction undoes them all or none). The embedded setup
    runs the task eagerly, before this returns.

    The batch's ``extra["undo_all"]`` says how it goes: ``state`` ``queued``,
    then ``done`` with ``undo`` (the new batch event's id), ``refused`` with
    ``reason`` (:func:`batch_undo`'s refusal), or ``failed`` with ``reason``
    (an error of the worker's); the event's admin page shows it. Nothing is
    queued, and the state is left as it was, when the bulk action is still
    running, when its undo is queued already, or when it was undone whole
    and nothing of it is in force again (:func:`undo_all_offered`).

    Args:
        batch: a bulk action's ``batch`` event (or the undo of one).
        actor: the curator who asked.

    Returns:
        The state: ``queued``; in the embedded setup the state the eager run
        left (``done``, ``refused`` or ``failed``); or, when nothing was
        queued, the state as it was (``running`` for a bulk action still
        running).
    """
    extra = batch.extra if isinstance(batch.extra, dict) else {}
    if extra.get("state", "done") != "done":
        return "running"
    asked = undo_all_asked(batch)
    if asked.get("state") == "queued" or (
        asked.get("state") == "done" and not undo_all_offered(batch)
    ):
        return asked["state"]
    _undo_all_state(batch.pk, {"state": "queued", "by": actor.pk})
    task = registered_task("curation.batch_undo")
    if task.app.conf.task_always_eager:
        task.delay(batch.pk, actor.pk)
    else:
        # Through the outbox: a broker that is down delays the undo, never
        # loses it.
        outbox_send(
            task="curation.batch_undo",
            kwargs={"batch_id": batch.pk, "actor_id": actor.pk},
        )
    batch.refresh_from_db()
    return undo_all_asked(batch).get("state", "queued")


def batch_undo_run(*, batch_id: int, actor_id: int) -> dict:
    """The worker's part of :func:`batch_undo_start`: :func:`batch_undo`, its
    outcome written to the batch's ``extra["undo_all"]``. Idempotent: it runs
    only while the batch says ``queued``, so a redelivery after it ended
    changes nothing (the undo is all or none: a worker that died in it left
    nothing half done).

    A transient database error (a deadlock, a dropped connection) leaves it
    ``queued`` for the task's retry; in the embedded setup, which does not
    retry, and on any other error, it is ``failed`` with the reason, and the
    curator may ask again (a hostile trial: an error left it ``queued`` for
    good, and the admin refused every later ask).

    Args:
        batch_id: the bulk action's ``batch`` event.
        actor_id: the curator who asked.

    Returns:
        ``extra["undo_all"]`` as written.
    """
    batch = CurationEvent.objects.get(pk=batch_id)
    asked = undo_all_asked(batch)
    if asked.get("state") != "queued":
        return asked
    try:
        actor = get_user_model().objects.get(pk=actor_id)
        undo = batch_undo(batch=batch, actor=actor)
    except CurationError as exc:
        outcome = {"state": "refused", "reason": str(exc)}
    except get_user_model().DoesNotExist:
        outcome = {"state": "refused", "reason": f"user {actor_id} no longer exists"}
    except Exception as exc:
        eager = registered_task("curation.batch_undo").app.conf.task_always_eager
        if isinstance(exc, TRANSIENT) and not eager:
            raise  # still queued: the task retries
        reason = f"{type(exc).__name__}: {exc}"
        _undo_all_state(batch_id, {"by": actor_id, "state": "failed", "reason": reason})
        if eager:
            return undo_all_asked(CurationEvent.objects.get(pk=batch_id))
        raise
    else:
        outcome = {"state": "done", "undo": undo.pk}
    return _undo_all_state(batch_id, {"by": actor_id, **outcome})


def _undo_all_state(batch_id: int, state: dict) -> dict:
    # One statement on the locked batch row: its other extra keys stay as
    # written.
    with transaction.atomic():
        batch = CurationEvent.objects.select_for_update().get(pk=batch_id)
        extra = batch.extra if isinstance(batch.extra, dict) else {}
        CurationEvent.objects.filter(pk=batch_id).update(
            extra={**extra, "undo_all": state}
        )
    return state


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
