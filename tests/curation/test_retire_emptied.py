"""A profile a curator leaves holding no paper is retired (issue 47): in the
same event for *move…* and *not this person…*, once at the end of a block
review, so that a review can swap papers and merge what it emptied; its
identifiers are freed, and an undo brings it all back."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation import block_review, claims, edits
from curation.exceptions import UndoConflict
from curation.history import event_undo, researcher_history
from curation.models import ClaimRequest, CurationEvent, Proposal
from curation.notify import followers_notify
from tests.curation.test_block_review import BLOCK, _del_maestro
from tests.factories import (
    AuthorshipFactory,
    ProposalFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper import profile
from wovepaper.models import (
    Authorship,
    Follow,
    Notification,
    OutboxMessage,
    Researcher,
)

pytestmark = pytest.mark.django_db

ORCID = "0000-0002-1825-0097"  # ORCID's documented example iD


def _one_paper_profiles(n: int) -> list[tuple[Researcher, Authorship]]:
    """``n`` profiles of the review's block, one paper each."""
    out = []
    for _ in range(n):
        researcher = ResearcherFactory(display_name="A. Maestro", block_key=BLOCK)
        printed = AuthorshipFactory(
            researcher=researcher, given_name="A.", family_name="Maestro"
        )
        out.append((researcher, printed))
    return out


def test_a_profile_a_review_empties_is_retired_once_at_its_end(client, curator):
    keep, other = _del_maestro(curator)[:2]
    Researcher.objects.filter(pk=other.pk).update(orcid=ORCID)
    papers = list(other.authorships.order_by("pk"))
    assert papers, "the real records give the second profile papers"

    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={a.pk: keep.pk for a in papers}),
        actor=curator,
    )

    linked = list(CurationEvent.objects.filter(batch=batch).order_by("pk"))
    assert [e.kind for e in linked] == ["moved"] * len(papers) + ["retired"]
    retired = linked[-1]
    assert retired.extra["retired"] == [other.pk]
    assert retired.fields[str(other.pk)]["retired"] == [False, True]
    assert retired.fields[str(other.pk)]["orcid"] == [ORCID, None]
    assert batch.extra["done"] == len(papers) + 1
    other.refresh_from_db()
    assert (other.retired, other.orcid) == (True, None)
    # Before, it stayed public with "0 papers" and kept its iD.
    page = client.get(other.get_absolute_url())
    assert page.status_code == 410
    html = page.content.decode()
    assert "A curator moved every paper this profile held to other profiles" in html
    assert f'href="{keep.get_absolute_url()}"' in html
    assert f"({len(papers)} of them)" in html
    text = client.get(other.get_absolute_url(), HTTP_ACCEPT="text/markdown")
    assert f"holds {len(papers)} of its papers now" in text.content.decode()
    api = client.get(f"/api/researchers/{other.pk}/").json()
    assert api["detail"] == (
        f"researcher {other.pk} was retired: a curator took every paper it held "
        "off it, and its papers are on the researchers in 'holders'"
    )
    assert [h["id"] for h in api["holders"]] == [keep.pk]
    client.force_login(curator)
    admin = client.get(f"/admin/wovepaper/researcher/{other.pk}/change/")
    assert "retired (a curator took every paper it held off it)" in (
        admin.content.decode()
    )
    # A move of the review is undone after the retirement, not before.
    with pytest.raises(UndoConflict, match="retired"):
        event_undo(event=linked[-2], actor=curator)
    event_undo(event=retired, actor=curator)
    other.refresh_from_db()
    assert (other.retired, other.orcid) == (False, ORCID)
    event_undo(event=linked[-2], actor=curator)
    assert Authorship.objects.get(pk=papers[-1].pk).researcher_id == other.pk


def test_a_review_may_swap_the_papers_of_two_one_paper_profiles(curator):
    (r1, a1), (r2, a2) = _one_paper_profiles(2)

    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={a1.pk: r2.pk, a2.pk: r1.pk}),
        actor=curator,
    )

    # Retired step by step, the first move emptied r1 and the second,
    # naming it, was refused (a hostile trial).
    assert list(r1.authorships.all()) == [Authorship.objects.get(pk=a2.pk)]
    assert list(r2.authorships.all()) == [Authorship.objects.get(pk=a1.pk)]
    assert Researcher.objects.live().filter(pk__in=[r1.pk, r2.pk]).count() == 2
    assert not CurationEvent.objects.filter(batch=batch, kind="retired").exists()


def test_a_review_may_move_a_paper_off_a_profile_and_merge_that_profile(curator):
    (r1, a1), (r2, a2), (r3, _) = _one_paper_profiles(3)

    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={a1.pk: r3.pk}, merges=[(r1.pk, r2.pk)]),
        actor=curator,
    )

    kinds = list(
        CurationEvent.objects.filter(batch=batch)
        .order_by("pk")
        .values_list("kind", flat=True)
    )
    assert kinds == ["moved", "merged"]
    assert Authorship.objects.get(pk=a1.pk).researcher_id == r3.pk
    # r1, emptied by the move, survives the merge (the lower id) and holds r2's.
    assert Researcher.objects.get(pk=r2.pk).merged_into_id == r1.pk
    assert Authorship.objects.get(pk=a2.pk).researcher_id == r1.pk
    assert Researcher.objects.live().filter(pk=r1.pk).exists()


def test_not_this_person_on_the_last_paper_retires_and_frees_the_orcid(curator):
    researcher = ResearcherFactory(orcid=ORCID)
    only = AuthorshipFactory(researcher=researcher)

    detached = edits.authorship_detach(authorship=only, actor=curator)

    researcher.refresh_from_db()
    assert (researcher.retired, researcher.orcid) == (True, None)
    assert detached.extra["retired"] == [researcher.pk]
    assert profile.retired_because(researcher) == "emptied"
    # Another profile may take the iD now.
    taker = ResearcherFactory()
    edits.researcher_update(researcher=taker, actor=curator, changes={"orcid": ORCID})
    assert Researcher.objects.get(pk=taker.pk).orcid == ORCID
    # Undoing the detach would give the iD back while the taker holds it.
    with pytest.raises(UndoConflict, match=ORCID):
        event_undo(event=detached, actor=curator)


def test_undoing_the_move_that_emptied_a_profile_brings_it_back(curator):
    researcher, only = _one_paper_profiles(1)[0]
    target = ResearcherFactory(block_key=BLOCK)

    moved = edits.authorship_move(authorship=only, to=target, actor=curator)
    assert moved.extra["retired"] == [researcher.pk]
    assert Researcher.objects.get(pk=researcher.pk).retired

    undo = event_undo(event=moved, actor=curator)
    researcher.refresh_from_db()
    assert not researcher.retired
    assert list(researcher.authorships.all()) == [Authorship.objects.get(pk=only.pk)]
    # A redo retires it again, for the same reason.
    event_undo(event=undo, actor=curator)
    researcher.refresh_from_db()
    assert researcher.retired
    assert profile.retired_because(researcher) == "emptied"


def test_a_profile_with_a_pending_claim_or_a_claimant_is_not_retired(curator):
    (asked, a1), (owned, a2) = _one_paper_profiles(2)
    ClaimRequest.objects.create(user=UserFactory(), researcher=asked, orcid=ORCID)
    Researcher.objects.filter(pk=owned.pk).update(claimed_by=UserFactory())
    target = ResearcherFactory(block_key=BLOCK)

    for authorship in (a1, a2):
        moved = edits.authorship_move(authorship=authorship, to=target, actor=curator)
        assert "retired" not in moved.extra

    assert Researcher.objects.live().filter(pk__in=[asked.pk, owned.pk]).count() == 2


def test_an_undone_new_profile_says_so_and_not_emptied(curator):
    keep = _del_maestro(curator)[0]
    created = (
        CurationEvent.objects.filter(
            kind="proposal_applied", fields__has_key=str(keep.pk)
        )
        .order_by("pk")
        .first()
    )
    assert created is not None, "approving the block's new proposal made it"
    event_undo(event=created, actor=curator)
    keep.refresh_from_db()
    assert keep.retired
    assert profile.retired_because(keep) == "undone"


def test_the_block_page_names_the_profiles_its_review_retired(client, curator):
    (r1, a1), (r2, _) = _one_paper_profiles(2)
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])

    response = client.post(url, {f"move-{a1.pk}": str(r2.pk), "then": "stay"})

    assert response.status_code == 302
    shown = client.get(response["Location"]).content.decode()
    assert f"Researcher(s) {r1.pk} held no paper after it and were retired" in shown
    batch = CurationEvent.objects.get(kind="batch")
    assert batch.extra["retired"] == [r1.pk]


def test_not_this_person_in_the_admin_says_the_profile_was_retired(client, curator):
    researcher, only = _one_paper_profiles(1)[0]
    client.force_login(curator)
    url = reverse("admin:wovepaper_researcher_detach", args=[researcher.pk, only.pk])

    response = client.post(url, {"confirm": "yes"}, follow=True)

    assert (
        f"Researcher {researcher.pk} held no other paper and was retired; undoing "
        "this detach in its History brings it back."
    ) in response.content.decode()
    assert Researcher.objects.get(pk=researcher.pk).retired


def _attach_to(researcher: Researcher) -> Proposal:
    proposal = ProposalFactory(researcher=researcher, block_key=BLOCK)
    slot = AuthorshipFactory(given_name="A.", family_name="Maestro")
    proposal.authorships.set([slot])
    return proposal


def test_proposals_naming_a_profile_the_review_retired_go_stale_with_it(
    client, curator
):
    (r1, a1), (r2, _) = _one_paper_profiles(2)
    attach = _attach_to(r1)

    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={a1.pk: r2.pk}),
        actor=curator,
    )

    attach.refresh_from_db()
    assert attach.status == "stale"
    stale = CurationEvent.objects.get(kind="proposal_stale", proposal=attach)
    assert stale.batch_id == batch.pk
    assert stale.extra["reason"] == f"researcher {r1.pk} was retired"
    assert stale.actor == curator  # the review's, not automation's
    assert attach.decided_by == curator
    assert batch.extra["stale_after"] == [attach.pk]
    # The review is in the History of each profile it touched.
    assert batch.researchers == sorted([r1.pk, r2.pk])
    assert batch in researcher_history(researcher_id=r2.pk)
    client.force_login(curator)
    history = client.get(reverse("admin:wovepaper_researcher_history", args=[r2.pk]))
    assert history.status_code == 200
    assert f"/admin/curation/curationevent/{batch.pk}/" in history.content.decode()


def test_approve_the_waiting_ones_passes_over_a_proposal_naming_a_retired_one(
    curator,
):
    (r1, a1), (r2, _) = _one_paper_profiles(2)
    doomed, fine = _attach_to(r1), _attach_to(r2)
    edits.authorship_move(authorship=a1, to=r2, actor=curator)  # retires r1

    # Left pending, it failed every later review of the block (a hostile trial).
    block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(
            decisions={doomed.pk: True, fine.pk: True},
            if_waiting={doomed.pk, fine.pk},
        ),
        actor=curator,
    )

    doomed.refresh_from_db()
    fine.refresh_from_db()
    assert (doomed.status, fine.status) == ("stale", "applied")


def test_each_emptied_profile_is_retired_and_brought_back_alone(curator):
    (r1, a1), (r2, a2), (keep, _) = _one_paper_profiles(3)

    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={a1.pk: keep.pk, a2.pk: keep.pk}),
        actor=curator,
    )

    retired = {
        e.extra["retired"][0]: e
        for e in CurationEvent.objects.filter(batch=batch, kind="retired")
    }
    assert sorted(retired) == [r1.pk, r2.pk]
    move_of_a1 = CurationEvent.objects.get(
        batch=batch, kind="moved", moves__0__authorship=a1.pk
    )
    with pytest.raises(
        UndoConflict,
        match=rf"retired \(by event {retired[r1.pk].pk}, researcher retired\) now",
    ):
        event_undo(event=move_of_a1, actor=curator)
    event_undo(event=retired[r1.pk], actor=curator)
    event_undo(event=move_of_a1, actor=curator)
    # One event for both brought r2 back too, live with no paper, for good.
    assert Researcher.objects.live().filter(pk=r1.pk).exists()
    assert Researcher.objects.get(pk=r2.pk).retired


def test_papers_of_two_profiles_moved_to_a_new_one_whatever_their_ids(curator):
    (only, a1), (other, b1) = _one_paper_profiles(2)
    AuthorshipFactory(researcher=other)
    assert a1.pk < b1.pk  # was refused: the split took every paper of `only`

    block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(
            moves={a1.pk: block_review.NEW, b1.pk: block_review.NEW}
        ),
        actor=curator,
    )

    new = Authorship.objects.get(pk=a1.pk).researcher
    assert new.pk not in (only.pk, other.pk)
    assert Authorship.objects.get(pk=b1.pk).researcher_id == new.pk
    assert Researcher.objects.get(pk=only.pk).retired
    assert Researcher.objects.live().filter(pk=other.pk).exists()


def test_a_redo_does_not_retire_a_profile_someone_asks_to_claim(curator):
    researcher, only = _one_paper_profiles(1)[0]
    moved = edits.authorship_move(
        authorship=only, to=ResearcherFactory(block_key=BLOCK), actor=curator
    )
    undo = event_undo(event=moved, actor=curator)
    claim = ClaimRequest.objects.create(
        user=UserFactory(), researcher=researcher, orcid=ORCID
    )

    with pytest.raises(UndoConflict, match=f"asks to claim it \\(claim {claim.pk}\\)"):
        event_undo(event=undo, actor=curator)
    assert not Researcher.objects.get(pk=researcher.pk).retired


def test_followers_of_a_profile_a_single_move_retires_are_told_so(
    curator, django_capture_on_commit_callbacks
):
    researcher, only = _one_paper_profiles(1)[0]
    fan = UserFactory(email="fan@example.org")
    Follow.objects.create(user=fan, researcher=researcher)

    moved = edits.authorship_move(
        authorship=only, to=ResearcherFactory(block_key=BLOCK), actor=curator
    )
    followers_notify(event_id=moved.pk)

    told = Notification.objects.get(user=fan)
    assert told.subject == f"{researcher.display_name}: profile retired"
    # Undoing the move brings the profile back, and they hear of that too.
    with django_capture_on_commit_callbacks(execute=True):
        undo = event_undo(event=moved, actor=curator)
    back = Notification.objects.get(user=fan, event_id=undo.pk)
    assert back.subject == f"{researcher.display_name}: profile restored"
    assert "The profile is public again" in back.body


def test_an_approved_merge_proposal_makes_what_names_its_loser_stale(curator):
    (r1, _), (r2, _), (_, a3) = _one_paper_profiles(3)
    merge = ProposalFactory(
        kind="merge", researcher=r1, other_researcher=r2, block_key=BLOCK
    )
    attach = _attach_to(r2)

    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(decisions={merge.pk: True}),
        actor=curator,
    )

    attach.refresh_from_db()
    assert attach.status == "stale"
    assert CurationEvent.objects.get(proposal=attach).batch_id == batch.pk
    # Left pending, it failed the next review (a hostile trial).
    block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={a3.pk: r1.pk}),
        actor=curator,
    )
    assert Authorship.objects.get(pk=a3.pk).researcher_id == r1.pk


def test_a_decision_on_a_proposal_naming_a_retired_one_is_passed_over(client, curator):
    (r1, a1), (r2, _), (_, a3) = _one_paper_profiles(3)
    doomed = _attach_to(r1)
    edits.authorship_move(authorship=a1, to=r2, actor=curator)  # retires r1
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])

    response = client.post(
        url,
        {
            f"decision-{doomed.pk}": "reject",
            f"move-{a3.pk}": str(r2.pk),
            "then": "stay",
        },
        follow=True,
    )

    assert Authorship.objects.get(pk=a3.pk).researcher_id == r2.pk
    doomed.refresh_from_db()
    assert doomed.status == "stale"
    batch = CurationEvent.objects.get(kind="batch")
    assert batch.extra["stale_before"] == [doomed.pk]
    assert CurationEvent.objects.get(proposal=doomed).batch_id == batch.pk
    assert (
        f"Proposal(s) {doomed.pk} named a profile merged away or retired since "
        "they were made"
    ) in response.content.decode()


def test_only_dead_proposals_waiting_still_moves_on_to_the_next_block(client, curator):
    (r1, a1), (r2, _) = _one_paper_profiles(2)
    doomed = _attach_to(r1)
    edits.authorship_move(authorship=a1, to=r2, actor=curator)  # retires r1
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])

    response = client.post(
        url, {f"decision-{doomed.pk}": "wait", "then": "approve-next"}
    )

    # Was "decides nothing: ... decided since the page was read", and the
    # proposal stayed pending.
    assert response.status_code == 302
    assert response["Location"] != url
    doomed.refresh_from_db()
    assert doomed.status == "stale"


def test_the_confirmation_pages_say_when_the_last_paper_retires_the_profile(
    client, curator
):
    (lone, only), (pair, first) = _one_paper_profiles(2)
    AuthorshipFactory(researcher=pair)
    client.force_login(curator)
    warning = "last paper"

    def page(name: str, researcher: Researcher, authorship: Authorship) -> str:
        args = [researcher.pk, authorship.pk]
        url = reverse(f"admin:wovepaper_researcher_{name}", args=args)
        return client.get(url).content.decode()

    assert warning in page("detach", lone, only)
    assert warning not in page("detach", pair, first)
    moving = client.post(
        reverse("admin:wovepaper_researcher_move", args=[lone.pk, only.pk]),
        {"to": str(pair.pk)},
    ).content.decode()
    assert warning in moving


def test_rejecting_the_claim_that_kept_an_emptied_profile_retires_it(curator):
    (asked, only), (other, _) = _one_paper_profiles(2)
    claim = ClaimRequest.objects.create(
        user=UserFactory(), researcher=asked, orcid=ORCID
    )
    edits.authorship_move(authorship=only, to=other, actor=curator)
    assert not Researcher.objects.get(pk=asked.pk).retired  # kept for the claim

    claims.claim_reject(claim=claim, actor=curator, reason="not them")

    # Before, it stayed live with no paper for good (a hostile trial).
    asked.refresh_from_db()
    assert asked.retired
    assert profile.retired_because(asked) == "emptied"
    rejected = CurationEvent.objects.get(kind="claim_rejected")
    assert rejected.extra["retired"] == [asked.pk]


def test_followers_hear_when_undoing_a_review_retirement_brings_it_back(
    curator, django_capture_on_commit_callbacks
):
    (r1, a1), (r2, _) = _one_paper_profiles(2)
    fan = UserFactory()
    Follow.objects.create(user=fan, researcher=r1)
    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={a1.pk: r2.pk}),
        actor=curator,
    )
    retired = CurationEvent.objects.get(batch=batch, kind="retired")
    assert not retired.moves

    with django_capture_on_commit_callbacks(execute=True):
        undo = event_undo(event=retired, actor=curator)

    back = Notification.objects.get(user=fan, event_id=undo.pk)
    assert back.subject == f"{r1.display_name}: profile restored"


def test_an_undo_page_says_before_the_click_that_the_undo_would_be_refused(
    client, curator
):
    (r1, a1), (r2, _) = _one_paper_profiles(2)
    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={a1.pk: r2.pk}),
        actor=curator,
    )
    move = CurationEvent.objects.get(batch=batch, kind="moved")
    retired = CurationEvent.objects.get(batch=batch, kind="retired")
    client.force_login(curator)

    def page(event: CurationEvent) -> str:
        url = reverse("admin:curation_curationevent_undo", args=[event.pk])
        return client.get(url).content.decode()

    refused = page(move)
    assert f"retired (by event {retired.pk}, researcher retired) now" in refused
    assert "Yes, undo it" not in refused
    # Trying it changed nothing: the retirement's own undo is offered.
    assert Authorship.objects.get(pk=a1.pk).researcher_id == r2.pk
    assert not CurationEvent.objects.filter(kind="undone").exists()
    outbox = OutboxMessage.objects.count()
    assert "Yes, undo it" in page(retired)
    # Its trial, which would succeed, left nothing either.
    assert not CurationEvent.objects.filter(kind="undone").exists()
    assert OutboxMessage.objects.count() == outbox
    assert Researcher.objects.get(pk=r1.pk).retired
