"""Institutions, authorships, more paper filters, and query counts that stay flat."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation import edits, services
from curation.models import Proposal
from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper.models import Institution

pytestmark = pytest.mark.django_db

ORCID = "0000-0002-1825-0097"


@pytest.fixture
def api():
    return APIClient()


def _ids(response):
    return sorted(row["id"] for row in response.json()["results"])


def test_paper_filters_orcid_has_orcid_institution_and_citations(api):
    inst = Institution.objects.create(name="CERN", ror_id="01ggx4157")
    with_orcid = PaperFactory(cited_by_count=50)
    AuthorshipFactory(paper=with_orcid, orcid=ORCID).institutions.add(inst)
    via_researcher = PaperFactory(cited_by_count=5)
    AuthorshipFactory(paper=via_researcher, researcher=ResearcherFactory(orcid=ORCID))
    plain = PaperFactory(cited_by_count=None)
    AuthorshipFactory(paper=plain)

    assert _ids(api.get(f"/api/papers/?orcid=https://orcid.org/{ORCID}")) == sorted(
        [with_orcid.pk, via_researcher.pk]
    )
    assert _ids(api.get("/api/papers/?has_orcid=true")) == [with_orcid.pk]
    assert _ids(api.get(f"/api/papers/?institution={inst.pk}")) == [with_orcid.pk]
    assert _ids(api.get("/api/papers/?cited_by_min=10")) == [with_orcid.pk]
    assert _ids(api.get("/api/papers/?cited_by_max=10")) == [via_researcher.pk]
    bad = api.get("/api/papers/?orcid=0000-0002-1825-0098")
    assert bad.status_code == 400
    assert "check digit" in str(bad.json()["errors"])


def test_institution_detail_by_id_or_ror_id(api):
    inst = Institution.objects.create(
        name="CERN", ror_id="01ggx4157", country_code="CH"
    )
    assert api.get(f"/api/institutions/{inst.pk}/").json()["ror_id"] == "01ggx4157"
    assert api.get("/api/institutions/01ggx4157/").json()["id"] == inst.pk
    assert api.get("/api/institutions/0000nope0/").status_code == 404


def test_authorships_show_evidence_to_curators_only(api, curator):
    r = ResearcherFactory()
    a = AuthorshipFactory()
    p = Proposal.objects.create(
        kind="attach",
        score=0.9,
        model_version="v-test",
        fingerprint="fp",
        researcher=r,
        evidence={"features": {"name": 1.0}, "model_version": "v-test"},
    )
    p.authorships.set([a])
    services.proposal_apply(proposal=p, actor=curator)

    public = api.get(f"/api/authorships/{a.pk}/").json()
    assert public["researcher"]["id"] == r.pk
    assert "evidence" not in public

    token, _ = Token.objects.get_or_create(user=curator)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    seen = api.get(f"/api/authorships/?researcher={r.pk}").json()["results"][0]
    assert seen["evidence"]["proposal"] == p.pk
    assert seen["evidence"]["features"] == {"name": 1.0}
    # A curator moves it to another researcher: the attach is no reason for
    # it being there.
    other = ResearcherFactory()
    edits.authorship_move(authorship=a, to=other, actor=curator)
    moved = api.get(f"/api/authorships/{a.pk}/").json()
    assert moved["researcher"]["id"] == other.pk
    assert moved["evidence"] is None


def _queries(api, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert api.get(url).status_code == 200
    return len(ctx)


@pytest.mark.parametrize(
    "url",
    [
        "/api/papers/?page_size=100",
        "/api/researchers/{r}/papers/?page_size=100",
        "/api/authorships/?page_size=100",
        "/api/researchers/?page_size=100",
    ],
)
def test_list_query_counts_stay_flat_as_rows_grow(api, url):
    r = ResearcherFactory()

    def add(n):
        for _ in range(n):
            paper = PaperFactory()
            AuthorshipFactory(paper=paper, researcher=r, position=1)
            AuthorshipFactory(paper=paper, researcher=ResearcherFactory(), position=2)

    add(5)
    few = _queries(api, url.format(r=r.pk))
    add(60)
    many = _queries(api, url.format(r=r.pk))
    assert many == few


def test_proposal_list_query_count_stays_flat(curator):
    api = APIClient()
    token, _ = Token.objects.get_or_create(user=curator)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")

    def add(n):
        for i in range(n):
            p = Proposal.objects.create(
                kind="new", score=0.9, model_version="t", fingerprint=f"f{n}-{i}"
            )
            p.authorships.set([AuthorshipFactory(), AuthorshipFactory()])

    add(3)
    few = _queries(api, "/api/proposals/?page_size=100")
    add(40)
    assert _queries(api, "/api/proposals/?page_size=100") == few


def test_anonymous_and_plain_users_cannot_write(api):
    user = UserFactory()
    r = ResearcherFactory()
    p = Proposal.objects.create(
        kind="merge",
        score=0.9,
        model_version="t",
        fingerprint="w",
        researcher=r,
        other_researcher=ResearcherFactory(),
    )
    writes = [
        ("post", f"/api/proposals/{p.pk}/approve/"),
        ("post", f"/api/proposals/{p.pk}/reject/"),
        ("post", f"/api/researchers/{r.pk}/follow/"),
        ("delete", f"/api/researchers/{r.pk}/follow/"),
        ("post", f"/api/researchers/{r.pk}/claim/"),
        ("post", "/api/papers/"),
        ("delete", f"/api/researchers/{r.pk}/"),
    ]
    for method, url in writes:
        assert getattr(api, method)(url).status_code in (401, 405), url
    token, _ = Token.objects.get_or_create(user=user)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    for method, url in writes[:2]:
        assert getattr(api, method)(url).status_code == 403, url
    p.refresh_from_db()
    assert p.status == "pending"
