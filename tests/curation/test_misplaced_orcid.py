"""A source's misplaced ORCID iD is flagged, never applied (issue 46):
Crossref puts the iD of "Wei Tan" on "Dmitri Volkov" of the same paper, while
Tan carries it on his other papers."""

from __future__ import annotations

import pytest

from curation import services
from curation.matching.orcids import IdSlot, fits, misplaced
from curation.models import Proposal
from tests.curation.proposal_page import proposal_page_words
from tests.factories import AuthorshipFactory, PaperFactory
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db

TAN = "0000-0001-5109-3700"  # a valid iD (its check digit holds)
NUS = ["National University of Singapore"]


def _tan_and_volkov(*, tan_slot_too: bool) -> Authorship:
    """Tan's two papers printing his iD, and the paper whose byline the
    source got wrong: Volkov's slot carries Tan's iD (Tan's own slot as
    well with ``tan_slot_too``). Returns Volkov's slot."""
    for _ in range(2):
        AuthorshipFactory(
            paper=PaperFactory(),
            given_name="Wei",
            family_name="Tan",
            orcid=TAN,
            affiliations=NUS,
        )
    paper = PaperFactory()
    AuthorshipFactory(
        paper=paper,
        given_name="Wei",
        family_name="Tan",
        orcid=TAN if tan_slot_too else "",
        affiliations=NUS,
    )
    return AuthorshipFactory(
        paper=paper,
        position=2,
        given_name="Dmitri",
        family_name="Volkov",
        orcid=TAN,
        affiliations=["Moscow Institute of Physics and Technology"],
    )


@pytest.mark.parametrize("tan_slot_too", [True, False])
def test_a_misplaced_orcid_is_flagged_and_never_given_to_the_wrong_researcher(
    client, curator, tan_slot_too
):
    volkov = _tan_and_volkov(tan_slot_too=tan_slot_too)
    services.matching_run()

    proposal = Proposal.objects.get(authorships=volkov)
    # The identifier policy did not apply it, and a curator sees why.
    assert proposal.status == "pending"
    assert not proposal.identifier_proven
    assert "misplaced" in proposal.evidence["flag"]
    assert proposal.evidence["misplaced_orcid"] == [
        {
            "authorship": volkov.pk,
            "orcid": TAN,
            "printed": "Volkov, Dmitri",
            "fits": "Tan, Wei",
        }
    ]
    assert TAN not in proposal.evidence.get("orcids", [])
    client.force_login(curator)
    assert (
        f"flagged: ORCID iD {TAN} printed on 'Volkov, Dmitri'"
        in proposal_page_words(client, proposal)
    )

    # Approving it makes Volkov a researcher without Tan's iD.
    services.proposal_apply(proposal=proposal, actor=curator)
    volkov_researcher = Researcher.objects.get(authorships=volkov)
    assert not volkov_researcher.orcid
    # Whoever holds the iD prints Tan's name; no merge of the two is proposed.
    assert set(
        Researcher.objects.filter(orcid=TAN).values_list("display_name", flat=True)
    ) <= {"Wei Tan"}
    for p in Proposal.objects.filter(status="pending").order_by("pk"):
        services.proposal_apply(proposal=p, actor=curator)
    services.matching_run()
    assert Researcher.objects.get(orcid=TAN).display_name == "Wei Tan"
    assert not Proposal.objects.filter(kind="merge").exists()


def test_misplaced_names_the_slots_that_do_not_fit_the_ids_other_names():
    tan = [IdSlot(1, "Wei", "Tan"), IdSlot(2, "W.", "Tan"), IdSlot(3, "Wei", "Tan")]
    volkov = IdSlot(4, "Dmitri", "Volkov")
    assert misplaced([*tan, volkov]) == {4: tan[0]}
    # One name each: no one can tell whose it is; both are suspect.
    assert set(misplaced([tan[0], volkov])) == {1, 4}
    # A family-name change keeps the iD; an initial under another family
    # name fits no one.
    assert fits(IdSlot(5, "Sofia", "Lindberg"), IdSlot(6, "Sofia", "Haddad"))
    assert not fits(IdSlot(7, "W.", "Volkov"), tan[0])
    assert misplaced(tan) == {}
