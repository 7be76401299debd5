"""RSS 2.0 feeds of visible papers: the latest, one researcher's, one category's.

Built on Django's syndication framework (``django.contrib.syndication``); each
feed is a :class:`~django.contrib.syndication.views.Feed` instance exposed under
the name the URL conf routes to. Only the curated state shows: a researcher's
feed lists the papers whose authorship a curator (or the identifier policy)
applied to that researcher, never a pending proposal's.

Titles and abstracts are shown as plain text, their LaTeX markup turned into
Unicode text as on the public pages. RSS readers treat an item's
``title`` and ``description`` as HTML (RSS Advisory Board, "RSS Best Practices
Profile", description), so both are HTML-escaped here before the feed generator
XML-escapes them again: a reader shows ``a < b`` as printed, never as markup.
"""

from __future__ import annotations

import datetime as dt

from django.contrib.syndication.views import Feed
from django.db.models import F, Prefetch, QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
)
from django.urls import reverse
from django.utils.html import escape

from wovepaper import selectors
from wovepaper.models import Authorship, Paper, Researcher
from wovepaper.text import latex_to_text
from wovepaper.xmlchars import xml_safe

# Items per feed, newest first.
FEED_ITEMS = 50
# Names printed in an item's author line before "et al." (collaboration papers
# print thousands).
FEED_AUTHOR_NAMES = 20
# What an item shows (and its URL needs): not the search document or the raw hashes.
FEED_PAPER_FIELDS = (
    "id",
    "arxiv_id",
    "slug",
    "title",
    "abstract",
    "published",
    "categories",
)


def _plain(text: str) -> str:
    """Source text as an RSS element shows it: LaTeX as Unicode, escaped, XML-safe.

    LaTeX markup becomes text as on the public pages
    (:func:`wovepaper.text.latex_to_text`).
    """
    return escape(xml_safe(latex_to_text(text)))


def _with_byline(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """``papers`` newest first (undated last), at most :data:`FEED_ITEMS`, names loaded.

    The byline is one prefetch query of the printed names, whatever the number
    of items.
    """
    # paper_list() prefetches a fuller byline; a feed needs only the names.
    return (
        papers.only(*FEED_PAPER_FIELDS)
        .prefetch_related(None)
        .prefetch_related(
            Prefetch(
                "authorships",
                queryset=Authorship.objects.only(
                    "paper_id", "position", "raw_name"
                ).order_by("position"),
            )
        )
        .order_by(F("published").desc(nulls_last=True), "-id")[:FEED_ITEMS]
    )


class PaperFeed(Feed):
    """What every paper feed shares: how one paper becomes one RSS item."""

    def item_title(self, item: Paper) -> str:
        """The paper's title on one line (escaped: see the module docstring)."""
        return _plain(" ".join(item.title.split()))

    def item_description(self, item: Paper) -> str:
        """The abstract as plain text (escaped: see the module docstring)."""
        return _plain(item.abstract)

    def item_link(self, item: Paper) -> str:
        """The paper's canonical page (the framework makes it absolute)."""
        return item.get_absolute_url()

    def item_pubdate(self, item: Paper) -> dt.datetime | None:
        """Midnight UTC of the first version's date; None when undated."""
        if item.published is None:
            return None
        return dt.datetime.combine(item.published, dt.time.min, tzinfo=dt.UTC)

    def item_author_name(self, item: Paper) -> str | None:
        """The byline as printed, comma-separated, "et al." past 20 names.

        Written as ``dc:creator``: RSS 2.0 ``author`` must be an e-mail address.
        """
        names = [xml_safe(a.raw_name) for a in item.authorships.all()]
        if not names:
            return None
        shown = ", ".join(names[:FEED_AUTHOR_NAMES])
        return f"{shown} et al." if len(names) > FEED_AUTHOR_NAMES else shown

    def item_categories(self, item: Paper) -> list[str]:
        """The paper's arXiv categories, primary first."""
        return [xml_safe(c) for c in item.category_list]


class LatestPapersFeed(PaperFeed):
    """The 50 newest visible papers."""

    title = "wovepaper: latest papers"
    description = "The newest papers on wovepaper, with their curated authors."

    def link(self) -> str:
        """The home page."""
        return reverse("home")

    def items(self) -> QuerySet[Paper]:
        """Visible papers, newest first (two queries)."""
        return _with_byline(Paper.objects.filter(hidden=False))


class _Moved(Exception):
    """A merged-away researcher's feed: answered by a redirect to ``url``."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


class ResearcherPapersFeed(PaperFeed):
    """One live researcher's papers (curated authorships only), newest first."""

    def __call__(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        """The feed, or a 301 to the survivor's feed for a merged-away researcher."""
        try:
            return super().__call__(request, *args, **kwargs)
        except _Moved as moved:
            return HttpResponsePermanentRedirect(moved.url)

    def get_object(self, request: HttpRequest, pk: int) -> Researcher:
        """The live researcher ``pk``.

        Raises:
            _Moved: ``pk`` was merged away (to the survivor's feed URL).
            Http404: ``pk`` does not exist, was retired, or its merge chain
                names no live survivor.
        """
        researcher = Researcher.objects.filter(pk=pk).first()
        if researcher is None or researcher.retired:
            raise Http404("no such researcher")
        if researcher.merged_into_id is not None:
            survivor = selectors.researcher_survivor(researcher.pk)
            if survivor is None:
                raise Http404("no such researcher")
            raise _Moved(reverse("feed-researcher", kwargs={"pk": survivor}))
        return researcher

    def title(self, obj: Researcher) -> str:
        """``wovepaper: papers of <name>``."""
        return xml_safe(f"wovepaper: papers of {obj.display_name}")

    def description(self, obj: Researcher) -> str:
        """What the feed holds."""
        return xml_safe(
            f"Papers of {obj.display_name}, newest first: only authorships a "
            "curator applied to this profile."
        )

    def link(self, obj: Researcher) -> str:
        """The researcher's page."""
        return obj.get_absolute_url()

    def items(self, obj: Researcher) -> QuerySet[Paper]:
        """:func:`wovepaper.selectors.researcher_papers`, first 50 (two queries)."""
        return _with_byline(selectors.researcher_papers(researcher=obj))


class CategoryPapersFeed(PaperFeed):
    """The visible papers of one arXiv category (primary or cross-list)."""

    def get_object(self, request: HttpRequest, category: str) -> str:
        """The category, when some visible paper carries it.

        Raises:
            Http404: no visible paper carries ``category``.
        """
        if not selectors.category_exists(category):
            raise Http404("no paper here is in this category")
        return category

    def title(self, obj: str) -> str:
        """``wovepaper: <category>``."""
        return f"wovepaper: {obj}"

    def description(self, obj: str) -> str:
        """What the feed holds."""
        return f"The newest papers in the arXiv category {obj} (primary or cross-list)."

    def link(self, obj: str) -> str:
        """The home page (there is no page per category)."""
        return reverse("home")

    def items(self, obj: str) -> QuerySet[Paper]:
        """:func:`wovepaper.selectors.papers_in_category`, first 50 (two queries)."""
        return _with_byline(selectors.papers_in_category(obj))


latest_papers = LatestPapersFeed()
researcher_papers = ResearcherPapersFeed()
category_papers = CategoryPapersFeed()
