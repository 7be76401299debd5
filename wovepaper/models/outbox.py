"""The transactional outbox: Celery tasks written with the change that needs them."""

from __future__ import annotations

from django.db import models


class OutboxMessage(models.Model):
    """A Celery task to send once the transaction that wrote it has committed.

    Written in the same transaction as the change that needs it (a curation
    step's follower notifications, a cache-version bump Redis refused), so
    the change and the task commit together or not at all; deleted once the
    broker has taken the task. A message the broker refused stays, with its
    attempts and error, and :func:`wovepaper.outbox.outbox_flush` (a beat task,
    every minute) sends it again. The pattern: Richardson, "Pattern:
    Transactional outbox", microservices.io.

    Attributes:
        task: the registered Celery task name (``curation.notify_followers``).
        kwargs: its keyword arguments (JSON).
        created_at: when the change was written (aware UTC).
        attempts: sends the broker refused.
        last_error: the last refusal, ``"ExceptionName: message"``, or "".
    """

    task = models.CharField(max_length=200)
    kwargs = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.task} #{self.pk} ({self.attempts} attempts)"
