"""Rate limits that hold under concurrency and let requests through when Redis is down.

One counter per client and fixed window, counted with the cache's atomic
``incr`` (Redis ``INCR``; a lock in local memory). DRF's own throttles keep a
list of timestamps that they read, append to and write back: 8 concurrent
clients got 757 requests through a limit of 600 (issue 48). A fixed window
lets at most twice the rate through across one window's edge, the trade
GitHub's and Redis's own rate-limiting pattern make ("INCR", Redis docs:
"Pattern: Rate limiter").

The client is who DRF says it is (``BaseThrottle.get_ident``): the socket's
address, or with ``PROXY_COUNT`` proxies in front the address the nearest of
them saw, never an ``X-Forwarded-For`` a client wrote itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle

from wovepaper.failsafe_cache import CacheUnavailable

# Seconds a window's counter outlives the window (clock skew between web
# processes).
EXPIRY_SLACK_SECONDS = 5
# The units a rate may be written in, as DRF reads them ("600/minute").
_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_SPELLINGS = {"s", "sec", "second", "m", "min", "minute", "h", "hour", "d", "day"}


@dataclass(frozen=True)
class Rate:
    """A limit: ``requests`` a ``seconds`` window."""

    requests: int
    seconds: int

    @classmethod
    def parse(cls, text: str) -> Rate:
        """A rate as DRF writes it: ``"600/minute"``, ``"60/m"``, ``"10/second"``.

        Raises:
            ValueError: not ``<whole number>/<second|minute|hour|day>``
                (the message quotes it).
        """
        count, _, period = text.partition("/")
        try:
            requests = int(count)
            seconds = _PERIODS[period.strip()[:1].lower()]
            if period.strip().lower() not in _SPELLINGS:
                raise KeyError(period)
        except (ValueError, KeyError):
            raise ValueError(
                f"{text!r} is not a rate like '600/minute' "
                "(second, minute, hour or day)"
            ) from None
        if requests < 1:
            raise ValueError(f"{text!r}: a rate allows at least one request")
        return cls(requests, seconds)


def window_hit(*, key: str, rate: Rate) -> tuple[bool, float]:
    """Count one request of ``key`` in the current window of ``rate``.

    Args:
        key: who and what is limited (``"pages:203.0.113.9"``).
        rate: the limit.

    Returns:
        ``(allowed, wait)``: whether this request is within the limit, and
        the seconds until the window ends (when a refused client may try
        again). Allowed, with a wait of 0, when the cache is down: a rate
        limit that fails closed would turn a Redis outage into a site outage.
    """
    now = time.time()
    window = int(now // rate.seconds)
    counter = f"throttle:{key}:{window}"
    try:
        cache.add(counter, 0, timeout=rate.seconds + EXPIRY_SLACK_SECONDS)
        count = cache.incr(counter)
    except CacheUnavailable:
        return True, 0.0
    except ValueError:  # evicted between add and incr, or add refused
        count = 1
        cache.set(counter, count, timeout=rate.seconds + EXPIRY_SLACK_SECONDS)
    return count <= rate.requests, (window + 1) * rate.seconds - now


def client_of(request: HttpRequest) -> str:
    """The client's address as the rate limits know it (DRF's ``get_ident``,
    which honours ``REST_FRAMEWORK["NUM_PROXIES"]``, set from ``PROXY_COUNT``)."""
    return BaseThrottle().get_ident(request)


def page_rate(request: HttpRequest) -> tuple[str, Rate] | None:
    """The limit of one public-page request: ``(scope, rate)``, or None for
    requests no page limit applies to.

    Signed-in users count against ``PAGE_USER_RATE`` by account; anonymous
    clients against ``PAGE_ANON_RATE`` by address, and their searches (the
    costliest page: a cold search reads the full-text index) against
    ``PAGE_SEARCH_RATE`` instead. The API (DRF's throttles), the admin, static
    files, the health check and ``robots.txt`` (a crawler must always read it)
    are not counted here.
    """
    path = request.path
    if path.startswith(("/api/", "/admin/", "/static/", "/healthz", "/robots.txt")):
        return None
    if request.user.is_authenticated:
        return f"user:{request.user.pk}", Rate.parse(settings.PAGE_USER_RATE)
    client = client_of(request)
    if path.startswith("/search/"):
        return f"search:{client}", Rate.parse(settings.PAGE_SEARCH_RATE)
    return f"pages:{client}", Rate.parse(settings.PAGE_ANON_RATE)
