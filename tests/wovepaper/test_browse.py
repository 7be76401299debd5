"""The browse pages and the researcher figures behind them, on real records."""

from __future__ import annotations

import json

import pytest
from django.db.models import Count, Q
from lxml import html as lxml_html

from curation import edits
from wovepaper.models import Paper, Researcher, ResearcherStats
from wovepaper.stats import h_index, publication_figures, researcher_stats_refresh

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(applied_corpus):
    return applied_corpus


def _doc(response):
    return lxml_html.fromstring(response.content)


def _visible_papers(researcher: Researcher) -> list[Paper]:
    return list(
        Paper.objects.filter(
            authorships__researcher=researcher, hidden=False
        ).distinct()
    )


def test_h_index_follows_hirsch():
    assert h_index([]) == 0
    assert h_index([None, 0]) == 0
    assert h_index([10, 8, 5, 4, 3]) == 4
    assert h_index([25, 8, 5, 3, 3]) == 3
    assert h_index([1, 1, 1]) == 1


def test_publication_figures_fill_the_years_between():
    import datetime as dt

    figures = publication_figures(
        [
            (1, dt.date(2014, 3, 1), 7),
            (2, dt.date(2016, 1, 1), None),
            (3, dt.date(2016, 5, 1), 2),
            (4, None, 50),
        ]
    )
    assert [(y.year, y.papers, y.citations) for y in figures] == [
        (2014, 1, 7),
        (2015, 0, 0),
        (2016, 2, 2),
    ]
    assert publication_figures([(4, None, 50)]) == []


def test_stats_are_written_as_curation_applies_profiles(corpus):
    listed = {s.researcher_id: s for s in ResearcherStats.objects.all()}
    with_papers = [r for r in corpus if _visible_papers(r)]
    assert with_papers
    assert set(listed) == {r.pk for r in with_papers}
    for r in with_papers:
        papers = _visible_papers(r)
        stats = listed[r.pk]
        assert stats.paper_count == len(papers)
        assert stats.citation_count == sum(p.cited_by_count or 0 for p in papers)
        assert stats.h_index == h_index(p.cited_by_count for p in papers)
        years = [p.published.year for p in papers if p.published]
        assert (stats.first_year, stats.last_year) == (min(years), max(years))
        assert stats.letter == (stats.sort_name[:1].upper() or "#")


def test_a_merge_moves_the_figures_to_the_survivor(
    corpus, curator, django_capture_on_commit_callbacks
):
    a, b = (
        Researcher.objects.live()
        .annotate(n=Count("authorships"))
        .filter(n__gt=0)
        .order_by("-n", "id")[:2]
    )
    union = {p.pk for p in _visible_papers(a)} | {p.pk for p in _visible_papers(b)}
    with django_capture_on_commit_callbacks(execute=True):
        edits.researcher_merge(researchers=[a, b], actor=curator)
    survivor = Researcher.objects.live().get(pk__in=[a.pk, b.pk])
    gone = a if survivor.pk == b.pk else b
    assert ResearcherStats.objects.get(researcher=survivor).paper_count == len(union)
    assert not ResearcherStats.objects.filter(researcher=gone).exists()


def test_refresh_drops_a_profile_whose_papers_are_hidden(corpus):
    r = corpus.filter(stats__isnull=False).first()
    Paper.objects.filter(authorships__researcher=r).update(hidden=True)
    assert researcher_stats_refresh(researcher_ids=[r.pk]) == 0
    assert not ResearcherStats.objects.filter(researcher=r).exists()


def test_a_rebuild_of_every_row_leaves_the_planner_statistics(corpus):
    from django.db import connection

    def columns() -> set[str]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT attname FROM pg_stats WHERE tablename = %s",
                [ResearcherStats._meta.db_table],
            )
            return {row[0] for row in cursor.fetchall()}

    # As a freshly filled table has them (none; rolled back with the test).
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM pg_statistic WHERE starelid = %s::regclass",
            [ResearcherStats._meta.db_table],
        )
    assert not columns()
    researcher_stats_refresh(
        researcher_ids=list(Researcher.objects.values_list("pk", flat=True))
    )
    assert "main_category" not in columns()  # a refresh of some rows: no ANALYZE
    assert researcher_stats_refresh() > 0
    assert {"main_category", "letter", "citation_count"} <= columns()


def test_researchers_index_lists_a_to_z_and_by_papers(client, corpus):
    response = client.get("/researchers/")
    assert response.status_code == 200
    doc = _doc(response)
    names = [a.text_content() for a in doc.cssselect("ol.people a.person")]
    expected = list(
        ResearcherStats.objects.order_by("sort_name", "researcher_id").values_list(
            "researcher__display_name", flat=True
        )[:50]
    )
    assert names == expected
    by_papers = _doc(client.get("/researchers/?sort=papers"))
    first = by_papers.cssselect("ol.people a.person")[0]
    most = ResearcherStats.objects.order_by("-paper_count", "sort_name").first()
    assert first.get("href") == most.researcher.get_absolute_url()
    # The line under a name tells namesakes apart: field, years, papers.
    meta = by_papers.cssselect("ol.people .meta")[0].text_content()
    assert most.main_category in meta
    assert f"{most.paper_count} papers" in meta


def test_researchers_index_filters_by_letter_and_field(client, corpus):
    stats = ResearcherStats.objects.exclude(main_category="").first()
    doc = _doc(client.get(f"/researchers/?letter={stats.letter.lower()}"))
    links = [a.get("href") for a in doc.cssselect("ol.people a.person")]
    assert stats.researcher.get_absolute_url() in links
    assert len(links) == min(
        50, ResearcherStats.objects.filter(letter=stats.letter).count()
    )
    field = _doc(client.get(f"/researchers/?field={stats.main_category}"))
    shown = field.cssselect("ol.people .meta")
    assert shown
    assert all(stats.main_category in m.text_content() for m in shown)
    # Nonsense filters list everyone rather than fail.
    assert (
        client.get("/researchers/?letter=%3Cb%3E&field=../x&sort=x").status_code == 200
    )


def test_researchers_index_pages_with_flat_queries(
    client, corpus, monkeypatch, django_assert_num_queries
):
    from wovepaper.views import browse

    count = ResearcherStats.objects.count()
    monkeypatch.setattr(browse, "PAGE_SIZE", 5)
    assert count > 10
    client.get("/researchers/?page=1")  # the fields' list is cached from here
    with django_assert_num_queries(2):  # count and page, whatever the size
        page2 = client.get("/researchers/?page=2")
    monkeypatch.setattr(browse, "PAGE_SIZE", 10)
    with django_assert_num_queries(2):
        client.get("/researchers/?page=3")
    doc = _doc(page2)
    assert len(doc.cssselect("ol.people > li")) == 5
    # Asked again by a stateless visitor, the page comes whole from the cache.
    with django_assert_num_queries(0):
        again = client.get("/researchers/?page=2")
    assert again.content == page2.content
    assert doc.cssselect("nav.pager a[rel=prev]")[0].get("href") == "?page=1"


def test_institutions_index_counts_papers(client, corpus):
    from wovepaper.models import Institution

    vermont = Institution.objects.create(
        name="University of Vermont", country_code="US"
    )
    nowhere = Institution.objects.create(name="Nowhere Institute", country_code="NL")
    for paper in Paper.objects.order_by("id")[:3]:
        paper.authorships.first().institutions.add(vermont)
    Paper.objects.order_by("id").last().authorships.first().institutions.add(nowhere)
    named = (
        Institution.objects.annotate(
            n=Count(
                "authorships__paper",
                filter=Q(authorships__paper__hidden=False),
                distinct=True,
            )
        )
        .filter(n__gt=0)
        .order_by("-n", "name")
    )
    response = client.get("/institutions/")
    assert response.status_code == 200
    rows = _doc(response).cssselect("ol.people > li")
    assert len(rows) == named.count() == 2
    assert rows[0].cssselect("a")[0].get("href") == vermont.get_absolute_url()
    assert "United States of America · 3 papers" in rows[0].text_content()
    dutch = _doc(client.get("/institutions/?country=nl")).cssselect("ol.people > li")
    assert [li.cssselect("a")[0].text_content() for li in dutch] == [nowhere.name]
    by_name = _doc(client.get("/institutions/?sort=name")).cssselect("ol.people a")
    assert [a.text_content() for a in by_name] == [nowhere.name, vermont.name]


def test_papers_and_category_pages_list_newest_first(client, corpus):
    latest = list(Paper.objects.filter(hidden=False).order_by("-published", "-id")[:50])
    doc = _doc(client.get("/papers/"))
    hrefs = [a.get("href") for a in doc.cssselect("ol.papers .paper-title")]
    assert hrefs == [p.get_absolute_url() for p in latest]
    category = latest[0].primary_category
    in_category = [
        p
        for p in Paper.objects.filter(hidden=False).order_by("-published", "-id")
        if category in p.categories
    ][:50]
    doc = _doc(client.get(f"/categories/{category}/"))
    hrefs = [a.get("href") for a in doc.cssselect("ol.papers .paper-title")]
    assert hrefs == [p.get_absolute_url() for p in in_category]
    moved = client.get(f"/categories/{category.upper()}/")
    if category.upper() != category:
        assert (moved.status_code, moved["Location"]) == (
            301,
            f"/categories/{category}/",
        )
    assert client.get("/categories/no-such.cat/").status_code == 404


def test_browse_pages_answer_markdown_and_are_in_the_sitemap(client, corpus):
    for path in ("/researchers/", "/institutions/", "/papers/"):
        response = client.get(path, HTTP_ACCEPT="text/markdown")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/markdown")
    most = ResearcherStats.objects.order_by("-paper_count", "sort_name").first()
    markdown = client.get(
        "/researchers/?sort=papers", HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert f"[{most.researcher.display_name}](http://testserver" in markdown
    static = client.get("/sitemap-static.xml").content.decode()
    for path in ("/researchers/", "/institutions/", "/papers/"):
        assert f"http://testserver{path}</loc>" in static
    category = Paper.objects.filter(hidden=False).first().primary_category
    assert (
        f"/categories/{category}/</loc>"
        in client.get("/sitemap-categories.xml").content.decode()
    )


def test_every_page_links_the_browse_pages(client, corpus):
    doc = _doc(client.get("/"))
    for nav in (doc.cssselect("header.site")[0], doc.cssselect("footer.site")[0]):
        hrefs = {a.get("href") for a in nav.cssselect("a")}
        assert {"/researchers/", "/institutions/", "/papers/"} <= hrefs


def test_profile_shows_citations_h_index_and_yearly_charts(client, corpus):
    # Citation counts as an OpenAlex enrichment writes them (the Atom feeds
    # carry none), then the figures refreshed as its harvest would.
    for n, paper in enumerate(Paper.objects.order_by("id")):
        Paper.objects.filter(pk=paper.pk).update(cited_by_count=(n * 7) % 23)
    researcher_stats_refresh()
    r = (
        ResearcherStats.objects.filter(citation_count__gt=0)
        .order_by("-paper_count")
        .first()
    )
    assert r is not None
    doc = _doc(client.get(r.researcher.get_absolute_url()))
    figures = {
        dt.text_content(): dd.text_content()
        for dt, dd in zip(
            doc.cssselect("#figures dt"), doc.cssselect("#figures dd"), strict=True
        )
    }
    assert figures["Citations"] == str(r.citation_count)
    assert figures["h-index"] == str(r.h_index)
    crumbs = json.loads(doc.cssselect("script[type='application/ld+json']")[1].text)
    assert crumbs["@type"] == "BreadcrumbList"
    assert [i["item"] for i in crumbs["itemListElement"]] == [
        "http://testserver/",
        "http://testserver/researchers/",
        "http://testserver" + r.researcher.get_absolute_url(),
    ]
    charts = doc.cssselect("#charts svg.year-chart")
    assert len(charts) == 2
    bars = charts[0].cssselect("rect")
    assert len(bars) == r.last_year - r.first_year + 1
    assert sum(int(b.findtext("title").split(": ")[1].split()[0]) for b in bars) == (
        r.paper_count
        - Paper.objects.filter(authorships__researcher_id=r.researcher_id)
        .filter(hidden=False, published__isnull=True)
        .distinct()
        .count()
    )


def test_api_researcher_carries_the_figures(client, corpus):
    stats = ResearcherStats.objects.order_by("-paper_count").first()
    body = client.get(f"/api/researchers/{stats.researcher_id}/").json()
    assert body["figures"] == {
        "citation_count": stats.citation_count,
        "h_index": stats.h_index,
        "first_year": stats.first_year,
        "last_year": stats.last_year,
        "main_category": stats.main_category,
        "latest_affiliation": stats.latest_affiliation,
        "per_year": stats.per_year,
    }
    years = [y["year"] for y in stats.per_year]
    assert years == list(range(stats.first_year, stats.last_year + 1))
    assert sum(y["papers"] for y in stats.per_year) == stats.paper_count - (
        Paper.objects.filter(
            authorships__researcher_id=stats.researcher_id,
            hidden=False,
            published__isnull=True,
        )
        .distinct()
        .count()
    )


def test_browse_pages_read_odd_input_without_failing(client, corpus, monkeypatch):
    from wovepaper.views import browse

    monkeypatch.setattr(browse, "PAGE_SIZE", 5)
    count = ResearcherStats.objects.count()
    last = -(-count // 5)
    for typed, shown in (("-1", 1), ("1e3", 1), ("99999999999", last), ("2", 2)):
        doc = _doc(client.get(f"/researchers/?page={typed}"))
        pager = doc.cssselect("nav.pager span")[0].text_content()
        assert pager == f"Page {shown} of {last}"
        canonical = doc.cssselect("link[rel=canonical]")[0].get("href")
        # Each page is its own canonical URL, page 1 without a number.
        expected = "" if shown == 1 else f"?page={shown}"
        assert canonical == f"http://testserver/researchers/{expected}"
    doc = _doc(client.get("/researchers/?sort=papers&letter=M"))
    assert doc.cssselect("link[rel=canonical]")[0].get("href") == (
        "http://testserver/researchers/?sort=papers&letter=M"
    )
    # Letter links keep the order and carry no stray separator.
    hrefs = [a.get("href") for a in doc.cssselect("ul.letters a")]
    assert "?sort=papers&letter=A" in hrefs
    assert not [h for h in hrefs if h.endswith("&")]
    # A name search of punctuation alone finds no one.
    for junk in ('"', "[", ",", "\\"):
        found = _doc(client.get("/researchers/", {"q": junk}))
        assert not found.cssselect("ol.people a.person")
    huge = client.get("/researchers/99999999999999999999/coauthors.json")
    assert huge.status_code == 404
