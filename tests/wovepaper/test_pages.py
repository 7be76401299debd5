"""The public researcher, paper and institution pages on real harvested records."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from lxml import html as lxml_html

from curation import edits, history
from curation.models import CurationEvent, Proposal
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper.models import Authorship, Institution, Paper, Researcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(applied_corpus):
    """Real arXiv records (Del Maestro's papers and co-authors), matched, applied."""
    return applied_corpus


def _most_papers(researchers):
    from django.db.models import Count

    return researchers.annotate(n=Count("authorships")).order_by("-n", "id").first()


def _doc(response):
    return lxml_html.fromstring(response.content)


def test_researcher_page_shows_real_profile(client, corpus):
    r = _most_papers(corpus)
    papers = Paper.objects.filter(authorships__researcher=r).order_by(
        "-published", "-id"
    )
    response = client.get(r.get_absolute_url())
    assert response.status_code == 200
    doc = _doc(response)
    assert doc.findtext(".//h1") == r.display_name
    assert f"{papers.count()} papers here" in response.content.decode()
    listed = [a.get("href") for a in doc.cssselect("#paper-list .paper-title")]
    assert listed == [p.get_absolute_url() for p in papers[:24]]
    # Every co-author link on the page is an applied assignment.
    for link in doc.cssselect("#paper-list .byline a"):
        pk = int(re.match(r"/researchers/(\d+)-", link.get("href")).group(1))
        assert Authorship.objects.filter(
            researcher_id=pk, raw_name=link.text_content()
        ).exists()
    assert doc.cssselect("link[rel=canonical]")[0].get("href") == (
        "http://testserver" + r.get_absolute_url()
    )
    ld = json.loads(doc.cssselect("script[type='application/ld+json']")[0].text)
    assert ld["@type"] == "Person"
    assert ld["name"] == r.display_name
    assert doc.cssselect("meta[property='og:title']")[0].get("content") == (
        r.display_name
    )


def test_researcher_page_redirects_to_canonical_url(client, corpus):
    r = corpus.first()
    bare = client.get(f"/researchers/{r.pk}?page=2")
    assert bare.status_code == 301
    assert bare["Location"] == f"{r.get_absolute_url()}?page=2"
    stale = client.get(f"/researchers/{r.pk}-someone-else")
    assert (stale.status_code, stale["Location"]) == (301, r.get_absolute_url())
    for typed in (f"/researchers/{r.pk}/", f"{r.get_absolute_url()}/"):
        slash = client.get(typed)
        assert (slash.status_code, slash["Location"]) == (301, r.get_absolute_url())
    assert client.get("/researchers/987654321").status_code == 404


def test_merged_away_researcher_redirects_to_survivor(client, corpus, curator):
    a = corpus.order_by("id").first()
    b = (
        corpus.exclude(pk=a.pk)
        .exclude(authorships__paper__authorships__researcher=a)
        .order_by("id")
        .first()
    )
    edits.researcher_merge(researchers=[a, b], actor=curator)
    gone = client.get(b.get_absolute_url())
    assert gone.status_code == 301
    assert gone["Location"] == Researcher.objects.get(pk=a.pk).get_absolute_url()


def test_retired_researcher_says_where_its_papers_went(
    client, corpus, curator, django_capture_on_commit_callbacks
):
    r = _most_papers(corpus)
    moving = list(r.authorships.order_by("id").values_list("id", flat=True)[:1])
    with django_capture_on_commit_callbacks(execute=True):
        new = edits.researcher_split(researcher=r, authorship_ids=moving, actor=curator)
    source_page = client.get(r.get_absolute_url()).content.decode()
    assert f'into <a href="{new.get_absolute_url()}">' in source_page
    event = CurationEvent.objects.filter(kind=CurationEvent.Kind.SPLIT).latest("id")
    with django_capture_on_commit_callbacks(execute=True):
        history.event_undo(event=event, actor=curator)
    response = client.get(f"/researchers/{new.pk}-{new.slug}")
    assert response.status_code == 410
    doc = _doc(response)
    assert [a.get("href") for a in doc.cssselect("main li a")] == [r.get_absolute_url()]


def test_researcher_page_filters_by_category_and_sorts(client):
    r = ResearcherFactory(display_name="Ada Filter")
    for n, (cat, cited) in enumerate(
        [("hep-th", 5), ("hep-th", 50), ("math.AG", 7), ("hep-ph", None)]
    ):
        paper = PaperFactory(
            categories=[cat, "hep-th"] if cat == "hep-ph" else [cat],
            primary_category=cat,
            cited_by_count=cited,
            published=f"2020-01-{n + 1:02d}",
        )
        AuthorshipFactory(paper=paper, researcher=r)
    url = r.get_absolute_url()
    doc = _doc(client.get(url, {"category": "math.AG"}))
    math = Paper.objects.get(primary_category="math.AG")
    assert [e.text for e in doc.cssselect("#paper-list .paper-title")] == [math.title]
    hep_th = _doc(client.get(url, {"category": "hep-th"}))
    assert len(hep_th.cssselect("#paper-list .paper-title")) == 3  # cross-list too
    chips = {a.text_content() for a in doc.cssselect("aside .chips a")}
    assert chips == {"hep-th (3)", "math.AG (1)", "hep-ph (1)"}
    cited = _doc(client.get(url, {"sort": "cited"}))
    counts = [
        Paper.objects.get(title=e.text).cited_by_count
        for e in cited.cssselect("#paper-list .paper-title")
    ]
    assert counts == [50, 7, 5, None]
    # A category with a slash or markup is ignored, not an error.
    assert client.get(url, {"category": "a/b<script>"}).status_code == 200


def test_researcher_page_pages_by_24(client):
    r = ResearcherFactory(display_name="Paged Person")
    for n in range(30):
        AuthorshipFactory(
            paper=PaperFactory(published=f"2019-{n % 12 + 1:02d}-{n % 28 + 1:02d}"),
            researcher=r,
        )
    first = _doc(client.get(r.get_absolute_url()))
    second = _doc(client.get(r.get_absolute_url(), {"page": 2}))
    one = [e.get("href") for e in first.cssselect("#paper-list .paper-title")]
    two = [e.get("href") for e in second.cssselect("#paper-list .paper-title")]
    assert (len(one), len(two)) == (24, 6)
    assert not set(one) & set(two)
    assert second.cssselect("a[rel=prev]")
    assert not second.cssselect("a[rel=next]")
    assert client.get(r.get_absolute_url(), {"page": "x"}).status_code == 200
    # "page= 2" (a space typed or pasted) is page 2, not page 1.
    spaced = _doc(client.get(r.get_absolute_url(), {"page": " 2 "}))
    assert [e.get("href") for e in spaced.cssselect("#paper-list .paper-title")] == two


def test_position_histogram_counts_only_fully_matched_papers(client):
    r, other = ResearcherFactory(), ResearcherFactory(display_name="Other One")
    solo = PaperFactory()
    AuthorshipFactory(paper=solo, researcher=r)
    last = PaperFactory()
    AuthorshipFactory(paper=last, position=1, researcher=other, given_name="Oth")
    AuthorshipFactory(paper=last, position=2, researcher=r)
    unmatched = PaperFactory()
    AuthorshipFactory(paper=unmatched, position=1, researcher=r)
    AuthorshipFactory(paper=unmatched, position=2, given_name="Nobody")
    collab = PaperFactory()
    AuthorshipFactory(paper=collab, position=1, researcher=r)
    AuthorshipFactory(
        paper=collab, position=2, raw_name="ATLAS Collaboration", is_collaboration=True
    )
    doc = _doc(client.get(r.get_absolute_url()))
    cells = [c.text_content().strip() for c in doc.cssselect(".histogram [role=cell]")]
    rows = {cells[i]: cells[i + 2] for i in range(0, len(cells), 3)}
    assert rows == {
        "First author": "1",
        "Middle author": "0",
        "Last author": "1",
        "Solo author": "1",
    }
    assert "Counted over the 3 of 4 papers" in doc.text_content()


def test_pending_assignment_is_not_on_the_public_pages(client):
    r = ResearcherFactory(display_name="Applied Only")
    applied = AuthorshipFactory(researcher=r)
    pending = AuthorshipFactory()
    proposal = Proposal.objects.create(
        kind="attach",
        score=0.9,
        evidence={},
        model_version="t",
        fingerprint="fp-pending",
        researcher=r,
    )
    proposal.authorships.set([pending])
    page = _doc(client.get(r.get_absolute_url()))
    assert [e.get("href") for e in page.cssselect("#paper-list .paper-title")] == [
        applied.paper.get_absolute_url()
    ]
    paper = _doc(client.get(pending.paper.get_absolute_url()))
    assert not paper.cssselect("ol.byline a[href^='/researchers/']")


def test_why_is_this_paper_here_names_the_evidence(client, corpus):
    proposal = (
        Proposal.objects.filter(status="applied", kind="attach").order_by("id").first()
    )
    if proposal is None:  # the corpus only started profiles
        proposal = Proposal.objects.filter(status="applied").order_by("id").first()
    r = Researcher.objects.get(pk=proposal.researcher_id)
    doc = _doc(client.get(r.get_absolute_url(), {"sort": "oldest"}))
    reasons = [d.text_content() for d in doc.cssselect("details.why p")]
    assert reasons
    assert all("score" in text or "curator" in text for text in reasons)
    assert any("automatically" in text or "approved" in text for text in reasons), (
        reasons
    )


def test_paper_page_resolves_every_spelling(client, corpus):
    old = Paper.objects.filter(arxiv_id__contains="/").first()
    new = Paper.objects.exclude(arxiv_id__contains="/").exclude(arxiv_id=None).first()
    for paper in (old, new):
        canonical = paper.get_absolute_url()
        assert client.get(canonical).status_code == 200
        for spelling in (
            f"/papers/{paper.arxiv_id}",
            f"/papers/{paper.arxiv_id}v2",
            f"/papers/{paper.arxiv_id}-stale-slug",
            f"/papers/{paper.pk}",
            f"/papers/arXiv:{paper.arxiv_id}",
            # With a trailing slash, as the researcher pages take it (a new
            # user's trial: a 404 here, a 301 there).
            f"/papers/{paper.arxiv_id}/",
            f"{canonical}/",
        ):
            response = client.get(spelling)
            assert (response.status_code, response["Location"]) == (
                301,
                canonical,
            ), spelling
    assert client.get("/papers/9999.99999").status_code == 404
    new.hidden = True
    new.save()
    assert client.get(new.get_absolute_url()).status_code == 404


def test_paper_page_lists_authors_in_order_with_researchers(client, corpus):
    paper = (
        Paper.objects.filter(authorships__researcher__isnull=False)
        .order_by("id")
        .first()
    )
    doc = _doc(client.get(paper.get_absolute_url()))
    items = doc.cssselect("ol.byline > li")
    slots = list(paper.authorships.order_by("position"))
    assert len(items) == len(slots)
    for item, slot in zip(items, slots, strict=True):
        assert slot.raw_name in item.text_content()
        links = item.cssselect("a[href^='/researchers/']")
        if slot.researcher_id:
            assert links[0].get("href") == slot.researcher.get_absolute_url()
        else:
            assert not links
    assert doc.cssselect(f"a[href='https://arxiv.org/abs/{paper.arxiv_id}']")
    ld = json.loads(doc.cssselect("script[type='application/ld+json']")[0].text)
    assert ld["@type"] == "ScholarlyArticle"
    assert [a["name"] for a in ld["author"]] == [s.raw_name for s in slots]


def test_paper_page_renders_latex_as_text_and_escapes_markup(client):
    paper = PaperFactory(
        title=r"The $\alpha$-decay of <script>alert(1)</script> at 50% \textbf{now}",
        abstract=r"We use $\mathcal{N}=4$ </script><img src=x onerror=alert(1)>",
    )
    body = client.get(paper.get_absolute_url()).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; at 50% now</h1>" in body
    assert "<img src=x" not in body
    assert "<script>alert" not in body
    doc = lxml_html.fromstring(body)
    # The maths is KaTeX's to render (static/wovepaper/math.js), its Unicode
    # reading in place until it does.
    h1 = doc.cssselect("h1")[0]
    assert h1.text_content() == "The α-decay of <script>alert(1)</script> at 50% now"
    assert [m.get("data-tex") for m in h1.cssselect("span.math")] == [r"\alpha"]
    abstract = doc.cssselect("p.abstract")[0]
    assert [m.get("data-tex") for m in abstract.cssselect("span.math")] == [
        r"\mathcal{N}=4"
    ]
    assert abstract.text_content() == "We use 𝒩=4 </script><img src=x onerror=alert(1)>"
    ld = doc.cssselect("script[type='application/ld+json']")[0].text
    assert "</script" not in ld.lower()
    assert json.loads(ld)["name"] == (
        "The α-decay of <script>alert(1)</script> at 50% now"
    )


def test_pages_answer_markdown_when_asked(client, corpus):
    r = _most_papers(corpus)
    paper = Paper.objects.filter(authorships__researcher=r).first()
    for url, heading in (
        (r.get_absolute_url(), f"# {r.display_name}"),
        (paper.get_absolute_url(), "# "),
    ):
        response = client.get(url, HTTP_ACCEPT="text/markdown")
        assert response["Content-Type"] == "text/markdown; charset=utf-8"
        assert "Accept" in response["Vary"]
        text = response.content.decode()
        assert text.startswith(heading)
        assert "<" not in text.replace("\\<", "")
        html_response = client.get(url, HTTP_ACCEPT="text/html,*/*;q=0.8")
        assert html_response["Content-Type"].startswith("text/html")
    md = client.get(r.get_absolute_url(), HTTP_ACCEPT="text/markdown").content.decode()
    assert f"http://testserver{paper.get_absolute_url()}" in md


def test_markdown_escapes_link_syntax_from_sources(client):
    paper = PaperFactory(title="[Click me](javascript:alert(1)) *bold*")
    text = client.get(
        paper.get_absolute_url(), HTTP_ACCEPT="text/markdown"
    ).content.decode()
    # An escaped "[" is enough: no link or image can start.
    assert text.splitlines()[0] == r"# \[Click me\](javascript:alert(1)) \*bold\*"


def test_markdown_researcher_page_lists_institutions_or_affiliations(client):
    printed = ResearcherFactory(display_name="Printed Only")
    AuthorshipFactory(researcher=printed, affiliations=["[Lab](javascript:x) *U*"])
    text = client.get(
        printed.get_absolute_url(), HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert "## Affiliations" in text
    assert r"- \[Lab\](javascript:x) \*U\* 2021 (1 paper)" in text
    linked = ResearcherFactory(display_name="Linked Person")
    inst = Institution.objects.create(name="Universität Wien", ror_id="03prydq77")
    AuthorshipFactory(researcher=linked, affiliations=["Wien"]).institutions.add(inst)
    text = client.get(
        linked.get_absolute_url(), HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert "## Institutions" in text
    assert "## Affiliations" not in text
    assert f"- [Universität Wien](http://testserver{inst.get_absolute_url()})" in text


def test_institution_resolves_by_id_ror_and_name(client):
    inst = Institution.objects.create(
        name="Universität Wien", ror_id="03prydq77", country_code="AT"
    )
    r = ResearcherFactory(display_name="Wien Person")
    a = AuthorshipFactory(researcher=r)
    a.institutions.add(inst)
    canonical = inst.get_absolute_url()
    assert canonical == f"/institutions/{inst.pk}-universitat-wien"
    for spelling in (
        f"/institutions/{inst.pk}",
        "/institutions/03prydq77",
        "/institutions/https://ror.org/03prydq77",
        "/institutions/universität wien",
    ):
        response = client.get(spelling)
        assert (response.status_code, response["Location"]) == (301, canonical)
    doc = _doc(client.get(canonical))
    assert doc.findtext(".//h1") == "Universität Wien"
    assert [e.get("href") for e in doc.cssselect("aside a")] == [r.get_absolute_url()]
    assert doc.cssselect(f"a[href='{a.paper.get_absolute_url()}']")
    md = client.get(canonical, HTTP_ACCEPT="text/markdown").content.decode()
    assert md.startswith("# Universität Wien")
    assert client.get("/institutions/nowhere-at-all").status_code == 404


def test_not_found_page_offers_a_search(client):
    response = client.get("/papers/no-such-thing-here")
    assert response.status_code == 404
    doc = _doc(response)
    box = doc.cssselect("main form[role=search] input[name=q]")[0]
    assert box.get("value") == "no such thing here"
    assert "This page isn" in doc.findtext(".//h1")


def test_coauthor_network_json(client, corpus):
    r = _most_papers(corpus)
    data = client.get(f"/researchers/{r.pk}/coauthors.json").json()
    centre = data["nodes"][0]
    assert (centre["id"], centre["centre"]) == (r.pk, True)
    # The centre's own count: its visible papers (it was null).
    assert centre["papers"] == (
        Paper.objects.filter(authorships__researcher=r, hidden=False).distinct().count()
    )
    assert centre["papers"] > 0
    others = {n["id"]: n["papers"] for n in data["nodes"][1:]}
    for pk, shared in others.items():
        assert shared == (
            Paper.objects.filter(authorships__researcher=r)
            .filter(authorships__researcher_id=pk)
            .count()
        )
        assert {"source": r.pk, "target": pk, "papers": shared} in data["links"] or {
            "source": pk,
            "target": r.pk,
            "papers": shared,
        } in data["links"]
    assert len(data["nodes"]) <= 16


def test_page_reflects_a_curation_change_at_once(
    client, corpus, curator, django_capture_on_commit_callbacks
):
    r = _most_papers(corpus)
    before = client.get(r.get_absolute_url()).content.decode()
    count = r.authorships.count()
    assert f"{count} papers here" in before
    other = corpus.exclude(pk=r.pk).order_by("id").first()
    moving = (
        r.authorships.exclude(paper__authorships__researcher=other)
        .order_by("id")
        .first()
    )
    with django_capture_on_commit_callbacks(execute=True):
        edits.authorship_move(authorship=moving, to=other, actor=curator)
    after = client.get(r.get_absolute_url()).content.decode()
    assert f"{count - 1} paper{'s' if count - 1 != 1 else ''} here" in after


def _network_of(client, researcher) -> dict[int, dict]:
    data = client.get(f"/researchers/{researcher.pk}/coauthors.json").json()
    return {n["id"]: n for n in data["nodes"][1:]}


def _shared_slot(r, coauthor):
    return (
        r.authorships.filter(paper__authorships__researcher=coauthor)
        .order_by("id")
        .first()
    )


def test_a_coauthors_cached_views_drop_a_detached_slot_at_once(
    client, corpus, curator, django_capture_on_commit_callbacks
):
    """A co-author's cached page and network named the detached slot's old
    researcher for up to 60 s and 30 min (only the touched researchers'
    caches were dropped)."""
    r = _most_papers(corpus)
    coauthor = next(iter(_network_of(client, r)))
    coauthor = Researcher.objects.get(pk=coauthor)
    slot = _shared_slot(r, coauthor)
    shared = Paper.objects.filter(authorships__researcher=r).filter(
        authorships__researcher=coauthor
    )
    before = shared.count()
    assert _network_of(client, coauthor)[r.pk]["papers"] == before
    page = client.get(coauthor.get_absolute_url()).content.decode()
    assert slot.paper.get_absolute_url() in page

    with django_capture_on_commit_callbacks(execute=True):
        edits.authorship_detach(authorship=slot, actor=curator)

    network = _network_of(client, coauthor)
    if before == 1:
        assert r.pk not in network
    else:
        assert network[r.pk]["papers"] == before - 1 == shared.count()
    doc = _doc(client.get(coauthor.get_absolute_url()))
    row = next(
        li
        for li in doc.cssselect("#paper-list li")
        if li.cssselect(f'a[href="{slot.paper.get_absolute_url()}"]')
    )
    linked = {a.get("href") for a in row.cssselect("a")}
    assert r.get_absolute_url() not in linked


def test_a_coauthors_cached_network_shows_a_rename_at_once(
    client, corpus, curator, django_capture_on_commit_callbacks
):
    r = _most_papers(corpus)
    coauthor = Researcher.objects.get(pk=next(iter(_network_of(client, r))))
    assert _network_of(client, coauthor)[r.pk]["name"] == r.display_name

    with django_capture_on_commit_callbacks(execute=True):
        edits.researcher_update(
            researcher=r, actor=curator, changes={"display_name": "Renamed Here"}
        )

    assert _network_of(client, coauthor)[r.pk]["name"] == "Renamed Here"


def test_rows_loaded_without_a_slug_still_have_pages(client):
    # bulk_create skips save(), so no slug is set: the URL falls back, never 500s.
    (r,) = Researcher.objects.bulk_create([Researcher(display_name="Bulk Loaded")])
    (paper,) = Paper.objects.bulk_create([Paper(arxiv_id="2405.00001", title="Bulk")])
    Authorship.objects.create(paper=paper, position=1, raw_name="B. L.", researcher=r)
    assert r.get_absolute_url() == f"/researchers/{r.pk}-researcher"
    assert paper.get_absolute_url() == "/papers/2405.00001-paper"
    doc = _doc(client.get(r.get_absolute_url()))
    assert [e.get("href") for e in doc.cssselect("#paper-list .paper-title")] == [
        "/papers/2405.00001-paper"
    ]
    assert client.get("/papers/2405.00001-paper").status_code == 200


def test_paper_page_folds_long_bylines(client):
    paper = PaperFactory(title="Big collaboration")
    Authorship.objects.bulk_create(
        Authorship(paper=paper, position=i, raw_name=f"Author {i}")
        for i in range(1, 151)
    )
    doc = _doc(client.get(paper.get_absolute_url()))
    # The first 50 authors, then a link to all (a 2,831-author byline weighed
    # 264 KB with every slot in the page).
    shown = doc.cssselect("article > ol.byline > li")
    assert len(shown) == 50
    assert shown[-1].text_content().strip() == "50. Author 50"
    link = doc.cssselect("#all-authors a")[0]
    assert link.text_content() == "Show all 150 authors"
    whole = _doc(client.get(paper.get_absolute_url() + "?authors=all"))
    slots = whole.cssselect("article > ol.byline > li")
    assert [li.text_content().strip() for li in slots[100:101]] == ["101. Author 101"]
    assert len(slots) == 150
    assert not whole.cssselect("#all-authors")


def test_a_paper_the_source_deletes_leaves_the_cached_researcher_page_at_once(
    client, corpus, django_capture_on_commit_callbacks
):
    from harvest.records import PaperRecord
    from harvest.services import paper_upsert

    r = _most_papers(corpus)
    papers = Paper.objects.filter(authorships__researcher=r).order_by(
        "-published", "-id"
    )
    n = papers.count()
    before = client.get(r.get_absolute_url()).content.decode()
    assert f"{n} papers here" in before
    gone = papers.first()
    assert gone.get_absolute_url() in before
    with django_capture_on_commit_callbacks(execute=True):
        result = paper_upsert(
            record=PaperRecord(
                source="arxiv",
                external_id=gone.arxiv_id,
                title="",
                arxiv_id=gone.arxiv_id,
                deleted=True,
            )
        )
    assert result.outcome == "updated"
    after = client.get(r.get_absolute_url()).content.decode()
    assert f"{n - 1} paper{'s' if n - 1 != 1 else ''} here" in after
    assert gone.get_absolute_url() not in after


@pytest.mark.parametrize(
    ("precision", "shown"),
    [("year", "2019"), ("month", "2019-03"), ("day", "2019-03-01")],
)
def test_paper_rows_show_a_partial_date_to_its_precision(client, precision, shown):
    paper = PaperFactory(
        title="Partial dates",
        published=dt.date(2019, 3, 1),
        published_precision=precision,
    )
    home = client.get("/").content.decode()
    row = home.split("Partial dates", 1)[1].split("</li>", 1)[0]
    assert f'<div class="meta">{shown} ·' in row
    assert paper.published_shown == shown


def test_researcher_page_shows_variants_identity_and_institutions_over_time(client):
    """The name as printed otherwise, each identifier with how we know it, and
    the institutions with the years the papers name them."""
    r = ResearcherFactory(
        display_name="Jean-Pierre Serre",
        name_variants=["Jean-Pierre Serre", "J.-P. Serre", "J. P. Serre"],
        orcid="0000-0002-1825-0097",
        openalex_author_id="A5023888391",
    )
    paris = Institution.objects.create(name="Collège de France", ror_id="04ex24z53")
    nancy = Institution.objects.create(name="Université de Nancy")
    for year, inst, orcid in (
        (1954, nancy, ""),
        (1956, paris, "0000-0002-1825-0097"),
        (1970, paris, "0000-0002-1825-0097"),
    ):
        slot = AuthorshipFactory(
            researcher=r,
            orcid=orcid,
            paper=PaperFactory(published=dt.date(year, 3, 1)),
        )
        slot.institutions.add(inst)
    doc = _doc(client.get(r.get_absolute_url()))
    text = doc.text_content()
    assert "Also printed as: J.-P. Serre, J. P. Serre" in text
    identity = {
        dt_.text_content(): dd.text_content()
        for dt_, dd in zip(
            doc.cssselect("dl.ids dt"), doc.cssselect("dl.ids dd"), strict=True
        )
    }
    assert identity["ORCID"] == (
        "0000-0002-1825-0097identity via the sources of 2 of these papers"
    )
    assert identity["OpenAlex"] == "A5023888391identity via a curator"
    assert doc.cssselect("a[href='https://orcid.org/0000-0002-1825-0097']")
    institutions = [
        " ".join(li.text_content().split())
        for li in doc.xpath("//h2[.='Institutions']/following-sibling::ul[1]/li")
    ]
    assert institutions == [
        "Collège de France 1956–1970 (2 papers)",
        "Université de Nancy 1954 (1 paper)",
    ]


def test_paper_page_shows_affiliations_dates_versions_categories_links_and_citations(
    client,
):
    paper = PaperFactory(
        arxiv_id="0704.0001",
        doi="10.1103/physrevd.76.013009",
        published=dt.date(2007, 4, 2),
        updated=dt.date(2008, 11, 13),
        versions=[
            {"version": 1, "submitted": "2007-04-02T19:18:42+00:00"},
            {"version": 2, "submitted": "2007-07-24T20:10:27+00:00"},
        ],
        categories=["hep-ph", "hep-ex"],
        primary_category="hep-ph",
        journal_ref="Phys. Rev. D 76, 013009 (2007)",
        cited_by_count=42,
    )
    cern = Institution.objects.create(name="CERN", ror_id="01ggx4157")
    AuthorshipFactory(paper=paper, position=1, affiliations=["Cornell U."])
    AuthorshipFactory(
        paper=paper, position=2, given_name="Pavel", family_name="Nadolsky"
    ).institutions.add(cern)
    doc = _doc(client.get(paper.get_absolute_url()))
    byline = [
        " ".join(li.text_content().split()) for li in doc.cssselect("ol.byline li")
    ]
    assert byline == [
        "1. Jean-Pierre Serre — Cornell U.",
        "2. Pavel Nadolsky — CERN",
    ]
    assert doc.cssselect(f"ol.byline a[href='{cern.get_absolute_url()}']")
    facts = {
        dt_.text_content(): " ".join(dd.text_content().split())
        for dt_, dd in zip(
            doc.cssselect("dl.ids dt"), doc.cssselect("dl.ids dd"), strict=True
        )
    }
    assert facts["Published"] == "2007-04-02, updated 2008-11-13"
    assert facts["Versions"] == "v1 (2007-04-02), v2 (2007-07-24)"
    assert [c.text_content() for c in doc.cssselect("dl.ids .chips li")] == [
        "hep-ph (primary)",
        "hep-ex",
    ]
    assert facts["Journal reference"] == "Phys. Rev. D 76, 013009 (2007)"
    assert facts["Cited by"] == "42"
    links = [a.get("href") for a in doc.cssselect("dl.ids dd a")]
    assert links == [
        "https://arxiv.org/abs/0704.0001",
        "https://arxiv.org/pdf/0704.0001",
        "https://doi.org/10.1103/physrevd.76.013009",
    ]


def test_institution_page_shows_its_ror_id_country_type_and_aliases(client):
    inst = Institution.objects.create(
        name="Universität Wien",
        ror_id="03prydq77",
        country_code="AT",
        types=["education"],
        aliases=["University of Vienna"],
    )
    doc = _doc(client.get(inst.get_absolute_url()))
    facts = {
        dt_.text_content(): dd.text_content()
        for dt_, dd in zip(
            doc.cssselect("dl.ids dt"), doc.cssselect("dl.ids dd"), strict=True
        )
    }
    assert facts == {
        "ROR": "03prydq77",
        "Country": "AT",
        "Type": "education",
        "Also known as": "University of Vienna",
        "Papers here": "0",
    }
    assert doc.cssselect("a[href='https://ror.org/03prydq77']")
