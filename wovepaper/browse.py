"""Reads of the browse pages: researchers A-Z, by field, by papers, by activity;
institutions by country and by papers; papers newest first, in all or in one
category.

Every list is a QuerySet or a cached list that the views page with Django's
paginator: two queries a page (count and slice) whatever the page size.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, Q, QuerySet
from django_countries import countries

from wovepaper.identifiers import ARXIV_CATEGORY
from wovepaper.models import Authorship, Paper, ResearcherStats
from wovepaper.selectors import in_category

# The orders of /researchers/ (``?sort=``), each with its label; the first is
# the default.
RESEARCHER_SORTS = {
    "name": "A-Z",
    "papers": "most papers",
    "recent": "recently active",
    "cited": "most cited",
}
# The orders of /institutions/ (``?sort=``); the first is the default.
INSTITUTION_SORTS = {"papers": "most papers", "name": "A-Z"}
# The letters of the A-Z index; "#" holds names that begin with no Latin letter.
LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ#")
# How long the lists of fields, countries and institutions, and the paper
# counts of the paper lists, are reused (seconds): they move with harvests and
# curation, and no reader needs them to the second.
FACETS_SECONDS = 600
# The deepest page of a paper list (x 50 papers): past it a reader narrows by
# category (a count and an offset of 100,000 papers cost 80 and 185 ms on
# bench/pages.py's corpus, and every page further down costs more).
MAX_PAGES = 200


def researcher_listing(
    *, sort: str = "name", letter: str = "", field: str = ""
) -> QuerySet[ResearcherStats]:
    """Live researchers with a visible paper, as the browse page lists them.

    Args:
        sort: a key of :data:`RESEARCHER_SORTS` ("name": folded family name,
            then given name; "papers": most visible papers first; "recent":
            latest paper year first, then most papers; "cited": most citations
            first); anything else is "name".
        letter: one of :data:`LETTERS` (by the folded family name's first
            letter), or "" for all.
        field: the researcher's main field (commonest primary arXiv category),
            or "" for all.

    Returns:
        :class:`ResearcherStats` rows with their researcher joined, in order
        (ties by A-Z, then id).
    """
    # Only live researchers have a row (researcher_stats_refresh deletes the
    # row of a profile merged away or retired), so the count needs no join.
    rows = ResearcherStats.objects.select_related("researcher")
    if letter in LETTERS:
        rows = rows.filter(letter=letter)
    if field:
        rows = rows.filter(main_category=field)
    order = {
        "papers": ("-paper_count", "sort_name", "researcher_id"),
        "recent": ("-active_year", "-paper_count", "sort_name", "researcher_id"),
        "cited": ("-citation_count", "-paper_count", "sort_name", "researcher_id"),
    }.get(sort, ("sort_name", "researcher_id"))
    return rows.order_by(*order)


def researcher_fields() -> list[tuple[str, int]]:
    """The researchers' main fields with how many researchers have each, most
    first (cached :data:`FACETS_SECONDS`).

    Returns:
        ``[(primary arXiv category, researchers)]``; researchers with no
        categorised paper are not counted.
    """
    key = "browse:researcher-fields:v1"
    fields = cache.get(key)
    if fields is None:
        fields = [
            (row["main_category"], row["n"])
            for row in ResearcherStats.objects.exclude(main_category="")
            .values("main_category")
            .annotate(n=Count("*"))
            .order_by("-n", "main_category")
        ]
        cache.set(key, fields, FACETS_SECONDS)
    return fields


@dataclass(frozen=True)
class InstitutionRow:
    """One institution as the browse page lists it."""

    pk: int
    name: str
    slug: str
    country_code: str
    papers: int
    researchers: int

    @property
    def url(self) -> str:
        """The institution's canonical page."""
        return f"/institutions/{self.pk}-{self.slug or 'institution'}"

    @property
    def country(self) -> str:
        """The country's English name (ISO 3166-1 via django-countries), or
        the code as stored when it is none."""
        return countries.name(self.country_code) or self.country_code


def institution_listing() -> list[InstitutionRow]:
    """Every institution named on a visible paper, most papers first (then by
    name), with its visible papers and live researchers counted; cached
    :data:`FACETS_SECONDS`.

    Returns:
        The rows; one query for the papers and one for the researchers when
        the cache is cold.
    """
    key = "browse:institutions:v1"
    rows = cache.get(key)
    if rows is not None:
        return rows
    through = Authorship.institutions.through.objects.filter(
        authorship__paper__hidden=False
    )
    counts = (
        through.values(
            "institution_id",
            "institution__name",
            "institution__slug",
            "institution__country_code",
        )
        .annotate(
            papers=Count("authorship__paper", distinct=True),
            researchers=Count(
                "authorship__researcher",
                distinct=True,
                filter=Q(
                    authorship__researcher__merged_into__isnull=True,
                    authorship__researcher__retired=False,
                ),
            ),
        )
        .order_by()
    )
    rows = sorted(
        (
            InstitutionRow(
                pk=row["institution_id"],
                name=row["institution__name"],
                slug=row["institution__slug"],
                country_code=row["institution__country_code"] or "",
                papers=row["papers"],
                researchers=row["researchers"],
            )
            for row in counts
        ),
        key=lambda r: (-r.papers, r.name.casefold(), r.pk),
    )
    cache.set(key, rows, FACETS_SECONDS)
    return rows


def institutions_browsed(
    *, sort: str = "papers", country: str = ""
) -> tuple[list[InstitutionRow], list[tuple[str, str, int]]]:
    """The institutions the browse page lists, and its country filter's options.

    Args:
        sort: a key of :data:`INSTITUTION_SORTS`; anything else is "papers".
        country: an ISO 3166-1 alpha-2 code (any case), or "" for all.

    Returns:
        ``(institutions in order, [(code, country name, institutions)] most
        institutions first)``; the countries are counted over every
        institution, whatever the filter.
    """
    rows = institution_listing()
    tally: dict[str, int] = {}
    for row in rows:
        if row.country_code:
            tally[row.country_code] = tally.get(row.country_code, 0) + 1
    options = sorted(
        ((code, countries.name(code) or code, n) for code, n in tally.items()),
        key=lambda c: (-c[2], c[1]),
    )
    if country:
        rows = [r for r in rows if r.country_code.upper() == country.upper()]
    if sort == "name":
        rows = sorted(rows, key=lambda r: (r.name.casefold(), r.pk))
    return rows, options


def paper_fields(limit: int = 16) -> list[tuple[str, int]]:
    """The commonest primary categories of visible papers, with their paper
    counts, most first (cached :data:`FACETS_SECONDS`).

    Args:
        limit: how many fields at most.

    Returns:
        ``[(primary arXiv category, papers)]``.
    """
    key = f"browse:paper-fields:v1:{limit}"
    fields = cache.get(key)
    if fields is None:
        counted = (
            Paper.objects.filter(hidden=False)
            .exclude(primary_category="")
            .values("primary_category")
            .annotate(n=Count("*"))
            .order_by("-n", "primary_category")
        )
        fields = [
            (row["primary_category"], row["n"])
            for row in counted
            if ARXIV_CATEGORY.fullmatch(row["primary_category"])
        ][:limit]
        cache.set(key, fields, FACETS_SECONDS)
    return fields


class CountedList:
    """A queryset for Django's paginator whose count is cached and capped.

    The count is read once per :data:`FACETS_SECONDS` under ``key`` and
    capped at ``cap`` rows (the pages listed); :attr:`total` is the count
    before the cap, for "N papers".
    """

    def __init__(self, queryset: QuerySet, *, key: str, cap: int) -> None:
        self.queryset, self.key, self.cap = queryset, key, cap

    @property
    def total(self) -> int:
        """How many rows the queryset holds (cached)."""
        return cache.get_or_set(self.key, self.queryset.count, FACETS_SECONDS)

    def count(self) -> int:
        """The rows the pages list: :attr:`total`, at most ``cap``."""
        return min(self.total, self.cap)

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index):
        return self.queryset[index]


def papers_latest(*, category: str = "") -> QuerySet[Paper]:
    """Visible papers newest first (then newest id), in all or carrying
    ``category`` (primary or cross-list): the home page's order, read through
    the ``(-published, -id)`` index.

    Args:
        category: an arXiv category as the papers spell it, or "" for all.

    Returns:
        Papers in order, for :func:`wovepaper.profile.paper_rows` to render.
    """
    papers = Paper.objects.filter(hidden=False)
    if category:
        papers = papers.filter(in_category(category))
    return papers.order_by("-published", "-id")
