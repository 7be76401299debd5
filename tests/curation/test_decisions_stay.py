"""Automation never reverts a curator: matching after each direct edit obeys it."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from curation import edits, history, selectors, services
from curation.exceptions import ProposalNotPending, ProposalStale, ResearcherConflict
from curation.models import Constraint, CurationEvent, Proposal
from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db


def _serre_with_coauthor(researcher, n):
    """n papers by Serre with the same co-author: strong evidence of one person."""
    out = []
    for _ in range(n):
        paper = PaperFactory()
        out.append(AuthorshipFactory(paper=paper, researcher=researcher, position=1))
        AuthorshipFactory(
            paper=paper, position=2, given_name="Armand", family_name="Borel"
        )
    return out


def test_detached_authorship_is_never_proposed_for_its_old_researcher():
    r = ResearcherFactory()
    mine = _serre_with_coauthor(r, 3)
    edits.authorship_detach(authorship=mine[0], actor=UserFactory())

    services.matching_run()

    assert not Proposal.objects.filter(
        kind="attach", researcher=r, authorships=mine[0]
    ).exists()
    assert Authorship.objects.get(pk=mine[0].pk).researcher_id is None
    # It still gets a home proposed: a new researcher of its own.
    assert Proposal.objects.filter(kind="new", authorships=mine[0]).exists()


def test_split_researchers_are_never_proposed_for_merging_again():
    r = ResearcherFactory()
    mine = _serre_with_coauthor(r, 4)
    new = edits.researcher_split(
        researcher=r, authorship_ids=[a.pk for a in mine[:2]], actor=UserFactory()
    )

    services.matching_run()

    pair = {r.pk, new.pk}
    assert not [
        p
        for p in Proposal.objects.filter(kind="merge")
        if {p.researcher_id, p.other_researcher_id} == pair
    ]
    assert {
        a.researcher_id for a in Authorship.objects.filter(pk__in=[a.pk for a in mine])
    } == pair


def test_split_off_authorships_are_not_proposed_for_splitting_back():
    r = ResearcherFactory(orcid="0000-0002-1825-0097")
    mine = _serre_with_coauthor(r, 3)
    Authorship.objects.filter(pk=mine[0].pk).update(orcid="0000-0001-5109-3700")
    Authorship.objects.filter(pk=mine[1].pk).update(orcid="0000-0002-1825-0097")
    t = ResearcherFactory()
    edits.authorship_move(authorship=mine[0], to=t, actor=UserFactory())
    edits.authorship_move(authorship=mine[0], to=r, actor=UserFactory())

    services.matching_run()

    # A curator put the other iD's authorship on r: no split proposal moves it off.
    assert not Proposal.objects.filter(kind="split", researcher=r).exists()


ORCID = "0000-0002-1825-0097"


def test_a_detached_authorship_does_not_come_back_as_a_merge():
    """Detach, the authorship becomes a researcher of its own, and its ORCID iD
    (the same as the old researcher's papers) would prove a merge: none is
    proposed, let alone applied by the identifier policy."""
    r = ResearcherFactory(orcid=None)
    mine = _serre_with_coauthor(r, 3)
    Authorship.objects.filter(pk__in=[a.pk for a in mine]).update(orcid=ORCID)
    edits.authorship_detach(authorship=mine[0], actor=UserFactory())
    services.matching_run()  # the detached slot becomes a researcher of its own
    other = Authorship.objects.get(pk=mine[0].pk).researcher
    assert other is not None
    assert other.pk != r.pk

    services.matching_run()
    services.matching_run()

    assert not Proposal.objects.filter(kind="merge").exists()
    assert Authorship.objects.get(pk=mine[0].pk).researcher_id == other.pk
    assert set(Authorship.objects.filter(researcher=r)) == set(mine[1:])


def test_a_detach_from_a_merged_away_researcher_holds_for_its_survivor():
    curator = UserFactory()
    survivor = ResearcherFactory()
    _serre_with_coauthor(survivor, 3)
    loser = ResearcherFactory()
    theirs = _serre_with_coauthor(loser, 2)
    edits.authorship_detach(authorship=theirs[0], actor=curator)
    edits.researcher_merge(researchers=[survivor, loser], actor=curator)

    services.matching_run()

    assert not Proposal.objects.filter(
        kind="attach", researcher=survivor, authorships=theirs[0]
    ).exists()
    assert Authorship.objects.get(pk=theirs[0].pk).researcher_id != survivor.pk
    assert ("a", theirs[0].pk, survivor.pk) in selectors.cannot_links([survivor.pk])


def test_undoing_a_rejection_after_a_merge_takes_back_what_it_forbade():
    """Read through the merge, not copied: the survivor's veto goes with the
    rejection it comes from."""
    curator = UserFactory()
    survivor, loser = ResearcherFactory(), ResearcherFactory()
    _serre_with_coauthor(survivor, 1)
    _serre_with_coauthor(loser, 1)
    slot = AuthorshipFactory(paper=PaperFactory())
    attach = Proposal.objects.create(
        kind="attach", score=0.7, model_version="t", fingerprint="a", researcher=loser
    )
    attach.authorships.set([slot])
    services.proposal_reject(proposal=attach, actor=curator)
    edits.researcher_merge(researchers=[survivor, loser], actor=curator)
    assert ("a", slot.pk, survivor.pk) in selectors.cannot_links([survivor.pk])

    history.event_undo(
        event=CurationEvent.objects.get(kind="proposal_rejected"), actor=curator
    )

    assert ("a", slot.pk, survivor.pk) not in selectors.cannot_links([survivor.pk])


def _three_serres_and_a_merge_of_the_first_and_last():
    """Three researchers of one Serre paper each; a pending merge of r1 and r3."""
    r1, r2, r3 = (ResearcherFactory() for _ in range(3))
    for r in (r1, r2, r3):
        _serre_with_coauthor(r, 1)
    merge = Proposal.objects.create(
        kind="merge",
        score=0.8,
        model_version="t",
        fingerprint="merge-1-3",
        researcher=r1,
        other_researcher=r3,
        researcher_revisions={str(r1.pk): r1.revision, str(r3.pk): r3.revision},
    )
    return r1, r2, r3, merge


def test_a_rejected_merge_holds_for_the_researcher_the_other_side_became():
    curator = UserFactory()
    r1, r2, r3, rejected = _three_serres_and_a_merge_of_the_first_and_last()
    services.proposal_reject(proposal=rejected, actor=curator)
    edits.researcher_merge(researchers=[r2, r3], actor=curator)

    assert ("r", r1.pk, r2.pk) in selectors.cannot_links([r1.pk, r2.pk])
    services.matching_run()
    assert not Proposal.objects.filter(
        kind="merge", status="pending", researcher=r1, other_researcher=r2
    ).exists()


def test_a_detached_slot_with_its_researchers_orcid_waits_for_a_curator():
    """The slot's iD is the researcher's own: the identifier policy must not
    make it a researcher (it could not take the iD), nor go stale every run."""
    r = ResearcherFactory(orcid=ORCID)
    mine = _serre_with_coauthor(r, 3)
    Authorship.objects.filter(pk=mine[0].pk).update(orcid=ORCID)
    edits.authorship_detach(authorship=mine[0], actor=UserFactory())

    for _ in range(3):
        services.matching_run()

    proposals = Proposal.objects.filter(authorships=mine[0])
    assert list(proposals.values_list("kind", "status", "identifier_proven")) == [
        ("new", "pending", False)
    ]
    assert proposals.get().evidence["orcid_held_by"] == [r.pk]
    # A curator who approves it makes a researcher; the iD stays with r.
    services.proposal_apply(proposal=proposals.get(), actor=UserFactory())
    made = Authorship.objects.get(pk=mine[0].pk).researcher
    assert made.pk != r.pk
    assert made.orcid is None
    r.refresh_from_db()
    assert r.orcid == ORCID


def test_a_pending_merge_of_a_researcher_merged_away_goes_stale_in_the_next_run():
    r1, r2, r3, merge = _three_serres_and_a_merge_of_the_first_and_last()
    edits.researcher_merge(researchers=[r2, r3], actor=UserFactory())

    services.matching_run()

    merge.refresh_from_db()
    assert merge.status == "stale"
    assert merge.reason == f"researcher {r3.pk} was merged into {r2.pk}"
    event = CurationEvent.objects.get(kind="proposal_stale", proposal=merge)
    assert event.extra["reason"] == merge.reason
    with pytest.raises(ProposalNotPending, match="no longer fits the data .researcher"):
        services.proposal_apply(proposal=merge, actor=UserFactory())


def _x_li_and_three_namesakes():
    """An "X. Li" researcher of three papers with Borel, and three unassigned
    Li slots, each on a paper with Borel, whose given names cannot be one
    person's; returns the researcher and the slots."""
    r = ResearcherFactory(display_name="X. Li", block_key="li x")
    for _ in range(3):
        paper = PaperFactory()
        AuthorshipFactory(
            paper=paper, researcher=r, given_name="X.", family_name="Li", position=1
        )
        AuthorshipFactory(
            paper=paper, position=2, given_name="Armand", family_name="Borel"
        )
    slots = []
    for given in ("Xue-Qian", "Xiaolin", "Xuebin"):
        paper = PaperFactory()
        slots.append(AuthorshipFactory(paper=paper, given_name=given, family_name="Li"))
        AuthorshipFactory(
            paper=paper, position=2, given_name="Armand", family_name="Borel"
        )
    return r, slots


def test_two_people_are_not_attached_to_one_initials_researcher_in_one_run():
    """ "Xue-Qian", "Xiaolin" and "Xuebin" Li each fit "X. Li" (the real astro-ph
    bylines of the demo); proposed together they would make one profile of
    three people, and no split could follow (each part one paper)."""
    r, slots = _x_li_and_three_namesakes()

    services.matching_run()

    attaches = Proposal.objects.filter(kind="attach", researcher=r)
    assert attaches.count() == 1
    chosen = attaches.get().authorships.get()
    for slot in slots:
        if slot != chosen:
            assert Proposal.objects.filter(kind="new", authorships=slot).exists()
    # Nor in the next run, while the first attach waits for a curator.
    services.matching_run()
    assert attaches.count() == 1


def test_two_clusters_of_one_orcid_in_two_blocks_wait_for_a_curator():
    """ "Serre" and "Sere" fall in two blocks; with one iD on both, the
    identifier policy must not make two researchers of it."""
    for family in ("Serre", "Sere"):
        AuthorshipFactory(
            paper=PaperFactory(),
            given_name="Jean-Pierre",
            family_name=family,
            orcid=ORCID,
        )

    services.matching_run()
    services.matching_run()

    assert not Researcher.objects.exists()
    news = Proposal.objects.filter(kind="new")
    assert list(news.values_list("status", "identifier_proven")) == [
        ("pending", False),
        ("pending", False),
    ]


def _proven_new(slots) -> Proposal:
    """A pending identifier-proven ``new`` proposal of these authorships."""
    new = Proposal.objects.create(
        kind="new",
        score=1.0,
        model_version="t",
        fingerprint="n",
        identifier_proven=True,
    )
    new.authorships.set(slots)
    return new


def test_the_identifier_policy_never_makes_a_researcher_of_a_taken_orcid():
    slot = AuthorshipFactory(paper=PaperFactory(), orcid=ORCID)
    new = _proven_new([slot])
    holder = ResearcherFactory(orcid=ORCID)  # took the iD since

    with pytest.raises(
        ResearcherConflict, match=f"already belongs to researcher {holder.pk}"
    ):
        services.proposal_apply(proposal=new, actor=None)

    new.refresh_from_db()
    assert new.status == "pending"
    assert list(Researcher.objects.all()) == [holder]


def test_sub_blocks_of_a_big_block_share_the_one_person_rule():
    """200 more "X. Y. Li" slots make "li x" a block of sub-blocks: the
    attaches to "X. Li" from each are still held to one person."""
    r, _ = _x_li_and_three_namesakes()
    for _ in range(200):
        AuthorshipFactory(paper=PaperFactory(), given_name="X. Y.", family_name="Li")

    services.matching_run()

    attached = set(
        Authorship.objects.filter(
            proposals__kind="attach", proposals__researcher=r
        ).values_list("given_name", flat=True)
    )
    assert len(attached & {"Xue-Qian", "Xiaolin", "Xuebin"}) <= 1


def _applied_attach(newer, r, curator, **run) -> CurationEvent:
    """Run matching, check it proposes ``newer`` to ``r``, apply that attach;
    the ``proposal_applied`` event."""
    services.matching_run(**run)
    attach = Proposal.objects.get(kind="attach", authorships=newer)
    assert attach.researcher_id == r.pk
    services.proposal_apply(proposal=attach, actor=curator)
    return CurationEvent.objects.get(kind="proposal_applied", proposal=attach)


def test_an_undone_attach_is_offered_elsewhere_and_its_undo_takes_that_back(
    client, curator
):
    # Real S2AND Qian mentions: six "Ping Zhang" of the Beijing University of
    # Posts and Telecommunications on a researcher, a seventh unassigned.
    from tests.curation.test_variant_blocks import (
        _printed,
        _qian_signatures,
        _researcher_of,
    )

    bupt = _printed(_qian_signatures(), "Ping", "Zhang", at="Posts")
    r = _researcher_of(bupt[:6], "Ping Zhang")
    newer = AuthorshipFactory(
        paper=PaperFactory(categories=["cs.IT"], primary_category="cs.IT"),
        given_name=bupt[6]["first"],
        family_name=bupt[6]["last"],
        affiliations=bupt[6]["affiliations"],
    )
    applied = _applied_attach(newer, r, curator, block_keys=[newer.block_key])
    attach = applied.proposal

    # The curator undoes it in the admin, told what the undo forbids.
    client.force_login(curator)
    undo_url = reverse("admin:curation_curationevent_undo", args=[applied.pk])
    confirm = client.get(undo_url).content.decode()
    assert (
        f"Matching will not offer these authorships to researcher #{r.pk} again"
        in confirm
    )
    client.post(undo_url, {"confirm": "yes"})
    undo = CurationEvent.objects.get(kind="undone", undoes=applied)

    (forbid,) = undo.constraints_on
    assert Constraint.objects.filter(
        pk=forbid, kind="cannot_link", authorship=newer, researcher=r, active=True
    ).exists()
    # A harvest's block run and the nightly full run both give the authorship
    # a home again, never r: before the constraint, neither proposed anything.
    services.matching_run(block_keys=[newer.block_key])
    offered = Proposal.objects.get(authorships=newer, status="pending")
    assert offered.kind == "new"
    services.matching_run()
    assert not Proposal.objects.filter(
        authorships=newer, status="pending", researcher=r
    ).exists()
    assert Proposal.objects.get(pk=attach.pk).status == "reverted"

    history.event_undo(event=undo, actor=curator)

    newer.refresh_from_db()
    assert newer.researcher_id == r.pk
    assert not Constraint.objects.get(pk=forbid).active
    assert Proposal.objects.get(pk=attach.pk).status == "applied"
    # The new-person proposal no longer fits an authorship r holds again.
    services.matching_run()
    assert Proposal.objects.get(pk=offered.pk).status != "pending"


def test_the_undo_page_says_nothing_is_forbidden_once_the_attach_moved_on(
    client, curator
):
    older = _serre_with_coauthor(ResearcherFactory(), 2)
    r = Authorship.objects.get(pk=older[0].pk).researcher
    newer = _serre_with_coauthor(None, 1)[0]
    applied = _applied_attach(newer, r, curator)
    client.force_login(curator)
    url = reverse("admin:curation_curationevent_undo", args=[applied.pk])
    assert 'id="undo-forbids"' in client.get(url).content.decode()
    # Undone, the undo's own page says which constraints undoing it retires
    # (the cannot-link) and brings back (the approval's must-link).
    undo = history.event_undo(event=applied, actor=curator)
    again = client.get(
        reverse("admin:curation_curationevent_undo", args=[undo.pk])
    ).content.decode()
    (cannot,) = undo.constraints_on
    (must,) = undo.constraints_off
    assert f"constraint {cannot}: authorship {newer.pk} is not researcher {r.pk}'s" in (
        again.replace("&#x27;", "'")
    )
    assert f"constraint {must}: authorship {newer.pk} is researcher {r.pk}'s" in (
        again.replace("&#x27;", "'")
    )
    # And the undo undone: undoing the attach again is refused, and its page
    # says nothing of what it would forbid.
    history.event_undo(event=undo, actor=curator)
    assert 'id="undo-forbids"' not in client.get(url).content.decode()
    # Moved on by hand since: the undo would be refused, and says no more.
    edits.authorship_move(authorship=newer, to=ResearcherFactory(), actor=curator)
    assert 'id="undo-forbids"' not in client.get(url).content.decode()


def test_a_proven_attach_is_not_applied_once_a_curator_changed_the_id():
    # A locked researcher holds the attach its iD proves back; a curator then
    # corrects the iD (the person's is another) and unlocks it.
    curator = UserFactory()
    r = ResearcherFactory(orcid=ORCID, locked=True)
    _serre_with_coauthor(r, 2)
    slot = AuthorshipFactory(orcid=ORCID)
    services.matching_run()
    proven = Proposal.objects.get(authorships=slot)
    assert (proven.kind, proven.status, proven.identifier_proven) == (
        "attach",
        "pending",
        True,
    )
    assert services.proposal_no_longer_fits(proven) == ""
    edits.researcher_update(
        researcher=r, actor=curator, changes={"orcid": "0000-0001-5109-3700"}
    )
    assert services.proposal_no_longer_fits(proven) == (
        f"researcher {r.pk} carries ORCID iD 0000-0001-5109-3700 now and its "
        f"authorship prints {ORCID}: the iD no longer proves it"
    )
    edits.researcher_set_locked(researcher=r, locked=False, actor=curator)

    services.matching_run()

    proven.refresh_from_db()
    assert proven.status == "stale"
    # Not on r: the run that found it stale proposed it afresh, and the
    # identifier policy gave the iD nobody holds now a researcher of its own.
    holder = Authorship.objects.get(pk=slot.pk).researcher
    assert holder != r
    assert holder.orcid == ORCID
    assert not Proposal.objects.filter(
        authorships=slot, kind="attach", researcher=r, status="pending"
    ).exists()


def test_a_proven_new_goes_stale_once_its_authorships_print_another_id():
    slots = [AuthorshipFactory(orcid=ORCID) for _ in range(2)]
    new = _proven_new(slots)
    assert services.proposal_no_longer_fits(new) == ""
    # A re-harvest printed another iD on one of them.
    Authorship.objects.filter(pk=slots[1].pk).update(orcid="0000-0001-5109-3700")
    assert services.proposal_no_longer_fits(new) == (
        f"authorships {[s.pk for s in slots]} no longer all print the ORCID iD "
        "that proved it"
    )


def test_an_undone_direct_merge_is_not_redone_by_an_id_its_papers_carry():
    # The curator merges a profile with no iD into one whose papers print it;
    # the survivor takes the iD, and the next paper printing it is attached
    # by the identifier policy. Then the curator undoes the merge.
    curator = UserFactory()
    keeper = ResearcherFactory()
    _serre_with_coauthor(keeper, 2)
    with_id = ResearcherFactory(orcid=ORCID)
    for a in _serre_with_coauthor(with_id, 2):
        Authorship.objects.filter(pk=a.pk).update(orcid=ORCID)
    edits.researcher_merge(researchers=[keeper, with_id], actor=curator)
    assert Researcher.objects.get(pk=keeper.pk).orcid == ORCID
    later = AuthorshipFactory(orcid=ORCID)
    services.matching_run()
    assert Authorship.objects.get(pk=later.pk).researcher_id == keeper.pk
    merged = CurationEvent.objects.get(kind="merged")
    assert history.undone_merge_pairs(event=merged) == [(keeper.pk, with_id.pk)]
    history.event_undo(event=merged, actor=curator)
    assert Researcher.objects.get(pk=with_id.pk).orcid == ORCID
    # The keeper still holds the later paper printing the iD: before, the next
    # run proposed merging the two on that iD and applied it at once.
    for _ in range(2):
        services.matching_run()

    assert Researcher.objects.get(pk=with_id.pk).merged_into_id is None
    assert not Proposal.objects.filter(kind="merge").exists()
    undo = CurationEvent.objects.get(kind="undone")
    apart = Constraint.objects.get(event=undo)
    assert (apart.kind, apart.researcher_id, apart.other_researcher_id) == (
        "cannot_link",
        keeper.pk,
        with_id.pk,
    )
    # Undoing the undo merges them again and retires it.
    history.event_undo(event=undo, actor=curator)
    assert Researcher.objects.get(pk=with_id.pk).merged_into_id == keeper.pk
    apart.refresh_from_db()
    assert not apart.active


def test_the_undo_page_of_a_merge_says_the_two_stay_apart(client):
    curator = services.curator_ensure(username="cura", password="pw-cura")
    a, b = ResearcherFactory(), ResearcherFactory()
    _serre_with_coauthor(a, 1)
    _serre_with_coauthor(b, 1)
    edits.researcher_merge(researchers=[a, b], actor=curator)
    merged = CurationEvent.objects.get(kind="merged")
    client.force_login(curator)
    url = reverse("admin:curation_curationevent_undo", args=[merged.pk])
    text = client.get(url).content.decode()
    assert (
        f"Matching will not propose merging researchers {a.pk} and {b.pk} again"
    ) in text
    history.event_undo(event=merged, actor=curator)
    assert "undo-apart" not in client.get(url).content.decode()


def _serre_with(researcher, n, coauthor, category):
    """n papers of one field by Serre with one co-author."""
    out = []
    for _ in range(n):
        paper = PaperFactory(categories=[category], primary_category=category)
        out.append(AuthorshipFactory(paper=paper, researcher=researcher, position=1))
        AuthorshipFactory(paper=paper, position=2, **coauthor)
    return out


BOREL = {"given_name": "Armand", "family_name": "Borel"}
TITS = {"given_name": "Jacques", "family_name": "Tits"}


@pytest.fixture
def pending_before_a_split():
    """A researcher holding two people (Serre with Borel in hep-th, Serre with
    Tits in math.GR), and a new hep-th paper with Borel pending for him."""
    r = ResearcherFactory()
    with_borel = _serre_with(r, 2, BOREL, "hep-th")
    _serre_with(r, 2, TITS, "math.GR")
    (later,) = _serre_with(None, 1, BOREL, "hep-th")
    services.matching_run()
    attach = Proposal.objects.get(authorships=later)
    assert (attach.kind, attach.researcher_id) == ("attach", r.pk)
    return r, with_borel, later, attach


@pytest.mark.usefixtures("default_weights")
def test_a_pending_attach_goes_stale_when_what_matched_it_is_split_off(
    pending_before_a_split,
):
    r, with_borel, later, attach = pending_before_a_split
    curator = UserFactory()
    borel_serre = edits.researcher_split(
        researcher=r, authorship_ids=[a.pk for a in with_borel], actor=curator
    )
    reason = services.proposal_no_longer_fits(attach)
    assert reason.startswith(
        f"authorships were moved off researcher {r.pk} since it was proposed, and "
        "the model in use (default-weights-v8) scores it "
    )
    assert reason.endswith(f"(proposed at {attach.score:.2f})")

    services.matching_run()

    attach.refresh_from_db()
    assert attach.status == "stale"
    assert Authorship.objects.get(pk=later.pk).researcher_id is None
    # The same run proposes it to the researcher the split made.
    again = Proposal.objects.get(authorships=later, status="pending")
    assert (again.kind, again.researcher_id) == ("attach", borel_serre.pk)
    with pytest.raises(ProposalNotPending):
        services.proposal_apply(proposal=attach, actor=curator)


def test_a_pending_attach_stays_when_its_researcher_only_gains_papers(
    pending_before_a_split,
):
    r, _, later, attach = pending_before_a_split
    (other,) = _serre_with(None, 1, TITS, "math.GR")
    services.matching_run()
    second = Proposal.objects.get(authorships=other)
    assert (second.kind, second.researcher_id) == ("attach", r.pk)
    services.proposal_apply(proposal=second, actor=UserFactory())
    assert services.proposal_no_longer_fits(attach) == ""

    services.matching_run()

    attach.refresh_from_db()
    assert attach.status == "pending"


def test_a_pending_attach_goes_stale_when_a_reharvest_prints_another_person(
    pending_before_a_split,
):
    r, _, later, attach = pending_before_a_split
    # The next version prints another given name in that slot (the row
    # rewritten as harvest.services.upsert rewrites it, modified time and all).
    Authorship.objects.filter(pk=later.pk).update(
        given_name="Jacques", raw_name="Jacques Serre", modified=timezone.now()
    )
    said = (
        f"authorship {later.pk} prints 'Jacques Serre' now, a name that cannot be "
        f"the same person's as researcher {r.pk}'s"
    )
    assert services.proposal_no_longer_fits(attach) == said
    with pytest.raises(ProposalStale, match=re.escape(said)):
        services.proposal_apply(proposal=attach, actor=UserFactory())
    assert Authorship.objects.get(pk=later.pk).researcher_id is None


def test_a_full_run_finds_the_attach_a_reharvest_made_another_persons(
    pending_before_a_split,
):
    r, _, later, attach = pending_before_a_split
    Authorship.objects.filter(pk=later.pk).update(
        given_name="Jacques", raw_name="Jacques Serre", modified=timezone.now()
    )

    services.matching_run()

    attach.refresh_from_db()
    assert attach.status == "stale"
    again = Proposal.objects.get(authorships=later, status="pending")
    assert (again.kind, again.researcher_id) == ("new", None)


def test_a_pending_attach_to_a_researcher_emptied_since_goes_stale(
    pending_before_a_split,
):
    r, _, later, attach = pending_before_a_split
    curator = UserFactory()
    other = ResearcherFactory()
    for a in Authorship.objects.filter(researcher=r):
        edits.authorship_move(authorship=a, to=other, actor=curator)
    # A curator's moves that empty a profile retire it (curation.changes).
    assert Researcher.objects.get(pk=r.pk).retired
    said = f"researcher {r.pk} was retired"
    assert services.proposal_no_longer_fits(attach) == said

    services.matching_run()

    attach.refresh_from_db()
    assert attach.status == "stale"
    again = Proposal.objects.get(authorships=later, status="pending")
    assert (again.kind, again.researcher_id) == ("attach", other.pk)


def test_a_pending_attach_to_a_claimed_researcher_emptied_since_no_longer_fits(
    pending_before_a_split,
):
    r, _, _, attach = pending_before_a_split
    Researcher.objects.filter(pk=r.pk).update(claimed_by=UserFactory())
    curator, other = UserFactory(), ResearcherFactory()
    for a in Authorship.objects.filter(researcher=r):
        edits.authorship_move(authorship=a, to=other, actor=curator)
    # A claimed profile is a person's own: emptied, it is not retired.
    assert not Researcher.objects.get(pk=r.pk).retired
    said = (
        f"every authorship of researcher {r.pk} was moved off since it was proposed "
        "(by curation, or by its source dropping them)"
    )
    assert services.proposal_no_longer_fits(attach) == said


def test_a_full_run_finds_the_attach_whose_slot_a_reharvest_deleted(
    pending_before_a_split,
):
    _, _, later, attach = pending_before_a_split
    # The next version no longer prints him: the harvest deletes the row.
    Authorship.objects.filter(pk=later.pk).delete()

    services.matching_run()

    attach.refresh_from_db()
    assert attach.status == "stale"
    assert CurationEvent.objects.get(proposal=attach).extra["reason"] == (
        "its authorships no longer exist"
    )
