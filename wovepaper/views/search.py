"""The public search page: researchers by name, then papers by full text."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_safe

from wovepaper.cache import researchers_version, searches_version
from wovepaper.name_search import institutions_named, researchers_ranked
from wovepaper.profile import paper_rows_by_id
from wovepaper.search import (
    SearchQueryError,
    SemanticUnavailable,
    only_common_words,
    paper_named_by,
    search_filters,
    search_results,
)
from wovepaper.semantic import BAD_MODE, MODES, default_mode
from wovepaper.views import page_cache
from wovepaper.views.responses import page_number

PAGE_SIZE = 24
# The search modes the form offers, with their labels (wovepaper.semantic.MODES).
MODE_CHOICES = (
    ("hybrid", "words and meaning"),
    ("keyword", "words only"),
    ("semantic", "meaning only"),
)
# Researchers shown above the papers (first page only).
RESEARCHER_COUNT = 10
# Categories offered by the filter's select (the results' commonest).
CATEGORY_CHOICES = 20
# arXiv categories: ``hep-th``, ``cond-mat.str-el``, ``cs.LG`` (at most 40 chars,
# the length of Paper.primary_category).
# The query parameters the page reads: a stateless visitor's page asked with
# these alone is cached whole (wovepaper.views.page_cache).
PAGE_PARAMETERS = frozenset({"q", "category", "year", "page", "mode"})
# How long a rendered search page is reused for stateless visitors (seconds), under
# every researcher's cache version and the searches' (a curation change or a
# curator's paper edit shows at once). What a harvest changes in the papers
# listed (titles, bylines) shows within this; papers it adds appear within the
# ranked head's wovepaper.search.SEARCH_CACHE_SECONDS, as before.
# Readers repeat searches and page through them: on bench/pages.py's repeated
# (Zipf) searches a cached page is served like robots.txt.
PAGE_SECONDS = 60


def _category_choices(
    counts: list[tuple[str, int]], *, chosen: str
) -> list[tuple[str, int | None]]:
    """The category filter's options: the results' commonest primary categories.

    Args:
        counts: the ``categories`` of :func:`wovepaper.search.search_results`
            (a count is None for a broad search).
        chosen: the category filter in force ("" for none).

    Returns:
        At most :data:`CATEGORY_CHOICES` ``(category, papers)``, most papers first;
        a chosen category not among them (a cross-list) is added with no count,
        so the select still shows it.
    """
    choices = [(name, n) for name, n in counts if name][:CATEGORY_CHOICES]
    if chosen and chosen not in {name for name, _ in choices}:
        choices.append((chosen, None))
    return choices


@require_safe
def search(request: HttpRequest) -> HttpResponse:
    """GET ``/search/?q=...&category=...&year=...&mode=...&page=N``.

    ``mode`` is ``hybrid`` (the default: keyword and semantic rankings fused),
    ``keyword`` or ``semantic`` (:func:`wovepaper.search.search_results`); an
    unknown mode is a 400 with the reason.

    Researchers whose name is like the text, ranked by how the name matches
    and then by activity (:func:`wovepaper.name_search.researchers_ranked`;
    first page only, at most :data:`RESEARCHER_COUNT`, with a link to all of
    them on ``/researchers/?q=``), institutions named like it, then the
    matching papers, :data:`PAGE_SIZE` a page,
    best first, as :func:`wovepaper.profile.paper_rows` (short bylines). On
    PostgreSQL the same statements whatever the matches (the ranked head in
    one, under its statement timeout; the page's rows; the researchers), on
    SQLite up to five more for a broad search
    (:func:`wovepaper.search.search_head`). No text: the form alone. Text over
    the bounds of :func:`wovepaper.search.search_query_clean`, a malformed
    category or year: the form with the reason, HTTP 400. A stateless
    visitor's page (no session, no messages, only :data:`PAGE_PARAMETERS`) is
    cached whole for :data:`PAGE_SECONDS` under every researcher's and the
    searches' cache versions.
    """
    # Read once: the page's cache key, the ranked head's and the researchers'.
    researchers, searches = researchers_version(), searches_version()
    page_key = None
    if page_cache.stateless(request, PAGE_PARAMETERS):
        page_key = (
            f"search-page:v{researchers}.{searches}:{page_cache.url_digest(request)}"
        )
        cached = page_cache.cached_page(page_key)
        if cached is not None:
            return cached
    query = request.GET.get("q", "")
    category, year, errors = search_filters(request.GET)
    default = default_mode()
    mode = request.GET.get("mode", "").strip().lower() or default
    if mode not in MODES:
        errors.append(BAD_MODE)
        mode = default
    kept = {
        name: value
        for name, value in (
            ("q", query),
            ("category", category),
            ("year", year),
            ("mode", "" if mode == default else mode),
        )
        if value
    }
    context = {
        "query": query,
        "category": category,
        "year": year or "",
        "filters_query": urlencode(kept),
        "canonical_url": request.build_absolute_uri(
            reverse("search") + (f"?{urlencode(kept)}" if kept else "")
        ),
        "errors": errors,
        "mode": mode,
        "modes": MODE_CHOICES,
        # Until the results name theirs, the select offers the chosen category.
        "categories": [(category, None)] if category else [],
    }
    unavailable = False
    if not errors and query.strip():
        found = paper_named_by(query)
        if found is not None and not category and not year:
            return redirect(found.get_absolute_url())
        try:
            number = request.GET.get("page", "1")
            result = search_results(
                query=query,
                category=category,
                year=year,
                number=page_number(number),
                size=PAGE_SIZE,
                version=searches,
                mode=mode,
            )
            # The page object only carries the numbers; the rows come by id.
            page = Paginator(range(result["listed"]), PAGE_SIZE).get_page(
                result["number"]
            )
            papers = paper_rows_by_id(result["ids"])
            people = researchers_ranked(query=query) if page.number == 1 else []
            context.update(
                searched=True,
                page=page,
                found=f"{result['count']:,}",
                found_is=result["count_is"],
                answered_by=result["mode"],
                by_words=f"{result['by_words'] or 0:,}",
                near_only=f"{result['count'] - (result['by_words'] or 0):,}",
                found_all=result["count_is"] == "exact"
                and result["count"] == result["listed"],
                listed=f"{result['listed']:,}",
                # A broad search lists title matches first on PostgreSQL, the
                # best FTS5 matches on SQLite (wovepaper.search.search_head).
                titles_first=connection.vendor == "postgresql",
                only_common_words=not result["count"] and only_common_words(query),
                papers=papers,
                researchers=people[:RESEARCHER_COUNT],
                researcher_total=len(people),
                institutions=(
                    institutions_named(query=query) if page.number == 1 else []
                ),
                categories=_category_choices(result["categories"], chosen=category),
            )
        except SearchQueryError as exc:
            errors.append(str(exc))
            unavailable = isinstance(exc, SemanticUnavailable)
    status = 503 if unavailable else 400 if errors else 200
    response = render(request, "pages/search.html", context, status=status)
    if page_key is not None:
        page_cache.keep_page(page_key, response, PAGE_SECONDS)
    return response
