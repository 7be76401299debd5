"""Duplicates left after a curator approves every proposal (issue 46): on the
real arXiv records of "Jurik"/"Jurek Krzesinski" and "Adrian"/"A. Del
Maestro" in shared/data, a second matching run proposes their merges."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from curation import services
from curation.models import Proposal
from curation.proposing import merges
from harvest.services import harvest_files
from wovepaper.models import Researcher

pytestmark = pytest.mark.django_db

ARXIV = Path(settings.WOVEPAPER_DATA_DIR) / "arxiv"
# The records printing them (found with grep in shared/data/arxiv).
FILES = (
    "abs_files/ftp/arxiv/papers/0704/0704.0789.abs",  # Jurik Krzesinski
    "abs_files/ftp/arxiv/papers/0704/0704.0806.abs",  # Jurek Krzesinski
    "arxivpy_2016_atom/search_query-au_del_maestro.xml",  # Adrian, A.
)


def _approve_everything(curator) -> None:
    while pending := list(Proposal.objects.filter(status="pending").order_by("pk")):
        for proposal in pending:
            services.proposal_apply(proposal=proposal, actor=curator)


def _merges_between(*printed: str) -> list[Proposal]:
    """The pending merges of two live researchers displayed as ``printed``."""
    ids = set(
        Researcher.objects.live()
        .filter(display_name__in=printed)
        .values_list("pk", flat=True)
    )
    return [
        p
        for p in Proposal.objects.filter(kind="merge", status="pending")
        if {p.researcher_id, p.other_researcher_id} <= ids
    ]


def test_the_demos_duplicates_are_proposed_for_merging_after_a_full_approval(
    curator,
):
    for name in FILES:
        harvest_files(source="arxiv", root=ARXIV / name)
    services.matching_run()
    _approve_everything(curator)
    # Approved as proposed, each spelling and each initial is a researcher.
    assert (
        Researcher.objects.live().filter(display_name__contains="Krzesinski").count()
        == 2
    )
    services.matching_run()

    (jurek,) = _merges_between("Jurik Krzesinski", "Jurek Krzesinski")
    assert jurek.evidence["rule"] == merges.SPELLING_RULE
    assert jurek.evidence["features"]["coauthors"] >= merges.SPELLING_COAUTHORS
    assert jurek.score >= settings.CURATION_MERGE_THRESHOLD

    # Every researcher printing "A. Del Maestro" (no co-author links them to
    # Adrian) is proposed to him: the block's one full name they can stand
    # for, in their field. (The shipped model clusters the four papers as one;
    # the default weights made three researchers of them.)
    adrian = Researcher.objects.live().get(display_name="Adrian Del Maestro")
    initials = set(
        Researcher.objects.live()
        .filter(display_name="A. Del Maestro")
        .values_list("pk", flat=True)
    )
    assert initials
    maestros = _merges_between("Adrian Del Maestro", "A. Del Maestro")
    assert {
        ({m.researcher_id, m.other_researcher_id} - {adrian.pk}).pop() for m in maestros
    } == initials
    assert len(maestros) == len(initials)
    for merge in maestros:
        assert adrian.pk in (merge.researcher_id, merge.other_researcher_id)
        assert merge.evidence["rule"] == merges.INITIAL_RULE
        assert merge.evidence["features"]["categories"] > 0
    maestro = max(maestros, key=lambda p: p.score)
    # Merges wait for a curator.
    assert not Proposal.objects.filter(kind="merge").exclude(status="pending").exists()

    # Approved, each pair is one researcher.
    for merge in (jurek, maestro):
        services.proposal_apply(proposal=merge, actor=curator)
    assert (
        Researcher.objects.live().filter(display_name__contains="Krzesinski").count()
        == 1
    )
