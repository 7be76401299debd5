"""Celery tasks of curation: thin, idempotent, each calls one service."""

from __future__ import annotations

import hashlib

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from curation import services


def _lock_key(block_keys: list[str] | None) -> str:
    scope = "all" if block_keys is None else "|".join(sorted(block_keys))
    return "matching-lock:" + hashlib.sha256(scope.encode()).hexdigest()[:32]


@shared_task(acks_late=True, name="curation.matching_run")
def matching_run_task(block_keys: list[str] | None = None) -> dict[str, int]:
    """Run matching (all blocks, or the given ones) and return the service's counts.

    Two runs over the same blocks never write at once: a cache lock (Redis in
    production) held for at most ``CURATION_MATCHING_LOCK_SECONDS`` makes the
    second one return ``{"skipped": 1}``; matching is idempotent, so the next run
    picks up whatever it would have done.
    """
    key = _lock_key(block_keys)
    if not cache.add(key, "1", timeout=settings.CURATION_MATCHING_LOCK_SECONDS):
        return {"skipped": 1}
    try:
        return services.matching_run(block_keys=block_keys)
    finally:
        cache.delete(key)
