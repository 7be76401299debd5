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
from wovepaper.models import Follow, Researcher

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
