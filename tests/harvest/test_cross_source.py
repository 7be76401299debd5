"""One paper, one byline, whichever of arXiv, Crossref and OpenAlex arrives first.

The real arXiv record 0704.0932 (Kang, van den Bosch, Pasquali) meets a Crossref and
an OpenAlex answer for its DOI written here (tests/fixtures/crossref/,
tests/fixtures/openalex/): the recorded data holds no work seen by two services.
Crossref mis-splits the particle ("Frank C. van den" + "Bosch"); OpenAlex prints
"A. Pasquali". In every order of arrival the end state is the same.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from pathlib import Path

import pytest

from harvest import services
from harvest.records import AuthorRecord, PaperRecord, RawItem
from harvest.sources.crossref import parse_crossref_work
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


def _record(source: str, external_id: str, authors: list, **ids) -> PaperRecord:
    return PaperRecord(
        source=source,
        external_id=external_id,
        title="Radiative transfer in the outer heliosphere",
        authors=authors,
        published=dt.date(2021, 3, 4),
        **ids,
    )


def test_a_mis_split_particle_is_one_slot_with_both_sources_evidence():
    """arXiv prints "Jan van der Velde"; Crossref splits the particle off the
    family name ("Jan Van" + "Der Velde") and carries the ORCID iD: one byline
    slot of the same person, not two."""
    services.paper_upsert(
        record=_record(
            "arxiv",
            "2103.01234",
            [
                AuthorRecord("Jan van der Velde", "Jan", "van der Velde"),
                AuthorRecord("Mei Lin", "Mei", "Lin"),
            ],
            arxiv_id="2103.01234",
        )
    )
    services.paper_upsert(
        record=_record(
            "crossref",
            "10.1000/helio.2021.7",
            [
                AuthorRecord(
                    "Jan Van Der Velde",
                    "Jan Van",
                    "Der Velde",
                    orcid="0000-0002-1825-0097",
                    affiliations=("Utrecht University",),
                ),
                AuthorRecord("Mei Lin", "Mei", "Lin"),
            ],
            doi="10.1000/helio.2021.7",
            arxiv_id="2103.01234",
        )
    )
    paper = Paper.objects.get()
    slots = list(paper.authorships.order_by("position"))
    assert [(a.position, a.raw_name, a.orcid) for a in slots] == [
        (1, "Jan van der Velde", "0000-0002-1825-0097"),
        (2, "Mei Lin", ""),
    ]
    assert slots[0].affiliations == ["Utrecht University"]
    assert paper.doi == "10.1000/helio.2021.7"


def test_arxivs_own_doi_names_the_arxiv_paper(arxiv_dir):
    """A Crossref work known only by arXiv's DOI (10.48550/arXiv.<id>, as
    DataCite registers it and Crossref lists it) joins the paper arXiv's record
    made."""
    _harvest("arxiv", arxiv_dir)
    before = Paper.objects.get()
    work = {
        "DOI": "10.48550/arXiv.0704.0932",
        "title": ["On the Origin of the Dichotomy of Early-Type Galaxies"],
        "author": [
            {
                "given": "Xi",
                "family": "Kang",
                "sequence": "first",
                "ORCID": "https://orcid.org/0000-0003-1234-5674",
            }
        ],
        "issued": {"date-parts": [[2007, 4, 6]]},
    }
    record = parse_crossref_work(
        RawItem("doi:10.48550/arxiv.0704.0932", json.dumps(work), "test#item-0")
    )
    assert record.arxiv_id == "0704.0932"
    result = services.paper_upsert(record=record)
    assert result.paper.pk == before.pk
    assert Paper.objects.count() == 1
    kang = Authorship.objects.get(paper=before, position=1)
    assert (kang.raw_name, kang.orcid) == ("Xi Kang", "0000-0003-1234-5674")
    assert Authorship.objects.filter(paper=before).count() == 3


A_ORCID, B_ORCID = "0000-0002-1825-0097", "0000-0001-5109-3700"


def _arxiv_then_crossref(arxiv: list, crossref: list) -> dict:
    """Harvest arXiv's byline, then Crossref's with ORCID iDs (a lower-ranked
    source enriching the slots); each row gets its own researcher, as matching
    would. Returns ``{row id: (printed name, ORCID iD, researcher id)}``."""
    from tests.factories import ResearcherFactory

    services.paper_upsert(
        record=_record("arxiv", "2103.01234", arxiv, arxiv_id="2103.01234")
    )
    services.paper_upsert(
        record=_record(
            "crossref",
            "10.1000/helio.2021.7",
            crossref,
            doi="10.1000/helio.2021.7",
            arxiv_id="2103.01234",
        )
    )
    rows = list(Paper.objects.get().authorships.order_by("position"))
    for row in rows:
        row.researcher = ResearcherFactory(display_name=row.raw_name)
        row.save()
    return {r.pk: (r.raw_name, r.orcid, r.researcher_id) for r in rows}


def _arxiv_version_2(authors: list) -> dict:
    services.paper_upsert(
        record=_record(
            "arxiv",
            "2103.01234v2",
            authors,
            arxiv_id="2103.01234",
            version=2,
            updated=dt.date(2021, 6, 1),
        )
    )
    return {
        a.pk: (a.raw_name, a.orcid, a.researcher_id)
        for a in Paper.objects.get().authorships.all()
    }


def test_two_namesakes_keep_their_orcids_when_authors_are_inserted_before_them():
    """Evidence follows the row the byline sync keeps for each person (rows of
    one printed name pair in byline order), not the nearest slot."""
    wang, li = ("Y. Wang", "Y.", "Wang"), ("X. Li", "X.", "Li")
    before = _arxiv_then_crossref(
        [AuthorRecord(*wang), AuthorRecord(*li), AuthorRecord(*wang)],
        [
            AuthorRecord(*wang, orcid=A_ORCID),
            AuthorRecord(*li),
            AuthorRecord(*wang, orcid=B_ORCID),
        ],
    )

    after = _arxiv_version_2(
        [
            AuthorRecord("P. Quill", "P.", "Quill"),
            AuthorRecord("R. Sand", "R.", "Sand"),
            AuthorRecord(*wang),
            AuthorRecord(*li),
            AuthorRecord(*wang),
        ]
    )

    assert {pk: after[pk] for pk in before} == before


def test_a_slots_evidence_follows_its_printed_name_when_two_namesakes_swap():
    """A new arXiv version swaps "J. Smith" and "John Smith": each keeps the
    ORCID iD Crossref gave its slot, though either name fits the other's."""
    initial, full = ("J. Smith", "J.", "Smith"), ("John Smith", "John", "Smith")
    before = _arxiv_then_crossref(
        [AuthorRecord(*initial), AuthorRecord(*full)],
        [AuthorRecord(*initial, orcid=A_ORCID), AuthorRecord(*full, orcid=B_ORCID)],
    )

    after = _arxiv_version_2([AuthorRecord(*full), AuthorRecord(*initial)])

    assert after == before
    slots = Paper.objects.get().authorships.order_by("position")
    assert [(a.raw_name, a.orcid) for a in slots] == [
        ("John Smith", B_ORCID),
        ("J. Smith", A_ORCID),
    ]


def test_namesakes_printed_alike_keep_their_orcids_when_they_swap():
    """ "Yifan" and "Yi-Fan" fold alike; each row keeps its own iD and researcher."""
    yifan, yi_fan = ("Yifan Wang", "Yifan", "Wang"), ("Yi-Fan Wang", "Yi-Fan", "Wang")
    before = _arxiv_then_crossref(
        [AuthorRecord(*yifan), AuthorRecord(*yi_fan)],
        [AuthorRecord(*yifan, orcid=A_ORCID), AuthorRecord(*yi_fan, orcid=B_ORCID)],
    )

    after = _arxiv_version_2([AuthorRecord(*yi_fan), AuthorRecord(*yifan)])

    assert after == before


def test_a_source_printing_namesakes_in_another_order_enriches_each_one():
    yifan, yi_fan = ("Yifan Wang", "Yifan", "Wang"), ("Yi-Fan Wang", "Yi-Fan", "Wang")
    _arxiv_then_crossref(
        [AuthorRecord(*yifan), AuthorRecord(*yi_fan)],
        [AuthorRecord(*yi_fan, orcid=B_ORCID), AuthorRecord(*yifan, orcid=A_ORCID)],
    )

    orcids = dict(Authorship.objects.values_list("raw_name", "orcid"))
    assert orcids == {"Yifan Wang": A_ORCID, "Yi-Fan Wang": B_ORCID}
