"""Error bodies as RFC 9457 problem details, and curation conflicts as 409.

Every error the API answers has ``{"type", "title", "status", "detail"}`` (plus
``errors`` for field validation), served as ``application/problem+json``.
Source: RFC 9457 "Problem Details for HTTP APIs", section 3.1.
"""

from __future__ import annotations

from http import HTTPStatus

from django.http import JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from curation.exceptions import CurationError

PROBLEM_TYPE = "https://wovepaper.invalid/problems/{slug}"


def _body(status_code: int, detail: str, slug: str, extra: dict) -> dict:
    title = HTTPStatus(status_code).phrase
    return {
        "type": PROBLEM_TYPE.format(slug=slug or title.lower().replace(" ", "-")),
        "title": title,
        "status": status_code,
        "detail": detail,
        **extra,
    }


def problem(status_code: int, detail: str, *, slug: str = "", **extra) -> Response:
    """A problem-details response.

    Args:
        status_code: the HTTP status.
        detail: a human-readable explanation of this occurrence.
        slug: the problem type's short name (defaults from the status).
        **extra: more members (``errors``, ``retry_after``).

    Returns:
        A DRF Response with content type ``application/problem+json``.
    """
    return Response(
        _body(status_code, detail, slug, extra),
        status=status_code,
        content_type="application/problem+json",
    )


def is_api_path(path: str) -> bool:
    """Whether a request path is the API's (``/api/...``)."""
    return path == "/api" or path.startswith("/api/")


def problem_json(status_code: int, detail: str, *, slug: str = "") -> JsonResponse:
    """:func:`problem`'s body for what answers before DRF does: the 404 of an
    API path no route takes (``/api/researchers/abc/``, whose id is not a
    number) and the 400 of a NUL character. They were Django's HTML pages
    while every other API error is a problem (new-user trial).

    Returns:
        A JsonResponse with content type ``application/problem+json``.
    """
    return JsonResponse(
        _body(status_code, detail, slug, {}),
        status=status_code,
        content_type="application/problem+json",
    )


def problem_details_handler(exc, context) -> Response | None:
    """DRF's EXCEPTION_HANDLER: curation conflicts are 409, everything a problem.

    Returns:
        The problem-details Response, or None for exceptions DRF does not handle
        (they become a 500).
    """
    if isinstance(exc, CurationError):
        return problem(status.HTTP_409_CONFLICT, str(exc), slug="curation-conflict")
    response = exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(exc, exceptions.ValidationError):
        result = problem(
            response.status_code,
            "the request has invalid fields",
            slug="invalid-request",
            errors=data,
        )
    else:
        detail = data.get("detail", "") if isinstance(data, dict) else str(data)
        extra = {}
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            extra["retry_after"] = int(exc.wait)
        result = problem(response.status_code, str(detail), **extra)
    for header in ("Retry-After", "WWW-Authenticate", "Allow"):
        if header in response:
            result[header] = response[header]
    return result
