"""Celery tasks of the core app: thin, idempotent, each calls one service."""

from __future__ import annotations

import datetime as dt
import logging

from celery import shared_task
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from wovepaper.cache import versions_bump
from wovepaper.celery import TRANSIENT
from wovepaper.digest import digest_send
from wovepaper.failsafe_cache import CacheUnavailable

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, name="wovepaper.digest_send")
def digest_send_task(day_iso: str | None = None) -> dict[str, int]:
    """Send the daily digest of ``day_iso`` (default: yesterday, UTC).

    Idempotent: a user's digest for a day goes out at most once
    (:func:`wovepaper.digest.digest_send`), so a redelivered task sends nothing.

    Args:
        day_iso: the UTC day as ``YYYY-MM-DD``, or None for yesterday.

    Returns:
        The service's counts.

    Raises:
        ValueError: ``day_iso`` is not an ISO date.
    """
    if day_iso:
        day = dt.date.fromisoformat(day_iso)
    else:
        day = timezone.now().astimezone(dt.UTC).date() - dt.timedelta(days=1)
    return digest_send(day=day)


@shared_task(
    bind=True,
    acks_late=True,
    name="wovepaper.embeddings_refresh",
    autoretry_for=TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=300,
    max_retries=8,
)
def embeddings_refresh_task(
    self, paper_ids: list[int] | None = None, changed_since: str | None = None
) -> dict[str, int]:
    """Embed papers whose title or abstract changed (after a harvest, or a backfill).

    Idempotent: unchanged papers are skipped
    (:func:`wovepaper.semantic.embeddings_refresh`), so a redelivered task
    embeds nothing twice. It embeds at most ``settings.EMBED_TASK_MOST`` papers
    (about 25 papers/s on two cores) and queues itself again for the rest. A
    missing model is logged as an error and embeds nothing: the harvest that
    queued it stands.

    Args:
        paper_ids: the papers to consider; None with ``changed_since`` None for
            every paper.
        changed_since: an ISO datetime; only papers modified since then (a
            harvest run's start) are considered.

    Returns:
        The service's counts: papers considered, embedded, unchanged, more
        (1 when the rest was queued); ``error`` 1 when the model is missing.
    """
    from wovepaper.models import Paper
    from wovepaper.semantic import embeddings_refresh

    papers = Paper.objects.all()
    if paper_ids is not None:
        papers = papers.filter(pk__in=paper_ids)
    if changed_since:
        papers = papers.filter(modified__gte=dt.datetime.fromisoformat(changed_since))
    try:
        counts = embeddings_refresh(papers=papers, most=settings.EMBED_TASK_MOST)
    except ImproperlyConfigured as exc:
        # The harvest stands without its embeddings; embed_papers fills them in
        # once the model is in place.
        logger.error("embedding skipped: %s", exc)
        return {"papers": 0, "embedded": 0, "unchanged": 0, "more": 0, "error": 1}
    if counts["more"]:
        # Stay well inside the task time limit: the rest in a task of its own
        # (what this one embedded is skipped there as unchanged).
        self.apply_async(
            kwargs={"paper_ids": paper_ids, "changed_since": changed_since}
        )
    return counts


@shared_task(
    acks_late=True,
    name="wovepaper.cache_versions_bump",
    autoretry_for=(CacheUnavailable,),
    retry_backoff=2,
    retry_backoff_max=300,
    max_retries=20,
)
def cache_versions_bump_task(keys: list[str]) -> int:
    """Bump cache versions a curation step could not bump while the cache was
    down (:func:`wovepaper.cache.versions_bump`), retrying with backoff until
    it is back (about 90 min in all). Idempotent enough: a second bump costs
    one more rendering of each view.

    Args:
        keys: the version keys.

    Returns:
        How many keys were bumped.
    """
    listed = [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []
    versions_bump(listed)
    return len(listed)


@shared_task(acks_late=True, name="wovepaper.researcher_stats")
def researcher_stats_task(researcher_ids: list[int] | None = None) -> int:
    """Rewrite the browse and search figures of these researchers (None: of
    all), :func:`wovepaper.stats.researcher_stats_refresh`. Idempotent: a
    redelivery writes the same rows again.

    Args:
        researcher_ids: researcher ids (what is not a positive integer is
            passed over), or None for every researcher.

    Returns:
        How many researchers are listed with figures now.
    """
    from wovepaper.cache import researchers_changed
    from wovepaper.stats import researcher_stats_refresh

    if researcher_ids is None:
        return researcher_stats_refresh()
    listed = researcher_ids if isinstance(researcher_ids, list) else []
    ids = [
        pk
        for pk in listed
        if isinstance(pk, int) and not isinstance(pk, bool) and pk > 0
    ]
    written = researcher_stats_refresh(researcher_ids=ids)
    # A view cached between the change's own bump and this refresh showed the
    # old figures: bump once more. The lists of researchers found by name
    # (their figures too) catch up as they expire: a curator's change dropped
    # them at its commit, and a matching run's batches would keep every
    # search page cold (wovepaper.cache.researchers_changed).
    researchers_changed(ids, listed=False)
    return written


@shared_task(acks_late=True, name="wovepaper.outbox_flush")
def outbox_flush_task() -> dict[str, int]:
    """Send the outbox messages the broker refused (beat, every minute).

    Returns:
        :func:`wovepaper.outbox.outbox_flush`'s counts.
    """
    from wovepaper.outbox import outbox_flush

    return outbox_flush()
