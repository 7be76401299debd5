"""Sitemaps (being written)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse


def sitemap_index(request: HttpRequest) -> HttpResponse:
    """sitemap.xml (not yet written: answers 404)."""
    raise Http404


def sitemap_section(request: HttpRequest, section: str) -> HttpResponse:
    """One sitemap section (not yet written: answers 404)."""
    raise Http404
