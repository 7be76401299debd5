"""The public API shows only the applied, curated state."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from curation import services
from curation.models import Proposal
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return APIClient()


def _pending_attach(authorship, researcher):
    p = Proposal.objects.create(
        kind="attach",
        score=0.9,
        evidence={},
        model_version="test",
        fingerprint=f"fp-{authorship.pk}-{researcher.pk}",
        researcher=researcher,
    )
    p.authorships.set([authorship])
    return p


def test_api_paper_shows_no_researcher_while_proposal_pending(api):
    a = AuthorshipFactory()
    _pending_attach(a, ResearcherFactory())
    body = api.get(f"/api/papers/{a.paper_id}/").json()
    assert body["authorships"][0]["raw_name"] == "Jean-Pierre Serre"
    assert body["authorships"][0]["researcher"] is None


def test_api_paper_shows_researcher_once_applied(api):
    a = AuthorshipFactory()
    r = ResearcherFactory()
    services.proposal_apply(proposal=_pending_attach(a, r), actor=None)
    body = api.get(f"/api/papers/{a.paper_id}/").json()
    assert body["authorships"][0]["researcher"]["id"] == r.pk


def test_api_researcher_papers_lists_only_applied_papers(api):
    r = ResearcherFactory()
    applied = AuthorshipFactory()
    pending = AuthorshipFactory()
    services.proposal_apply(proposal=_pending_attach(applied, r), actor=None)
    _pending_attach(pending, r)

    body = api.get(f"/api/researchers/{r.pk}/papers/").json()

    assert [p["id"] for p in body["results"]] == [applied.paper_id]
    detail = api.get(f"/api/researchers/{r.pk}/").json()
    assert detail["paper_count"] == 1


def test_api_researchers_hides_merged_away_profiles(api):
    r1, r2 = ResearcherFactory(), ResearcherFactory()
    r2.merged_into = r1
    r2.save()
    ids = [r["id"] for r in api.get("/api/researchers/").json()["results"]]
    assert ids == [r1.pk]
    moved = api.get(f"/api/researchers/{r2.pk}/")
    assert moved.status_code == 301
    assert moved["Location"] == f"/api/researchers/{r1.pk}/"
    r3 = ResearcherFactory(merged_into=r2)  # merged into one merged later
    assert api.get(f"/api/researchers/{r3.pk}/")["Location"] == (
        f"/api/researchers/{r1.pk}/"
    )
    assert api.get("/api/researchers/999999/").status_code == 404


def test_api_papers_hides_deleted_papers_and_filters_by_category(api):
    PaperFactory(hidden=True)
    shown = PaperFactory(categories=["math.AG", "math.NT"], primary_category="math.AG")
    PaperFactory()
    ids = [p["id"] for p in api.get("/api/papers/?category=math.NT").json()["results"]]
    assert ids == [shown.pk]
    assert len(api.get("/api/papers/").json()["results"]) == 2


def test_api_papers_filter_by_doi_is_case_insensitive(api):
    paper = PaperFactory(doi="10.1143/ptp.101.1155")
    body = api.get("/api/papers/?doi=10.1143/PTP.101.1155").json()
    assert [p["id"] for p in body["results"]] == [paper.pk]


def test_openapi_schema_lists_the_endpoints(api):
    response = api.get("/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/papers/" in paths
    assert "/api/researchers/{id}/papers/" in paths
    # The docs page groups operations by tag: the search and similar-papers
    # endpoints sit with the rest of the API, not apart.
    tags = {
        operation["tags"][0]
        for path, item in paths.items()
        if path.startswith("/api/")
        for operation in item.values()
        if isinstance(operation, dict) and "tags" in operation
    }
    assert tags == {"api"}
    assert "/api/search/papers/" in paths
    assert "/api/papers/{id}/similar/" in paths


def test_api_docs_page_uses_local_swagger_assets(client):
    response = client.get("/api/docs/")
    text = response.content.decode()
    assert response.status_code == 200
    assert "cdn.jsdelivr.net" not in text
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in text


def test_api_papers_search_matches_title_and_author_names(api):
    wanted = PaperFactory(title="String junctions and their duals")
    AuthorshipFactory(
        paper=wanted,
        given_name="Yosuke",
        family_name="Imamura",
        raw_name="Yosuke Imamura",
    )
    PaperFactory(title="Something else")
    by_title = api.get("/api/papers/?search=junctions").json()["results"]
    by_author = api.get("/api/papers/?search=Imamura").json()["results"]
    assert [p["id"] for p in by_title] == [wanted.pk]
    assert [p["id"] for p in by_author] == [wanted.pk]


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/api/researchers/abc/papers/", 404),
        ("/api/researchers/99999999999999999999/", 404),
        ("/api/papers/abc/", 404),
        ("/api/papers/?researcher=99999999999999999999", 400),
        ("/api/papers/?researcher=abc", 400),
        ("/api/papers/?researcher=0", 400),
        ("/api/papers/?published_from=notadate", 400),
        ("/api/papers/?category=" + "x" * 100_000, 400),
        ("/api/papers/?search=" + "x" * 100_000, 400),
        ("/api/papers/?search=" + "+".join(["word"] * 1200), 400),
        ("/api/papers/?cursor=garbage", 404),
    ],
)
def test_api_bad_parameters_answer_4xx_never_500(api, url, status):
    response = api.get(url)
    assert response.status_code == status


def test_api_researcher_papers_pages_through_undated_papers(api):
    r = ResearcherFactory()
    for published in [None, "2020-01-01", "2021-01-01"]:
        AuthorshipFactory(paper=PaperFactory(published=published), researcher=r)
    url = f"/api/researchers/{r.pk}/papers/?page_size=1"
    seen = []
    while url:
        body = api.get(url).json()
        seen += [p["published"] for p in body["results"]]
        url = body["next"]
    assert seen == ["2021-01-01", "2020-01-01", None]


@pytest.mark.parametrize(
    "lookup",
    [
        "{pk}",
        "hep-th/9901001",
        "hep-th/9901001v2",
        "arXiv:hep-th/9901001",
        "10.1103/PhysRevD.59.046001",
        "doi:10.1103/physrevd.59.046001",
    ],
)
def test_api_paper_detail_by_id_arxiv_id_or_doi(api, lookup):
    paper = PaperFactory(arxiv_id="hep-th/9901001", doi="10.1103/physrevd.59.046001")
    new_style = PaperFactory(arxiv_id="2201.05500")

    response = api.get(f"/api/papers/{lookup.format(pk=paper.pk)}/")

    assert response.status_code == 200
    assert response.json()["id"] == paper.pk
    assert api.get("/api/papers/2201.05500v3/").json()["id"] == new_style.pk


@pytest.mark.parametrize("lookup", ["9999999", "0000.00000", "not-an-id", "10.1/none"])
def test_api_paper_detail_unknown_is_a_404_problem(api, lookup):
    PaperFactory(arxiv_id="hep-th/9901001")
    response = api.get(f"/api/papers/{lookup}/")
    assert response.status_code == 404
    assert response.json()["status"] == 404


@pytest.mark.parametrize(
    ("url", "status", "says"),
    [
        ("/api/researchers/abc/", 404, "no API resource at /api/researchers/abc/"),
        ("/api/researchers/-1/", 404, "no API resource"),
        ("/api/nonexistent/", 404, "no API resource"),
        ("/api/papers/?search=%00", 400, "NUL character"),
        ("/api/papers/?has_orcid=maybe", 400, "'maybe' is not true or false"),
        ("/api/authorships/?assigned=maybe", 400, "'maybe' is not true or false"),
        # Schemathesis: a "%" in the value was read as a format string (500).
        ("/api/authorships/?assigned=50%25", 400, "'50%' is not true or false"),
        ("/api/papers/?has_orcid=%25s%25d", 400, "'%s%d' is not true or false"),
        ("/api/researchers/?orcid=bad", 400, "orcid"),
        ("/api/authorships/?orcid=0000-0002-1825-0090", 400, "orcid"),
    ],
)
def test_every_api_error_is_a_problem_naming_it(api, url, status, says):
    """Paths no route takes and NUL characters answered Django's HTML pages,
    and bad booleans or ORCID iDs were read as absent (200, every row), while
    every other API error is a problem (new-user trial)."""
    response = api.get(url)
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    assert says in response.content.decode()


def test_researcher_and_authorship_orcid_filters_read_an_orcid_url(api):
    orcid = "0000-0002-1825-0097"
    r = ResearcherFactory(orcid=orcid)
    a = AuthorshipFactory(orcid=orcid, researcher=r)
    AuthorshipFactory()
    url = f"https://orcid.org/{orcid}"
    researchers = api.get("/api/researchers/", {"orcid": url}).json()["results"]
    slots = api.get("/api/authorships/", {"orcid": url}).json()["results"]
    assert [x["id"] for x in researchers] == [r.pk]
    assert [x["id"] for x in slots] == [a.pk]
    assert api.get("/api/papers/?has_orcid=true").json()["results"][0]["id"] == (
        a.paper_id
    )


def test_proposals_take_sparse_fields_as_every_list_does(curator):
    """``fields=`` was ignored on /api/proposals/, even ``fields=bogus``
    (new-user trial)."""
    _pending_attach(AuthorshipFactory(), ResearcherFactory())
    client = APIClient()
    client.force_authenticate(curator)
    body = client.get("/api/proposals/?fields=id,kind").json()
    assert [set(p) for p in body["results"]] == [{"id", "kind"}]
    assert client.get("/api/proposals/?fields=bogus").status_code == 400
