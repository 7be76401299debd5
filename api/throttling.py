"""The API's rate limits: DRF's anonymous and per-user throttles, counted
atomically and open while Redis is down (:mod:`wovepaper.throttle`)."""

from __future__ import annotations

from rest_framework import throttling

from wovepaper.throttle import Rate, window_hit


class _WindowCounted:
    """DRF's ``SimpleRateThrottle`` with :func:`wovepaper.throttle.window_hit`
    as its counter (DRF's reads, appends to and writes back a list of
    timestamps, which concurrent requests overwrite)."""

    _wait = 0.0

    def allow_request(self, request, view) -> bool:
        """Whether this request is within the scope's rate (DRF's contract)."""
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        allowed, self._wait = window_hit(
            key=key, rate=Rate(self.num_requests, self.duration)
        )
        return allowed

    def wait(self) -> float:
        """Seconds until the refused client's window ends (``Retry-After``)."""
        return self._wait


class AnonRateThrottle(_WindowCounted, throttling.AnonRateThrottle):
    """Anonymous clients, by address (settings ``anon`` rate)."""


class UserRateThrottle(_WindowCounted, throttling.UserRateThrottle):
    """Token or session users, by account (settings ``user`` rate)."""
