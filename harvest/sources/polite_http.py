"""HTTP for every live source: a rate limit, timeouts, retries honouring Retry-After.

One :class:`PoliteClient` per source and process. Before each request it waits until
the source's minimum interval since the previous request has passed (arXiv asks for
one request every 3 seconds). A request that fails in a way that may pass is tried
again after a wait:

Pacing learns, as TCP's congestion avoidance does (RFC 5681 section 3.1: the
rate backs off multiplicatively and recovers additively): a 429 or 503 multiplies
the host's interval by ``slow_factor`` (at least ``pace_step`` more, at most
``max_interval``), and each answered request takes ``pace_step`` seconds off it,
down to ``min_interval``; a retry waits at least the interval; each change is
logged. Semantic Scholar answers 429
without ``Retry-After`` even under its documented quota: a fixed interval meets
the next 429 at once. The intervals are per host and shared by the process's
clients.

* HTTP 429 and 5xx (500, 502, 503, 504): the wait is the response's ``Retry-After``
  (delay-seconds or an HTTP-date, RFC 9110 section 10.2.3), capped at
  ``max_wait``; without one, exponential backoff with jitter
  (``backoff_base * 2**n`` seconds, capped at ``backoff_max``).
* a timeout (connect, read: a server that hangs), a refused or dropped connection,
  a body cut short (fewer bytes than its Content-Length, or a chunked body that
  stops), and a body the caller's ``read`` finds unusable (truncated XML or JSON
  with a correct length): the same backoff.

After ``max_tries`` attempts the request raises :class:`SourceUnavailable` naming the
URL, the number of tries and the last problem; the harvest run fails with that reason
and resumes from its cursor later. Any other 4xx raises :class:`SourceRefused` at
once (asking again would get the same answer).

The User-Agent names wovepaper and a contact address (``HARVEST_CONTACT_EMAIL``), as
Crossref's polite pool and arXiv's terms of use ask.

Sources: arXiv API terms of use ("no more than 1 request every 3 seconds"); Crossref
REST API etiquette (``mailto`` in the User-Agent, back off on 429); RFC 9110
section 10.2.3 (Retry-After).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import httpx
import tenacity
from django.conf import settings

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Statuses that say "later": too many requests, and the server-side failures a
# retry can outlive (RFC 9110 section 15.6; 501 and 505 will not change).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class SourceError(Exception):
    """A live source could not give what was asked; the message names URL and reason."""


class SourceUnavailable(SourceError):
    """The retry budget ran out (timeouts, 429/5xx, cut bodies): try again later."""


class SourceRefused(SourceError):
    """The source refused the request (4xx other than 429): retrying is useless."""


class UnusableBody(Exception):
    """Raised by a ``read`` callable: the body arrived but cannot be read (cut short).

    The request is retried like a timeout.
    """


@dataclass(frozen=True)
class Politeness:
    """How hard one source may be asked.

    Attributes:
        min_interval: seconds (>= 0) from the previous answer's status line to
            the start of the next request, so the server receives two requests
            at least this far apart whatever the connection set-up costs (a
            request that got no answer counts from its start).
        timeout: seconds to connect, and seconds between two bytes of the answer.
        max_tries: attempts per request before :class:`SourceUnavailable` (>= 1).
        backoff_base: first backoff wait in seconds, doubled each try.
        backoff_max: longest backoff wait in seconds.
        max_wait: longest wait a ``Retry-After`` may impose, seconds; a longer one
            is cut to this (a server asking for an hour fails the request instead:
            see :attr:`give_up_after`).
        give_up_after: a ``Retry-After`` above this many seconds is not waited
            out: the request fails at once and the run resumes later.
        max_body_bytes: the largest answer read (decoded); a larger one is
            refused (a runaway or hostile body, a compression bomb).
        max_seconds: the longest one answer may take in all; a server that
            drips bytes, each within ``timeout``, is cut off and asked again.
        max_interval: the longest a host's learned interval grows to, seconds.
        slow_factor: a 429 or 503 multiplies the host's interval by this (>= 1).
        pace_step: seconds an answered request takes off the host's interval
            (down to ``min_interval``); also the least a 429 or 503 adds.
    """

    min_interval: float = 1.0
    timeout: float = 30.0
    max_tries: int = 6
    backoff_base: float = 2.0
    backoff_max: float = 120.0
    max_wait: float = 300.0
    give_up_after: float = 3600.0
    max_body_bytes: int = 200_000_000
    max_seconds: float = 300.0
    max_interval: float = 60.0
    slow_factor: float = 2.0
    pace_step: float = 0.25

    @classmethod
    def of(cls, source: str) -> Politeness:
        """The politeness of ``source`` from ``settings.HARVEST_POLITENESS``.

        Args:
            source: ``"arxiv"``, ``"crossref"``, ...

        Returns:
            The settings' values for that source over these defaults.
        """
        return cls(**settings.HARVEST_POLITENESS.get(source, {}))


def _host_of(url: str) -> str:
    """``host:port`` of a URL, the key of its learned interval."""
    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port or parsed.scheme}"


class _Retryable(Exception):
    """One attempt failed in a way that may pass; ``wait``: the server's ask or None."""

    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


# Each host's learned interval between requests (seconds), shared by the clients of
# one process: a task that starts after another met a 429 starts slow too.
_HOST_INTERVALS: dict[str, float] = {}
_INTERVALS_LOCK = threading.Lock()
# Statuses that say "slower" (RFC 6585 section 4; RFC 9110 section 15.6.4).
SLOW_DOWN_STATUSES = frozenset({429, 503})


def host_interval(host: str, politeness: Politeness) -> float:
    """The interval (seconds) requests to ``host`` are paced by now: the learned
    one, never below ``politeness.min_interval``."""
    with _INTERVALS_LOCK:
        learned = _HOST_INTERVALS.get(host, politeness.min_interval)
    # A source's own minimum above the learned bound is kept (an operator's
    # HARVEST_ARXIV_INTERVAL=120 is asked for, not cut to 60).
    bound = max(politeness.max_interval, politeness.min_interval)
    return min(max(learned, politeness.min_interval), bound)


def intervals_forget() -> None:
    """Forget every learned interval (a new process starts so; tests use it)."""
    with _INTERVALS_LOCK:
        _HOST_INTERVALS.clear()


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Read a ``Retry-After`` header: delay-seconds or an HTTP-date.

    Args:
        value: the header's value (``"10"``, ``"Wed, 21 Oct 2015 07:28:00 GMT"``),
            or None when absent.
        now: the current time (aware UTC) for an HTTP-date; None for now.

    Returns:
        Seconds to wait (>= 0; a date in the past gives 0), or None when the header
        is absent or unreadable. Source: RFC 9110 section 10.2.3.
    """
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def user_agent() -> str:
    """The User-Agent of every harvest request, with the contact address if set."""
    contact = settings.HARVEST_CONTACT_EMAIL
    base = f"wovepaper/0.1 (+{settings.SITE_URL}"
    return f"{base}; mailto:{contact})" if contact else f"{base})"


class ListGuard:
    """Stops a cursor-paged list that walks past what it announced (a server whose
    cursor never ends, handing out the same works again).

    A list may grow while it is walked (works indexed meanwhile), so the bound is
    half as much again as the largest total announced, plus one page.

    Args:
        per_page: works asked a page.
    """

    def __init__(self, per_page: int) -> None:
        self.per_page = per_page
        self.seen = 0
        self.announced = 0

    def walked(self, url: str, items: int, total: int | None) -> None:
        """Count a page's works.

        Raises:
            SourceRefused: more works walked than the list can hold.
        """
        self.seen += items
        self.announced = max(self.announced, total or 0)
        if total is not None and self.seen > self.announced * 1.5 + self.per_page:
            raise SourceRefused(
                f"{url}: {self.seen:,} works walked, more than the {self.announced:,} "
                "the list announced; stopped instead of looping"
            )


class PoliteClient:
    """GET requests to one source, rate-limited and retried (see the module docstring).

    Args:
        source: the source's name, for messages and :meth:`Politeness.of`.
        politeness: overrides the settings' politeness.
        headers: extra request headers (an API key).
        sleep: waits the given seconds; tests pass a recorder instead of
            :func:`time.sleep`.
        transport: an httpx transport (tests may pass one); None for the network.
    """

    def __init__(
        self,
        source: str,
        *,
        politeness: Politeness | None = None,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.source = source
        self.politeness = politeness or Politeness.of(source)
        self._sleep = sleep
        self._paced_from: float | None = None
        # Set when a retry has just waited at least the host's interval.
        self._waited = False
        self.requests = 0
        # Credentials (an API key, a client id) go to the origin asked, never to
        # another one a redirect points at (httpx strips only Authorization).
        self._secret = {name.lower() for name in headers or {}}
        self._origin: tuple[str, str, int | None] | None = None
        timeout = httpx.Timeout(self.politeness.timeout)
        self._http = httpx.Client(
            timeout=timeout,
            headers={"User-Agent": user_agent(), **(headers or {})},
            follow_redirects=True,
            transport=transport,
            event_hooks={"request": [self._keep_secrets]},
        )

    def _keep_secrets(self, request: httpx.Request) -> None:
        origin = (request.url.scheme, request.url.host, request.url.port)
        if self._origin is None:
            return
        if origin != self._origin:
            for name in self._secret:
                request.headers.pop(name, None)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> PoliteClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def get(self, url: str, params: Mapping[str, str] | None = None) -> httpx.Response:
        """GET ``url`` politely until it answers with a 2xx (see :meth:`fetch`)."""
        return self.fetch(url, params, read=lambda response: response)

    def fetch(
        self,
        url: str,
        params: Mapping[str, str] | None,
        *,
        read: Callable[[httpx.Response], T],
        json_body: object = None,
        accept: frozenset[int] = frozenset(),
    ) -> T:
        """GET ``url`` with ``params`` (POST ``json_body`` when given), politely,
        until it answers usefully.

        Args:
            url: absolute URL.
            params: query parameters.
            json_body: a JSON body to POST (a batch lookup), or None to GET.
            accept: 4xx statuses handed to ``read`` instead of refused (the arXiv
                API answers a bad query with HTTP 400 and an Atom error feed).
            read: turns a 2xx response into what the caller wants (a parsed page);
                raises :class:`UnusableBody` when the body cannot be read (cut
                short), and the request is then tried again.

        Returns:
            What ``read`` returned.

        Raises:
            SourceUnavailable: ``max_tries`` attempts failed (the message gives the
                last reason), or the server asked to wait past ``give_up_after``.
            SourceRefused: a 4xx other than 429.
            Any error of ``read`` other than UnusableBody, as raised.
        """
        p = self.politeness
        backoff = tenacity.wait_exponential_jitter(
            multiplier=p.backoff_base, max=p.backoff_max, jitter=p.backoff_base
        )

        host = _host_of(url)

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, _Retryable) and exc.wait is not None:
                asked = min(exc.wait, p.max_wait)
            else:
                asked = backoff(state)
            # A retry waits at least the host's interval, and is not paced again.
            self._waited = True
            return max(asked, host_interval(host, p))

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(p.max_tries),
            wait=wait,
            retry=tenacity.retry_if_exception_type(_Retryable),
            sleep=self._sleep,
            before_sleep=lambda state: logger.warning(
                "%s: %s; retrying in %.1f s",
                self.source,
                state.outcome.exception(),
                state.upcoming_sleep,
                extra={"source": self.source, "url": url},
            ),
            reraise=True,
        )
        try:
            return retrying(self._attempt, url, params, read, json_body, accept)
        except _Retryable as exc:
            raise SourceUnavailable(
                f"{self.source}: {url} failed {p.max_tries} times; last: {exc}"
            ) from exc

    def _bounded(
        self, url: str, params: Mapping[str, str] | None, json_body: object
    ) -> httpx.Response:
        """One request, its body read within the size and time bounds.

        Raises:
            SourceRefused: the body is past ``max_body_bytes`` (decoded).
            _Retryable: the answer took longer than ``max_seconds`` in all (a
                server dripping bytes, each within the read timeout).
            httpx.HTTPError: as httpx raises it (the caller sorts them).
        """
        p = self.politeness
        started = time.monotonic()
        method = "GET" if json_body is None else "POST"
        asked = httpx.URL(url)
        self._origin = (asked.scheme, asked.host, asked.port)
        with self._http.stream(method, url, params=params, json=json_body) as streamed:
            # The server has the request by now: the next one is paced from here.
            self._paced_from = time.monotonic()
            chunks, size = [], 0
            for chunk in streamed.iter_bytes():
                size += len(chunk)
                if size > p.max_body_bytes:
                    raise SourceRefused(
                        f"{self.source}: {streamed.url} sent more than "
                        f"{p.max_body_bytes:,} bytes; refused"
                    )
                if time.monotonic() - started > p.max_seconds:
                    raise _Retryable(f"answer still coming after {p.max_seconds:.0f} s")
                chunks.append(chunk)
        headers = [
            (k, v)
            for k, v in streamed.headers.multi_items()
            if k.lower() not in ("content-encoding", "content-length")
        ]
        return httpx.Response(
            streamed.status_code,
            headers=headers,
            content=b"".join(chunks),
            request=streamed.request,
        )

    def _pace(self, host: str) -> None:
        if self._paced_from is not None and not self._waited:
            interval = host_interval(host, self.politeness)
            gap = self._paced_from + interval - time.monotonic()
            if gap > 0:
                self._sleep(gap)
        self._waited = False
        self._paced_from = time.monotonic()

    def _slower(self, host: str, status: int) -> None:
        """A 429 or 503 from ``host``: multiply its interval (at least one step
        more), up to ``max_interval``; logged."""
        p = self.politeness
        with _INTERVALS_LOCK:
            now = max(_HOST_INTERVALS.get(host, p.min_interval), p.min_interval)
            bound = max(p.max_interval, p.min_interval)
            new = min(bound, max(now * p.slow_factor, now + p.pace_step))
            _HOST_INTERVALS[host] = new
        if new != now:
            logger.warning(
                "%s: %s answered %s; pacing it %.2f s -> %.2f s",
                self.source,
                host,
                status,
                now,
                new,
                extra={"source": self.source, "host": host, "interval": new},
            )

    def _faster(self, host: str) -> None:
        """An answer from ``host``: take one step off its interval, down to
        ``min_interval`` (logged when it gets there)."""
        p = self.politeness
        with _INTERVALS_LOCK:
            now = _HOST_INTERVALS.get(host)
            if now is None or now <= p.min_interval:
                return
            new = max(p.min_interval, now - p.pace_step)
            if new <= p.min_interval:
                del _HOST_INTERVALS[host]
            else:
                _HOST_INTERVALS[host] = new
        if new <= p.min_interval:
            logger.info(
                "%s: %s paced at its minimum %.2f s again",
                self.source,
                host,
                p.min_interval,
                extra={"source": self.source, "host": host, "interval": new},
            )

    def _attempt(
        self,
        url: str,
        params: Mapping[str, str] | None,
        read: Callable[[httpx.Response], T],
        json_body: object = None,
        accept: frozenset[int] = frozenset(),
    ) -> T:
        host = _host_of(url)
        self._pace(host)
        self.requests += 1
        try:
            response = self._bounded(url, params, json_body)
        except (
            httpx.TooManyRedirects,
            httpx.InvalidURL,
            httpx.UnsupportedProtocol,
        ) as exc:
            # Asking again gets the same: a redirect loop, a URL that is not one.
            raise SourceRefused(f"{self.source}: {url}: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise _Retryable(f"timed out ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            # Refused or dropped connections, bodies cut short
            # (RemoteProtocolError: "peer closed connection without sending
            # complete message body"), bodies that do not decompress.
            raise _Retryable(f"{type(exc).__name__}: {exc}") from exc
        status = response.status_code
        if status in SLOW_DOWN_STATUSES:
            self._slower(host, status)
        elif status < 400:
            self._faster(host)
        if status in RETRY_STATUSES:
            asked = retry_after_seconds(response.headers.get("Retry-After"))
            if asked is not None and asked > self.politeness.give_up_after:
                raise SourceUnavailable(
                    f"{self.source}: {response.url} answered {status} asking to "
                    f"retry after {asked:.0f} s; resume later"
                )
            where = f" (Retry-After {asked:.0f} s)" if asked is not None else ""
            raise _Retryable(f"HTTP {status}{where}", wait=asked)
        if status >= 400 and status not in accept:
            raise SourceRefused(
                f"{self.source}: {response.url} answered HTTP {status}: "
                f"{response.text[:300]}"
            )
        try:
            return read(response)
        except UnusableBody as exc:
            raise _Retryable(f"unusable body: {exc}") from exc
