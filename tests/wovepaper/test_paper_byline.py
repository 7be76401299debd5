"""A paper page with a huge byline: the first authors, then "show all"; its
citation_* meta tags and breadcrumbs."""

from __future__ import annotations

import json

import pytest
from lxml import html as lxml_html

from harvest import services as harvest
from wovepaper.models import Paper
from wovepaper.views.pages import BYLINE_FIRST

pytestmark = pytest.mark.django_db

# LHCb, 2014: the bundled record with the longest byline.
LHCB = "abs_files/ftp/arxiv/papers/1411/1411.4413.abs"


@pytest.fixture
def lhcb(arxiv_dir) -> Paper:
    harvest.harvest_arxiv_files(root=arxiv_dir / LHCB)
    return Paper.objects.get(arxiv_id="1411.4413")


def test_a_huge_byline_shows_its_first_authors_then_all(client, lhcb):
    total = lhcb.authorships.count()
    assert total > 900
    response = client.get(lhcb.get_absolute_url())
    assert response.status_code == 200
    assert len(response.content) < 100_000
    doc = lxml_html.fromstring(response.content)
    slots = doc.cssselect("#authors > li")
    assert len(slots) == BYLINE_FIRST
    first = lhcb.authorships.order_by("position").first()
    # One number per author: the position, printed once.
    assert slots[0].cssselect(".position")[0].text_content() == "1."
    assert slots[0].text_content().count("1.") == 1
    assert first.raw_name in slots[0].text_content()
    more = doc.cssselect("#all-authors a")[0]
    assert more.text_content() == f"Show all {total} authors"
    whole = lxml_html.fromstring(
        client.get(lhcb.get_absolute_url() + more.get("href").split("#")[0]).content
    )
    assert len(whole.cssselect("#authors > li")) == total
    assert not whole.cssselect("#all-authors")


def test_paper_page_carries_citation_tags_and_breadcrumbs(client, lhcb):
    doc = lxml_html.fromstring(client.get(lhcb.get_absolute_url()).content)

    def meta(name: str) -> list[str]:
        return [m.get("content") for m in doc.cssselect(f"meta[name='{name}']")]

    assert meta("citation_arxiv_id") == ["1411.4413"]
    assert meta("citation_pdf_url") == [lhcb.pdf_url]
    assert meta("citation_publication_date") == [lhcb.published.strftime("%Y/%m/%d")]
    names = [a.raw_name for a in lhcb.authorships.order_by("position")[:BYLINE_FIRST]]
    assert meta("citation_author") == [
        n for n in names if "collaboration" not in n.lower()
    ]
    assert meta("citation_title")[0].startswith("Observation of the rare")
    crumbs = [
        json.loads(s.text)
        for s in doc.cssselect("script[type='application/ld+json']")
        if '"BreadcrumbList"' in s.text
    ][0]
    items = crumbs["itemListElement"]
    assert [i["item"] for i in items] == [
        "http://testserver/",
        "http://testserver/papers/",
        f"http://testserver/categories/{lhcb.primary_category}/",
        f"http://testserver{lhcb.get_absolute_url()}",
    ]
    assert [i["position"] for i in items] == [1, 2, 3, 4]
