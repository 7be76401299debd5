"""API conventions: ETags, sparse fields, co-authors, CORS, throttling."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return APIClient()


def test_detail_etag_gives_304_until_the_paper_changes(api):
    paper = PaperFactory()
    AuthorshipFactory(paper=paper)
    first = api.get(f"/api/papers/{paper.pk}/")
    tag = first["ETag"]

    again = api.get(f"/api/papers/{paper.pk}/", HTTP_IF_NONE_MATCH=tag)
    assert again.status_code == 304
    assert again["ETag"] == tag

    r = ResearcherFactory()
    paper.authorships.update(researcher=r)  # a curator's change shows in the byline
    changed = api.get(f"/api/papers/{paper.pk}/", HTTP_IF_NONE_MATCH=tag)
    assert changed.status_code == 200
    assert changed["ETag"] != tag


def test_researcher_detail_has_an_etag(api):
    r = ResearcherFactory()
    tag = api.get(f"/api/researchers/{r.pk}/")["ETag"]
    assert (
        api.get(f"/api/researchers/{r.pk}/", HTTP_IF_NONE_MATCH=tag).status_code == 304
    )


def test_fields_keeps_only_the_named_fields_and_refuses_unknown(api):
    PaperFactory(title="Sparse")
    page = api.get("/api/papers/?fields=id,title").json()
    assert set(page["results"][0]) == {"id", "title"}
    bad = api.get("/api/papers/?fields=id,password")
    assert bad.status_code == 400
    assert "password" in str(bad.json()["errors"])


def test_fields_holds_on_a_researchers_papers(api):
    # The rows were built without the request, so fields= was ignored (as on
    # the search and similar papers: tests/wovepaper/test_semantic.py).
    a = AuthorshipFactory(researcher=ResearcherFactory(), paper__title="Sparse rows")
    papers = api.get(f"/api/researchers/{a.researcher_id}/papers/?fields=title")
    assert papers.json()["results"] == [{"title": "Sparse rows"}]
    bad = api.get(f"/api/researchers/{a.researcher_id}/papers/?fields=secret")
    assert bad.status_code == 400


def test_coauthors_counts_shared_visible_papers(api):
    me, close, far = ResearcherFactory(), ResearcherFactory(), ResearcherFactory()
    for i in range(3):
        paper = PaperFactory()
        AuthorshipFactory(paper=paper, researcher=me, position=1)
        AuthorshipFactory(paper=paper, researcher=close, position=2)
        if i == 0:
            AuthorshipFactory(paper=paper, researcher=far, position=3)
    hidden = PaperFactory(hidden=True)
    AuthorshipFactory(paper=hidden, researcher=me, position=1)
    AuthorshipFactory(paper=hidden, researcher=far, position=2)

    rows = api.get(f"/api/researchers/{me.pk}/coauthors/").json()

    assert [(r["researcher"]["id"], r["shared_papers"]) for r in rows] == [
        (close.pk, 3),
        (far.pk, 1),
    ]


def test_cors_allows_any_origin_to_read_the_api_only(api):
    PaperFactory()
    read = api.get("/api/papers/", HTTP_ORIGIN="https://example.org")
    assert read["Access-Control-Allow-Origin"] == "*"
    home = api.get("/", HTTP_ORIGIN="https://example.org")
    assert "Access-Control-Allow-Origin" not in home


def test_throttled_requests_get_429_with_retry_after(api, settings):
    from rest_framework.settings import api_settings
    from rest_framework.throttling import AnonRateThrottle

    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "anon": "2/minute"}
    original = AnonRateThrottle.THROTTLE_RATES
    AnonRateThrottle.THROTTLE_RATES = rates
    try:
        codes = [api.get("/api/papers/").status_code for _ in range(3)]
        last = api.get("/api/papers/")
    finally:
        AnonRateThrottle.THROTTLE_RATES = original
    assert codes == [200, 200, 429]
    assert last.status_code == 429
    assert int(last["Retry-After"]) > 0
    assert last.json()["retry_after"] == int(last["Retry-After"])
