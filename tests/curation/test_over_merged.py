"""Over-merged researchers become split proposals: disjoint groups, papers a year.

The real cases: the "L. Zhang" of two LHCb papers (hep-ex) put on one researcher
with the chemist "Li Zhang" and the cs.SE author "Lingming Zhang" (the mistake
test_hyperauthorship.py guards against), and "I. Grabec", one real person whose
seven 2007 papers fall into two groups (physics.data-an, and cs.NE/cs.AI with a
co-author) that share no category and no co-author.
"""

from __future__ import annotations

import datetime as dt

import pytest

from curation import edits, names, selectors, services
from curation.history import event_undo
from curation.matching import overmerge, pipeline
from curation.matching.features import AuthorshipView
from curation.models import Constraint, CurationEvent, Proposal
from curation.proposing import orcid_checks
from harvest import services as harvest
from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper.models import Authorship

# Inputs built around the hand-set default weights' scores: the rules are
# under test here, not the model (tests/conftest.py, default_weights).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("default_weights")]

ABS = "abs_files/ftp/arxiv/papers"
ZHANG_FILES = (
    "1411/1411.4413.abs",  # LHCb, 2,831 authors
    "2103/2103.11058.abs",  # LHCb, 969 authors
    "0704/0704.0113.abs",  # Li Zhang, Stanford chemistry
)
CASSETTE = "arxivpy_cassettes/q_testing_s0_m100_cfe7536492ca.json"  # Lingming Zhang
GRABEC = ("0047", "0050", "0089", "0107", "0151", "0162", "0611")


def _over_merged(rows, name):
    given, family = name.split(" ", 1)
    researcher = ResearcherFactory(
        display_name=name, block_key=names.block_key(given, family)
    )
    Authorship.objects.filter(pk__in=[a.pk for a in rows]).update(researcher=researcher)
    return researcher


def _zhang(arxiv_dir):
    for path in ZHANG_FILES:
        harvest.harvest_arxiv_files(root=arxiv_dir / ABS / path)
    harvest.harvest_arxiv_files(root=arxiv_dir / CASSETTE)
    rows = list(
        Authorship.objects.filter(name_key="zhang|l", is_collaboration=False).order_by(
            "id"
        )
    )
    lhcb = [a for a in rows if a.paper.arxiv_id in ("1411.4413", "2103.11058")]
    others = [a for a in rows if a not in lhcb]
    assert len(lhcb) == 2
    assert {a.given_name for a in others} == {"Li", "Lingming"}
    return _over_merged(rows, "Lingming Zhang"), lhcb, others


def _grabec(arxiv_dir):
    for n in GRABEC:
        harvest.harvest_arxiv_files(root=arxiv_dir / ABS / f"0704/0704.{n}.abs")
    rows = list(Authorship.objects.filter(family_name="Grabec"))
    assert len(rows) == 7
    return _over_merged(rows, "I. Grabec"), rows


def _ids(rows):
    return sorted(a.pk for a in rows)


def test_lhcb_papers_on_a_cs_researcher_are_proposed_to_split_off(arxiv_dir):
    researcher, lhcb, others = _zhang(arxiv_dir)

    services.matching_run()

    split = Proposal.objects.get(kind="split", researcher=researcher)
    assert _ids(split.authorships.all()) == _ids(lhcb)
    assert split.evidence["flag"].startswith(overmerge.DISJOINT)
    assert "hep-ex" in split.evidence["flag"]
    assert 0.5 < split.score < 1.0
    assert not split.identifier_proven
    assert split.status == "pending"

    services.proposal_apply(proposal=split, actor=UserFactory())
    split.refresh_from_db()
    assert _ids(Authorship.objects.filter(researcher=researcher)) == _ids(others)
    assert _ids(Authorship.objects.filter(researcher=split.other_researcher)) == _ids(
        lhcb
    )
    services.matching_run()
    assert Proposal.objects.filter(kind="split", status="pending").count() == 0


def test_curator_confirmed_authorships_stay_and_decide_which_part_stays(arxiv_dir):
    researcher, lhcb, others = _zhang(arxiv_dir)
    Authorship.objects.filter(pk__in=_ids(lhcb)).update(researcher=None)
    curator = UserFactory()
    for a in lhcb:  # a curator says these are the researcher's
        edits.authorship_move(authorship=a, to=researcher, actor=curator)
    assert Constraint.objects.filter(kind="must_link", researcher=researcher).count()

    services.matching_run()

    split = Proposal.objects.get(kind="split", researcher=researcher)
    assert _ids(split.authorships.all()) == _ids(others)


def test_a_rejected_split_confirms_the_whole_profile(arxiv_dir):
    researcher, rows = _grabec(arxiv_dir)
    services.matching_run()
    split = Proposal.objects.get(kind="split", researcher=researcher)
    moving = {a.paper.arxiv_id for a in split.authorships.all()}
    assert moving == {"0704.0047", "0704.0050"}  # the cs.NE/cs.AI pair

    services.proposal_reject(proposal=split, actor=UserFactory(), reason="one man")
    # Every authorship is now confirmed on him: neither part is proposed to move,
    # not even when the rejected proposal's fingerprint no longer matches.
    assert Constraint.objects.filter(
        kind="must_link", researcher=researcher, active=True
    ).count() == len(rows)
    Proposal.objects.filter(pk=split.pk).update(fingerprint="forgotten")
    services.matching_run()
    services.matching_run(block_keys=["grabec i"])
    assert not Proposal.objects.filter(kind="split", status="pending").exists()


def test_a_locked_researcher_gets_no_split_proposal(arxiv_dir):
    researcher, _ = _grabec(arxiv_dir)
    edits.researcher_set_locked(researcher=researcher, locked=True, actor=UserFactory())
    services.matching_run()
    assert not Proposal.objects.filter(kind="split").exists()
    edits.researcher_set_locked(
        researcher=researcher, locked=False, actor=UserFactory()
    )
    services.matching_run()
    assert Proposal.objects.filter(kind="split", researcher=researcher).exists()


def test_a_cluster_approved_wholesale_can_still_be_split(arxiv_dir):
    """Approving a `new` cluster confirms no authorship one by one."""
    for n in GRABEC:
        harvest.harvest_arxiv_files(root=arxiv_dir / ABS / f"0704/0704.{n}.abs")
    rows = list(Authorship.objects.filter(family_name="Grabec"))
    proposal = Proposal.objects.create(
        kind="new",
        score=0.9,
        evidence={},
        model_version="test",
        fingerprint="grabec-cluster",
    )
    proposal.authorships.set(rows)
    services.proposal_apply(proposal=proposal, actor=UserFactory())
    researcher = Authorship.objects.get(pk=rows[0].pk).researcher
    assert Constraint.objects.filter(kind="must_link", researcher=researcher).count()

    services.matching_run()

    split = Proposal.objects.get(kind="split", researcher=researcher)
    assert {a.paper.arxiv_id for a in split.authorships.all()} == {
        "0704.0047",
        "0704.0050",
    }


def test_approving_one_split_leaves_the_others_applicable():
    """Three groups: two splits; applying one must not leave the other stale."""
    researcher = ResearcherFactory(display_name="I. Grabec", block_key="grabec i")
    for group in range(3):
        for _ in range(2 + group):
            AuthorshipFactory(
                paper=PaperFactory(categories=[f"cat{group}"]),
                given_name="I.",
                family_name="Grabec",
                researcher=researcher,
            )
    services.matching_run()
    first, second = Proposal.objects.filter(kind="split").order_by("pk")
    services.proposal_apply(proposal=first, actor=UserFactory())

    services.matching_run()
    second.refresh_from_db()
    services.proposal_apply(proposal=second, actor=UserFactory())
    second.refresh_from_db()
    assert second.status == "applied"
    assert Authorship.objects.filter(researcher=researcher).count() == 4


def test_a_reclustering_is_not_repeated_while_the_researcher_is_unchanged(
    monkeypatch,
):
    researcher = ResearcherFactory(display_name="J. Smith", block_key="smith j")
    for n in range(80):
        AuthorshipFactory(
            paper=PaperFactory(published=dt.date(2021, 1 + n % 12, 1)),
            given_name="John" if n < 40 else "Jane",
            family_name="Smith",
            researcher=researcher,
        )
    calls = []
    real = pipeline.cluster_authorships
    monkeypatch.setattr(
        pipeline,
        "cluster_authorships",
        lambda views, **kw: calls.append(len(views)) or real(views, **kw),
    )
    services.matching_run(block_keys=["smith j"])
    services.matching_run(block_keys=["smith j"])
    services.matching_run()
    assert calls == [80]


def test_a_researcher_whose_parts_the_model_calls_one_person_is_left_alone(
    arxiv_dir, settings
):
    researcher, _ = _grabec(arxiv_dir)
    # "I." and "I." in fields that share no arXiv archive (cs against
    # physics): about 0.10, field_conflict weighing against the name.
    settings.CURATION_ATTACH_THRESHOLD = 0.08
    services.matching_run()
    assert not Proposal.objects.filter(kind="split", researcher=researcher).exists()


def _view(n: int, year: int, authors: int = 5) -> AuthorshipView:
    return AuthorshipView(
        id=n,
        paper_id=n,
        given="J.",
        family="Smith",
        block_key="smith j",
        year=year,
        authors=authors,
    )


def test_more_than_72_papers_in_a_year_outside_collaborations_is_suspect():
    busy = [_view(n, 2021) for n in range(73)] + [_view(100, 2020)]
    assert overmerge.busiest_year(busy) == (2021, 73)
    assert overmerge.suspect(busy).flag == overmerge.PAPERS_PER_YEAR
    assert "73 papers in 2021" in overmerge.suspect(busy).detail

    assert overmerge.suspect(busy[1:]) is None  # 72 is prolific, not implausible
    collaboration = [_view(n, 2021, authors=3000) for n in range(200)]
    assert overmerge.busiest_year(collaboration) == (None, 0)
    assert overmerge.suspect(collaboration) is None


def test_too_many_papers_a_year_are_reclustered_into_the_people_they_hold():
    """Two people, "John Smith" and "Jane Smith", 40 and 45 papers in 2021."""
    researcher = ResearcherFactory(display_name="J. Smith", block_key="smith j")
    for n in range(85):
        given = "John" if n < 40 else "Jane"
        AuthorshipFactory(
            paper=PaperFactory(published=dt.date(2021, 1 + n % 12, 1)),
            given_name=given,
            family_name="Smith",
            researcher=researcher,
        )

    services.matching_run()

    split = Proposal.objects.get(kind="split", researcher=researcher)
    assert split.evidence["flag"].startswith(overmerge.PAPERS_PER_YEAR)
    moving = set(split.authorships.values_list("given_name", flat=True))
    assert moving == {"John"}  # the smaller part moves
    assert split.authorships.count() == 40


def _wei_and_wen(display_name: str):
    """One 2021 profile of 40 "Wei", 28 "Wen" and 17 "W." Wang; its split."""
    researcher = ResearcherFactory(display_name=display_name, block_key="wang w")
    for n in range(85):
        AuthorshipFactory(
            paper=PaperFactory(published=dt.date(2021, 1 + n % 12, 1)),
            given_name="Wei" if n < 40 else "Wen" if n < 68 else "W.",
            family_name="Wang",
            researcher=researcher,
        )
    services.matching_run()
    split = Proposal.objects.get(kind="split", researcher=researcher)
    return (
        researcher,
        split,
        set(split.authorships.values_list("given_name", flat=True)),
    )


def test_two_people_sharing_bare_initials_are_still_split_apart():
    """ "Wei" and "Wen" Wang in one profile, with "W." mentions that fit both."""
    _, split, moving = _wei_and_wen("Wei Wang")
    assert "Wen" in moving
    assert "Wei" not in moving
    assert split.score == 0.99
    assert "cannot be one person" in split.evidence["flag"]


def test_the_part_printing_the_display_name_stays_though_it_is_smaller():
    """The same profile named "Wen Wang": the bigger "Wei" part moves off, so
    the profile, its URL and its followers stay with the person it names."""
    researcher, split, moving = _wei_and_wen("Wen Wang")
    assert "Wei" in moving
    assert "Wen" not in moving
    services.proposal_apply(proposal=split, actor=UserFactory())
    researcher.refresh_from_db()
    assert researcher.display_name == "Wen Wang"
    split.refresh_from_db()
    assert split.other_researcher.display_name == "Wei Wang"


def _grabec_profiles(arxiv_dir, *groups: tuple[str, ...], later=()):
    """Grabec's seven real papers on several researchers, as a curator finds
    them before merging: one researcher a group of ``0704.NNNN`` numbers (made
    in that order, so the first survives a merge). The cs.NE/cs.AI pair is
    0047 and 0050; ``later`` are harvested by the test.

    Returns:
        The researchers, in ``groups`` order.
    """
    for n in GRABEC:
        if n not in later:
            harvest.harvest_arxiv_files(root=arxiv_dir / ABS / f"0704/0704.{n}.abs")
    rows = {
        a.paper.arxiv_id[5:]: a for a in Authorship.objects.filter(family_name="Grabec")
    }
    return [_over_merged([rows[n] for n in group], "I. Grabec") for group in groups]


CS = ("0047", "0050")
PHYSICS = ("0089", "0107", "0151", "0162", "0611")


def _merge_proposal(survivor, other, tag="grabec") -> Proposal:
    return Proposal.objects.create(
        kind="merge",
        score=0.9,
        evidence={},
        model_version="test",
        fingerprint=f"{tag}-merge",
        researcher=survivor,
        other_researcher=other,
    )


def _split_moves(researcher) -> set[str]:
    return {
        a.paper.arxiv_id[5:]
        for p in Proposal.objects.filter(
            kind="split", researcher=researcher, status="pending"
        )
        for a in p.authorships.all()
    }


@pytest.mark.parametrize("groups", [(PHYSICS, CS), (CS, PHYSICS)])
def test_a_curators_merge_is_not_proposed_for_splitting_again(arxiv_dir, groups):
    """Stop-43 hostile trial: a curator merged two profiles in the admin, and
    the next match proposed splitting them again on the papers the curator saw
    joined. Either side may be the one a split would move: the merged-away
    researcher's (the event's moves) or the survivor's (``extra["kept"]``)."""
    survivor, other = _grabec_profiles(arxiv_dir, *groups)
    edits.researcher_merge(researchers=[survivor, other], actor=UserFactory())

    services.matching_run()

    assert _split_moves(survivor) == set()
    assert Authorship.objects.filter(researcher=survivor).count() == 7


@pytest.mark.parametrize("at_once", [True, False])
def test_three_profiles_merged_at_once_or_in_a_row_stay_together(arxiv_dir, at_once):
    """Hostile re-trial: with three sides, the moving part held two of them
    (the cs pair and two physics papers against the other three), so it lay on
    no one side and was proposed. In a row: the first merge joins 0047 alone
    to three physics papers, the second brings 0050 with the other two."""
    curator = UserFactory()
    if at_once:
        a, b, c = _grabec_profiles(arxiv_dir, PHYSICS[:3], PHYSICS[3:], CS)
        edits.researcher_merge(researchers=[a, b, c], actor=curator)
    else:
        a, b, c = _grabec_profiles(arxiv_dir, PHYSICS[:3], CS[:1], CS[1:] + PHYSICS[3:])
        edits.researcher_merge(researchers=[a, b], actor=curator)
        edits.researcher_merge(researchers=[a, c], actor=curator)

    services.matching_run()

    assert _split_moves(a) == set()
    assert Authorship.objects.filter(researcher=a).count() == 7


def test_a_merge_proposal_approved_on_its_own_is_not_split_again(arxiv_dir):
    """Approved alone, or as the only proposal a bulk action approved."""
    survivor, other = _grabec_profiles(arxiv_dir, PHYSICS, CS)
    services.proposal_apply(
        proposal=_merge_proposal(survivor, other), actor=UserFactory()
    )
    services.matching_run()
    assert _split_moves(survivor) == set()

    survivor, other = _grabec_profiles(arxiv_dir, PHYSICS, CS)
    _, done, _ = services.proposals_decide(
        proposals=[_merge_proposal(survivor, other, "alone")],
        approve=True,
        actor=UserFactory(),
    )
    assert done == 1
    services.matching_run()
    assert _split_moves(survivor) == set()


def test_merges_approved_in_bulk_with_others_can_still_be_split(arxiv_dir):
    """A bulk action's merges are what a split proposal must still catch."""
    survivor, other = _grabec_profiles(arxiv_dir, PHYSICS, CS)
    x, y = ResearcherFactory(), ResearcherFactory()
    _, done, skipped = services.proposals_decide(
        proposals=[_merge_proposal(survivor, other), _merge_proposal(x, y, "xy")],
        approve=True,
        actor=UserFactory(),
    )
    assert (done, skipped) == (2, [])

    services.matching_run()

    assert _split_moves(survivor) == set(CS)


def test_an_undone_merge_vouches_for_nothing(arxiv_dir):
    survivor, other = _grabec_profiles(arxiv_dir, PHYSICS, CS)
    curator = UserFactory()
    edits.researcher_merge(researchers=[survivor, other], actor=curator)
    event = CurationEvent.objects.get(kind="merged")
    assert len(event.extra["kept"]) == 5
    event_undo(event=event, actor=curator)
    # Apart again, a mistake puts them together without a curator (as a
    # harvest-era attach would).
    Authorship.objects.filter(researcher=other).update(researcher=survivor)

    services.matching_run()

    assert _split_moves(survivor) == set(CS)


def test_papers_that_came_after_the_merge_may_still_be_split_off(arxiv_dir):
    """The cs.NE/cs.AI pair arrives after the curator merged two physics
    profiles, and is put on the merged profile: no curator saw it joined."""
    survivor, other = _grabec_profiles(arxiv_dir, PHYSICS[:3], PHYSICS[3:], later=CS)
    edits.researcher_merge(researchers=[survivor, other], actor=UserFactory())
    for n in CS:
        harvest.harvest_arxiv_files(root=arxiv_dir / ABS / f"0704/0704.{n}.abs")
    Authorship.objects.filter(family_name="Grabec", researcher=None).update(
        researcher=survivor
    )

    services.matching_run()

    assert _split_moves(survivor) == set(CS)


def _merged_then_cs_moved_away(arxiv_dir, curator, *groups):
    """Grabec's profiles (``groups``) merged by hand, then the cs pair moved
    to another "I. Grabec" by a curator: ``(survivor, cs rows, that one)``."""
    survivor, other = _grabec_profiles(arxiv_dir, *groups)
    edits.researcher_merge(researchers=[survivor, other], actor=curator)
    cs = list(
        Authorship.objects.filter(
            family_name="Grabec", paper__arxiv_id__in=[f"0704.{n}" for n in CS]
        )
    )
    elsewhere = ResearcherFactory(display_name="I. Grabec", block_key="grabec i")
    _move_all(cs, elsewhere, curator)
    return survivor, cs, elsewhere


def _move_all(rows, to, curator):
    for a in Authorship.objects.filter(pk__in=[r.pk for r in rows]):
        edits.authorship_move(authorship=a, to=to, actor=curator)


def test_a_curators_moves_away_and_back_keep_the_merge(arxiv_dir):
    """Hostile re-trial: the cs pair moved to another researcher and back by
    hand retired the merge's must-links, so the merge was no longer found and
    the physics papers were proposed to split off the cs pair."""
    curator = UserFactory()
    survivor, cs, _ = _merged_then_cs_moved_away(arxiv_dir, curator, PHYSICS, CS)
    _move_all(cs, survivor, curator)

    services.matching_run()

    assert _split_moves(survivor) == set()


def test_papers_moved_away_by_a_curator_and_back_in_bulk_are_not_held(arxiv_dir):
    """Hostile re-trial: the cs pair, merged by hand with two physics papers,
    then moved away by a curator, came back with a merge approved in bulk with
    another; the first merge still held it (its sides were a snapshot, and
    the two physics papers kept it found)."""
    curator = UserFactory()
    survivor, _, elsewhere = _merged_then_cs_moved_away(
        arxiv_dir, curator, PHYSICS[:3], CS + PHYSICS[3:]
    )
    x, y = ResearcherFactory(), ResearcherFactory()
    _, done, _ = services.proposals_decide(
        proposals=[_merge_proposal(survivor, elsewhere), _merge_proposal(x, y, "xy")],
        approve=True,
        actor=curator,
    )
    assert done == 2

    services.matching_run()

    assert _split_moves(survivor) == set(CS)


def test_a_bulk_action_that_skipped_one_of_two_merges_vouches_for_none(arxiv_dir):
    survivor, other = _grabec_profiles(arxiv_dir, PHYSICS, CS)
    decided = _merge_proposal(*ResearcherFactory.create_batch(2), tag="decided")
    Proposal.objects.filter(pk=decided.pk).update(status="rejected")
    _, done, skipped = services.proposals_decide(
        proposals=[_merge_proposal(survivor, other), decided],
        approve=True,
        actor=UserFactory(),
    )
    assert (done, len(skipped)) == (1, 1)

    services.matching_run()

    assert _split_moves(survivor) == set(CS)


def test_later_papers_are_scored_against_everything_that_stays():
    """Hostile re-trial: Bourjaily and Ghisellini merged by hand, and two
    later papers of Ghisellini's came in: they were scored against
    Bourjaily's part alone, not with the held papers of their own person
    that stay too, and proposed to split off as names that cannot be one
    person's (0.99). Here "Igor" and "Ivan" Grabec, in fields apart."""
    curator = UserFactory()
    a = ResearcherFactory(display_name="Igor Grabec", block_key="grabec i")
    b = ResearcherFactory(display_name="Ivan Grabec", block_key="grabec i")

    def papers(researcher, given, category, n):
        for _ in range(n):
            AuthorshipFactory(
                paper=PaperFactory(categories=[category]),
                given_name=given,
                family_name="Grabec",
                researcher=researcher,
            )

    papers(a, "Igor", "physics.data-an", 5)
    papers(b, "Ivan", "cs.NE", 2)
    edits.researcher_merge(researchers=[a, b], actor=curator)
    papers(a, "Ivan", "cs.NE", 2)  # attached later, by automation

    services.matching_run()

    assert not Proposal.objects.filter(kind="split", researcher=a).exists()


@pytest.mark.parametrize(
    ("moving", "merges", "held"),
    [
        # Two sides: one moving while the other stays.
        ({1, 2}, [({1, 2}, {3})], {1, 2}),
        # Every side moving together parts nothing.
        ({1, 2, 3}, [({1, 2}, {3})], set()),
        # Later papers (5) are on no side.
        ({1, 5}, [({1, 2}, {3})], {1}),
        # Three sides, two moving.
        ({1, 2}, [({1}, {2}, {3})], {1, 2}),
        # Merges in a row: 1 and 2, then both with 3; holding 2 holds 1.
        ({1, 2}, [({1}, {2}), ({1, 2}, {3})], {1, 2}),
        ({1}, [({1}, {2})], {1}),
        # A side that holds what is no longer the researcher's (9).
        ({1}, [({1}, {9})], set()),
    ],
)
def test_held_by_merges(moving, merges, held):
    frozen = [tuple(frozenset(side) for side in sides) for sides in merges]
    assert orcid_checks.held_by_merges(moving, {1, 2, 3, 4, 5}, frozen) == held


@pytest.mark.parametrize(
    "edit",
    [
        {"moves": "moves"},
        {"moves": [["before", 2]]},
        {"before": [2]},
        {"before": {"id": 2}},
        {"before": True},
        {"extra": ["kept"]},
        {"extra": {"kept": "all"}},
        {"extra": {"kept": [True, "1", [1], 2**70]}},
    ],
)
def test_a_merge_event_edited_by_hand_costs_no_matching_run(arxiv_dir, edit):
    """Hostile re-trial: a move whose ``before`` was edited into a list made
    the whole run fail (unhashable); such moves and ids are passed over, and
    what the edit still says holds."""
    survivor, other = _grabec_profiles(arxiv_dir, PHYSICS, CS)
    edits.researcher_merge(researchers=[survivor, other], actor=UserFactory())
    event = CurationEvent.objects.get(kind="merged")
    if "before" in edit:
        event.moves = [{**m, "before": edit["before"]} for m in event.moves]
    event.moves = edit.get("moves", event.moves)
    event.extra = edit.get("extra", event.extra)
    event.save()

    services.matching_run()

    # Each edit leaves one side readable at most, which parts nothing from
    # another: the split is proposed, as with no curator merge.
    merges = selectors.curator_merges(
        Authorship.objects.filter(researcher=survivor).values_list("pk", flat=True)
    )
    assert all(len(sides) <= 1 for sides in merges)
    assert all(type(k) is int for sides in merges for s in sides for k in s)
    assert _split_moves(survivor) == set(CS)
