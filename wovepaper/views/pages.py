"""Public pages (the first of them: the home page with the archive's counts)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from wovepaper import selectors


def home(request: HttpRequest) -> HttpResponse:
    """The home page: how many papers and curated researchers, the newest papers."""
    papers = selectors.paper_list()
    return render(
        request,
        "home.html",
        {
            "paper_count": papers.count(),
            "researcher_count": selectors.researcher_list().count(),
            "latest": papers.order_by("-published", "-id")[:20],
        },
    )


def paper_detail(request: HttpRequest, ref: str) -> HttpResponse:
    """Paper page (being written)."""
    raise Http404


def researcher_detail(request: HttpRequest, pk: int, slug: str = "") -> HttpResponse:
    """Researcher page (being written)."""
    raise Http404


def researcher_network(request: HttpRequest, pk: int) -> HttpResponse:
    """Co-author network JSON (being written)."""
    raise Http404


def institution_detail(request: HttpRequest, ref: str) -> HttpResponse:
    """Institution page (being written)."""
    raise Http404


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The 404 page (being written)."""
    return render(request, "pages/404.html", {}, status=404)
