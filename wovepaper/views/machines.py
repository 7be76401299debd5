"""Pages for machines: ``robots.txt`` and ``llms.txt``."""

from __future__ import annotations

from django.core.cache import cache
from django.db.models import Exists, OuterRef
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from wovepaper.models import Authorship, Institution, Paper, Researcher

# How long llms.txt may show old counts (seconds): counting every table on each
# request would make the cheapest page the most expensive.
LLMS_COUNTS_SECONDS = 300
LLMS_COUNTS_KEY = "llms-txt:counts"


@require_safe
def robots_txt(request: HttpRequest) -> HttpResponse:
    """``robots.txt`` (RFC 9309): crawl the public pages, not the private ones.

    Disallowed: the admin, sign-in, the signed-in user's Following page, the
    follow and claim endpoints (pages and API) and the API's token, follow,
    feed and proposal paths. The sitemap index is named by its absolute URL.

    Returns:
        ``text/plain``.
    """
    return render(
        request,
        "machines/robots.txt",
        {"sitemap_url": request.build_absolute_uri(reverse("sitemap-index"))},
        content_type="text/plain; charset=utf-8",
    )


def _site_counts() -> dict[str, dict]:
    """What the site holds now: counts, and one page of each kind as an example.

    Returns:
        ``{"counts": {"papers", "researchers", "institutions"}, "examples":
        {"paper", "researcher", "institution"}}``: visible papers, live
        researchers, all institutions; example paths are "" when there is none.
        Six queries.
    """
    papers = Paper.objects.filter(hidden=False)
    researchers = Researcher.objects.live()
    paper = papers.order_by("-id").only("id", "arxiv_id", "slug").first()
    researcher = (
        researchers.filter(
            Exists(
                Authorship.objects.filter(
                    researcher=OuterRef("pk"), paper__hidden=False
                )
            )
        )
        .only("id", "slug")
        .first()
    )
    institution = Institution.objects.only("id", "slug").order_by("id").first()
    return {
        "counts": {
            "papers": papers.count(),
            "researchers": researchers.count(),
            "institutions": Institution.objects.count(),
        },
        "examples": {
            "paper": paper.get_absolute_url() if paper else "",
            "researcher": researcher.get_absolute_url() if researcher else "",
            "institution": institution.get_absolute_url() if institution else "",
        },
    }


@require_safe
def llms_txt(request: HttpRequest) -> HttpResponse:
    """``llms.txt`` (https://llmstxt.org/): what the site holds and how to read it.

    The counts come from the cache, at most :data:`LLMS_COUNTS_SECONDS` old.

    Returns:
        ``text/markdown``: an H1, a blockquote summary, the counts, the page URL
        patterns, Markdown negotiation, the API, the feeds and the sitemap.
    """
    site = cache.get_or_set(LLMS_COUNTS_KEY, _site_counts, LLMS_COUNTS_SECONDS)
    return render(
        request,
        "machines/llms.txt",
        {**site, "base": request.build_absolute_uri("/").rstrip("/")},
        content_type="text/markdown; charset=utf-8",
    )
