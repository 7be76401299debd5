"""RSS feeds: latest papers, a researcher's (curated only), a category's."""

from __future__ import annotations

import datetime as dt
import html
import tempfile
import xml.etree.ElementTree as ET
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext

from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper.models import Authorship, Paper, Researcher
from wovepaper.text import latex_to_text

pytestmark = pytest.mark.django_db

DC_CREATOR = "{http://purl.org/dc/elements/1.1/}creator"


# Adrian Del Maestro's single-author paper; the feed's other nine papers are
# harvested before his profile is curated, this one after.
LATE_PAPER = "1201.4869"
ATOM = "{http://www.w3.org/2005/Atom}"


def _without_late_paper(feeds: Path, into: Path) -> Path:
    """Copies of the real Atom feeds under ``feeds`` without the entries of
    :data:`LATE_PAPER`, written under ``into``; returns ``into``."""
    for feed in sorted(feeds.glob("*.xml")):
        tree = ET.parse(feed)
        root = tree.getroot()
        for entry in root.findall(f"{ATOM}entry"):
            if f"/abs/{LATE_PAPER}v" in (entry.findtext(f"{ATOM}id") or ""):
                root.remove(entry)
        tree.write(into / feed.name, xml_declaration=True, encoding="utf-8")
    return into


def curated_corpus(arxiv_dir: Path) -> Researcher:
    """Real arXiv records, matched and curated, with proposals still pending.

    The real Atom feeds are harvested without :data:`LATE_PAPER` and matched,
    and the largest ``new`` proposal (Adrian Del Maestro's 7 papers) is applied;
    then the feeds are harvested whole, as the next harvest would bring a new
    paper, and a second matching run proposes ``attach`` of that paper's
    authorship to his profile, which stays pending, while every other pending
    ``new`` proposal is applied.

    Returns:
        The first researcher (it has a pending ``attach`` proposal).
    """
    from curation import services
    from curation.models import Proposal
    from harvest.services import harvest_arxiv_files

    feeds = arxiv_dir / "arxivpy_2016_atom"
    with tempfile.TemporaryDirectory() as early:
        harvest_arxiv_files(root=_without_late_paper(feeds, Path(early)))
    services.matching_run()
    biggest = (
        Proposal.objects.filter(status="pending", kind="new")
        .annotate(size=Count("authorships"))
        .order_by("-size", "id")
        .first()
    )
    researcher = services.proposal_apply(proposal=biggest, actor=None).researcher
    harvest_arxiv_files(root=feeds)
    services.matching_run()
    for proposal in Proposal.objects.filter(status="pending", kind="new"):
        services.proposal_apply(proposal=proposal, actor=None)
    return researcher


def rss_items(response) -> list[dict]:
    """The items of an RSS 2.0 response, text unescaped as a reader shows it."""
    assert response.status_code == 200
    assert response["Content-Type"] == "application/rss+xml; charset=utf-8"
    channel = ET.fromstring(response.content).find("channel")
    return [
        {
            "title": html.unescape(item.findtext("title")),
            "link": item.findtext("link"),
            "description": html.unescape(item.findtext("description")),
            "pubdate": item.findtext("pubDate"),
            "creator": item.findtext(DC_CREATOR),
            "categories": [c.text for c in item.findall("category")],
        }
        for item in channel.findall("item")
    ]


def absolute(paper: Paper) -> str:
    return f"http://testserver{paper.get_absolute_url()}"


@pytest.fixture
def corpus(db, arxiv_dir) -> Researcher:
    return curated_corpus(arxiv_dir)


def test_latest_feed_lists_visible_real_papers_newest_first(client, corpus):
    hidden = Paper.objects.get(arxiv_id="1111.2011")
    Paper.objects.filter(pk=hidden.pk).update(hidden=True)

    items = rss_items(client.get("/feeds/latest.rss"))

    visible = list(Paper.objects.filter(hidden=False).order_by("-published", "-id"))
    assert len(items) == len(visible) == 11
    assert [i["link"] for i in items] == [absolute(p) for p in visible]
    assert absolute(hidden) not in {i["link"] for i in items}
    first, paper = items[0], visible[0]
    assert first["title"] == " ".join(latex_to_text(paper.title).split())
    assert first["description"] == latex_to_text(paper.abstract)
    assert "Rényi" in latex_to_text(paper.abstract)  # R\'{e}nyi in the source
    assert parsedate_to_datetime(first["pubdate"]).date() == paper.published
    assert first["categories"] == paper.categories
    byline = paper.authorships.order_by("position").values_list("raw_name", flat=True)
    assert first["creator"] == ", ".join(byline)


def test_latest_feed_stops_at_fifty(client):
    PaperFactory.create_batch(52)
    assert len(rss_items(client.get("/feeds/latest.rss"))) == 50


def test_feed_text_is_escaped_and_xml_safe(client):
    PaperFactory(
        title="<script>alert(1)</script> R\\'{e}nyi entropy of $\\alpha$",
        abstract="Form\x0cfeed, <b>bold</b> & a < b",
    )
    response = client.get("/feeds/latest.rss")
    assert b"<script>" not in response.content
    assert b"<b>" not in response.content
    (item,) = rss_items(response)
    assert item["title"] == "<script>alert(1)</script> Rényi entropy of α"
    assert item["description"] == "Form feed, <b>bold</b> & a < b"


def test_researcher_feed_shows_only_applied_authorships(client, corpus):
    from curation.models import Proposal

    pending = Proposal.objects.filter(
        status="pending", kind="attach", researcher=corpus
    )
    pending_papers = set(
        Paper.objects.filter(authorships__proposals__in=pending).values_list(
            "arxiv_id", flat=True
        )
    )
    assert pending_papers, "the corpus should leave attach proposals pending"

    items = rss_items(client.get(f"/researchers/{corpus.pk}/feed.rss"))

    applied = Paper.objects.filter(authorships__researcher=corpus).order_by(
        "-published", "-id"
    )
    assert [i["link"] for i in items] == [absolute(p) for p in applied]
    assert len(items) == 7  # every "Adrian Del Maestro" authorship
    for paper in Paper.objects.filter(arxiv_id__in=pending_papers):
        assert absolute(paper) not in {i["link"] for i in items}
    channel = ET.fromstring(client.get(f"/researchers/{corpus.pk}/feed.rss").content)
    assert corpus.display_name in channel.findtext("channel/title")
    assert channel.findtext("channel/link") == (
        f"http://testserver{corpus.get_absolute_url()}"
    )


def test_researcher_feed_leaves_out_hidden_papers(client):
    researcher = ResearcherFactory()
    kept = AuthorshipFactory(researcher=researcher).paper
    AuthorshipFactory(researcher=researcher, paper=PaperFactory(hidden=True))
    items = rss_items(client.get(f"/researchers/{researcher.pk}/feed.rss"))
    assert [i["link"] for i in items] == [absolute(kept)]


def test_merged_researcher_feed_redirects_to_the_survivor(client):
    survivor = ResearcherFactory()
    middle = ResearcherFactory(merged_into=survivor)
    gone = ResearcherFactory(merged_into=middle)
    response = client.get(f"/researchers/{gone.pk}/feed.rss")
    assert response.status_code == 301
    assert response["Location"] == f"/researchers/{survivor.pk}/feed.rss"


def test_unknown_or_retired_researcher_feed_is_404(client):
    retired = ResearcherFactory(retired=True)
    assert client.get(f"/researchers/{retired.pk}/feed.rss").status_code == 404
    assert client.get("/researchers/987654/feed.rss").status_code == 404


def test_category_feed_lists_primary_and_cross_listed_papers(client, corpus):
    items = rss_items(client.get("/categories/cond-mat.stat-mech/feed.rss"))
    expected = [
        p
        for p in Paper.objects.order_by("-published", "-id")
        if "cond-mat.stat-mech" in p.categories
    ]
    assert len(expected) == 7
    primary = {p.primary_category == "cond-mat.stat-mech" for p in expected}
    assert primary == {True, False}
    assert [i["link"] for i in items] == [absolute(p) for p in expected]


def test_unknown_category_feed_is_404(client):
    PaperFactory(categories=["math.AG"], primary_category="math.AG", hidden=True)
    assert client.get("/categories/math.AG/feed.rss").status_code == 404
    assert client.get("/categories/no.such/feed.rss").status_code == 404


def _researcher_with_papers(count: int) -> Researcher:
    researcher = ResearcherFactory()
    for n in range(count):
        paper = PaperFactory(published=dt.date(2020, 1, 1) + dt.timedelta(days=n))
        AuthorshipFactory(paper=paper, researcher=researcher)
        AuthorshipFactory(paper=paper, position=2, given_name="Ann", family_name="Lee")
    return researcher


def test_researcher_feed_queries_do_not_grow_with_papers(client):
    queries = []
    for count in (5, 50):
        researcher = _researcher_with_papers(count)
        with CaptureQueriesContext(connection) as ctx:
            items = rss_items(client.get(f"/researchers/{researcher.pk}/feed.rss"))
        assert len(items) == count
        assert all(", Ann Lee" in i["creator"] for i in items)
        queries.append(len(ctx.captured_queries))
    assert queries[0] == queries[1] <= 3
    assert Authorship.objects.count() == 110


def test_a_noncharacter_never_reaches_a_feed(client, arxiv_dir, tmp_path):
    from harvest.services import harvest_arxiv_files

    # A real record whose title a source garbled with U+FFFF: dropped once, at
    # the record boundary (harvest.records.clean_text).
    text = (arxiv_dir / "abs_files/ftp/arxiv/papers/0704/0704.0046.abs").read_text()
    (tmp_path / "0704.0046.abs").write_text(
        text.replace("Title: A limit relation", "Title: A limit\uffff relation")
    )
    harvest_arxiv_files(root=tmp_path)
    paper = Paper.objects.get(arxiv_id="0704.0046")
    assert paper.title.startswith("A limit relation for entropy")
    # Text that came another way (an edit) is made XML-safe when written.
    Paper.objects.filter(pk=paper.pk).update(
        title="Entropy\ufffe of \ufdd0channels\U0010ffff", abstract="Cost\x0bper unit"
    )
    AuthorshipFactory(paper=paper, raw_name="I. Csisz\uffffar", position=9)
    response = client.get("/feeds/latest.rss")
    (item,) = rss_items(response)  # a strict XML parser reads it
    assert item["title"] == "Entropy  of  channels "
    assert item["description"] == "Cost per unit"
    assert "I. Csisz ar" in item["creator"]
