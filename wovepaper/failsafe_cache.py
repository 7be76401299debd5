"""A Redis cache that fails open: when Redis is down, pages answer from the database.

Django's ``RedisCache`` raises ``redis.ConnectionError`` from every call while
Redis is unreachable, and the cache sits in front of the API, researcher
pages, search and ``llms.txt``: a hostile trial stopped Redis for 20 s under
load and 153 of 1,035 requests answered 500 (issue 48). Here a read that
cannot reach Redis is a miss and a write is skipped, so each view computes
its answer from the database as it does on a cold cache. After a failure
Redis is left alone for :data:`RETRY_SECONDS` (a circuit breaker: a
partitioned Redis would otherwise cost every request its socket timeouts),
and the outage is logged once a minute per process, not once a request.

Counters are the exception: :meth:`FailOpenRedisCache.incr` raises
:class:`CacheUnavailable`, because its callers must know. A cache-version
bump that did not happen leaves stale pages once Redis returns
(:mod:`wovepaper.cache` hands it to the outbox, :mod:`wovepaper.outbox`),
and a rate limit (:mod:`wovepaper.throttle`) decides to let the request
through.
"""

from __future__ import annotations

import logging
import threading
import time

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# Seconds the cache stays bypassed after a call failed; then one call tries.
RETRY_SECONDS = 5.0
# Seconds between two warnings of one process about one outage.
WARN_EVERY_SECONDS = 60.0
# What reaching Redis raises: redis-py's errors (ConnectionError, TimeoutError,
# BusyLoadingError, ...) and the socket's own.
UNAVAILABLE = (RedisError, OSError)


class OutageLog:
    """A warning said at most once every :data:`WARN_EVERY_SECONDS` a process.

    An outage fails every request that touches the service; one line a minute
    says it without burying the rest of the log.
    """

    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self._lock = threading.Lock()
        self._said_at = -WARN_EVERY_SECONDS

    def warn(self, message: str, *args) -> None:
        """Log ``message % args`` as a warning unless one went out within a minute."""
        now = time.monotonic()
        with self._lock:
            if now - self._said_at < WARN_EVERY_SECONDS:
                return
            self._said_at = now
        self.log.warning(message, *args)


class CacheUnavailable(Exception):
    """The cache could not be reached: the caller must do without the result."""


class PooledClientRedisCacheClient(RedisCacheClient):
    """Django's Redis cache client keeping one redis-py client per connection pool.

    Django's :meth:`RedisCacheClient.get_client` builds a new ``redis.Redis``
    around the pool for every cache call, and redis-py 5+ fills a table of
    about 170 response callbacks each time: 0.08 ms of a call's 0.26 ms on
    this machine, and a search page makes about 16 calls. A ``redis.Redis``
    is safe to share between threads (it takes a connection from the pool
    per command: redis-py's README, "Thread Safety"), so one is kept per pool.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        """The shared ``redis.Redis`` of the pool Django would use for ``key``."""
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class FailOpenRedisCache(RedisCache):
    """``RedisCache`` whose reads miss and writes are skipped while Redis is down.

    Configure it as Django's own (``BACKEND``, ``LOCATION``, ``OPTIONS``); the
    ``OPTIONS`` reach redis-py's connection pool, where ``socket_timeout`` and
    ``socket_connect_timeout`` (seconds) bound how long a call waits on a Redis
    that stopped answering.

    Every method keeps Django's signature and result shape: ``get`` gives
    ``default``, ``get_many`` ``{}``, ``has_key``, ``add``, ``touch`` and
    ``delete`` False, ``set``, ``set_many`` (every key failed) and
    ``delete_many`` nothing. ``incr`` and ``decr`` raise
    :class:`CacheUnavailable` instead; ``ValueError`` for a missing key as
    Django's does.
    """

    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = PooledClientRedisCacheClient
        self._down_until = 0.0
        self._outage = OutageLog(logger)

    def _available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _failed(self, exc: BaseException) -> None:
        self._down_until = time.monotonic() + RETRY_SECONDS
        self._outage.warn(
            "cache unreachable (%s: %s): answering from the database, "
            "trying again every %.0f s; this is said once a minute",
            type(exc).__name__,
            exc,
            RETRY_SECONDS,
        )

    def _call(self, name: str, fallback, *args, **kwargs):
        if not self._available():
            return fallback
        try:
            return getattr(super(), name)(*args, **kwargs)
        except UNAVAILABLE as exc:
            self._failed(exc)
            return fallback

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        """Django's ``add``; False when Redis is down."""
        return self._call("add", False, key, value, timeout, version)

    def get(self, key, default=None, version=None):
        """Django's ``get``; ``default`` when Redis is down."""
        return self._call("get", default, key, default, version)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> None:
        """Django's ``set``; nothing when Redis is down."""
        self._call("set", None, key, value, timeout, version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        """Django's ``touch``; False when Redis is down."""
        return self._call("touch", False, key, timeout, version)

    def delete(self, key, version=None) -> bool:
        """Django's ``delete``; False when Redis is down."""
        return self._call("delete", False, key, version)

    def get_many(self, keys, version=None) -> dict:
        """Django's ``get_many``; ``{}`` when Redis is down."""
        return self._call("get_many", {}, keys, version)

    def has_key(self, key, version=None) -> bool:
        """Django's ``has_key``; False when Redis is down."""
        return self._call("has_key", False, key, version)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None) -> list:
        """Django's ``set_many``; every key failed when Redis is down."""
        return self._call("set_many", list(data), data, timeout, version)

    def delete_many(self, keys, version=None) -> None:
        """Django's ``delete_many``; nothing when Redis is down."""
        self._call("delete_many", None, keys, version)

    def incr(self, key, delta=1, version=None) -> int:
        """Django's ``incr``.

        Raises:
            CacheUnavailable: Redis is down (or was within
                :data:`RETRY_SECONDS`).
            ValueError: the key does not exist (Django's contract).
        """
        if not self._available():
            raise CacheUnavailable("the cache is down")
        try:
            return super().incr(key, delta, version)
        except UNAVAILABLE as exc:
            self._failed(exc)
            raise CacheUnavailable(str(exc)) from exc

    def decr(self, key, delta=1, version=None) -> int:
        """Django's ``decr``, raising as :meth:`incr` does."""
        return self.incr(key, -delta, version)
