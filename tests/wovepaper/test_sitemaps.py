"""Sitemaps: the index names every page of every section; sections list the pages."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from tests.wovepaper.test_feeds import curated_corpus
from wovepaper import sitemaps
from wovepaper.models import Institution, Paper, Researcher

pytestmark = pytest.mark.django_db

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
NS = {"sm": SM}
SITE = "http://testserver"


def index_locs(client) -> list[str]:
    """The ``loc`` of every sitemap the index names, in order."""
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/xml"
    root = ET.fromstring(response.content)
    assert root.tag == f"{{{SM}}}sitemapindex"
    return [loc.text for loc in root.findall("sm:sitemap/sm:loc", NS)]


def section_urls(client, path: str) -> dict[str, str | None]:
    """``{loc: lastmod}`` of one sitemap page."""
    response = client.get(path)
    assert response.status_code == 200
    root = ET.fromstring(response.content)
    assert root.tag == f"{{{SM}}}urlset"
    return {
        url.findtext("sm:loc", namespaces=NS): url.findtext("sm:lastmod", namespaces=NS)
        for url in root.findall("sm:url", NS)
    }


@pytest.fixture
def corpus(db, arxiv_dir) -> Researcher:
    return curated_corpus(arxiv_dir)


def test_sections_list_the_real_public_pages(client, corpus):
    hidden = Paper.objects.get(arxiv_id="1111.2011")
    Paper.objects.filter(pk=hidden.pk).update(hidden=True)
    merged = ResearcherFactory(merged_into=corpus)
    retired = ResearcherFactory(retired=True)
    paperless = ResearcherFactory()
    AuthorshipFactory(researcher=paperless, paper=PaperFactory(hidden=True))
    institution = Institution.objects.create(name="University of Vermont")
    Institution.objects.create(name="Nowhere Institute")
    Paper.objects.get(arxiv_id="1412.6529").authorships.first().institutions.add(
        institution
    )

    assert index_locs(client) == [
        f"{SITE}/sitemap-static.xml",
        f"{SITE}/sitemap-categories.xml",
        f"{SITE}/sitemap-papers.xml",
        f"{SITE}/sitemap-researchers.xml",
        f"{SITE}/sitemap-institutions.xml",
    ]
    assert set(section_urls(client, "/sitemap-static.xml")) == {
        f"{SITE}/",
        f"{SITE}/search/",
        f"{SITE}/researchers/",
        f"{SITE}/institutions/",
        f"{SITE}/papers/",
    }
    primaries = visible_categories()
    assert primaries
    assert set(section_urls(client, "/sitemap-categories.xml")) == {
        f"{SITE}/categories/{c}/" for c in primaries
    }

    papers = section_urls(client, "/sitemap-papers.xml")
    visible = Paper.objects.filter(hidden=False)
    assert set(papers) == {SITE + p.get_absolute_url() for p in visible}
    assert len(papers) == 11
    assert SITE + hidden.get_absolute_url() not in papers
    one = visible.get(arxiv_id="1412.6529")
    assert papers[SITE + one.get_absolute_url()] == one.modified.date().isoformat()

    researchers = section_urls(client, "/sitemap-researchers.xml")
    holding = Researcher.objects.filter(authorships__paper__hidden=False).distinct()
    assert set(researchers) == {SITE + r.get_absolute_url() for r in holding}
    assert SITE + corpus.get_absolute_url() in researchers
    for left_out in (merged, retired, paperless):
        assert SITE + left_out.get_absolute_url() not in researchers

    assert set(section_urls(client, "/sitemap-institutions.xml")) == {
        SITE + institution.get_absolute_url()
    }


def visible_categories() -> list[str]:
    """The primary categories of visible papers (the categories section)."""
    return sorted(
        set(
            Paper.objects.filter(hidden=False)
            .exclude(primary_category="")
            .values_list("primary_category", flat=True)
        )
    )


def test_empty_section_is_not_indexed(client):
    PaperFactory()
    assert index_locs(client) == [
        f"{SITE}/sitemap-static.xml",
        f"{SITE}/sitemap-categories.xml",
        f"{SITE}/sitemap-papers.xml",
    ]


def test_index_gives_each_section_its_latest_lastmod(client):
    PaperFactory.create_batch(2)
    newest = Paper.objects.order_by("-modified").first()
    root = ET.fromstring(client.get("/sitemap.xml").content)
    lastmods = {
        s.findtext("sm:loc", namespaces=NS): s.findtext("sm:lastmod", namespaces=NS)
        for s in root.findall("sm:sitemap", NS)
    }
    assert lastmods[f"{SITE}/sitemap-papers.xml"] == newest.modified.isoformat()
    assert lastmods[f"{SITE}/sitemap-static.xml"] is None


def test_section_past_the_limit_splits_into_pages(client, monkeypatch):
    monkeypatch.setattr(sitemaps.ModelSitemap, "limit", 2)
    PaperFactory.create_batch(5)

    locs = index_locs(client)
    assert locs == [
        f"{SITE}/sitemap-static.xml",
        f"{SITE}/sitemap-categories.xml",
        f"{SITE}/sitemap-papers.xml",
        f"{SITE}/sitemap-papers.xml?p=2",
        f"{SITE}/sitemap-papers.xml?p=3",
    ]
    pages = [section_urls(client, loc.removeprefix(SITE)) for loc in locs[2:]]
    assert [len(p) for p in pages] == [2, 2, 1]
    listed = [url for page in pages for url in page]
    assert len(set(listed)) == 5
    assert set(listed) == {SITE + p.get_absolute_url() for p in Paper.objects.all()}
    assert client.get("/sitemap-papers.xml?p=4").status_code == 404
    assert client.get("/sitemap-papers.xml?p=x").status_code == 404


def test_unknown_section_is_404(client):
    assert client.get("/sitemap-secrets.xml").status_code == 404


@pytest.mark.parametrize("section", ["papers", "researchers"])
def test_section_queries_do_not_grow_with_rows(client, section):
    queries = []
    for count in (5, 45):
        for _ in range(count):
            AuthorshipFactory(researcher=ResearcherFactory())
        with CaptureQueriesContext(connection) as ctx:
            urls = section_urls(client, f"/sitemap-{section}.xml")
        assert len(urls) == Researcher.objects.count()
        queries.append(len(ctx.captured_queries))
    assert queries[0] == queries[1] == 2


def test_index_queries_do_not_grow_with_rows(client):
    queries = []
    for count in (5, 45):
        for _ in range(count):
            AuthorshipFactory(researcher=ResearcherFactory())
        with CaptureQueriesContext(connection) as ctx:
            index_locs(client)
        queries.append(len(ctx.captured_queries))
    assert queries[0] == queries[1]
