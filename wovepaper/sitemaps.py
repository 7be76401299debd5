"""Sitemaps of the public pages, on Django's sitemaps framework.

``/sitemap.xml`` is always a sitemap index (https://www.sitemaps.org/protocol.html
#index) naming every page of every section; a section is served at
``/sitemap-<section>.xml`` and split into pages of :attr:`Sitemap.limit` URLs
(50,000, the protocol's cap) reached with ``?p=2``, ``?p=3`` ... Sections:

- ``static``: the home, search and browse pages (``/researchers/``,
  ``/institutions/``, ``/papers/``);
- ``categories``: ``/categories/<category>/`` of each primary category;
- ``papers``: visible papers;
- ``researchers``: live researchers with at least one visible paper;
- ``institutions``: institutions with at least one authorship on a visible paper.

Each section pages over its table by id (a stable order while rows are added),
with two queries a page (count and slice), whatever the number of rows; the
index costs two queries a section (count and latest lastmod) and leaves out
empty sections.
"""

from __future__ import annotations

import datetime as dt

from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps import views as sitemap_views
from django.core.paginator import Paginator
from django.db.models import Exists, Max, OuterRef, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.functional import cached_property

from wovepaper.models import Authorship, Institution, Paper, Researcher


class StaticSitemap(Sitemap):
    """The pages that are not a record: home, search and the browse pages."""

    changefreq = "daily"

    def items(self) -> list[str]:
        """URL names, in the order listed."""
        return ["home", "search", "researchers", "institutions", "papers"]

    def location(self, item: str) -> str:
        """The page's path."""
        return reverse(item)


class CategorySitemap(Sitemap):
    """The page of each primary category a visible paper carries (cross-list
    only categories are reached from their papers)."""

    changefreq = "daily"

    def items(self) -> list[str]:
        """Primary categories, sorted; one query."""
        return list(
            Paper.objects.filter(hidden=False)
            .exclude(primary_category="")
            .order_by("primary_category")
            .values_list("primary_category", flat=True)
            .distinct()
        )

    def location(self, item: str) -> str:
        """``/categories/<category>/``."""
        return reverse("category", kwargs={"category": item})


class ModelSitemap(Sitemap):
    """A section of model pages; ``lastmod`` is the row's ``modified``."""

    @cached_property
    def paginator(self) -> Paginator:
        """The section's pages, counted once per request (Django's is rebuilt)."""
        return Paginator(self.items(), self.limit)

    def items(self) -> QuerySet:
        """The rows listed, by id (implemented by each section)."""
        raise NotImplementedError

    def lastmod(self, item) -> dt.datetime:
        """When our record of the page's subject last changed (aware UTC)."""
        return item.modified

    def get_latest_lastmod(self) -> dt.datetime | None:
        """The newest ``lastmod`` of the section, in one aggregate query.

        Django's default calls ``lastmod`` on every item; the index asks this for
        every section on each request.
        """
        return self.items().order_by().aggregate(latest=Max("modified"))["latest"]


class PaperSitemap(ModelSitemap):
    """Visible papers at their canonical URL (``/papers/<arXiv id>-<slug>``).

    ``modified`` moves when a harvest writes a newer version of the paper
    (``updated``, the date of the latest arXiv version, is never later than the
    harvest that recorded it), so it is the page's last change.
    """

    changefreq = "monthly"

    def items(self) -> QuerySet[Paper]:
        """Visible papers by id, only the columns the URL and lastmod need."""
        return (
            Paper.objects.filter(hidden=False)
            .only("id", "arxiv_id", "slug", "modified")
            .order_by("id")
        )


class ResearcherSitemap(ModelSitemap):
    """Live researchers with a visible paper, at ``/researchers/<id>-<slug>``.

    ``modified`` is when the profile row was last saved. Curation moves
    authorships and bumps ``revision`` with ``update()``, which leaves
    ``modified`` alone, so a profile's lastmod can be older than its byline.
    """

    changefreq = "weekly"

    def items(self) -> QuerySet[Researcher]:
        """Live researchers with a visible paper, by id."""
        shown = Authorship.objects.filter(
            researcher=OuterRef("pk"), paper__hidden=False
        )
        return (
            Researcher.objects.live()
            .filter(Exists(shown))
            .only("id", "slug", "modified")
            .order_by("id")
        )


class InstitutionSitemap(ModelSitemap):
    """Institutions named on a visible paper, at ``/institutions/<id>-<slug>``."""

    changefreq = "monthly"

    def items(self) -> QuerySet[Institution]:
        """Institutions with an authorship on a visible paper, by id."""
        named = Authorship.institutions.through.objects.filter(
            institution_id=OuterRef("pk"), authorship__paper__hidden=False
        )
        return (
            Institution.objects.filter(Exists(named))
            .only("id", "slug", "modified")
            .order_by("id")
        )


SECTIONS: dict[str, type[Sitemap]] = {
    "static": StaticSitemap,
    "categories": CategorySitemap,
    "papers": PaperSitemap,
    "researchers": ResearcherSitemap,
    "institutions": InstitutionSitemap,
}


def sitemap_index(request: HttpRequest) -> HttpResponse:
    """``/sitemap.xml``: the index of every page of every section.

    A section with nothing in it is left out: a sitemap must hold at least one
    URL (sitemaps.org XML schema, ``urlset``).

    Returns:
        ``application/xml``; each section's first page is ``/sitemap-<name>.xml``,
        its later pages add ``?p=N``.
    """
    sections = {name: section() for name, section in SECTIONS.items()}
    listed = {
        name: section for name, section in sections.items() if section.paginator.count
    }
    return sitemap_views.index(request, listed, sitemap_url_name="sitemap-section")


def sitemap_section(request: HttpRequest, section: str) -> HttpResponse:
    """``/sitemap-<section>.xml?p=N``: one page of one section.

    Returns:
        ``application/xml`` with up to :attr:`Sitemap.limit` URLs.

    Raises:
        Http404: an unknown section, or a page number that is not a page of it.
    """
    return sitemap_views.sitemap(request, SECTIONS, section=section)
