"""One researcher never holds two byline slots of one paper, whoever tries."""

from __future__ import annotations

import pytest

from curation import edits, services
from curation.exceptions import ProposalStale, ResearcherConflict
from curation.history import event_undo
from curation.models import CurationEvent, Proposal
from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper.models import Authorship

pytestmark = pytest.mark.django_db


def _two_slots():
    """A large-collaboration paper printing "Z. Xu" twice."""
    paper = PaperFactory()
    slots = [
        AuthorshipFactory(paper=paper, position=p, given_name="Z.", family_name="Xu")
        for p in (196, 2565)
    ]
    return paper, slots


def test_move_refuses_a_second_slot_of_the_same_paper():
    paper, (first, second) = _two_slots()
    r = ResearcherFactory()
    edits.authorship_move(authorship=first, to=r, actor=UserFactory())

    with pytest.raises(
        ResearcherConflict, match=f"two authorships .* of paper {paper.pk}"
    ):
        edits.authorship_move(authorship=second, to=r, actor=UserFactory())

    assert Authorship.objects.get(pk=second.pk).researcher_id is None


def test_merge_refuses_researchers_on_the_same_paper():
    _, (first, second) = _two_slots()
    a, b = ResearcherFactory(), ResearcherFactory()
    Authorship.objects.filter(pk=first.pk).update(researcher=a)
    Authorship.objects.filter(pk=second.pk).update(researcher=b)

    with pytest.raises(ResearcherConflict, match="one person appears once"):
        edits.researcher_merge(researchers=[a, b], actor=UserFactory())

    assert not CurationEvent.objects.exists()
    assert list(
        Authorship.objects.order_by("position").values_list("researcher", flat=True)
    ) == [a.pk, b.pk]


def _researcher_on_both_slots_evidence():
    """Z. Xu's researcher, with a shared co-author on the two-slot paper and on
    every one of the researcher's own: strong evidence for either slot."""
    paper, slots = _two_slots()
    r = ResearcherFactory(display_name="Z. Xu", block_key="xu z")
    # Strong evidence for both slots: a shared co-author, on every paper.
    for other in [paper, PaperFactory(), PaperFactory()]:
        AuthorshipFactory(
            paper=other, position=1, given_name="Armand", family_name="Borel"
        )
    for other in Authorship.objects.filter(given_name="Armand").exclude(paper=paper):
        AuthorshipFactory(
            paper=other.paper,
            position=2,
            researcher=r,
            given_name="Z.",
            family_name="Xu",
        )
    return r, slots


def _proposed_slots(r, slots) -> dict[str, list[int]]:
    """The pending proposals holding either slot: ``{kind: [slot ids]}``."""
    slot_ids = {a.pk for a in slots}
    out: dict[str, list[int]] = {}
    for p in Proposal.objects.filter(status="pending").order_by("pk"):
        for a in p.authorships.all():
            if a.pk in slot_ids and (p.kind != "attach" or p.researcher_id == r.pk):
                out.setdefault(p.kind, []).append(a.pk)
    return out


def test_matching_proposes_only_one_slot_of_a_paper_for_a_researcher():
    r, slots = _researcher_on_both_slots_evidence()

    services.matching_run()

    proposed = _proposed_slots(r, slots)
    assert len(proposed["attach"]) == 1
    # The other slot is clustered into a `new` proposal.
    assert proposed["new"] == [a.pk for a in slots if a.pk not in proposed["attach"]]


@pytest.mark.parametrize("blocks", [None, ["xu z"]], ids=["full", "incremental"])
def test_a_later_run_proposes_no_second_slot_of_a_paper_with_a_pending_attach(
    blocks,
):
    """The slot a pending attach holds is not matched again, and its paper
    stays the researcher's for the other slot: the next run, full or of the
    block alone, proposes the second slot to nobody it already holds, and
    supersedes nothing (it once proposed it to the same researcher, making its
    `new` proposal stale: two proposals that could never both apply)."""
    r, slots = _researcher_on_both_slots_evidence()
    services.matching_run()
    before = set(Proposal.objects.values_list("pk", "status"))

    counts = services.matching_run(block_keys=blocks)

    assert set(Proposal.objects.values_list("pk", "status")) == before
    assert not any(v for k, v in counts.items() if k.startswith("proposed_"))
    assert len(_proposed_slots(r, slots)["attach"]) == 1


def test_second_attach_of_the_same_paper_goes_stale():
    paper, (first, second) = _two_slots()
    r = ResearcherFactory()
    proposals = []
    for a in (first, second):
        p = Proposal.objects.create(
            kind="attach",
            score=0.7,
            model_version="t",
            fingerprint=f"f{a.pk}",
            researcher=r,
        )
        p.authorships.set([a])
        proposals.append(p)
    user = UserFactory()
    services.proposal_apply(proposal=proposals[0], actor=user)

    with pytest.raises(ProposalStale, match=f"of paper {paper.pk}"):
        services.proposal_apply(proposal=proposals[1], actor=user)

    assert Authorship.objects.get(pk=second.pk).researcher_id is None


def test_undo_refused_when_it_would_double_a_slot():
    paper, (first, second) = _two_slots()
    r, t = ResearcherFactory(), ResearcherFactory()
    Authorship.objects.filter(pk=first.pk).update(researcher=r)
    AuthorshipFactory(researcher=r)  # one stays: a profile emptied is retired
    user = UserFactory()
    moved = edits.authorship_move(authorship=first, to=t, actor=user)
    edits.authorship_move(authorship=second, to=r, actor=user)

    with pytest.raises(ResearcherConflict, match=f"of paper {paper.pk}"):
        event_undo(event=moved, actor=user)

    assert Authorship.objects.get(pk=first.pk).researcher_id == t.pk


def _pending_attach(r, slots):
    """The run's pending attach of one of the slots to ``r``, and the other slot."""
    services.matching_run()
    (attach,) = Proposal.objects.filter(status="pending", kind="attach", researcher=r)
    (held,) = attach.authorships.all()
    (other,) = [a for a in slots if a.pk != held.pk]
    return attach, held, other


@pytest.mark.parametrize("blocks", [None, ["xu z"]], ids=["full", "incremental"])
def test_an_attach_to_a_researcher_merged_away_since_is_superseded(blocks):
    """The researcher a pending attach names is merged into another: the slot
    is matched again (to the survivor, who now holds the papers), the dead
    attach goes stale, and still only one slot of the paper is proposed."""
    # Older, so it survives the merge (the lowest id does).
    survivor = ResearcherFactory(display_name="Z. Xu", block_key="xu z")
    r, slots = _researcher_on_both_slots_evidence()
    attach, held, other = _pending_attach(r, slots)
    merged = edits.researcher_merge(researchers=[survivor, r], actor=UserFactory())
    assert merged.pk == survivor.pk

    services.matching_run(block_keys=blocks)

    attach.refresh_from_db()
    assert attach.status == "stale"
    assert CurationEvent.objects.filter(
        kind=CurationEvent.Kind.PROPOSAL_STALE, proposal=attach
    ).exists()
    proposed = _proposed_slots(survivor, slots)
    assert len(proposed["attach"]) == 1
    assert services.matching_run(block_keys=blocks).get("proposed_attach", 0) == 0


def test_no_merge_is_proposed_that_a_pending_attach_would_double_a_slot_of():
    """One slot of the paper waits on an attach to R; the other, applied as a
    new researcher R2: merging R and R2 would give one person both slots."""
    r, slots = _researcher_on_both_slots_evidence()
    attach, held, other = _pending_attach(r, slots)
    (new,) = Proposal.objects.filter(status="pending", kind="new", authorships=other)
    services.proposal_apply(proposal=new, actor=UserFactory())
    r2 = Authorship.objects.get(pk=other.pk).researcher

    services.matching_run()

    assert not Proposal.objects.filter(
        kind="merge", researcher__in=[r, r2], other_researcher__in=[r, r2]
    ).exists()
    # The attach still applies.
    services.proposal_apply(proposal=attach, actor=UserFactory())
    assert Authorship.objects.get(pk=held.pk).researcher_id == r.pk


def test_a_run_of_some_blocks_sees_a_pending_attach_whose_slot_moved_block():
    """A re-harvest renames the slot a pending attach holds ("Z. Xu" to "Z.
    Hsu", another block): a run of the old block alone still proposes the
    paper's other slot to nobody the attach already gives the paper to."""
    r, slots = _researcher_on_both_slots_evidence()
    attach, held, other = _pending_attach(r, slots)
    Authorship.objects.filter(pk=held.pk).update(
        family_name="Hsu", raw_name="Z. Hsu", block_key="hsu z", name_key="hsu z"
    )
    Proposal.objects.filter(kind="new", status="pending").update(status="rejected")

    services.matching_run(block_keys=["xu z"])

    assert not Proposal.objects.filter(
        status="pending", kind="attach", researcher=r, authorships=other
    ).exists()


def test_pending_attach_papers_read_alike_by_statement_and_by_the_orm(monkeypatch):
    from curation import matching_sql, selectors

    r, slots = _researcher_on_both_slots_evidence()
    _pending_attach(r, slots)
    paper = slots[0].paper_id
    asked = [
        {},
        {"researcher_ids": [r.pk]},
        {"paper_ids": [paper]},
        {"researcher_ids": [r.pk], "paper_ids": [paper, paper + 1]},
        {"researcher_ids": [r.pk + 1000]},
        {"paper_ids": []},
    ]
    assert matching_sql.enabled()
    written = [selectors.pending_attach_papers(**a) for a in asked]
    monkeypatch.setattr(matching_sql, "enabled", lambda: False)
    assert [selectors.pending_attach_papers(**a) for a in asked] == written
    assert written[:4] == [{r.pk: frozenset({paper})}] * 4
    assert written[4:] == [{}, {}]
