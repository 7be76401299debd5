"""Claims: a signed-in user asks, a curator approves (link and lock) or rejects."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation.claims import claim_approve, claim_reject, claim_submit
from curation.exceptions import ClaimError, ResearcherConflict
from curation.models import ClaimRequest, CurationEvent
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db

ORCID = "0000-0002-1825-0097"


def test_claim_submit_normalises_the_orcid():
    r = ResearcherFactory()
    claim = claim_submit(
        user=UserFactory(), researcher=r, orcid=f"https://orcid.org/{ORCID}"
    )
    assert (claim.status, claim.orcid) == ("pending", ORCID)


@pytest.mark.parametrize(
    ("orcid", "message"),
    [("0000-0002-1825-0098", "check digit"), ("<script>", "not an ORCID")],
)
def test_claim_submit_refuses_an_invalid_orcid(orcid, message):
    with pytest.raises(ClaimError, match=message):
        claim_submit(user=UserFactory(), researcher=ResearcherFactory(), orcid=orcid)
    assert not ClaimRequest.objects.exists()


def test_claim_submit_refuses_a_second_pending_claim_and_another_orcid():
    user = UserFactory()
    r = ResearcherFactory(orcid="0000-0001-5109-3700")
    with pytest.raises(ClaimError, match="ORCID iD is 0000-0001-5109-3700"):
        claim_submit(user=user, researcher=r, orcid=ORCID)
    claim_submit(user=user, researcher=r, orcid="0000-0001-5109-3700")
    with pytest.raises(ClaimError, match="already have a pending claim"):
        claim_submit(user=user, researcher=r, orcid="0000-0001-5109-3700")


def test_claim_approve_links_user_locks_profile_and_sets_orcid():
    r = ResearcherFactory()
    owner, curator = UserFactory(), UserFactory()
    claim = claim_submit(user=owner, researcher=r, orcid=ORCID)

    claim_approve(claim=claim, actor=curator)

    r.refresh_from_db()
    claim.refresh_from_db()
    assert (r.claimed_by, r.locked, r.orcid) == (owner, True, ORCID)
    assert (claim.status, claim.decided_by) == ("approved", curator)
    event = CurationEvent.objects.get(kind="claim_approved")
    assert event.extra == {"claim": claim.pk}
    assert event.fields[str(r.pk)]["locked"] == [False, True]
    with pytest.raises(ClaimError, match="is approved, not pending"):
        claim_approve(claim=claim, actor=curator)


def test_claim_approve_refuses_an_orcid_held_by_another_researcher():
    holder = ResearcherFactory(orcid=ORCID)
    r = ResearcherFactory()
    claim = claim_submit(user=UserFactory(), researcher=r, orcid=ORCID)
    with pytest.raises(ResearcherConflict, match=f"researcher {holder.pk}"):
        claim_approve(claim=claim, actor=UserFactory())
    claim.refresh_from_db()
    r.refresh_from_db()
    assert (claim.status, r.claimed_by_id, r.locked) == ("pending", None, False)


def test_claim_reject_keeps_the_reason():
    claim = claim_submit(
        user=UserFactory(), researcher=ResearcherFactory(), orcid=ORCID
    )
    claim_reject(claim=claim, actor=UserFactory(), reason="iD belongs to someone else")
    claim.refresh_from_db()
    assert (claim.status, claim.reason) == ("rejected", "iD belongs to someone else")
    assert CurationEvent.objects.get(kind="claim_rejected").extra["claim"] == claim.pk


def test_claim_page_needs_sign_in_then_records_the_claim(client):
    r = ResearcherFactory()
    AuthorshipFactory(researcher=r)
    url = reverse("claim-page", args=[r.pk])

    assert client.get(url).status_code == 302  # to the sign-in page

    user = UserFactory()
    client.force_login(user)
    page = client.get(url)
    assert "1 paper is on this profile" in page.content.decode()
    bad = client.post(url, {"orcid": "nope"})
    assert bad.status_code == 400
    assert "is not an ORCID iD" in bad.content.decode()
    ok = client.post(url, {"orcid": ORCID, "message": "it is me"})
    assert "is waiting for a curator" in ok.content.decode()
    claim = ClaimRequest.objects.get()
    assert (claim.user, claim.researcher, claim.message) == (user, r, "it is me")
    # Back on the page later: the pending claim, not an empty form again.
    again = client.get(url).content.decode()
    assert f"Your claim #{claim.pk} is waiting for a curator" in again
    assert 'name="orcid"' not in again


def test_claim_page_of_a_merged_researcher_moves_to_the_survivor(client):
    survivor = ResearcherFactory()
    gone = ResearcherFactory(merged_into=survivor)
    client.force_login(UserFactory())
    response = client.get(reverse("claim-page", args=[gone.pk]))
    assert response.status_code == 301
    assert response["Location"] == reverse("claim-page", args=[survivor.pk])


def test_admin_approves_a_claim(client, curator):
    r = ResearcherFactory()
    claim = claim_submit(user=UserFactory(), researcher=r, orcid=ORCID)
    client.force_login(curator)

    response = client.post(
        reverse("admin:curation_claimrequest_decide", args=[claim.pk]),
        {"decision": "approve"},
        follow=True,
    )

    assert "approved" in response.content.decode()
    r.refresh_from_db()
    assert r.locked is True
    assert r.claimed_by_id == claim.user_id
