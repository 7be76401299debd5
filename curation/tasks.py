"""Celery tasks of curation: thin, idempotent, each calls one service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from curation import services
from curation.exceptions import MatchingBusy
from wovepaper.celery import TRANSIENT


@shared_task(
    bind=True,
    acks_late=True,
    name="curation.matching_run",
    max_retries=None,
    autoretry_for=TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=300,
)
def matching_run_task(
    self, block_keys: list[str] | None = None, merges: bool = True
) -> dict[str, int]:
    """Run matching (all blocks, or the given ones), one run at a time.

    ``merges=False`` (a harvest's incremental run) proposes no merges: see
    :func:`curation.services.matching_run`.

    While another run holds the matching lock this one waits: it is retried after
    ``CURATION_MATCHING_RETRY_SECONDS`` (without a bound: the lock always ends,
    with its run or with its connection). A dropped database connection
    (:data:`wovepaper.celery.TRANSIENT`) retries it with backoff (2 s doubling to
    300 s, until the database answers); matching is idempotent.

    Returns:
        The counts of :func:`curation.services.matching_run`.
    """
    try:
        return services.matching_run_exclusive(block_keys=block_keys, merges=merges)
    except MatchingBusy as exc:
        raise self.retry(
            exc=exc, countdown=settings.CURATION_MATCHING_RETRY_SECONDS
        ) from exc


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
    researchers_changed(ids)
    return len(ids)
