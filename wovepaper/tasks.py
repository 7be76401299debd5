"""Celery tasks of the core app: thin, idempotent, each calls one service."""

from __future__ import annotations

import datetime as dt

from celery import shared_task
from django.utils import timezone

from wovepaper.celery import TRANSIENT
from wovepaper.digest import digest_send


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
    embeds nothing twice.

    Args:
        paper_ids: the papers to consider; None with ``changed_since`` None for
            every paper.
        changed_since: an ISO datetime; only papers modified since then (a
            harvest run's start) are considered.

    Returns:
        The service's counts: papers considered, embedded, unchanged.
    """
    from wovepaper.models import Paper
    from wovepaper.semantic import embeddings_refresh

    papers = Paper.objects.all()
    if paper_ids is not None:
        papers = papers.filter(pk__in=paper_ids)
    if changed_since:
        papers = papers.filter(modified__gte=dt.datetime.fromisoformat(changed_since))
    return embeddings_refresh(papers=papers)
