"""Request filters that every view relies on."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest


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
