"""robots.txt and llms.txt."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache

from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper.models import Institution

pytestmark = pytest.mark.django_db


def test_robots_names_the_sitemap_and_keeps_private_paths_out(client):
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    lines = response.content.decode().splitlines()
    assert "User-agent: *" in lines
    disallowed = {line.split(": ", 1)[1] for line in lines if line.startswith("Dis")}
    assert {"/admin/", "/accounts/", "/following/", "/api/token/"} <= disallowed
    assert "/researchers/*/follow$" in disallowed
    assert "/categories/*/follow$" in disallowed
    assert not any(d in ("/", "/papers/", "/researchers/") for d in disallowed)
    (sitemap,) = [line for line in lines if line.startswith("Sitemap: ")]
    assert sitemap == "Sitemap: http://testserver/sitemap.xml"
    assert client.get("/sitemap.xml").status_code == 200


def test_robots_refuses_writes(client):
    assert client.post("/robots.txt").status_code == 405


def test_llms_txt_follows_the_proposal_and_counts_live_rows(client):
    ResearcherFactory(merged_into=ResearcherFactory())  # counts once: the survivor
    ResearcherFactory(retired=True)
    AuthorshipFactory(researcher=ResearcherFactory())
    PaperFactory(hidden=True)
    PaperFactory.create_batch(2)
    Institution.objects.create(name="CERN")

    response = client.get("/llms.txt")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    text = response.content.decode()
    # llmstxt.org: an H1 first, then a blockquote summary, then H2 sections.
    assert text.startswith("# wovepaper\n\n> ")
    assert re.findall(r"^## (.+)$", text, re.M)[:3] == [
        "Pages",
        "API",
        "Feeds and sitemap",
    ]
    assert "3 papers, 2 researcher profiles and 1 institution " in text
    for pattern in (
        "`/papers/<arXiv id>-<slug>`",
        "`/researchers/<id>-<slug>`",
        "`/institutions/<id>-<slug>`",
        "`Accept: text/markdown`",
        "/researchers/<id>/feed.rss",
        "/categories/<category>/feed.rss",
    ):
        assert pattern in text
    assert "curator" in text.split("## Pages")[0]


def test_llms_txt_links_resolve(client):
    PaperFactory()
    text = client.get("/llms.txt").content.decode()
    links = re.findall(r"\]\((http://testserver[^)]*)\)", text)
    paths = {link.removeprefix("http://testserver") for link in links}
    assert {
        "/api/",
        "/openapi.json",
        "/api/docs/",
        "/feeds/latest.rss",
        "/sitemap.xml",
        "/robots.txt",
    } <= paths
    for path in paths - {"/search/"}:  # the search page is written elsewhere
        assert client.get(path).status_code == 200, path


def test_llms_txt_counts_are_cached(client, django_assert_num_queries):
    PaperFactory()
    assert "1 paper," in client.get("/llms.txt").content.decode()
    PaperFactory()
    with django_assert_num_queries(0):
        text = client.get("/llms.txt").content.decode()
    assert "1 paper," in text
    cache.clear()
    assert "2 papers," in client.get("/llms.txt").content.decode()


def test_llms_txt_examples_are_real_pages(client):
    paper = PaperFactory()
    researcher = AuthorshipFactory(researcher=ResearcherFactory()).researcher
    text = client.get("/llms.txt").content.decode()
    assert f"<http://testserver{researcher.get_absolute_url()}>" in text
    newest = max(paper, researcher.authorships.get().paper, key=lambda p: p.pk)
    assert f"<http://testserver{newest.get_absolute_url()}>" in text
