"""Whole rendered pages cached for stateless visitors (signed out, nothing to tell).

A visitor with no session cookie and no pending messages sees what every such
visitor sees, so a public page's rendering can be stored once and answered to all
of them. The key names the page's absolute URL (pages print it: canonical link,
Open Graph) and its format, under versions the caller reads (a researcher's
curation version; for search pages, every researcher's and the searches'); a
bump makes every older rendering unreachable at once.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Collection

from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers

from wovepaper.cache import researchers_version
from wovepaper.views.responses import wants_markdown


def stateless(request: HttpRequest, parameters: Collection[str]) -> bool:
    """Whether the request's page is the same for every visitor asking it.

    Args:
        request: the request.
        parameters: the query parameters the page reads; a request with any
            other is rendered but not cached (each junk parameter would be a
            cache entry).

    Returns:
        True when the request carries no session cookie, no messages cookie,
        only ``parameters``, each once, and a ``page``, if any, written as a
        page number is (``1`` to ``999999999``, no sign, space or leading zero:
        each other spelling of a page would be an entry of its own).
    """
    return (
        settings.SESSION_COOKIE_NAME not in request.COOKIES
        and CookieStorage.cookie_name not in request.COOKIES
        and set(request.GET) <= set(parameters)
        and all(len(request.GET.getlist(name)) == 1 for name in request.GET)
        and _PAGE_NUMBER.fullmatch(request.GET.get("page", "1")) is not None
    )


_PAGE_NUMBER = re.compile(r"[1-9][0-9]{0,8}")


def url_digest(request: HttpRequest, page_format: str = "html") -> str:
    """``<format>:<digest of the absolute URL>`` for a cache key (keys have a
    length limit and must not hold spaces); a 32-hex-digit blake2b digest."""
    url = request.build_absolute_uri()
    return f"{page_format}:{hashlib.blake2b(url.encode(), digest_size=16).hexdigest()}"


def cached_page(key: str) -> HttpResponse | None:
    """The page stored under ``key`` as a response (with the ``Vary`` header it
    was rendered with), or None when not stored."""
    cached = cache.get(key)
    if cached is None or len(cached) != 3:  # 2-tuples: stored by older code
        return None
    content, content_type, vary = cached
    response = HttpResponse(content, content_type=content_type)
    response["Vary"] = vary
    return response


def keep_page(key: str, response: HttpResponse, seconds: int) -> None:
    """Store a rendered 200 response under ``key`` for ``seconds``; others
    (errors, redirects) are not stored."""
    if response.status_code == 200:
        patch_vary_headers(response, ("Cookie",))  # as the session would
        cache.set(
            key,
            (response.content, response["Content-Type"], response["Vary"]),
            seconds,
        )


def cached_whole(seconds: int, parameters: frozenset[str]):
    """A view decorator: a stateless visitor's page (:func:`stateless`) is
    served from the cache when it is there, and kept ``seconds`` when
    rendered; the key holds the researchers' cache version (so a curation
    change shows at once), the format (HTML or Markdown) and the URL.

    Args:
        seconds: how long a rendered page is reused.
        parameters: the query parameters the view reads.

    Returns:
        The decorator.
    """

    def wrap(view):
        @functools.wraps(view)
        def serve(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not stateless(request, parameters):
                return view(request, *args, **kwargs)
            page_format = "md" if wants_markdown(request) else "html"
            key = (
                f"whole-page:v{researchers_version()}:"
                f"{url_digest(request, page_format)}"
            )
            found = cached_page(key)
            if found is not None:
                return found
            response = view(request, *args, **kwargs)
            keep_page(key, response, seconds)
            return response

        return serve

    return wrap
