"""Whole rendered pages cached for stateless visitors (signed out, nothing to tell).

A visitor with no session cookie and no pending messages sees what every such
visitor sees, so a public page's rendering can be stored once and answered to all
of them. The key names the page's absolute URL (pages print it: canonical link,
Open Graph) and its format, under a version the caller reads (a researcher's
curation version, or every researcher's for pages that list researchers found by
name); a bump makes every older rendering unreachable at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection

from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse


def stateless(request: HttpRequest, parameters: Collection[str]) -> bool:
    """Whether the request's page is the same for every visitor asking it.

    Args:
        request: the request.
        parameters: the query parameters the page reads; a request with any
            other is rendered but not cached (each junk parameter would be a
            cache entry).

    Returns:
        True when the request carries no session cookie, no messages cookie and
        only ``parameters``.
    """
    return (
        settings.SESSION_COOKIE_NAME not in request.COOKIES
        and CookieStorage.cookie_name not in request.COOKIES
        and set(request.GET) <= set(parameters)
    )


def url_digest(request: HttpRequest, page_format: str = "html") -> str:
    """``<format>:<digest of the absolute URL>`` for a cache key (keys have a
    length limit and must not hold spaces); a 32-hex-digit blake2b digest."""
    url = request.build_absolute_uri()
    return f"{page_format}:{hashlib.blake2b(url.encode(), digest_size=16).hexdigest()}"


def cached_page(key: str) -> HttpResponse | None:
    """The page stored under ``key`` as a response, or None when not stored."""
    cached = cache.get(key)
    if cached is None:
        return None
    content, content_type = cached
    response = HttpResponse(content, content_type=content_type)
    response["Vary"] = "Accept, Cookie"
    return response


def keep_page(key: str, response: HttpResponse, seconds: int) -> None:
    """Store a rendered 200 response under ``key`` for ``seconds``; others
    (errors, redirects) are not stored."""
    if response.status_code == 200:
        cache.set(key, (response.content, response["Content-Type"]), seconds)
