"""``/healthz``: is this web process able to serve (database and broker reachable)?"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)

# Seconds a dependency may take before it counts as down: a load balancer
# polls every few seconds and must not pile up waiting checks.
CHECK_TIMEOUT = 2.0


def _database() -> str:
    """``ok``, or the error's class name (never its message: it may hold the DSN)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
        logger.warning("healthz: database check failed", extra={"error": repr(exc)})
        return type(exc).__name__
    return "ok"


def _broker() -> str:
    """``ok``, ``eager`` (no broker configured: tasks run in-process), or an error."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "eager"
    from wovepaper.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=CHECK_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
        logger.warning("healthz: broker check failed", extra={"error": repr(exc)})
        return type(exc).__name__
    return "ok"


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """200 ``{"status": "ok", "database": "ok", "broker": "ok"|"eager", ...}``.

    503 with the same keys when the database or the broker cannot be reached;
    ``elapsed_ms`` is the time the checks took. Meant for load balancers and
    orchestrators (liveness and readiness); it reads no rows.
    """
    start = time.perf_counter()
    checks = {"database": _database(), "broker": _broker()}
    healthy = all(value in ("ok", "eager") for value in checks.values())
    return JsonResponse(
        {
            "status": "ok" if healthy else "unavailable",
            **checks,
            "elapsed_ms": round((time.perf_counter() - start) * 1000, 1),
        },
        status=200 if healthy else 503,
    )
