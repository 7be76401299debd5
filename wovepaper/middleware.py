"""Request filters that every view relies on."""

from __future__ import annotations

import logging
import math

from django.contrib import messages
from django.contrib.admin.views.main import ERROR_FLAG
from django.db import DatabaseError
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
)
from django.shortcuts import render

from api.errors import is_api_path, problem_json
from wovepaper.throttle import page_rate, window_hit

logger = logging.getLogger(__name__)


class RejectNulBytesMiddleware:
    """Answer 400 to a request whose path, query or form fields hold a NUL character.

    PostgreSQL text cannot store U+0000, so such a value would fail deep in a
    filter or a save with a 500; no real name, id or reason contains one.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path:
            return _bad_request(request, "the path holds a NUL character")
        for params in (request.GET, request.POST):
            for key, values in params.lists():
                if "\x00" in key or any("\x00" in v for v in values):
                    return _bad_request(
                        request,
                        f"field {key[:40]!r} holds a NUL character, which no value "
                        "may contain",
                    )
        return self.get_response(request)


def _bad_request(request: HttpRequest, detail: str) -> HttpResponse:
    """A 400 saying ``detail``: a problem-details body on the API, text elsewhere."""
    if is_api_path(request.path):
        return problem_json(400, detail)
    return HttpResponseBadRequest(detail)


# What a query string Django's admin hands on may raise besides a database
# error, when a lookup is compiled with a value it cannot take (found by a
# hostile trial): ``__range=1`` an IndexError, ``__year=99999`` a ValueError,
# a number past SQLite's integers an OverflowError.
REFUSED = (DatabaseError, ValueError, TypeError, IndexError, OverflowError)


class AdminFilterRefusedMiddleware:
    """An admin list whose query string cannot be run: the list without it,
    with a message that names the filter and says why.

    Django's admin hands a changelist's query string lookups to the database
    as they are (``?version__regex=(``, ``?published__year=99999``), so a
    value the database or the lookup cannot take fails in the view or while
    the page renders, as a 500 (Django docs, "ModelAdmin.lookup_allowed": any
    lookup on the model's own fields is allowed). Such a request (any method:
    an action posted on a filtered list is stopped) is answered with a
    redirect to the list with Django's error flag ``?e=1``, which the list
    ignores as a filter; a list that fails with only that flag, or with no
    query string, fails for another reason and gives the usual 500, so the
    redirect never loops. The lookups Django refuses itself (a field the
    list lacks, ``?score=zzz``) it redirects to ``?e=1`` in silence; they get
    the same message.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code == 302
            and response.get("Location") == f"{request.path}?{ERROR_FLAG}=1"
            and not getattr(request, "_wovepaper_filter_refused", False)
            and self._asked(request)
        ):
            self._say(request, "")
        return response

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponse | None:
        if not (isinstance(exception, REFUSED) and self._asked(request)):
            return None
        reason = (str(exception).strip().splitlines() or [""])[0]
        logger.warning(
            "admin list %s?%s refused: %s: %s",
            request.path,
            request.GET.urlencode(),
            type(exception).__name__,
            reason,
        )
        self._say(request, reason or type(exception).__name__)
        request._wovepaper_filter_refused = True
        return HttpResponseRedirect(f"{request.path}?{ERROR_FLAG}=1")

    @staticmethod
    def _asked(request: HttpRequest) -> list[tuple[str, str]]:
        """The query string of an admin changelist request, as (key, value)
        pairs; empty for any other request, or one already redirected
        (``?e=1``)."""
        match = request.resolver_match
        if (
            ERROR_FLAG in request.GET
            or match is None
            or match.namespace != "admin"
            or not (match.url_name or "").endswith("_changelist")
        ):
            return []
        return [(key, value) for key, values in request.GET.lists() for value in values]

    @staticmethod
    def _say(request: HttpRequest, detail: str) -> None:
        shown = "&".join(
            f"{key}={value}"
            for key, value in AdminFilterRefusedMiddleware._asked(request)
        )
        stopped = " A selected action was stopped." if request.method == "POST" else ""
        messages.error(
            request,
            f"This list could not be filtered by {shown[:200]!r}: it names a field "
            "the list does not have, or a value that field cannot take"
            + (f" (the database or the lookup said: {detail[:200]})" if detail else "")
            + f". The list is shown without it.{stopped}",
        )


class PageThrottleMiddleware:
    """Answer 429 with ``Retry-After`` to a client past its rate of public pages.

    The API has DRF's throttles; the HTML pages had none, ``/search/``
    included (issue 48). The limits are :func:`wovepaper.throttle.page_rate`'s,
    counted atomically, and let everything through while the cache is down.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = page_rate(request)
        if limit is not None:
            scope, rate = limit
            allowed, wait = window_hit(key=scope, rate=rate)
            if not allowed:
                seconds = max(1, math.ceil(wait))
                response = render(
                    request,
                    "pages/too_many_requests.html",
                    {"seconds": seconds},
                    status=429,
                )
                response["Retry-After"] = str(seconds)
                return response
        return self.get_response(request)
