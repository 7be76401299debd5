"""Co-authors on collaboration bylines are no evidence: the Lingming Zhang case.

On the real records a cs.SE author ("Lingming Zhang", arXiv API cassette) and the
"L. Zhang" of two LHCb papers (1411.4413 with about 1,000 authors, 2103.11058 with
2,831) were clustered into one proposed researcher: the two collaboration papers
share hundreds of co-author name keys and the cs.SE paper joined through one or two
shared initial-level keys.
"""

from __future__ import annotations

import pytest

from curation import services
from curation.matching.features import COAUTHOR_MAX_BYLINE, coauthor_keys_of
from curation.models import Proposal
from curation.selectors import authorship_views
from harvest import services as harvest
from wovepaper.models import Authorship

pytestmark = pytest.mark.django_db

LHCB = ("1411.4413", "2103.11058")
CASSETTE = "arxivpy_cassettes/q_testing_s0_m100_cfe7536492ca.json"


def _harvest_the_case(arxiv_dir):
    for arxiv_id in LHCB:
        folder = arxiv_id.split(".")[0]
        harvest.harvest_arxiv_files(
            root=arxiv_dir / f"abs_files/ftp/arxiv/papers/{folder}/{arxiv_id}.abs"
        )
    harvest.harvest_arxiv_files(root=arxiv_dir / CASSETTE)


def test_coauthor_keys_of_drops_bylines_past_the_hyperauthorship_bound():
    small = [(slot, f"key{slot}") for slot in range(1, COAUTHOR_MAX_BYLINE + 1)]
    large = [*small, (COAUTHOR_MAX_BYLINE + 1, "another")]

    assert len(coauthor_keys_of(small, own=1)) == COAUTHOR_MAX_BYLINE - 1
    assert "key1" not in coauthor_keys_of(small, own=1)
    assert coauthor_keys_of(large, own=1) == frozenset()
    assert coauthor_keys_of([(1, "a"), (2, ""), (3, "c")], own=1) == {"c"}


def test_collaboration_authorships_carry_no_coauthor_evidence(arxiv_dir):
    _harvest_the_case(arxiv_dir)
    lhcb = Authorship.objects.filter(
        paper__arxiv_id__in=LHCB, family_name="Zhang", given_name="L."
    )
    assert lhcb.count() == 2
    lingming = Authorship.objects.get(given_name="Lingming", family_name="Zhang")
    assert lingming.paper.authorships.count() <= COAUTHOR_MAX_BYLINE

    views = {v.id: v for v in authorship_views([*lhcb, lingming])}

    for a in lhcb:
        assert a.paper.authorships.count() > 900
        assert views[a.id].coauthor_keys == frozenset()
    assert views[lingming.id].coauthor_keys  # a small byline still counts


def test_matching_keeps_the_cs_se_author_apart_from_lhcb(arxiv_dir):
    _harvest_the_case(arxiv_dir)
    lingming = Authorship.objects.get(given_name="Lingming", family_name="Zhang")
    lhcb_ids = set(
        Authorship.objects.filter(
            paper__arxiv_id__in=LHCB, family_name="Zhang", given_name="L."
        ).values_list("id", flat=True)
    )

    services.matching_run()

    holding = Proposal.objects.filter(authorships=lingming)
    assert holding.exists()
    for proposal in holding:
        members = set(proposal.authorships.values_list("id", flat=True))
        assert not members & lhcb_ids, proposal.evidence
