"""Review by name block (issue 47, part 2): one page shows a block's profiles
and pending proposals; the review is applied in one transaction linked by one
audit event, or not at all; the queue orders blocks by expected gain."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from curation import block_review, services
from curation.exceptions import CurationError, InvalidChange
from curation.history import event_undo
from curation.models import CurationEvent, Proposal
from harvest.services import harvest_files
from tests.factories import AuthorshipFactory, ResearcherFactory
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db

# Real records of "Adrian Del Maestro" / "A. Del Maestro" and their co-authors.
DEL_MAESTRO = (
    Path(settings.WOVEPAPER_DATA_DIR)
    / "arxiv"
    / "arxivpy_2016_atom"
    / "search_query-au_del_maestro.xml"
)
BLOCK = "maestro a"  # particles are not part of the block key


def _del_maestro(curator) -> list[Researcher]:
    """The real records matched, the block's `new` proposals approved: the
    profiles of the block."""
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    services.matching_run()
    for proposal in Proposal.objects.filter(block_key=BLOCK, status="pending"):
        services.proposal_apply(proposal=proposal, actor=curator)
    return list(Researcher.objects.live().filter(block_key=BLOCK).order_by("pk"))


def test_uncertainty_is_the_binary_entropy():
    assert block_review.uncertainty(0.5) == 1.0
    assert block_review.uncertainty(0.0) == block_review.uncertainty(1.0) == 0.0
    assert 0.0 < block_review.uncertainty(0.99) < block_review.uncertainty(0.9) < 1.0


def test_the_queue_puts_uncertain_papers_first():
    sure = ResearcherFactory(display_name="Ana Ruiz", block_key="ruiz a")
    doubt = ResearcherFactory(display_name="Li Wei", block_key="wei l")
    for n, (researcher, score) in enumerate([(sure, 0.99), (doubt, 0.55)] * 3):
        proposal = Proposal.objects.create(
            kind="attach",
            score=score,
            model_version="t",
            fingerprint=f"q{n}",
            researcher=researcher,
            block_key=researcher.block_key,
        )
        proposal.authorships.set([AuthorshipFactory()])
    queue = block_review.block_queue()
    assert [b.block_key for b in queue] == ["wei l", "ruiz a"]
    assert (queue[0].proposals, queue[0].papers) == (3, 3)
    assert queue[0].gain > queue[1].gain > 0
    assert block_review.next_block("wei l") == "ruiz a"


def test_a_review_moves_merges_and_decides_as_one_undoable_event(curator):
    profiles = _del_maestro(curator)
    assert len(profiles) >= 2, "the real records give the block two profiles"
    keep, other = profiles[0], profiles[1]
    moved = list(other.authorships.order_by("pk")[:1])
    pending = ResearcherFactory(display_name="A. Del Maestro", block_key=BLOCK)
    attach = Proposal.objects.create(
        kind="attach",
        score=0.7,
        model_version="t",
        fingerprint="review-attach",
        researcher=pending,
        block_key=BLOCK,
    )
    attach.authorships.set(
        [AuthorshipFactory(given_name="A.", family_name="Del Maestro")]
    )
    review = block_review.Review(
        decisions={attach.pk: False},
        moves={moved[0].pk: keep.pk},
        merges=[(keep.pk, pending.pk)],
        reason="another A. Del Maestro",
    )

    batch = block_review.review_apply(block_key=BLOCK, review=review, actor=curator)

    linked = CurationEvent.objects.filter(batch=batch).order_by("pk")
    assert [e.kind for e in linked] == ["proposal_rejected", "moved", "merged"]
    assert batch.extra["review"] == BLOCK
    assert batch.extra["done"] == 3
    assert Authorship.objects.get(pk=moved[0].pk).researcher_id == keep.pk
    assert Researcher.objects.get(pk=pending.pk).merged_into_id == keep.pk
    attach.refresh_from_db()
    assert (attach.status, attach.reason) == ("rejected", "another A. Del Maestro")
    # Each change stays undoable on its own: the merge, then the move.
    event_undo(event=linked.get(kind="merged"), actor=curator)
    assert Researcher.objects.get(pk=pending.pk).merged_into_id is None
    event_undo(event=linked.get(kind="moved"), actor=curator)
    assert Authorship.objects.get(pk=moved[0].pk).researcher_id == other.pk


def test_a_review_with_a_failing_step_applies_nothing(curator):
    profiles = _del_maestro(curator)
    keep, other = profiles[0], profiles[1]
    paper = other.authorships.order_by("pk").first()
    # A profile of the block merged away since the page was read: the merge,
    # the last step, is refused after the move succeeded.
    gone = ResearcherFactory(display_name="A. Del Maestro", block_key=BLOCK)
    gone.merged_into = keep
    gone.save(update_fields=["merged_into"])
    events = CurationEvent.objects.count()
    review = block_review.Review(
        moves={paper.pk: keep.pk}, merges=[(other.pk, gone.pk)]
    )
    with pytest.raises(CurationError, match=r"merging researchers"):
        block_review.review_apply(block_key=BLOCK, review=review, actor=curator)
    # Nothing of it stays: no event, not even the batch, and the paper is
    # where it was.
    assert CurationEvent.objects.count() == events
    assert Authorship.objects.get(pk=paper.pk).researcher_id == other.pk


def test_an_empty_review_is_refused(curator):
    with pytest.raises(InvalidChange, match="decides nothing"):
        block_review.review_apply(
            block_key=BLOCK, review=block_review.Review(), actor=curator
        )


def test_papers_moved_to_a_new_profile_become_one(curator):
    profiles = _del_maestro(curator)
    source = max(profiles, key=lambda r: r.authorships.count())
    two = list(source.authorships.order_by("pk")[:2])
    assert source.authorships.count() > 2
    block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(moves={a.pk: block_review.NEW for a in two}),
        actor=curator,
    )
    holders = {Authorship.objects.get(pk=a.pk).researcher_id for a in two}
    assert len(holders) == 1
    assert holders != {source.pk}


def test_the_block_page_shows_the_block_and_applies_a_posted_review(client, curator):
    profiles = _del_maestro(curator)
    keep, other = profiles[0], profiles[1]
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])
    page = client.get(url).content.decode()
    for researcher in profiles:
        assert f'data-researcher="{researcher.pk}"' in page
    assert 'id="apply-next"' in page

    response = client.post(
        url, {"merge-a-1": str(keep.pk), "merge-b-1": str(other.pk), "then": "stay"}
    )
    assert response.status_code == 302
    assert Researcher.objects.get(pk=other.pk).merged_into_id == keep.pk
    batch = CurationEvent.objects.get(kind="batch")
    assert batch.actor == curator
    assert (
        f"audit entry event {batch.pk}"
        in client.get(response["Location"]).content.decode()
    )
    bad = client.post(url, {"decision-1": "maybe"})
    assert bad.status_code == 400


def two_waiting(client, curator) -> tuple[Proposal, Proposal, str]:
    """The real records matched, nothing approved: the block's two pending
    ``new`` proposals and its page's URL, the curator signed in."""
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    services.matching_run()
    first, second = Proposal.objects.filter(block_key=BLOCK, status="pending").order_by(
        "pk"
    )
    client.force_login(curator)
    return first, second, reverse("admin:curation_proposal_block", args=[BLOCK])


def test_approve_the_waiting_ones_approves_what_the_page_showed_waiting(
    client, curator
):
    first, second, url = two_waiting(client, curator)
    assert 'id="approve-next"' in client.get(url).content.decode()

    # The second was not on the page (it came after it was read): it waits.
    response = client.post(
        url, {f"decision-{first.pk}": "wait", "then": "approve-next"}
    )
    assert response.status_code == 302
    assert Proposal.objects.get(pk=first.pk).status == "applied"
    assert Proposal.objects.get(pk=second.pk).status == "pending"
    assert response["Location"] != url  # on to the next block, or the queue

    client.post(url, {f"decision-{second.pk}": "reject", "then": "approve-next"})
    assert Proposal.objects.get(pk=second.pk).status == "rejected"
    assert 'id="approve-next"' not in client.get(url).content.decode()


def test_profiles_ticked_one_person_are_merged_in_one_review(client, curator):
    profiles = _del_maestro(curator)
    third = ResearcherFactory(display_name="A. Del Maestro", block_key=BLOCK)
    ids = sorted([profiles[0].pk, profiles[1].pk, third.pk])
    client.force_login(curator)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])
    assert client.get(url).content.decode().count('name="one-person"') == 3

    alone = client.post(url, {"one-person": [str(ids[0])], "then": "stay"})
    assert alone.status_code == 400
    forged = client.post(url, {"one-person": [str(ids[0]), "0" + str(ids[1])]})
    assert forged.status_code == 400
    assert Researcher.objects.live().filter(pk__in=ids).count() == 3

    response = client.post(url, {"one-person": [str(pk) for pk in ids], "then": "stay"})
    assert response.status_code == 302
    assert [r.merged_into_id for r in Researcher.objects.filter(pk__in=ids[1:])] == [
        ids[0],
        ids[0],
    ]
    batch = CurationEvent.objects.get(kind="batch")
    assert batch.extra["merges"] == [[ids[0], ids[1]], [ids[0], ids[2]]]
    assert CurationEvent.objects.filter(batch=batch, kind="merged").count() == 2


def test_the_block_page_needs_the_decide_permission_to_apply(client, curator):
    from tests.factories import UserFactory

    profiles = _del_maestro(curator)
    viewer = UserFactory(is_staff=True)
    client.force_login(viewer)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])
    assert client.get(url).status_code == 403
    response = client.post(
        url,
        {"merge-a-1": str(profiles[0].pk), "merge-b-1": str(profiles[1].pk)},
    )
    assert response.status_code == 403
    assert Researcher.objects.get(pk=profiles[1].pk).merged_into_id is None


def test_approve_and_next_goes_to_the_next_proposal_in_queue_order(client, curator):
    researcher = ResearcherFactory()
    first, second = (
        Proposal.objects.create(
            kind="attach",
            score=score,
            model_version="t",
            fingerprint=f"next-{score}",
            researcher=researcher,
        )
        for score in (0.61, 0.9)
    )
    for proposal in (first, second):
        proposal.authorships.set([AuthorshipFactory()])
    client.force_login(curator)
    page = client.get(reverse("admin:curation_proposal_change", args=[first.pk]))
    assert 'id="approve-next"' in page.content.decode()

    response = client.post(
        reverse("admin:curation_proposal_decide", args=[first.pk]),
        {"decision": "approve", "then": "next"},
    )
    assert response["Location"] == reverse(
        "admin:curation_proposal_change", args=[second.pk]
    )
    response = client.post(
        reverse("admin:curation_proposal_decide", args=[second.pk]),
        {"decision": "reject", "then": "next"},
    )
    assert response["Location"] == reverse("admin:curation_proposal_changelist")
    assert set(Proposal.objects.values_list("status", flat=True)) == {
        "applied",
        "rejected",
    }


def test_the_queue_page_lists_blocks_and_is_linked_from_the_proposals(client, curator):
    _del_maestro(curator)
    researcher = Researcher.objects.live().filter(block_key=BLOCK).first()
    proposal = Proposal.objects.create(
        kind="attach",
        score=0.6,
        model_version="t",
        fingerprint="queue-page",
        researcher=researcher,
        block_key=BLOCK,
    )
    proposal.authorships.set([AuthorshipFactory()])
    client.force_login(curator)
    listing = client.get(
        reverse("admin:curation_proposal_changelist"), {"status__exact": "pending"}
    ).content.decode()
    assert reverse("admin:curation_proposal_blocks") in listing
    page = client.get(reverse("admin:curation_proposal_blocks")).content.decode()
    assert reverse("admin:curation_proposal_block", args=[BLOCK]) in page


def test_a_merged_away_profile_redirects_without_being_cached(client, curator):
    """An undo can end a merge: the 301 of the merged-away profile tells
    browsers and clients to ask again (Chromium kept the redirect after an
    undo before)."""
    profiles = _del_maestro(curator)
    block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(merges=[(profiles[0].pk, profiles[1].pk)]),
        actor=curator,
    )
    gone = profiles[1].pk
    for url in (
        f"/researchers/{gone}",
        f"/researchers/{gone}/coauthors.json",
        f"/api/researchers/{gone}/",
    ):
        response = client.get(url)
        assert response.status_code == 301, url
        assert response["Cache-Control"] == "no-cache", url


# --- what a hostile trial tried ---------------------------------------------


def test_a_review_naming_another_blocks_things_is_refused(curator):
    profiles = _del_maestro(curator)
    other = ResearcherFactory(display_name="Ji-Woo Lee", block_key="lee j")
    elsewhere = AuthorshipFactory(
        given_name="Ji-Woo", family_name="Lee", researcher=other
    )
    foreign = Proposal.objects.create(
        kind="attach",
        score=0.8,
        model_version="t",
        fingerprint="foreign",
        researcher=other,
        block_key="lee j",
    )
    foreign.authorships.set([AuthorshipFactory(given_name="J.", family_name="Lee")])
    events = CurationEvent.objects.count()
    for review, message in (
        (block_review.Review(decisions={foreign.pk: True}), "is in block 'lee j'"),
        (
            block_review.Review(moves={elsewhere.pk: profiles[0].pk}),
            f"authorship {elsewhere.pk} is on researcher {other.pk} of block",
        ),
        (
            block_review.Review(merges=[(profiles[0].pk, other.pk)]),
            f"researcher {other.pk} is in block 'lee j'",
        ),
        (block_review.Review(decisions={10**12: True}), "does not exist"),
        (
            block_review.Review(moves={profiles[0].authorships.first().pk: 10**12}),
            f"researcher {10**12} does not exist",
        ),
    ):
        with pytest.raises(InvalidChange, match=message):
            block_review.review_apply(block_key=BLOCK, review=review, actor=curator)
    assert CurationEvent.objects.count() == events
    foreign.refresh_from_db()
    assert foreign.status == "pending"
    assert Researcher.objects.get(pk=other.pk).merged_into_id is None


def test_a_side_merged_away_before_the_review_is_refused(curator):
    profiles = _del_maestro(curator)
    third = ResearcherFactory(display_name="A. Del Maestro", block_key=BLOCK)
    from curation import edits

    edits.researcher_merge(researchers=[profiles[0], profiles[1]], actor=curator)
    with pytest.raises(CurationError, match=r"merging researchers"):
        block_review.review_apply(
            block_key=BLOCK,
            review=block_review.Review(merges=[(profiles[1].pk, third.pk)]),
            actor=curator,
        )
    assert Researcher.objects.get(pk=third.pk).merged_into_id is None


def test_merges_in_a_row_within_one_review_are_one_person(curator):
    profiles = _del_maestro(curator)
    third = ResearcherFactory(display_name="A. Del Maestro", block_key=BLOCK)
    a, b = profiles[0].pk, profiles[1].pk
    block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(merges=[(a, b), (b, third.pk)]),
        actor=curator,
    )
    assert Researcher.objects.live().filter(pk__in=[a, b, third.pk]).count() == 1


def test_the_page_asks_for_each_changes_own_permission(client, curator):
    from django.contrib.auth.models import Permission

    from tests.factories import UserFactory

    profiles = _del_maestro(curator)
    decider = UserFactory(is_staff=True)
    decider.user_permissions.set(
        Permission.objects.filter(
            codename__in=["view_proposal", "decide_proposal"],
            content_type__app_label="curation",
        )
    )
    client.force_login(decider)
    url = reverse("admin:curation_proposal_block", args=[BLOCK])
    assert client.get(url).status_code == 200
    merge = {"merge-a-1": str(profiles[0].pk), "merge-b-1": str(profiles[1].pk)}
    assert client.post(url, merge).status_code == 403
    paper = profiles[1].authorships.first()
    assert client.post(url, {f"move-{paper.pk}": "new"}).status_code == 403
    assert Researcher.objects.get(pk=profiles[1].pk).merged_into_id is None
    client.force_login(curator)
    twice = client.post(url, {f"move-{paper.pk}": [str(profiles[0].pk), "new"]})
    assert twice.status_code == 400
    response = client.post(url, {"decision-999999999999": "approve", "then": "stay"})
    assert response.status_code == 302
    assert "does not exist" in client.get(url).content.decode()


def test_a_curators_merge_checks_every_paper_of_the_survivor(client, curator):
    profiles = _del_maestro(curator)
    block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(merges=[(profiles[0].pk, profiles[1].pk)]),
        actor=curator,
    )
    survivor = min(profiles[0].pk, profiles[1].pk)
    api = client.get(f"/api/researchers/{survivor}/").json()
    assert api["placement"] == "checked by a curator"
    assert api["checked_paper_count"] == api["paper_count"] > 0
