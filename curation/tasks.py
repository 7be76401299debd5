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
