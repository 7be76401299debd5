"""Public pages (the first of them: the home page with the archive's counts)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
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
