"""Search over papers and researchers (being written)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse


def search(request: HttpRequest) -> HttpResponse:
    """Search page (not yet written: answers 404)."""
    raise Http404("search is being written")
