"""A profile merged into another and split off again takes its old id with it.

New-user trial: a researcher followed G. Ghisellini and J. L. Bourjaily; a
curator merged them (Bourjaily survived, the lower id) and then split
Ghisellini's papers off again. The follow of Ghisellini still led to
Bourjaily (page, feed, API), and the split-off Ghisellini had no follower.
"""

from __future__ import annotations

import pytest

from curation import edits, history, services
from curation.models import CurationEvent, Proposal
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from wovepaper import selectors
from wovepaper.models import Authorship, Follow, Researcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def merged():
    """Bourjaily (2 papers) with Ghisellini (4 papers) merged into him, and a
    follower of Ghisellini: ``(bourjaily, ghisellini, his authorship ids,
    the follower)``."""
    bourjaily = ResearcherFactory(display_name="Jacob L. Bourjaily")
    for _ in range(2):
        AuthorshipFactory(
            researcher=bourjaily, given_name="Jacob L.", family_name="Bourjaily"
        )
    ghisellini = ResearcherFactory(display_name="G. Ghisellini")
    his = [
        AuthorshipFactory(
            researcher=ghisellini, given_name="G.", family_name="Ghisellini"
        ).pk
        for _ in range(4)
    ]
    fan = UserFactory()
    Follow.objects.create(user=fan, researcher=ghisellini)
    edits.researcher_merge(researchers=[ghisellini, bourjaily], actor=UserFactory())
    assert Researcher.objects.get(pk=ghisellini.pk).merged_into_id == bourjaily.pk
    return bourjaily, ghisellini, his, fan


def test_a_split_taking_a_merged_in_profiles_papers_takes_its_id(merged, client):
    bourjaily, ghisellini, his, fan = merged

    split_off = edits.researcher_split(
        researcher=bourjaily, authorship_ids=his, actor=UserFactory()
    )

    assert Researcher.objects.get(pk=ghisellini.pk).merged_into_id == split_off.pk
    assert selectors.researcher_survivor(ghisellini.pk) == split_off.pk
    page = client.get(f"/researchers/{ghisellini.pk}")
    assert page.status_code == 301
    assert page["Location"].startswith(f"/researchers/{split_off.pk}-")
    feed = {p.pk for p in selectors.feed_papers(fan)}
    assert feed == set(split_off.authorships.values_list("paper_id", flat=True))
    # The split's event records the move, and its undo moves it back.
    event = CurationEvent.objects.get(kind="split")
    assert event.fields[str(ghisellini.pk)]["merged_into_id"] == [
        bourjaily.pk,
        split_off.pk,
    ]
    history.event_undo(event=event, actor=UserFactory())
    assert Researcher.objects.get(pk=ghisellini.pk).merged_into_id == bourjaily.pk
    # Split again: the undo moved nothing off Ghisellini, the merge did.
    again = edits.researcher_split(
        researcher=Researcher.objects.get(pk=bourjaily.pk),
        authorship_ids=his,
        actor=UserFactory(),
    )
    assert Researcher.objects.get(pk=ghisellini.pk).merged_into_id == again.pk


def test_an_approved_split_proposal_takes_the_id_too(merged):
    bourjaily, ghisellini, his, _ = merged
    proposal = Proposal.objects.create(
        kind="split", score=0.8, model_version="test", researcher=bourjaily
    )
    proposal.authorships.set(his)

    services.proposal_apply(proposal=proposal, actor=UserFactory())

    proposal.refresh_from_db()
    assert Researcher.objects.get(pk=ghisellini.pk).merged_into_id == (
        proposal.other_researcher_id
    )


def test_a_split_taking_fewer_of_its_papers_leaves_it_where_it_was(merged):
    bourjaily, ghisellini, his, _ = merged

    edits.researcher_split(
        researcher=bourjaily, authorship_ids=his[:2], actor=UserFactory()
    )

    assert Researcher.objects.get(pk=ghisellini.pk).merged_into_id == bourjaily.pk


def _with(n: int, name: str, **fields) -> tuple[Researcher, list[int]]:
    r = ResearcherFactory(display_name=name, **fields)
    given, family = name.rsplit(" ", 1)
    rows = [
        AuthorshipFactory(researcher=r, given_name=given, family_name=family).pk
        for _ in range(n)
    ]
    return r, rows


@pytest.mark.parametrize("taking", ["first", "second"])
def test_a_split_along_a_chain_of_merges_sends_each_id_with_its_papers(taking):
    """A merged into B, B into C, then C split taking A's papers (or B's own):
    B's merge moved A's papers too, so B "brought" six and neither id
    followed its person (hostile re-trial)."""
    c, _ = _with(2, "Carl Cee")
    b, b_rows = _with(3, "Bea Bee")
    a, a_rows = _with(3, "Ann Aye")
    curator = UserFactory()
    edits.researcher_merge(researchers=[b, a], actor=curator)
    edits.researcher_merge(researchers=[c, b], actor=curator)
    assert selectors.researcher_survivor(a.pk) == c.pk

    split_off = edits.researcher_split(
        researcher=Researcher.objects.get(pk=c.pk),
        authorship_ids=a_rows if taking == "first" else b_rows,
        actor=curator,
    )

    where = {pk: selectors.researcher_survivor(pk) for pk in (a.pk, b.pk)}
    if taking == "first":
        assert where == {a.pk: split_off.pk, b.pk: c.pk}
    else:
        # B leads to the split-off profile; A, merged into B, stays with C.
        assert where == {a.pk: c.pk, b.pk: split_off.pk}
    history.event_undo(event=CurationEvent.objects.get(kind="split"), actor=curator)
    assert {pk: selectors.researcher_survivor(pk) for pk in (a.pk, b.pk)} == {
        a.pk: c.pk,
        b.pk: c.pk,
    }


def test_the_orcid_and_claim_a_merge_handed_over_go_with_the_id():
    """A with an ORCID iD and a claim, merged into B (B took both), then B
    split taking A's papers: A's id led to the split-off profile, but the iD
    and the claim stayed on B with the other person's papers (hostile
    re-trial)."""
    orcid = "0000-0002-1825-0097"
    claimant = UserFactory()
    b, b_rows = _with(2, "Bea Bee")
    a, a_rows = _with(3, "Ann Aye", orcid=orcid, claimed_by=claimant)
    Authorship.objects.filter(pk__in=a_rows).update(orcid=orcid)
    curator = UserFactory()
    edits.researcher_merge(researchers=[b, a], actor=curator)
    assert (Researcher.objects.get(pk=b.pk).orcid, b.pk) == (orcid, b.pk)

    split_off = edits.researcher_split(
        researcher=Researcher.objects.get(pk=b.pk), authorship_ids=a_rows, actor=curator
    )

    split_off.refresh_from_db()
    b.refresh_from_db()
    assert (split_off.orcid, split_off.claimed_by_id) == (orcid, claimant.pk)
    assert (b.orcid, b.claimed_by_id) == (None, None)
    history.event_undo(event=CurationEvent.objects.get(kind="split"), actor=curator)
    b.refresh_from_db()
    assert (b.orcid, b.claimed_by_id) == (orcid, claimant.pk)
