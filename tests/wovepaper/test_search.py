"""Public search: papers by full text, researchers by trigram name, the /search/ page.

On real harvested arXiv records (the Del Maestro Atom feeds) with some of the
matcher's proposals applied; synthetic papers only where a count matters (paging,
query counts).
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from curation import services as curation_services
from curation.models import Proposal
from harvest.services import harvest_arxiv_files
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper import search
from wovepaper.cache import researchers_changed
from wovepaper.models import Paper, Researcher
from wovepaper.selectors import paper_list
from wovepaper.semantic import embeddings_refresh

pytestmark = pytest.mark.django_db

ATOM = "arxivpy_2016_atom"
# Whose `new` proposals the corpus applies; the others (Tesanovic among them)
# stay pending.
APPLIED = ("Maestro", "Sachdev", "Affleck")


@pytest.fixture
def corpus(arxiv_dir):
    """Real arXiv records, matched, with the proposals of three people applied."""
    harvest_arxiv_files(root=arxiv_dir / ATOM)
    curation_services.matching_run()
    for proposal in Proposal.objects.filter(status="pending"):
        names = {a.raw_name for a in proposal.authorships.all()}
        if any(part in name for name in names for part in APPLIED):
            curation_services.proposal_apply(proposal=proposal, actor=None)
    return {p.arxiv_id: p for p in Paper.objects.all()}


def _ids(papers) -> list[str]:
    return [p.arxiv_id for p in papers]


def _arxiv_id(corpus, title_start: str) -> str:
    (found,) = [k for k, p in corpus.items() if p.title.startswith(title_start)]
    return found


def test_paper_search_finds_a_title_word(corpus):
    wanted = _arxiv_id(corpus, "Theory of the pairbreaking")
    assert _ids(search.paper_search(query="Pairbreaking")) == [wanted]


def test_paper_search_finds_an_abstract_word(corpus):
    wanted = _arxiv_id(corpus, "Particle partition entanglement")
    assert "prefactor" in corpus[wanted].abstract
    assert "prefactor" not in corpus[wanted].title.lower()
    assert _ids(search.paper_search(query="prefactor")) == [wanted]


def test_paper_search_finds_an_author_with_or_without_accents(corpus):
    wanted = _arxiv_id(corpus, "Quantum Criticality for Extended Nodes")
    assert "Zlatko Tesanovic" in {a.raw_name for a in corpus[wanted].authorships.all()}
    assert _ids(search.paper_search(query="Tesanovic")) == [wanted]
    assert _ids(search.paper_search(query="Zlatko Tešanović")) == [wanted]


def test_paper_search_ranks_a_title_match_above_an_abstract_only_match(corpus):
    in_title = _arxiv_id(corpus, "A striped supersolid phase")
    in_abstract = _arxiv_id(corpus, "A Luttinger Liquid Core")
    assert "supersolid" in corpus[in_abstract].abstract
    assert "supersolid" not in corpus[in_abstract].title.lower()

    found = list(search.paper_search(query="supersolid"))
    assert _ids(found) == [in_title, in_abstract]
    assert found[0].rank > found[1].rank


def test_paper_search_reads_web_search_syntax(corpus):
    liquids = _ids(search.paper_search(query="luttinger liquid"))
    without_helium = _ids(search.paper_search(query='"luttinger liquid" -helium'))
    assert without_helium
    assert set(without_helium) < set(liquids)
    for key in without_helium:
        assert "helium" not in corpus[key].title.lower()
        assert "helium" not in corpus[key].abstract.lower()


def test_paper_search_category_filter_keeps_papers_of_the_category(corpus):
    everything = _ids(search.paper_search(query="Maestro"))
    in_category = _ids(search.paper_search(query="Maestro", category="cond-mat.str-el"))
    expected = [k for k in everything if "cond-mat.str-el" in corpus[k].categories]
    assert in_category == expected
    assert 0 < len(in_category) < len(everything)
    # A cross-listed category counts as well as the primary one.
    cross = _ids(search.paper_search(query="luttinger", category="quant-ph"))
    assert cross
    assert all(corpus[k].primary_category != "quant-ph" for k in cross)


def test_paper_search_year_filter_keeps_papers_first_published_that_year(corpus):
    everything = _ids(search.paper_search(query="Maestro"))
    years = {corpus[k].published.year for k in everything}
    assert len(years) > 3
    in_2013 = _ids(search.paper_search(query="Maestro", year=2013))
    assert in_2013 == [k for k in everything if corpus[k].published.year == 2013]
    assert len(in_2013) == 2


def test_paper_search_blank_query_finds_nothing(corpus):
    assert not search.paper_search(query="   ").exists()
    assert search.researcher_search(query="", limit=10) == []


def test_paper_search_hidden_paper_is_never_found(corpus):
    key = _arxiv_id(corpus, "Theory of the pairbreaking")
    Paper.objects.filter(arxiv_id=key).update(hidden=True)
    assert _ids(search.paper_search(query="pairbreaking")) == []


@pytest.mark.parametrize(
    ("query", "message"),
    [("x" * 201, search.QUERY_TOO_LONG), ("a " * 11, search.QUERY_TOO_MANY_WORDS)],
)
def test_search_query_clean_refuses_over_long_text(query, message):
    with pytest.raises(search.SearchQueryError, match=re.escape(message)):
        search.search_query_clean(query)


def test_researcher_search_finds_a_name_with_typo_and_accents(corpus):
    found = search.researcher_search(query="Adrián del Maestor", limit=10)
    assert found
    assert {r.display_name for r in found} == {"Adrian Del Maestro"}
    assert found[0].name_similarity >= 0.6
    typo = search.researcher_search(query="Sachdve", limit=10)
    assert [r.display_name for r in typo] == ["Subir Sachdev"]


def test_researcher_search_orders_by_similarity_then_paper_count(corpus):
    found = search.researcher_search(query="Maestro", limit=10)
    keys = [(-r.name_similarity, -r.paper_count) for r in found]
    assert keys == sorted(keys)
    for r in found:
        assert r.paper_count == (
            Paper.objects.filter(hidden=False, authorships__researcher=r).count()
        )


@pytest.mark.parametrize(
    "query", ["Maestro", "Sachdve", "Adrián del Maestor", "Affleck", "S. Sachdev"]
)
def test_researcher_search_statement_answers_as_the_queryset(corpus, query):
    """The written-out statement of PostgreSQL gives researcher_matches' answer."""
    ResearcherFactory(
        display_name="Ian Affleck",
        name_variants=["I. Affleck"],
        orcid="0000-0002-1825-0097",
    )
    ResearcherFactory(display_name="Ian Affleck", retired=True)
    found = search.researcher_search(query=query, limit=10)
    expected = list(search.researcher_matches(query=query)[:10])
    assert found
    assert [
        (r.pk, r.display_name, r.name_variants, r.orcid, r.slug, r.paper_count)
        + (r.name_similarity, r.get_absolute_url())
        for r in found
    ] == [
        (r.pk, r.display_name, r.name_variants, r.orcid, r.slug, r.paper_count)
        + (r.name_similarity, r.get_absolute_url())
        for r in expected
    ]
    assert all(isinstance(r.name_variants, list) for r in found)


def test_researcher_search_matches_variants_and_skips_merged_away(corpus):
    kept = ResearcherFactory(display_name="Q. Zorbington", name_variants=["Quentin"])
    gone = ResearcherFactory(display_name="Quentin Zorbington", merged_into=kept)
    found = search.researcher_search(query="Quentin Zorbington", limit=10)
    assert [r.pk for r in found] == [kept.pk]
    assert gone.pk not in {r.pk for r in found}


def test_search_vector_is_refreshed_when_a_paper_is_harvested_again(
    corpus, arxiv_dir, tmp_path
):
    source = arxiv_dir / ATOM / "id_list-1111.2011v2.xml"
    text = source.read_text()
    assert "Quantum Criticality for Extended Nodes" in text
    newer = (
        text.replace("Quantum Criticality for Extended Nodes", "Zwitterionic Nodes")
        .replace("1111.2011v2</id>", "1111.2011v3</id>")
        .replace("<updated>2012-04-02T12:38:54Z", "<updated>2013-05-06T10:00:00Z")
    )
    (tmp_path / "feed.xml").write_text(newer)

    run = harvest_arxiv_files(root=tmp_path / "feed.xml")

    assert run.papers_updated == 1
    assert _ids(search.paper_search(query="zwitterionic")) == ["1111.2011"]
    assert _ids(search.paper_search(query="criticality extended")) == []


def test_search_vectors_refresh_rewrites_only_the_given_papers(corpus):
    a, b = Paper.objects.order_by("pk")[:2]
    Paper.objects.filter(pk__in=[a.pk, b.pk]).update(title="Quokka")
    assert search.search_vectors_refresh(paper_ids=[a.pk, a.pk, 10**12]) == 1
    assert [p.pk for p in search.paper_search(query="quokka")] == [a.pk]


# --- the page ---------------------------------------------------------------


def test_search_page_without_query_is_the_form_alone(client):
    response = client.get("/search/")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'name="q"' in body
    assert 'id="result-count"' not in body
    assert '<meta name="robots" content="noindex">' in body


def test_search_page_lists_researchers_then_papers(client, corpus):
    response = client.get("/search/", {"q": "Sachdev"})
    assert response.status_code == 200
    body = response.content.decode()
    sachdev = Researcher.objects.get(display_name="Subir Sachdev")
    assert body.index(f'href="{sachdev.get_absolute_url()}">Subir Sachdev</a>') < (
        body.index('id="papers-heading"')
    )
    assert "3 papers found" in body
    for paper in search.paper_search(query="Sachdev"):
        assert f'href="{paper.get_absolute_url()}"' in body
    assert response.context["query"] == "Sachdev"
    assert response.context["canonical_url"] == "http://testserver/search/?q=Sachdev"
    assert '<link rel="canonical" href="http://testserver/search/?q=Sachdev">' in body
    assert '<meta name="robots" content="noindex">' in body


def test_search_page_links_only_applied_researchers(client, corpus):
    key = _arxiv_id(corpus, "Quantum Criticality for Extended Nodes")
    pending = Proposal.objects.get(
        status="pending", authorships__raw_name="Zlatko Tesanovic"
    )
    assert pending.kind == "new"

    body = client.get("/search/", {"q": "Tesanovic"}).content.decode()

    paper = paper_list().get(arxiv_id=key)
    byline = body[body.index(f'href="{paper.get_absolute_url()}"') :]
    byline = byline[: byline.index("</li>")]
    assert "Zlatko Tesanovic" in byline
    assert ">Zlatko Tesanovic</a>" not in byline
    linked = re.findall(r'href="(/researchers/[^"]+)">([^<]+)</a>', byline)
    applied = {
        a.raw_name: a.researcher.get_absolute_url()
        for a in paper.authorships.all()
        if a.researcher
    }
    assert linked
    assert {name: url for url, name in linked} == applied


def test_search_page_filters_narrow_and_pager_keeps_them(client):
    for i in range(30):
        PaperFactory(
            title=f"Ytterbium clock {i}",
            published=dt.date(2020 + i % 2, 3, 1),
            categories=["physics.atom-ph", "quant-ph"],
            primary_category="physics.atom-ph",
        )
    PaperFactory(title="Ytterbium elsewhere", categories=["hep-th"])
    search.search_vectors_refresh(paper_ids=Paper.objects.values_list("pk", flat=True))

    first = client.get("/search/", {"q": "ytterbium"})
    assert first.context["page"].paginator.count == 31
    assert len(first.context["papers"]) == 24
    assert dict(first.context["categories"]) == {"physics.atom-ph": 30, "hep-th": 1}
    assert "?q=ytterbium&amp;page=2" in first.content.decode()

    second = client.get(
        "/search/", {"q": "ytterbium", "category": "quant-ph", "year": "2021"}
    )
    page = second.context["page"]
    assert page.paginator.count == 15
    assert {p["published"].year for p in second.context["papers"]} == {2021}
    filtered = client.get(
        "/search/",
        {"q": "ytterbium", "category": "physics.atom-ph", "page": "2"},
    )
    body = filtered.content.decode()
    assert len(filtered.context["papers"]) == 6
    # "page= 2" (a space typed or pasted) is page 2, not page 1.
    spaced = client.get(
        "/search/",
        {"q": "ytterbium", "category": "physics.atom-ph", "page": " 2 "},
    )
    assert spaced.context["page"].number == 2
    assert spaced.context["papers"] == filtered.context["papers"]
    assert "?q=ytterbium&amp;category=physics.atom-ph&amp;page=1" in body
    assert '<option value="physics.atom-ph" selected>' in body


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "x" * 201}, search.QUERY_TOO_LONG),
        ({"q": " ".join(["word"] * 11)}, search.QUERY_TOO_MANY_WORDS),
        ({"q": "luttinger", "year": "20x3"}, "The year must be a number"),
        ({"q": "luttinger", "category": "<b>"}, "not an arXiv category"),
    ],
)
def test_search_page_refuses_bad_input_with_400_and_the_reason(client, params, message):
    response = client.get("/search/", params)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert "page" not in response.context


def test_search_page_escapes_markup_in_titles(client, arxiv_dir, tmp_path):
    text = (arxiv_dir / ATOM / "id_list-1111.2011v2.xml").read_text()
    (tmp_path / "feed.xml").write_text(
        text.replace(
            "Quantum Criticality for Extended Nodes",
            "&lt;script&gt;alert(1)&lt;/script&gt; Xenial &lt;b&gt;nodes&lt;/b&gt;",
        )
    )
    harvest_arxiv_files(root=tmp_path / "feed.xml")
    assert Paper.objects.get().title.startswith("<script>alert(1)</script> Xenial")

    body = client.get("/search/", {"q": "xenial"}).content.decode()

    assert "&lt;script&gt;alert(1)&lt;/script&gt; Xenial &lt;b&gt;nodes" in body
    assert "<script>alert" not in body
    assert "<b>nodes" not in body


def test_search_page_query_count_is_flat(client, django_assert_num_queries):
    def make(n: int, word: str) -> None:
        for i in range(n):
            a = AuthorshipFactory(paper=PaperFactory(title=f"{word} {i}"))
            a.researcher = ResearcherFactory(display_name=f"{word} Person {i}")
            a.save()
            AuthorshipFactory(paper=a.paper, position=2)
        search.search_vectors_refresh(
            paper_ids=Paper.objects.values_list("pk", flat=True)
        )

    make(5, "Quasar")
    make(50, "Pulsar")
    embeddings_refresh()
    counts = []
    for params in ({"mode": "keyword"}, {"mode": "keyword", "category": "hep-th"}):
        for word in ("quasar", "pulsar"):
            with CaptureQueriesContext(connection) as queries:
                response = client.get("/search/", {"q": word, **params})
            assert response.status_code == 200
            assert len(response.context["researchers"]) == (
                5 if word == "quasar" else 10
            )
            assert response.context["page"].paginator.count == (
                5 if word == "quasar" else 50
            )
            counts.append(len(queries))
    # One query reads the matches (ranked, counted and faceted from it, under
    # its statement timeout: savepoint, SET LOCAL, query, release), then the
    # page's rows with their bylines (one statement), the
    # researchers (named alike, in the name's blocks, and their figures:
    # wovepaper.name_search) and the institutions named so; the same with a
    # category filter, whose spelling as the papers have it is looked up
    # once, then cached, and whose researchers and institutions (named by
    # the same words) come from the cache.
    assert counts == [9, 9, 6, 5]
    # Asked again by a visitor with no session, the whole page comes from the
    # cache; with a parameter the page does not read it is rendered, and the
    # ranked head, the researchers and the institutions come from the cache:
    # the rows with their bylines.
    with CaptureQueriesContext(connection) as queries:
        again = client.get("/search/", {"q": "pulsar", "mode": "keyword"})
    assert len(queries) == 0
    assert again.context is None  # no template rendered
    assert "Pulsar Person" in again.content.decode()
    with CaptureQueriesContext(connection) as queries:
        client.get("/search/", {"q": "pulsar", "mode": "keyword", "utm_source": "x"})
    assert len(queries) == 1
    # A hybrid search (the default) adds one statement: the nearest papers
    # with their primary categories (the HNSW settings come with the
    # connection); which of them the words match (each paper is counted
    # once) is read from the keyword head, which holds every match here
    # (search._every_match); its researchers (three reads) and institutions
    # (one) come from the cache the keyword searches filled.
    # As flat, whatever the matches.
    hybrid = []
    for word in ("quasar", "pulsar"):
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/search/", {"q": word})
        assert response.context["answered_by"] == "hybrid"
        reads = [q for q in queries if "wovepaper_paperembedding" in q["sql"]]
        assert len(reads) == 1
        hybrid.append(len(queries))
    assert hybrid == [counts[0] + 1 - 4, counts[1] + 1 - 4]


def test_cached_search_page_shows_a_curation_change_at_once(client):
    a = AuthorshipFactory(paper=PaperFactory(title="Magnetar flares"))
    a.researcher = ResearcherFactory(display_name="Magnetar Person")
    a.save()
    search.search_vectors_refresh(paper_ids=[a.paper_id])
    first = client.get("/search/", {"q": "magnetar"}).content.decode()
    assert "Magnetar Person" in first
    assert client.get("/search/", {"q": "magnetar"}).content.decode() == first

    Researcher.objects.filter(pk=a.researcher_id).update(
        display_name="Magnetar Renamed"
    )
    researchers_changed([a.researcher_id])

    body = client.get("/search/", {"q": "magnetar"}).content.decode()
    assert "Magnetar Renamed" in body
    assert "Magnetar Person" not in body


def test_signed_in_reader_and_bad_input_are_not_served_a_cached_page(
    client, django_user_model
):
    PaperFactory(title="Blazar jets")
    search.search_vectors_refresh(paper_ids=Paper.objects.values_list("pk", flat=True))
    client.get("/search/", {"q": "blazar"})
    client.force_login(django_user_model.objects.create_user("reader"))
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/search/", {"q": "blazar"})
    assert response.status_code == 200
    assert len(queries) > 0
    client.logout()
    for _ in range(2):
        bad = client.get("/search/", {"q": "blazar", "year": "x"})
        assert bad.status_code == 400
        assert "The year must be a number" in bad.content.decode()


def test_search_by_arxiv_id_or_doi_goes_to_the_paper(client, corpus):
    paper = corpus[_arxiv_id(corpus, "Theory of the pairbreaking")]
    for text in (paper.arxiv_id, f"arXiv:{paper.arxiv_id}v1"):
        response = client.get("/search/", {"q": f" {text} "})
        assert (response.status_code, response["Location"]) == (
            302,
            paper.get_absolute_url(),
        )
    # A number alone is a word (a year), not our id.
    assert client.get("/search/", {"q": str(paper.pk)}).status_code == 200


@pytest.mark.parametrize("text", ["-" * 50, "!-" * 60, "a ---- b"])
def test_operator_runs_do_not_break_the_query_parser(client, text):
    response = client.get("/search/", {"q": text})
    assert response.status_code == 200


def test_search_refuses_bad_years_and_methods(client):
    assert client.get("/search/", {"q": "x", "year": "9" * 5000}).status_code == 400
    assert client.post("/search/", {"q": "x"}).status_code == 405


def test_only_one_spelling_of_a_search_page_is_cached(client):
    PaperFactory(title="Pulsar timing")
    search.search_vectors_refresh(paper_ids=Paper.objects.values_list("pk", flat=True))
    first = client.get("/search/", {"q": "pulsar"})
    again = client.get("/search/", {"q": "pulsar"})
    assert first.context is not None
    assert again.context is None  # from the cache
    assert again["Vary"] == first["Vary"]
    assert "Cookie" in first["Vary"]
    for page in ("abc", "01", " 1", "1.5", "-1"):
        twice = [client.get("/search/", {"q": "pulsar", "page": page}) for _ in "ab"]
        # Rendered each time (never stored), showing the first page.
        assert all(r.context is not None for r in twice), page
        assert all(r.context["page"].number == 1 for r in twice), page
    doubled = client.get("/search/?q=pulsar&q=quasar")
    assert doubled.context is not None
