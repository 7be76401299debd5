"""Request filters that every view relies on."""

from __future__ import annotations

import logging

from django.contrib import messages
from django.db import DatabaseError
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
)

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
            return HttpResponseBadRequest("the path holds a NUL character")
        for params in (request.GET, request.POST):
            for key, values in params.lists():
                if "\x00" in key or any("\x00" in v for v in values):
                    return HttpResponseBadRequest(
                        f"field {key[:40]!r} holds a NUL character, which no value "
                        "may contain"
                    )
        return self.get_response(request)


class AdminFilterRefusedMiddleware:
    """An admin list whose query string the database refuses: the list
    unfiltered, with a message that names the filter and the database's reason.

    Django's admin hands a changelist's query string lookups to the database
    as they are (``?version__regex=(``), so a pattern the database cannot
    compile fails in the view or while the page renders, as a 500 (Django
    docs, "ModelAdmin.lookup_allowed": any lookup on the model's own fields is
    allowed). Only a GET of an admin changelist with a query string is
    answered so; the unfiltered list carries none, so a database that fails it
    too gives the usual 500.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponse | None:
        match = request.resolver_match
        if not (
            isinstance(exception, DatabaseError)
            and request.method == "GET"
            and request.GET
            and match is not None
            and match.namespace == "admin"
            and (match.url_name or "").endswith("_changelist")
        ):
            return None
        shown = "&".join(
            f"{key}={value}" for key, value in request.GET.items() if key != "e"
        )
        reason = str(exception).strip().splitlines()[0] if str(exception) else ""
        logger.warning("admin list %s?%s refused: %s", request.path, shown, reason)
        messages.error(
            request,
            f"This list could not be filtered by {shown[:200]!r}: the database "
            f"refused it ({reason[:200] or type(exception).__name__}). The list "
            "is shown unfiltered.",
        )
        return HttpResponseRedirect(request.path)
