"""Deciding many proposals: at once, in this process (:func:`proposals_decide`),
or recorded as a batch a worker runs (:func:`bulk_decide_start`,
:func:`bulk_decide_run`), so a web request never holds them (issue 47).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import DatabaseError, transaction

from curation.changes import gathered
from curation.deciding.apply import proposal_apply, proposal_reject
from curation.exceptions import CurationError
from curation.models import CurationEvent, Proposal
from wovepaper.outbox import outbox_send, registered_task

logger = logging.getLogger(__name__)


def proposals_decide(
    *,
    proposals: list[Proposal],
    approve: bool,
    actor: AbstractBaseUser,
    reason: str = "",
) -> tuple[CurationEvent, int, list[str]]:
    """Approve or reject many proposals now, in this process.

    What :func:`bulk_decide_run` does for a bulk action a worker runs
    (:func:`bulk_decide_start`), for callers that want the outcome at once
    (scripts, tests): one ``batch`` event records the bulk action and each
    proposal's event links to it; a proposal that fails (decided already,
    stale, conflicting, or refused by the database) costs nothing else and is
    listed with its reason.

    Args:
        proposals: the proposals, decided in id order.
        approve: True applies, False rejects.
        actor: the curator.
        reason: for rejections, kept on each proposal.

    Returns:
        ``(batch_event, done_count, skipped_reasons)``; the reasons list the
        skipped (decided already, stale, conflicting) then the failed
        (refused by the database).
    """
    batch = _batch_event([p.pk for p in proposals], approve, actor, reason)
    extra = bulk_decide_run(batch_id=batch.pk)
    batch.refresh_from_db()
    return batch, extra["done"], [*extra["skipped"], *extra["failed"]]


# Decisions of a bulk action committed in one transaction, each in its own
# savepoint, their follow-ups (cache bumps, tasks) queued once
# (changes.gathered); its progress is written after each. 100 holds the
# touched profiles' locks for well under a second.
BULK_CHUNK = 100
# Reasons a batch event keeps of each kind (the counts are whole).
BULK_REASONS_KEPT = 100


def _batch_event(
    ids: Sequence[int], approve: bool, actor: AbstractBaseUser, reason: str
) -> CurationEvent:
    """The ``batch`` event of a bulk action, ``queued``: which proposals,
    approve or reject, the reason, and its progress (``total``, ``done``,
    ``skipped``, ``failed``)."""
    ids = sorted(set(ids))
    return CurationEvent.objects.create(
        kind=CurationEvent.Kind.BATCH,
        actor=actor,
        extra={
            "verb": "applied" if approve else "rejected",
            "proposals": ids,
            "reason": reason,
            "state": "queued",
            "total": len(ids),
            "done": 0,
            "skipped": [],
            "failed": [],
            "skipped_count": 0,
            "failed_count": 0,
        },
    )


def bulk_decide_start(
    *,
    proposal_ids: Sequence[int],
    approve: bool,
    actor: AbstractBaseUser,
    reason: str = "",
) -> CurationEvent:
    """Record a bulk approve or reject and queue it for a worker.

    The request that asks returns at once (issue 47: approving 5,784
    proposals inside one request took 5 min 19 s, past gunicorn's 30 s); the
    worker runs :func:`bulk_decide_run` and writes its progress on the
    ``batch`` event, which the admin's progress page reads. The embedded
    setup runs the task eagerly, before this returns.

    Args:
        proposal_ids: the proposals to decide (decided in id order).
        approve: True applies, False rejects.
        actor: the curator.
        reason: for rejections, kept on each proposal.

    Returns:
        The ``batch`` event (``extra["state"]``: ``queued``, then
        ``running`` and ``done``).
    """
    bulk_decide_task = registered_task("curation.bulk_decide")
    batch = _batch_event(proposal_ids, approve, actor, reason)
    if bulk_decide_task.app.conf.task_always_eager:
        # In this process: the batch row is this transaction's own.
        bulk_decide_task.delay(batch.pk)
        batch.refresh_from_db()
    else:
        # A worker reads the batch once the request has committed it; through
        # the outbox, so a broker that is down delays the batch, never loses it.
        outbox_send(task="curation.bulk_decide", kwargs={"batch_id": batch.pk})
    return batch


def bulk_decide_run(*, batch_id: int) -> dict:
    """Decide the proposals of a bulk action's ``batch`` event (a worker's
    task, or :func:`proposals_decide` in this process).

    :data:`BULK_CHUNK` decisions a transaction, each by the one-proposal
    service (:func:`proposal_apply`, :func:`proposal_reject`) in its own
    savepoint: one that fails costs nothing else. Skipped: decided already,
    stale, conflicting (a :class:`~curation.exceptions.CurationError`);
    failed: refused by the database. Each proposal's event links to the
    batch. Progress is written on the batch event after each chunk.

    Idempotent: a redelivered task passes over the proposals the batch
    decided already (they count as done) and a finished batch is left as it
    is.

    Args:
        batch_id: a ``batch`` event made by :func:`bulk_decide_start`.

    Returns:
        The batch's ``extra``: ``state`` (``done``), ``total``, ``done``,
        ``skipped`` and ``failed`` (reasons, the first
        :data:`BULK_REASONS_KEPT` of each), ``skipped_count``,
        ``failed_count``.

    Raises:
        CurationEvent.DoesNotExist: no batch event has that id.
    """
    batch = CurationEvent.objects.select_related("actor").get(
        pk=batch_id, kind=CurationEvent.Kind.BATCH
    )
    extra = dict(batch.extra)
    if extra.get("state") == "done" or extra.get("verb") not in ("applied", "rejected"):
        # Finished, or not a bulk action (a block review's batch): untouched.
        return extra
    approve = extra.get("verb") == "applied"
    ids = [int(pk) for pk in extra.get("proposals", [])]
    decided = set(
        CurationEvent.objects.filter(batch=batch, proposal_id__isnull=False)
        .exclude(kind=CurationEvent.Kind.PROPOSAL_STALE)
        .values_list("proposal_id", flat=True)
    )
    found = Proposal.objects.in_bulk(ids)
    done, skipped, failed = len(decided & set(ids)), [], []

    def save(state: str) -> None:
        extra.update(
            state=state,
            done=done,
            skipped=skipped[:BULK_REASONS_KEPT],
            failed=failed[:BULK_REASONS_KEPT],
            skipped_count=len(skipped),
            failed_count=len(failed),
        )
        CurationEvent.objects.filter(pk=batch.pk).update(extra=extra)

    save("running")
    todo = [pk for pk in ids if pk not in decided]
    for start in range(0, len(todo), BULK_CHUNK):
        with transaction.atomic(), gathered():
            for pk in todo[start : start + BULK_CHUNK]:
                proposal = found.get(pk)
                if proposal is None:
                    skipped.append(f"proposal #{pk} no longer exists")
                    continue
                # Each service opens its own savepoint here (and a stale
                # proposal's mark is written before it raises, so it stays).
                try:
                    if approve:
                        proposal_apply(
                            proposal=proposal, actor=batch.actor, batch=batch
                        )
                    else:
                        proposal_reject(
                            proposal=proposal,
                            actor=batch.actor,
                            reason=extra.get("reason", ""),
                            batch=batch,
                        )
                    done += 1
                except CurationError as exc:
                    skipped.append(str(exc))
                except DatabaseError as exc:
                    # Its savepoint rolled back; the rest of the batch goes on.
                    logger.exception("proposal #%s not decided", pk)
                    failed.append(
                        f"proposal #{pk}: the database refused it "
                        f"({type(exc).__name__}: {str(exc).splitlines()[0][:200]})"
                    )
        save("running")
    save("done")
    return extra
