"""One ORCID iD under two family names becomes a merge proposal (issue 46):
"Sofia Lindberg" (2016-2019) and "Sofia Haddad" (2021-), one iD, one
institute, fall in two blocks that are never compared."""

from __future__ import annotations

import datetime as dt

import pytest

from curation import services
from curation.models import Proposal
from curation.proposing import merges
from tests.curation.proposal_page import proposal_page_words
from tests.factories import AuthorshipFactory, PaperFactory
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db

SOFIA = "0000-0002-1825-0097"  # a valid iD (its check digit holds)


def _sofia(*, family: str, years: list[int], orcid: str = SOFIA) -> list[Authorship]:
    return [
        AuthorshipFactory(
            paper=PaperFactory(
                published=dt.date(year, 3, 1),
                categories=["q-bio.NC"],
                primary_category="q-bio.NC",
            ),
            given_name="Sofia",
            family_name=family,
            orcid=orcid,
            affiliations=["Karolinska Institutet, Stockholm, Sweden"],
        )
        for year in years
    ]


def _approve_pending(curator) -> None:
    for proposal in Proposal.objects.filter(status="pending").order_by("pk"):
        services.proposal_apply(proposal=proposal, actor=curator)


def test_one_orcid_under_two_family_names_is_proposed_as_one_person(client, curator):
    lindberg = _sofia(family="Lindberg", years=[2016, 2017, 2019])
    haddad = _sofia(family="Haddad", years=[2021, 2022])
    services.matching_run()
    # Two clusters of one iD in two blocks: neither is applied by the iD.
    assert not Researcher.objects.exists()
    _approve_pending(curator)
    assert Researcher.objects.live().count() == 2

    services.matching_run()
    merge = Proposal.objects.get(kind="merge")
    sides = {merge.researcher_id, merge.other_researcher_id}
    assert sides == {
        Authorship.objects.get(pk=lindberg[0].pk).researcher_id,
        Authorship.objects.get(pk=haddad[0].pk).researcher_id,
    }
    assert merge.evidence["rule"] == merges.ORCID_ACROSS_NAMES_RULE
    assert merge.evidence["orcid"] == SOFIA
    assert merge.evidence["names"] == ["Haddad", "Lindberg"]
    assert merge.evidence["features"]["orcid"] == 1.0
    # A merge waits for a curator, whatever the iD says.
    assert merge.status == "pending"
    assert not merge.identifier_proven
    client.force_login(curator)
    assert (
        f"Proposed by a rule: {merges.ORCID_ACROSS_NAMES_RULE}"
        in proposal_page_words(client, merge)
    )

    services.proposal_apply(proposal=merge, actor=curator)
    (survivor,) = Researcher.objects.live()
    assert survivor.authorships.count() == 5
    assert survivor.orcid == SOFIA


def test_one_orcid_under_two_names_that_cannot_be_one_person_is_no_merge(curator):
    _sofia(family="Lindberg", years=[2016, 2017])
    _sofia(family="Haddad", years=[2021])
    AuthorshipFactory(
        paper=PaperFactory(),
        given_name="Omar",
        family_name="Haddad",
        orcid=SOFIA,
    )
    services.matching_run()
    _approve_pending(curator)
    services.matching_run()
    for merge in Proposal.objects.filter(kind="merge"):
        names = set(
            Researcher.objects.filter(
                pk__in=[merge.researcher_id, merge.other_researcher_id]
            ).values_list("display_name", flat=True)
        )
        assert "Omar Haddad" not in names
