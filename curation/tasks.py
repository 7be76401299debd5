"""Celery tasks of curation: thin, idempotent, each calls one service."""

from __future__ import annotations

from celery import chord, shared_task
from celery.result import allow_join_result
from django.conf import settings

from curation import services
from curation.exceptions import MatchingBusy
from wovepaper.celery import TRANSIENT

# What a curator asked for (a bulk action, its undo) is done once whatever
# the broker or the database does meanwhile: redelivered to another worker if
# this one dies (acks late), retried with backoff while the database
# connection is down (wovepaper.celery.TRANSIENT: 2 s doubling to 300 s, until
# it answers), without a bound.
_CURATOR_ASKED = {
    "acks_late": True,
    "max_retries": None,
    "autoretry_for": TRANSIENT,
    "retry_backoff": 2,
    "retry_backoff_max": 300,
}
# Every matching task, the same way; matching is idempotent.
_MATCHING = {"bind": True, **_CURATOR_ASKED}


@shared_task(name="curation.matching_run", **_MATCHING)
def matching_run_task(
    self, block_keys: list[str] | None = None, merges: bool = True
) -> dict[str, int]:
    """Run matching (all blocks, or the given ones), fanned out over workers.

    Plans the run (:func:`curation.services.matching_plan`: a full run first
    makes stale what can no longer apply), then replaces itself with a chord:
    one :func:`matching_shard_task` per shard of blocks, then
    :func:`matching_finish_task` with their counts, so this task's result is
    the run's counts. Eagerly (the embedded setup) the chord runs in this
    process, one shard after another.

    ``merges=False`` (a harvest's incremental run) proposes no merges: see
    :func:`curation.services.matching_run`.

    Returns:
        The counts of :func:`curation.services.matching_run` (the chord's).
    """
    plan = services.matching_plan(block_keys=block_keys)
    full = block_keys is None
    finish = matching_finish_task.s(
        full=full, merges=merges, started=plan.started, made_stale=plan.made_stale
    )
    if not plan.shards:
        return finish.apply(args=([],)).get()
    fanned = chord(
        [
            matching_shard_task.s(
                block_keys=keys, full=full, merges=merges, started=plan.started
            )
            for keys in plan.shards
        ],
        finish,
    )
    if not self.request.is_eager:
        return self.replace(fanned)
    # Eagerly, Celery applies the chord here and joins its header's results,
    # which it refuses inside a task unless allowed: nothing is waited on.
    with allow_join_result():
        return self.replace(fanned)


@shared_task(name="curation.matching_shard", **_MATCHING)
def matching_shard_task(
    self, block_keys: list[str], full: bool, merges: bool = True, started: str = ""
) -> dict[str, int | list[int]]:
    """Match one shard of a run's blocks under their locks.

    While another run holds one of its blocks this one waits: it is retried
    after ``CURATION_MATCHING_RETRY_SECONDS`` (without a bound: a lock always
    ends, with its run or with its connection), having written nothing.

    Returns:
        The counts of :func:`curation.services.matching_shard`.
    """
    try:
        return services.matching_shard(
            block_keys=block_keys, full=full, merges=merges, started=started
        )
    except MatchingBusy as exc:
        raise self.retry(
            exc=exc, countdown=settings.CURATION_MATCHING_RETRY_SECONDS
        ) from exc


@shared_task(name="curation.matching_finish", **_MATCHING)
def matching_finish_task(
    self,
    shard_counts: list[dict],
    full: bool,
    merges: bool = True,
    started: str = "",
    made_stale: int = 0,
) -> dict[str, int]:
    """Finish a fanned-out run: what crosses blocks, and the auto-apply.

    Retried after ``CURATION_MATCHING_RETRY_SECONDS`` while another full run
    is in this step.

    Returns:
        The counts of :func:`curation.services.matching_finish`.
    """
    try:
        return services.matching_finish(
            shard_counts=shard_counts,
            full=full,
            merges=merges,
            started=started,
            made_stale=made_stale,
        )
    except MatchingBusy as exc:
        raise self.retry(
            exc=exc, countdown=settings.CURATION_MATCHING_RETRY_SECONDS
        ) from exc


@shared_task(name="curation.bulk_decide", **_CURATOR_ASKED)
def bulk_decide_task(batch_id: int) -> dict:
    """Run a curator's bulk approve or reject (idempotent: a redelivery goes
    on where the batch stopped; :func:`curation.services.bulk_decide_run`).

    Returns:
        The batch's progress: ``state``, ``total``, ``done``, ``skipped``,
        ``failed`` and their counts.
    """
    return services.bulk_decide_run(batch_id=batch_id)


@shared_task(name="curation.batch_undo", **_CURATOR_ASKED)
def batch_undo_task(batch_id: int, actor_id: int) -> dict:
    """Undo a bulk action whole, all or none, for the curator who asked
    (idempotent: :func:`curation.history.batch_undo_run`).

    Returns:
        The outcome written on the batch: ``state`` ``done`` with ``undo``,
        or ``refused`` with ``reason``.
    """
    from curation.history import batch_undo_run

    return batch_undo_run(batch_id=batch_id, actor_id=actor_id)


@shared_task(acks_late=True, name="curation.notify_followers")
def notify_followers_task(event_id: int) -> int:
    """Tell the followers of the researchers an event changed (idempotent).

    Returns:
        How many notifications were written (0 on a redelivery).
    """
    from curation.notify import followers_notify

    return followers_notify(event_id=event_id)


@shared_task(acks_late=True, name="curation.researcher_caches")
def researcher_caches_task(researcher_ids: list[int]) -> int:
    """Drop the cached views of these researchers (idempotent: a redelivery
    bumps their cache versions once more, which costs a render).

    Queued by :class:`curation.changes.Change` for the co-authors of what a
    curation change moved or renamed; bumping a version costs about 0.5 ms on
    Redis (1,000 researchers 0.48 s, 5,000 2.56 s, measured on loopback).

    Returns:
        How many researchers: the distinct positive integer ids given (what
        is not one, such as a string or a float, is passed over: only
        :class:`~curation.changes.Change` queues it, with ids).
    """
    from curation.history import is_id
    from wovepaper.cache import researchers_changed

    listed = researcher_ids if isinstance(researcher_ids, list) else []
    ids = {pk for pk in listed if is_id(pk)}
    # Their bylines and networks changed, not how they are found by name.
    researchers_changed(ids, listed=False)
    return len(ids)
