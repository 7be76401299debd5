"""Token-authenticated API: curators decide proposals, users follow and claim."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from curation import edits
from curation.models import ClaimRequest, Proposal
from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper.models import Follow

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"


def _client(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def _merge_proposal():
    a, b = ResearcherFactory(), ResearcherFactory()
    AuthorshipFactory(researcher=a)
    moved = AuthorshipFactory(researcher=b)
    p = Proposal.objects.create(
        kind="merge",
        score=0.8,
        model_version="t",
        fingerprint="fp-merge",
        researcher=a,
        other_researcher=b,
        researcher_revisions={str(a.pk): 0, str(b.pk): 0},
    )
    return p, a, b, moved


def test_token_is_issued_for_a_username_and_password():
    u = UserFactory(username="reader")
    u.set_password("pw-reader-1")
    u.save()
    response = APIClient().post(
        "/api/token/", {"username": "reader", "password": "pw-reader-1"}
    )
    assert response.status_code == 200
    assert response.json()["token"] == Token.objects.get(user=u).key


def test_proposals_are_for_curators_only(curator):
    _merge_proposal()
    assert _client().get("/api/proposals/").status_code == 401
    refused = _client(UserFactory()).get("/api/proposals/")
    assert refused.status_code == 403
    assert refused["Content-Type"] == PROBLEM
    assert refused.json()["title"] == "Forbidden"
    listed = _client(curator).get("/api/proposals/?kind=merge&status=pending")
    assert [p["kind"] for p in listed.json()["results"]] == ["merge"]


def test_curator_approves_through_the_api_and_a_second_decision_is_409(curator):
    p, a, b, moved = _merge_proposal()
    client = _client(curator)

    done = client.post(f"/api/proposals/{p.pk}/approve/", {}, format="json")

    assert done.status_code == 200
    assert done.json()["status"] == "applied"
    moved.refresh_from_db()
    assert moved.researcher_id == a.pk
    again = client.post(f"/api/proposals/{p.pk}/reject/", {}, format="json")
    assert again.status_code == 409
    assert again["Content-Type"] == PROBLEM
    body = again.json()
    assert body["type"].endswith("/curation-conflict")
    assert (
        body["detail"]
        == f"proposal {p.pk} is applied, not pending: it was decided already"
    )


def test_stale_proposal_answers_409_and_is_marked_stale(curator):
    p, a, b, moved = _merge_proposal()
    AuthorshipFactory(researcher=b)  # one stays: a profile emptied is retired
    edits.authorship_detach(authorship=moved, actor=curator)  # b changed

    response = _client(curator).post(
        f"/api/proposals/{p.pk}/approve/", {}, format="json"
    )

    assert response.status_code == 409
    assert "changed since the proposal was made" in response.json()["detail"]
    p.refresh_from_db()
    assert p.status == "stale"


def test_follow_feed_and_unfollow():
    user = UserFactory()
    r = ResearcherFactory()
    old, new = (
        PaperFactory(published="2020-01-01"),
        PaperFactory(published="2024-05-01"),
    )
    for paper in (old, new):
        AuthorshipFactory(paper=paper, researcher=r)
    PaperFactory()  # not followed
    client = _client(user)

    assert _client().post(f"/api/researchers/{r.pk}/follow/").status_code == 401
    assert client.post(f"/api/researchers/{r.pk}/follow/").status_code == 201
    assert (
        client.post(f"/api/researchers/{r.pk}/follow/").status_code == 201
    )  # idempotent
    assert Follow.objects.filter(user=user).count() == 1
    follows = client.get("/api/follows/").json()["results"]
    assert [f["researcher"]["id"] for f in follows] == [r.pk]
    feed = client.get("/api/feed/").json()["results"]
    assert [p["id"] for p in feed] == [new.pk, old.pk]

    assert client.delete(f"/api/researchers/{r.pk}/follow/").status_code == 204
    assert client.get("/api/feed/").json()["results"] == []


def test_feed_follows_a_merge_to_the_survivor():
    user = UserFactory()
    a, b = ResearcherFactory(), ResearcherFactory()
    AuthorshipFactory(researcher=a)
    AuthorshipFactory(researcher=b)
    client = _client(user)
    client.post(f"/api/researchers/{b.pk}/follow/")

    edits.researcher_merge(researchers=[a, b], actor=UserFactory())

    assert len(client.get("/api/feed/").json()["results"]) == 2


def test_claim_through_the_api():
    user = UserFactory()
    r = ResearcherFactory()
    client = _client(user)

    bad = client.post(
        f"/api/researchers/{r.pk}/claim/", {"orcid": "nope"}, format="json"
    )
    # Not an ORCID iD: the request is bad (400, naming the field), not in
    # conflict with the profile (it was a 409).
    assert bad.status_code == 400
    assert "is not an ORCID iD" in str(bad.json()["errors"]["orcid"])
    digit = client.post(
        f"/api/researchers/{r.pk}/claim/",
        {"orcid": "0000-0002-1825-0098"},
        format="json",
    )
    assert digit.status_code == 400
    assert "check digit" in str(digit.json()["errors"]["orcid"])
    ok = client.post(
        f"/api/researchers/{r.pk}/claim/",
        {"orcid": "https://orcid.org/0000-0002-1825-0097", "message": "me"},
        format="json",
    )
    assert ok.status_code == 201
    assert ok.json()["orcid"] == "0000-0002-1825-0097"
    assert ClaimRequest.objects.get().user == user


def test_validation_errors_are_problem_details():
    response = _client().get("/api/papers/?published_from=not-a-date")
    assert response.status_code == 400
    body = response.json()
    assert body["title"] == "Bad Request"
    assert "published_from" in body["errors"]


def test_a_follow_of_a_profile_merged_since_says_where_it_leads():
    """/api/follows/ listed a follow of a profile merged away since as that
    profile alone; the /following/ page and the feed follow the survivor
    (new-user trial)."""
    user = UserFactory()
    a, b, c = ResearcherFactory(), ResearcherFactory(), ResearcherFactory()
    for r in (a, b, c):
        AuthorshipFactory(researcher=r)
    client = _client(user)
    client.post(f"/api/researchers/{b.pk}/follow/")
    client.post(f"/api/researchers/{c.pk}/follow/")

    edits.researcher_merge(researchers=[a, b], actor=UserFactory())

    follows = {
        f["researcher"]["id"]: f["following"]["id"]
        for f in client.get("/api/follows/").json()["results"]
    }
    assert follows == {b.pk: a.pk, c.pk: c.pk}
