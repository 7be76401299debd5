"""Bad and hostile input to the curation views: a clear refusal, nothing changed."""

from __future__ import annotations

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from curation import edits, services
from curation.claims import claim_approve, claim_submit
from curation.exceptions import InvalidChange, ResearcherConflict, UndoConflict
from curation.history import event_undo
from curation.models import ClaimRequest, CurationEvent, Proposal
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from wovepaper.models import Researcher

pytestmark = pytest.mark.django_db

ORCID = "0000-0002-1825-0097"
RESEARCHERS = reverse("admin:wovepaper_researcher_changelist")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("orcid", "００００-０００２-１８２５-００９7"),  # full-width digits
        ("orcid", "٠٠٠٠-٠٠٠٢-١٨٢٥-٠٠٩٧"),  # Arabic-Indic digits
        ("orcid", "https://0000-0002-1825-0097"),  # a scheme without orcid.org
        ("s2_author_id", "١٢٣٤٥"),
        ("openalex_author_id", "a١٢٣٤٥"),
    ],
)
def test_identifiers_accept_ascii_digits_only(field, value):
    r = ResearcherFactory()
    with pytest.raises(InvalidChange, match="is not"):
        edits.researcher_update(
            researcher=r, actor=UserFactory(), changes={field: value}
        )


@pytest.mark.parametrize("name", ["   ", "\u200b\u200e\u2066", "\x07"])
def test_invisible_display_names_are_refused(name):
    r = ResearcherFactory()
    with pytest.raises(InvalidChange, match="display name must be"):
        edits.researcher_update(
            researcher=r, actor=UserFactory(), changes={"display_name": name}
        )


def test_blank_split_name_falls_back_to_the_printed_name():
    r = ResearcherFactory()
    AuthorshipFactory(researcher=r)
    move = AuthorshipFactory(researcher=r)
    new = edits.researcher_split(
        researcher=r, authorship_ids=[move.pk], actor=UserFactory(), display_name="  "
    )
    assert new.display_name == "Jean-Pierre Serre"


def test_merge_carries_the_claim_and_lock_to_the_survivor():
    owner = UserFactory()
    a, b = ResearcherFactory(), ResearcherFactory(claimed_by=owner, locked=True)
    edits.researcher_merge(researchers=[a, b], actor=UserFactory())
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.claimed_by, a.locked) == (owner, True)
    assert b.claimed_by is None


def test_merge_refuses_profiles_claimed_by_two_users():
    a = ResearcherFactory(claimed_by=UserFactory())
    b = ResearcherFactory(claimed_by=UserFactory())
    with pytest.raises(ResearcherConflict, match="claimed by two different users"):
        edits.researcher_merge(researchers=[a, b], actor=UserFactory())


def test_undo_refused_when_it_would_retire_a_claimed_profile():
    user = UserFactory()
    r = ResearcherFactory()
    AuthorshipFactory(researcher=r)
    moving = AuthorshipFactory(researcher=r)
    new = edits.researcher_split(researcher=r, authorship_ids=[moving.pk], actor=user)
    claim = claim_submit(user=UserFactory(), researcher=new, orcid=ORCID)
    claim_approve(claim=claim, actor=user)

    with pytest.raises(UndoConflict, match="a user has claimed it"):
        event_undo(event=CurationEvent.objects.get(kind="split"), actor=user)
    assert Researcher.objects.get(pk=new.pk).retired is False


def test_undo_of_a_rejection_puts_the_proposal_back_in_the_queue():
    a, b = ResearcherFactory(), ResearcherFactory()
    p = Proposal.objects.create(
        kind="merge",
        score=0.8,
        model_version="t",
        fingerprint="fp",
        researcher=a,
        other_researcher=b,
    )
    user = UserFactory()
    services.proposal_reject(proposal=p, actor=user)
    rejected = CurationEvent.objects.get(kind="proposal_rejected")

    undo = event_undo(event=rejected, actor=user)
    p.refresh_from_db()
    assert p.status == "pending"
    event_undo(event=undo, actor=user)
    p.refresh_from_db()
    assert p.status == "rejected"


def test_merge_confirmation_refuses_a_researcher_changed_since_it_was_shown(
    client, curator
):
    a, b = ResearcherFactory(), ResearcherFactory()
    AuthorshipFactory(researcher=a)
    AuthorshipFactory(researcher=b)
    client.force_login(curator)
    form = {
        "action": "merge_selected",
        ACTION_CHECKBOX_NAME: [a.pk, b.pk],
        f"revision_{a.pk}": a.revision,
        f"revision_{b.pk}": b.revision,
        "post": "yes",
    }
    edits.authorship_move(
        authorship=AuthorshipFactory(), to=b, actor=UserFactory()
    )  # b changes after the page was shown

    page = client.post(RESEARCHERS, form, follow=True)

    assert "changed since you opened it" in page.content.decode()
    assert Researcher.objects.get(pk=b.pk).merged_into_id is None


def test_change_form_without_its_revision_is_refused(client, curator):
    r = ResearcherFactory(orcid=ORCID)
    client.force_login(curator)
    page = client.post(
        reverse("admin:wovepaper_researcher_change", args=[r.pk]),
        {
            "display_name": r.display_name,
            "orcid": "",
            "s2_author_id": "",
            "openalex_author_id": "",
            "authorships-TOTAL_FORMS": "0",
            "authorships-INITIAL_FORMS": "0",
        },
    )
    assert "The form is out of date: reload the page." in page.content.decode()
    assert Researcher.objects.get(pk=r.pk).orcid == ORCID


def test_malformed_decisions_are_400_and_change_nothing(client, curator):
    r = ResearcherFactory(locked=True)
    claim = claim_submit(user=UserFactory(), researcher=r, orcid=ORCID)
    client.force_login(curator)

    bad_claim = client.post(
        reverse("admin:curation_claimrequest_decide", args=[claim.pk]),
        {"decision": "aprove"},
    )
    bad_lock = client.post(
        reverse("admin:wovepaper_researcher_lock", args=[r.pk]), {"locked": "true"}
    )

    assert (bad_claim.status_code, bad_lock.status_code) == (400, 400)
    assert ClaimRequest.objects.get(pk=claim.pk).status == "pending"
    assert Researcher.objects.get(pk=r.pk).locked is True


@pytest.mark.parametrize(
    ("method", "url", "data"),
    [
        ("get", "/admin/curation/proposal/?field=%00", None),
        ("get", "/admin/curation/proposal/?status__exact=%00", None),
        ("post", RESEARCHERS, {"action": "lock_selected", ACTION_CHECKBOX_NAME: "abc"}),
        ("post", RESEARCHERS, {"action": "lock_selected", ACTION_CHECKBOX_NAME: "²"}),
        ("get", "/admin/wovepaper/researcher/abc/history/", None),
        ("post", "/admin/curation/proposal/abc/decide/", {"decision": "approve"}),
    ],
)
def test_malformed_requests_are_refused_never_500(client, curator, method, url, data):
    client.force_login(curator)
    before = CurationEvent.objects.count()
    response = getattr(client, method)(url, data)
    # 4xx, or the admin's own "no such object" redirect; never a server error.
    assert response.status_code in (302, 400, 404)
    assert CurationEvent.objects.count() == before


def test_nul_in_a_claim_message_is_400(client):
    r = ResearcherFactory()
    client.force_login(UserFactory())
    response = client.post(
        reverse("claim-page", args=[r.pk]), {"orcid": ORCID, "message": "a\x00"}
    )
    assert response.status_code == 400
    assert not ClaimRequest.objects.exists()
