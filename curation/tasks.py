"""Celery tasks of curation: thin, idempotent, each calls one service."""

from __future__ import annotations

from celery import shared_task

from curation import services


@shared_task(acks_late=True, name="curation.matching_run")
def matching_run_task(block_keys: list[str] | None = None) -> dict[str, int]:
    """Run matching (all blocks, or the given ones) unless a run on them is going.

    Returns:
        The service's counts, or ``{"skipped": 1}`` (see
        :func:`curation.services.matching_run_exclusive`).
    """
    return services.matching_run_exclusive(block_keys=block_keys)


@shared_task(acks_late=True, name="curation.notify_followers")
def notify_followers_task(event_id: int) -> int:
    """Tell the followers of the researchers an event changed (idempotent).

    Returns:
        How many notifications were written (0 on a redelivery).
    """
    from curation.notify import followers_notify

    return followers_notify(event_id=event_id)
