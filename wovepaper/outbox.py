"""Send Celery tasks through the transactional outbox, so none is lost.

A curation step queues follow-up tasks (its followers' notifications, its
co-authors' cache drops, a bulk action's batch) once its transaction commits.
Sent straight to the broker, a task the broker refuses (Redis down) was lost
and its error answered 500 for a change already committed (issue 48). Here
the task is written as an :class:`~wovepaper.models.OutboxMessage` in the
change's own transaction, sent once it commits, and deleted only when the
broker has taken it; what the broker refused is sent again by
:func:`outbox_flush` (``wovepaper.outbox_flush``, every minute on beat).
Delivery is at least once: a task is sent twice only when a process dies
between the broker taking it and the row's delete, and the tasks sent this
way are idempotent.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging

from celery import current_app
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

from wovepaper.failsafe_cache import OutageLog
from wovepaper.models import OutboxMessage

logger = logging.getLogger(__name__)
_outage = OutageLog(logger)

# What a broker that cannot take a task raises: kombu's wrapper of connection
# errors, and redis-py's and the socket's own where kombu lets them through.
BROKER_DOWN = (BrokerError, RedisError, OSError)
# Seconds a message waits before the flush sends it: the send its own
# transaction queued on commit is then long done (sent, or refused and kept).
FLUSH_AFTER_SECONDS = 30
# Messages one flush sends at most (a backlog drains over a few minutes).
FLUSH_MOST = 5_000


def outbox_send(*, task: str, kwargs: dict) -> OutboxMessage:
    """Send a Celery task once the current transaction commits, and not before.

    Args:
        task: a registered task name (``curation.notify_followers``).
        kwargs: its keyword arguments, JSON values only.

    Returns:
        The message written (in the caller's transaction; outside one, it
        is committed and sent at once).
    """
    message = OutboxMessage.objects.create(task=task, kwargs=kwargs)
    transaction.on_commit(lambda: outbox_deliver(pk=message.pk), robust=True)
    return message


def _connection():
    """A broker connection that gives up at the first refusal: kombu's default
    retries a refused connection for about 6 s a send, and the outbox retries
    anyway."""
    options = {**current_app.conf.broker_transport_options, "max_retries": 0}
    return current_app.connection_for_write(transport_options=options)


def outbox_deliver(*, pk: int, connection=None) -> str:
    """Send one outbox message to the broker and delete it.

    The row is held (``SELECT ... FOR UPDATE SKIP LOCKED``) while it is sent,
    so the send queued on commit and a flush never send it both. An eager
    Celery (the embedded setup) runs the task here, inside this transaction.

    Args:
        pk: the message's id.
        connection: a broker connection to send on (:func:`_connection`),
            or None for one of its own.

    Returns:
        ``"sent"``; ``"refused"`` when the broker refused it, or
        ``"unknown"`` when no task has its name (either way its ``attempts``
        and ``last_error`` are updated and the row kept for
        :func:`outbox_flush`); ``"held"`` when another process holds or
        deleted it.
    """
    with transaction.atomic():
        message = (
            OutboxMessage.objects.select_for_update(skip_locked=True)
            .filter(pk=pk)
            .first()
        )
        if message is None:
            return "held"
        try:
            found = registered_task(message.task)
        except KeyError:
            _refused(message, f"no task is registered as {message.task!r}")
            logger.error("outbox message %s: no task %r", pk, message.task)
            return "unknown"
        try:
            # No publish retries: the outbox is the retry, and a request
            # waiting out kombu's would hold its curator for nothing. No
            # result either: nothing reads one, and the result backend's
            # subscription retries a down Redis for 19 s.
            with contextlib.ExitStack() as stack:
                if connection is None:
                    connection = stack.enter_context(_connection())
                found.apply_async(
                    kwargs=message.kwargs,
                    retry=False,
                    ignore_result=True,
                    connection=connection,
                )
        except BROKER_DOWN as exc:
            _refused(message, f"{type(exc).__name__}: {exc}")
            _outage.warn(
                "broker unreachable (%s: %s): task %s kept in the outbox to be "
                "sent again; this is said once a minute",
                type(exc).__name__,
                exc,
                message.task,
            )
            return "refused"
        message.delete()
        return "sent"


def registered_task(name: str):
    """The registered task ``name``; a web process imports the apps' task
    modules (Celery's autodiscovery) the first time it asks. Services that
    queue a task reach it by name this way, so they never import the task
    modules that import them (issue 52: no import circles).

    Raises:
        KeyError: no task has that name.
    """
    if name not in current_app.tasks:
        current_app.loader.import_default_modules()
    return current_app.tasks[name]


def _refused(message: OutboxMessage, error: str) -> None:
    OutboxMessage.objects.filter(pk=message.pk).update(
        attempts=F("attempts") + 1, last_error=error[:2000]
    )


def outbox_flush(*, older_than: float = FLUSH_AFTER_SECONDS) -> dict[str, int]:
    """Send again the messages the broker refused (or whose send never ran).

    Oldest first, at most :data:`FLUSH_MOST`; it stops at the first refusal,
    since the broker is then down for the rest too. A message naming no
    registered task is passed over (and logged as an error each time).

    Args:
        older_than: seconds since a message was written before it is sent
            here.

    Returns:
        ``{"sent", "refused", "unknown", "left"}``: messages sent, refused
        by the broker (0 or 1), naming no task, and still in the outbox.
    """
    cutoff = timezone.now() - dt.timedelta(seconds=older_than)
    pks = list(
        OutboxMessage.objects.filter(created_at__lte=cutoff)
        .order_by("id")
        .values_list("pk", flat=True)[:FLUSH_MOST]
    )
    counts = {"sent": 0, "refused": 0, "unknown": 0}
    with _connection() as connection:
        for pk in pks:
            outcome = outbox_deliver(pk=pk, connection=connection)
            if outcome in counts:
                counts[outcome] += 1
            if outcome == "refused":
                break
    return {**counts, "left": OutboxMessage.objects.count()}
