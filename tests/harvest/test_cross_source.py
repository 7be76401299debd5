"""One paper, one byline, whichever of arXiv, Crossref and OpenAlex arrives first.

The real arXiv record 0704.0932 (Kang, van den Bosch, Pasquali) meets a Crossref and
an OpenAlex answer for its DOI written here (tests/fixtures/crossref/,
tests/fixtures/openalex/): the recorded data holds no work seen by two services.
Crossref mis-splits the particle ("Frank C. van den" + "Bosch"); OpenAlex prints
"A. Pasquali". In every order of arrival the end state is the same.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from harvest import services
from wovepaper.models import Authorship, Institution, Paper

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KANG_ABS = "abs_files/ftp/arxiv/papers/0704/0704.0932.abs"
SOURCES = ("arxiv", "crossref", "openalex")


def _state() -> dict:
    paper = Paper.objects.get()
    slots = Authorship.objects.filter(paper=paper).order_by("position")
    return {
        "paper": (
            paper.arxiv_id,
            paper.doi,
            paper.openalex_id,
            paper.text_source,
            paper.title,
            paper.journal_ref,
            paper.cited_by_count,
            paper.published,
            paper.published_precision,
        ),
        "slots": [
            (
                a.position,
                a.raw_name,
                a.orcid,
                a.openalex_author_id,
                tuple(a.affiliations),
                tuple(sorted(a.institutions.values_list("ror_id", flat=True))),
            )
            for a in slots
        ],
    }


def _harvest(source: str, arxiv_dir: Path) -> None:
    root = {
        "arxiv": arxiv_dir / KANG_ABS,
        "crossref": FIXTURES / "crossref" / "kang_2007_work.json",
        "openalex": FIXTURES / "openalex" / "kang_2007_work.json",
    }[source]
    run = services.harvest_files(source=source, root=root)
    assert (run.records_seen, run.records_failed) == (1, 0)


@pytest.mark.parametrize("order", list(itertools.permutations(SOURCES)))
def test_the_end_state_does_not_depend_on_the_order_of_arrival(arxiv_dir, order):
    for source in order:
        _harvest(source, arxiv_dir)
    state = _state()
    assert state["paper"] == (
        "0704.0932",
        "10.1111/j.1365-2966.2007.12311.x",
        "W2100000001",
        "arxiv",
        "On the Origin of the Dichotomy of Early-Type Galaxies: The Role of Dry "
        "Mergers and AGN Feedback",
        "Monthly Notices of the Royal Astronomical Society 381(1), 389-400 (2007)",
        61,  # the highest count: OpenAlex's 61 over Crossref's 52
        state["paper"][7],
        "day",
    )
    assert state["paper"][7].isoformat() == "2007-04-06"  # arXiv v1
    assert state["slots"] == [
        (1, "Xi Kang", "0000-0003-1234-5674", "A5000000011", ("MPIA",), ("01vhnrs90",)),
        (
            2,
            "Frank C. van den Bosch",
            "0000-0001-5555-4447",
            "A5000000022",
            ("MPIA",),
            ("01vhnrs90",),
        ),
        (3, "Anna Pasquali", "0000-0002-1825-0097", "A5000000033", ("MPIA",), ()),
    ]
    assert Institution.objects.get().name == "Max Planck Institute for Astronomy"


def test_harvesting_a_source_again_changes_nothing(arxiv_dir):
    for source in SOURCES:
        _harvest(source, arxiv_dir)
    before = _state()
    for source in SOURCES:
        run = services.harvest_files(
            source=source,
            root={
                "arxiv": arxiv_dir / KANG_ABS,
                "crossref": FIXTURES / "crossref" / "kang_2007_work.json",
                "openalex": FIXTURES / "openalex" / "kang_2007_work.json",
            }[source],
            reparse=True,
        )
        assert (run.papers_unchanged, run.papers_updated) == (1, 0), source
    assert _state() == before


def test_openalex_alone_makes_a_paper_with_its_ids_and_institutions():
    run = services.harvest_files(
        source="openalex", root=FIXTURES / "openalex" / "kang_2007_work.json"
    )
    assert run.papers_created == 1
    paper = Paper.objects.get()
    # The arXiv id comes from the arxiv.org location, so arXiv's record joins it.
    assert (paper.arxiv_id, paper.openalex_id, paper.text_source) == (
        "0704.0932",
        "W2100000001",
        "openalex",
    )
    assert paper.abstract == "Using a semi-analytical model a"
