"""Celery tasks of the core app: thin, idempotent, each calls one service."""

from __future__ import annotations

import datetime as dt

from celery import shared_task
from django.utils import timezone

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
