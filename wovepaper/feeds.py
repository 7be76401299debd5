"""RSS feeds (being written)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse


def latest_papers(request: HttpRequest) -> HttpResponse:
    """RSS of the latest papers (not yet written: answers 404)."""
    raise Http404


def researcher_papers(request: HttpRequest, pk: int) -> HttpResponse:
    """RSS of one researcher's papers (not yet written: answers 404)."""
    raise Http404


def category_papers(request: HttpRequest, category: str) -> HttpResponse:
    """RSS of one category's papers (not yet written: answers 404)."""
    raise Http404
