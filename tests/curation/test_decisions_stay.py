"""Automation never reverts a curator: matching after each direct edit obeys it."""

from __future__ import annotations

import pytest

from curation import edits, services
from curation.models import Proposal
from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper.models import Authorship

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
