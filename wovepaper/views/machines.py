"""Pages for machines: robots.txt and llms.txt (being written)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse


def robots_txt(request: HttpRequest) -> HttpResponse:
    """robots.txt (not yet written: answers 404)."""
    raise Http404


def llms_txt(request: HttpRequest) -> HttpResponse:
    """llms.txt (not yet written: answers 404)."""
    raise Http404
