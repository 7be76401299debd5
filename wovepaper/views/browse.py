"""The browse pages: ``/researchers/``, ``/institutions/``, ``/papers/`` and
``/categories/<category>/``.

Each is paged (:data:`PAGE_SIZE` a page, two queries for the list whatever the
page size), answers Markdown to clients that prefer it (``Accept``), is cached
whole for stateless visitors (:func:`wovepaper.views.page_cache.cached_whole`),
and is listed in the sitemap
(:mod:`wovepaper.sitemaps`).
"""

from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_safe

from wovepaper import browse, profile, selectors
from wovepaper.identifiers import ARXIV_CATEGORY
from wovepaper.name_search import researchers_ranked
from wovepaper.search import SearchQueryError
from wovepaper.views import page_cache
from wovepaper.views.responses import (
    canonical_redirect,
    page_number,
    render_page,
)

PAGE_SIZE = 50
# How long a rendered browse page is reused for stateless visitors (seconds).
PAGE_SECONDS = 60
# The paper lists' rows listed at most (their deepest page).
_CAP = browse.MAX_PAGES * PAGE_SIZE


def _page(items, request: HttpRequest) -> Page:
    """The requested page of ``items`` (past the last: the last)."""
    return Paginator(items, PAGE_SIZE).get_page(
        page_number(request.GET.get("page", "1"))
    )


def _shown(value: str, default: str) -> str:
    """A filter's value for a URL: "" when it is the default (left out)."""
    return "" if value == default else value


def _self_canonical(
    request: HttpRequest, name: str, kept: str, page: Page, **kwargs: str
) -> str:
    """The page's own canonical URL: its filters and page number (page 1
    without one), so each page of a list is indexed as itself."""
    query = "&".join(
        part
        for part in (kept, f"page={page.number}" if page.number > 1 else "")
        if part
    )
    path = reverse(name, kwargs=kwargs or None)
    return request.build_absolute_uri(f"{path}?{query}" if query else path)


def _kept(**params: str) -> str:
    """The query string of the filters in force (empty values left out), for
    the links that change only the page or one filter."""
    return urlencode({k: v for k, v in params.items() if v})


@require_safe
@page_cache.cached_whole(
    PAGE_SECONDS, frozenset({"sort", "letter", "field", "q", "page"})
)
def researchers_index(request: HttpRequest) -> HttpResponse:
    """GET ``/researchers/?sort=name|papers|recent|cited&letter=A&field=hep-th&page=N``,
    or ``/researchers/?q=<name>&page=N`` for a ranked name search.

    Live researchers with a visible paper (:func:`wovepaper.browse.researcher_listing`),
    each with the figures that tell namesakes apart: main field, latest
    affiliation, years active, papers, citations, ORCID. An unknown sort,
    letter or field is ignored (the whole list), not an error.
    """
    sort = request.GET.get("sort", "")
    sort = sort if sort in browse.RESEARCHER_SORTS else "name"
    letter = request.GET.get("letter", "").strip().upper()
    letter = letter if letter in browse.LETTERS else ""
    field = request.GET.get("field", "").strip()
    field = field if ARXIV_CATEGORY.fullmatch(field) else ""
    query = request.GET.get("q", "").strip()
    if query:
        return _researchers_named(request, query)
    page = _page(
        browse.researcher_listing(sort=sort, letter=letter, field=field), request
    )
    kept = _kept(sort=_shown(sort, "name"), letter=letter, field=field)
    return render_page(
        request,
        "researchers",
        {
            "page": page,
            "rows": list(page.object_list),
            "sort": sort,
            "sort_label": browse.RESEARCHER_SORTS[sort],
            "letter": letter,
            "field": field,
            "fields": browse.researcher_fields(),
            "kept": kept,
            "sort_links": [
                (
                    key,
                    label,
                    "?" + _kept(sort=_shown(key, "name"), letter=letter, field=field),
                )
                for key, label in browse.RESEARCHER_SORTS.items()
            ],
            "letter_links": [
                (each, "?" + _kept(sort=_shown(sort, "name"), letter=each, field=field))
                for each in browse.LETTERS
            ],
            "all_letters": "?" + _kept(sort=_shown(sort, "name"), field=field),
            "canonical_url": _self_canonical(request, "researchers", kept, page),
        },
    )


def _researchers_named(request: HttpRequest, query: str) -> HttpResponse:
    """``/researchers/?q=``: every researcher a name search finds, ranked
    (:func:`wovepaper.name_search.researchers_ranked`), paged; a text out of
    the search's bounds is a 400 with the reason."""
    try:
        found = researchers_ranked(query=query)
    except SearchQueryError as exc:
        return render_page(
            request,
            "researchers_named",
            {"query": query, "error": str(exc), "page": _page([], request)},
            status=400,
        )
    page = _page(found, request)
    return render_page(
        request,
        "researchers_named",
        {
            "query": query,
            "page": page,
            "rows": list(page.object_list),
            "kept": _kept(q=query),
            "canonical_url": _self_canonical(
                request, "researchers", _kept(q=query), page
            ),
        },
    )


@require_safe
@page_cache.cached_whole(PAGE_SECONDS, frozenset({"sort", "country", "page"}))
def institutions_index(request: HttpRequest) -> HttpResponse:
    """GET ``/institutions/?sort=papers|name&country=NL&page=N``.

    Institutions named on a visible paper, with their papers and researchers
    counted (:func:`wovepaper.browse.institutions_browsed`), filterable by
    country (ISO 3166-1 alpha-2).
    """
    sort = request.GET.get("sort", "")
    sort = sort if sort in browse.INSTITUTION_SORTS else "papers"
    country = request.GET.get("country", "").strip().upper()
    country = country if len(country) == 2 and country.isalpha() else ""
    rows, countries = browse.institutions_browsed(sort=sort, country=country)
    page = _page(rows, request)
    kept = _kept(sort=_shown(sort, "papers"), country=country)
    return render_page(
        request,
        "institutions",
        {
            "page": page,
            "rows": list(page.object_list),
            "sort": sort,
            "sort_label": browse.INSTITUTION_SORTS[sort],
            "sort_links": [
                (key, label, "?" + _kept(sort=_shown(key, "papers"), country=country))
                for key, label in browse.INSTITUTION_SORTS.items()
            ],
            "country": country,
            "countries": countries,
            "kept": kept,
            "canonical_url": _self_canonical(request, "institutions", kept, page),
        },
    )


@require_safe
@page_cache.cached_whole(PAGE_SECONDS, frozenset({"page"}))
def papers_index(request: HttpRequest) -> HttpResponse:
    """GET ``/papers/?page=N``: visible papers, newest first (the first
    :data:`wovepaper.browse.MAX_PAGES` pages)."""
    return _paper_list(request, category="")


@require_safe
@page_cache.cached_whole(PAGE_SECONDS, frozenset({"page"}))
def category_index(request: HttpRequest, category: str) -> HttpResponse:
    """GET ``/categories/<category>/?page=N``: the papers carrying an arXiv
    category (primary or cross-list), newest first.

    A category typed in another letter case answers 301 to the spelling the
    papers carry (``cs.lg`` to ``cs.LG``); one no visible paper carries is 404.
    """
    if not ARXIV_CATEGORY.fullmatch(category):
        raise Http404(f"{category[:40]} is not an arXiv category")
    spelled = selectors.category_spelled(category)
    if not selectors.category_exists(spelled):
        raise Http404(f"no paper here is in {category}")
    if spelled != category:
        return canonical_redirect(
            request, reverse("category", kwargs={"category": spelled})
        )
    return _paper_list(request, category=spelled)


def _paper_list(request: HttpRequest, *, category: str) -> HttpResponse:
    """A page of visible papers newest first, in all or in ``category`` (as
    the papers spell it; "" for all): the count cached, the first
    :data:`wovepaper.browse.MAX_PAGES` pages listed."""
    papers = browse.CountedList(
        browse.papers_latest(category=category),
        key=f"browse:papers-count:v1:{category}",
        cap=_CAP,
    )
    page = _page(papers, request)
    named = {"category": category} if category else {}
    return render_page(
        request,
        "papers",
        {
            "page": page,
            "rows": profile.paper_rows(page.object_list),
            "total": papers.total,
            "category": category,
            "kept": "",
            "canonical_url": _self_canonical(
                request, "category" if category else "papers", "", page, **named
            ),
        },
    )
