"""The curators' search of the proposal queue (issue 48, item 8): a name, a block
key, an arXiv id, an ORCID iD or a proposal number, each through its index, over
all statuses; on the real Del Maestro records."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation import services
from curation.models import Proposal
from curation.proposal_search import proposals_matching
from curation.selectors import LARGE_COLLABORATION
from harvest.services import harvest_arxiv_files
from tests.factories import ResearcherFactory

pytestmark = pytest.mark.django_db

QUEUE = reverse("admin:curation_proposal_changelist")


@pytest.fixture
def queue(arxiv_dir, curator):
    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    services.matching_run()
    # One decided: a search reads every status.
    decided = Proposal.objects.filter(block_key="maestro a").order_by("id").first()
    services.proposal_apply(proposal=decided, actor=curator)
    return decided


def _found(client, term: str) -> set[int]:
    page = client.get(QUEUE, {"q": term})
    assert page.status_code == 200
    return {p.pk for p in page.context["cl"].result_list}


def _in_blocks(*keys: str) -> set[int]:
    return set(Proposal.objects.filter(block_key__in=keys).values_list("pk", flat=True))


def test_a_family_name_finds_its_blocks_in_every_status(client, curator, queue):
    client.force_login(curator)
    maestros = set(
        Proposal.objects.filter(block_key__startswith="maestro ").values_list(
            "pk", flat=True
        )
    )
    assert queue.pk in maestros

    assert _found(client, "Del Maestro") == maestros
    assert _found(client, "del maestro") == maestros
    assert _found(client, "A. Del Maestro") == _in_blocks("maestro a")
    assert _found(client, "maestro a") == _in_blocks("maestro a")
    assert _found(client, "Zyxwvutsrq") == set()


def test_a_paper_an_orcid_or_a_number_finds_its_proposals(client, curator, queue):
    client.force_login(curator)
    slot = queue.authorships.select_related("paper").first()
    holding = set(
        Proposal.objects.filter(authorships__paper=slot.paper).values_list(
            "pk", flat=True
        )
    )

    assert _found(client, slot.paper.arxiv_id) == holding
    assert _found(client, f"arXiv:{slot.paper.arxiv_id}v1") == holding
    assert _found(client, f"#{queue.pk}") == {queue.pk}

    orcid = "0000-0002-1825-0097"
    slot.orcid = orcid
    slot.save(update_fields=["orcid"])
    named = ResearcherFactory(orcid=orcid)
    merge = Proposal.objects.create(
        kind="merge",
        score=0.5,
        model_version="v-test",
        fingerprint="fp-orcid",
        researcher=ResearcherFactory(),
        other_researcher=named,
    )
    with_orcid = set(
        Proposal.objects.filter(authorships=slot).values_list("pk", flat=True)
    )
    assert queue.pk in with_orcid
    assert _found(client, f"https://orcid.org/{orcid}") == with_orcid | {merge.pk}


def test_blank_and_nameless_terms():
    assert str(proposals_matching("   ")) == str(proposals_matching(""))
    assert not Proposal.objects.filter(proposals_matching("!!!")).exists()


def test_a_search_covers_the_large_collaboration_lane(client, curator):
    client.force_login(curator)
    large = Proposal.objects.create(
        kind="new",
        score=0.9,
        model_version="v-test",
        fingerprint="fp-large",
        block_key="schmidt b",
        evidence={LARGE_COLLABORATION: True},
    )

    assert _found(client, "schmidt b") == {large.pk}
    page = client.get(QUEUE, {"q": "schmidt b", "lane": "main"})
    assert list(page.context["cl"].result_list) == []  # a lane chosen holds
