"""The arXiv ``.abs`` parser on arXiv's own files (read in place from shared/data)."""

from __future__ import annotations

import pickle
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from django.conf import settings

from harvest.records import PaperRecord, RawItem, RecordError, VersionRecord
from harvest.sources.arxiv_abs import (
    AbsFile,
    parse_abs,
    read_abs_file,
    split_abs_authors,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv"


@pytest.fixture
def data_dir() -> Path:
    """shared/data, the root every locator is relative to."""
    return Path(settings.WOVEPAPER_DATA_DIR)


def _item(data_dir: Path, relative: str) -> RawItem:
    return read_abs_file(data_dir / "arxiv" / "abs_files" / relative, data_dir)


def _paper(data_dir: Path, relative: str) -> PaperRecord:
    return parse_abs(_item(data_dir, relative))


def _names(paper: PaperRecord) -> list[str]:
    return [a.raw_name for a in paper.authors]


def test_read_abs_file_external_id_carries_latest_version(data_dir: Path) -> None:
    current = _item(data_dir, "ftp/hep-th/papers/9709/9709111.abs")
    first = _item(data_dir, "orig/hep-th/papers/9709/9709111v1.abs")
    assert current.external_id == "hep-th/9709111v3"
    assert current.locator == "arxiv/abs_files/ftp/hep-th/papers/9709/9709111.abs"
    assert current.problem == ""
    assert current.payload.startswith("-----")
    assert first.external_id == "hep-th/9709111v1"


def test_read_abs_file_uses_locator_without_id() -> None:
    item = read_abs_file(FIXTURES / "no_id.abs", FIXTURES)
    assert item.external_id == "file:no_id.abs"
    assert item.locator == "no_id.abs"


def test_abs_file_travels_as_its_name_and_reads_as_read_abs_file(
    data_dir: Path,
) -> None:
    path = data_dir / "arxiv" / "abs_files" / "ftp/hep-th/papers/9709/9709111.abs"
    expected = read_abs_file(path, data_dir)
    lazy = AbsFile(path, data_dir)
    assert lazy.locator == expected.locator
    blob = pickle.dumps(lazy)
    # What a prepare worker receives: the name, not the 2 KB text.
    assert expected.payload[:200].encode() not in blob
    assert len(blob) < len(expected.payload)
    sent = pickle.loads(blob)  # noqa: S301 - our own object
    assert sent.read() == expected
    assert (sent.external_id, sent.payload, sent.problem) == (
        "hep-th/9709111v3",
        expected.payload,
        "",
    )
    assert parse_abs(sent) == parse_abs(expected)


def test_abs_file_unreadable_is_an_item_naming_the_problem(tmp_path: Path) -> None:
    lazy = AbsFile(tmp_path / "gone" / "0704.0001.abs", tmp_path)
    assert lazy.external_id == "file:gone/0704.0001.abs"
    assert lazy.payload == ""
    assert lazy.problem.startswith(
        "gone/0704.0001.abs: unreadable file (FileNotFoundError: "
    )
    with pytest.raises(RecordError, match="unreadable file"):
        parse_abs(lazy)


def test_parse_abs_old_style_id_versions_and_dates(data_dir: Path) -> None:
    paper = _paper(data_dir, "ftp/hep-th/papers/9709/9709111.abs")
    assert paper.source == "arxiv"
    assert paper.arxiv_id == "hep-th/9709111"
    assert paper.external_id == "hep-th/9709111v3"
    assert paper.version == 3
    assert paper.versions == [
        VersionRecord(1, datetime(1997, 9, 16, 14, 44, 58, tzinfo=UTC), "11kb"),
        VersionRecord(2, datetime(1997, 9, 23, 17, 34, 41, tzinfo=UTC), "11kb"),
        VersionRecord(3, datetime(1997, 11, 3, 19, 27, 30, tzinfo=UTC), "14kb"),
    ]
    assert paper.published == date(1997, 9, 16)
    assert paper.updated == date(1997, 11, 3)
    assert paper.datestamp is None


def test_parse_abs_orig_file_is_its_own_version(data_dir: Path) -> None:
    paper = _paper(data_dir, "orig/hep-th/papers/9709/9709111v1.abs")
    assert paper.arxiv_id == "hep-th/9709111"
    assert paper.version == 1
    assert [v.version for v in paper.versions] == [1]
    assert paper.published == paper.updated == date(1997, 9, 16)
    assert paper.comments == "8 pages, 1 figure, plain Latex"
    assert paper.categories == []  # the v1 file has no Categories line
    assert paper.doi == ""


def test_parse_abs_new_style_id(data_dir: Path) -> None:
    paper = _paper(data_dir, "ftp/arxiv/papers/0704/0704.0001.abs")
    assert paper.arxiv_id == "0704.0001"
    assert paper.external_id == "0704.0001v2"
    assert paper.version == 2
    assert paper.versions[1] == VersionRecord(
        2, datetime(2007, 7, 24, 20, 10, 27, tzinfo=UTC), "370kb"
    )
    assert paper.title == (
        "Calculation of prompt diphoton production cross sections at Tevatron and "
        "LHC energies"
    )


def test_parse_abs_categories_primary_first(data_dir: Path) -> None:
    paper = _paper(data_dir, "ftp/hep-th/papers/9709/9709111.abs")
    assert paper.categories == ["hep-th", "hep-ph"]
    assert paper.primary_category == "hep-th"
    other = _paper(data_dir, "ftp/arxiv/papers/2101/2101.10016.abs")
    assert other.categories == ["math.QA", "hep-th", "math-ph", "math.MP", "math.OA"]


def test_parse_abs_doi_lower_cased(data_dir: Path) -> None:
    paper = _paper(data_dir, "ftp/arxiv/papers/0704/0704.0001.abs")
    assert paper.doi == "10.1103/physrevd.76.013009"


def test_parse_abs_doi_first_of_several(data_dir: Path) -> None:
    # "DOI: 10.1103/PhysRevD.75.124007 10.1103/PhysRevD.82.029901"
    paper = _paper(data_dir, "ftp/arxiv/papers/0704/0704.0389.abs")
    assert paper.doi == "10.1103/physrevd.75.124007"


def test_parse_abs_text_fields(data_dir: Path) -> None:
    paper = _paper(data_dir, "ftp/hep-th/papers/9709/9709111.abs")
    assert paper.title == (
        "On the effective interactions of a light gravitino with matter fermions"
    )
    assert paper.comments == (
        "12 pages, 1 figure, plain LaTeX. An important proof added in section 5. "
        "Final version to be published in JHEP"
    )
    assert paper.report_no == "CERN-TH/97-244, DFPD~97/TH/35"
    assert paper.journal_ref == "JHEP 9711:001,1997"
    assert paper.doi == "10.1088/1126-6708/1997/11/001"
    assert paper.license == ""
    assert paper.abstract.startswith("If the gravitino is light and all the other")
    assert paper.abstract.endswith("on their possible phenomenological implications.")
    assert "\n" not in paper.abstract
    licensed = _paper(data_dir, "ftp/arxiv/papers/2101/2101.10016.abs")
    assert licensed.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"


def test_parse_abs_abstract_runs_to_last_separator(data_dir: Path) -> None:
    # "\\" lines inside these abstracts are LaTeX line breaks, not the end.
    chemotaxis = _paper(data_dir, "ftp/arxiv/papers/2004/2004.02153.abs")
    assert "\\\\" in chemotaxis.abstract
    assert chemotaxis.abstract.endswith(
        "collapse into a persistent Dirac distribution."
    )
    lhcb = _paper(data_dir, "ftp/arxiv/papers/2103/2103.11058.abs")
    assert lhcb.abstract.endswith("in these decay modes to date.")


def test_parse_abs_abstract_keeps_paragraphs(data_dir: Path) -> None:
    paper = _paper(data_dir, "ftp/arxiv/papers/0704/0704.0213.abs")
    paragraphs = paper.abstract.split("\n")
    assert len(paragraphs) == 4
    assert paragraphs[0].startswith("This article has been withdrawn because")
    assert paragraphs[2] == "The new article in this GCT5 slot in the series is:"


def test_parse_abs_latex_accents_to_unicode(data_dir: Path) -> None:
    balazs = _paper(data_dir, "ftp/arxiv/papers/0704/0704.0001.abs").authors[0]
    assert balazs.raw_name == "C. Balázs"  # C. Bal\'azs
    assert (balazs.given_name, balazs.family_name) == ("C.", "Balázs")
    nollenburg = _paper(data_dir, "ftp/arxiv/papers/0806/0806.0920.abs").authors[3]
    assert nollenburg.raw_name == "Martin Nöllenburg"  # N\"ollenburg
    assert nollenburg.family_name == "Nöllenburg"
    # Braced forms (no file has {\"o}): Ren{\'e}, Tyss{\o}y, Pla{\ss}.
    assert "René Fournet" in _names(
        _paper(data_dir, "ftp/arxiv/papers/0704/0704.0699.abs")
    )
    assert _names(_paper(data_dir, "ftp/arxiv/papers/1611/1611.08171.abs")) == [
        "H. Nesse Tyssøy",
        "J. Stadsnes",
    ]
    plass = _paper(data_dir, "ftp/arxiv/papers/1902/1902.11195.abs")
    assert "Wolfgang R. Plaß" in _names(plass)


def test_parse_abs_inline_affiliations(data_dir: Path) -> None:
    paper = _paper(data_dir, "ftp/hep-th/papers/9709/9709111.abs")
    assert [(a.raw_name, a.affiliations) for a in paper.authors] == [
        ("Andrea Brignole", ("CERN-TH",)),
        ("Ferruccio Feruglio", ("Padua Univ.",)),
        ("Fabio Zwirner", ("INFN-Padua",)),  # wrapped over two lines
    ]
    assert paper.authors[0].given_name == "Andrea"
    assert paper.authors[0].family_name == "Brignole"


def test_parse_abs_numbered_affiliations(data_dir: Path) -> None:
    # "Daisuke Kawata (1,2), Michael Rauch (1) ((1) Carnegie Observatories,
    # (2) Swinburne)"
    paper = _paper(data_dir, "ftp/arxiv/papers/0704/0704.0652.abs")
    assert [(a.raw_name, a.affiliations) for a in paper.authors] == [
        ("Daisuke Kawata", ("Carnegie Observatories", "Swinburne")),
        ("Michael Rauch", ("Carnegie Observatories",)),
    ]


def test_parse_abs_numbered_affiliations_with_and(data_dir: Path) -> None:
    # "Timo Dickel (1 and 2)", "Soumya Bagchi (1 and 2 and 6)"
    paper = _paper(data_dir, "ftp/arxiv/papers/1902/1902.11195.abs")
    by_name = {a.raw_name: a for a in paper.authors}
    assert len(paper.authors) == 32
    assert by_name["Timo Dickel"].affiliations == (
        "Justus-Liebig-Universität, Gießen, Germany",
        "GSI Helmholtzzentrum für Schwerionenforschung GmbH, Darmstadt, Germany",
    )
    assert by_name["Soumya Bagchi"].affiliations[2] == (
        "Saint Mary's University, Halifax, Canada"
    )


def test_parse_abs_numbered_affiliations_without_inner_parentheses(
    data_dir: Path,
) -> None:
    # "Saurav Dhital (1,2), ... (1 - Swarthmore College; 2 - Vanderbilt; ...)"
    paper = _paper(data_dir, "ftp/arxiv/papers/0704/0704.0307.abs")
    assert paper.authors[1].raw_name == "Saurav Dhital"
    assert paper.authors[1].affiliations == ("Swarthmore College", "Vanderbilt")
    assert paper.authors[-1].affiliations == ("UC Berkeley",)


def test_parse_abs_collaboration_prefix_is_its_own_slot(data_dir: Path) -> None:
    # "D0 Collaboration: V. Abazov, et al"
    paper = _paper(data_dir, "ftp/arxiv/papers/0808/0808.4142.abs")
    assert len(paper.authors) == 2
    d0, abazov = paper.authors
    assert d0.raw_name == "D0 Collaboration"
    assert d0.is_collaboration
    assert (d0.given_name, d0.family_name) == ("", "")
    assert abazov.raw_name == "V. Abazov"
    assert not abazov.is_collaboration
    assert (abazov.given_name, abazov.family_name) == ("V.", "Abazov")


def test_parse_abs_for_the_collaboration_follows_the_person(data_dir: Path) -> None:
    # "D.Peressounko (for the PHENIX Collaboration)": not an affiliation
    paper = _paper(data_dir, "ftp/arxiv/papers/0704/0704.0852.abs")
    person, collaboration = paper.authors
    assert (person.raw_name, person.family_name) == ("D.Peressounko", "Peressounko")
    assert person.given_name == "D."
    assert person.affiliations == ()
    assert collaboration.raw_name == "PHENIX Collaboration"
    assert collaboration.is_collaboration


def test_parse_abs_collaboration_forms(data_dir: Path) -> None:
    def slots(relative: str) -> list[tuple[str, bool]]:
        paper = _paper(data_dir, f"ftp/arxiv/papers/{relative}")
        return [(a.raw_name, a.is_collaboration) for a in paper.authors]

    # "B.Alver, et al, the PHOBOS Collaboration"
    assert slots("0704/0704.0966.abs") == [
        ("B.Alver", False),
        ("PHOBOS Collaboration", True),
    ]
    # "A. Abulencia et al. (CDF Collaboration)"
    assert slots("0704/0704.0760.abs") == [
        ("A. Abulencia", False),
        ("CDF Collaboration", True),
    ]
    # "Kenji Hamaguchi, the Suzaku Eta Carinae team and the Carinae D-1 team"
    assert slots("0704/0704.0346.abs") == [
        ("Kenji Hamaguchi", False),
        ("Suzaku Eta Carinae team", True),
        ("Carinae D-1 team", True),
    ]
    # "The CMS and LHCb Collaborations: V. Khachatryan, ..." is not cut at "and".
    assert slots("1411/1411.4413.abs")[:2] == [
        ("CMS and LHCb Collaborations", True),
        ("V. Khachatryan", False),
    ]
    # "The SuperSuper Collaboration, Yoichi Tamura, ..."
    assert slots("1501/1501.99999.abs")[:2] == [
        ("SuperSuper Collaboration", True),
        ("Yoichi Tamura", False),
    ]


def test_split_abs_authors_separators_and_suffix() -> None:
    authors = split_abs_authors(
        "A. One, B. Two and C. Three, D. Four,\\, Jr., & E. Five, and F. Six et al."
    )
    assert [a.raw_name for a in authors] == [
        "A. One",
        "B. Two",
        "C. Three",
        "D. Four, Jr.",
        "E. Five",
        "F. Six",
    ]
    assert (authors[3].family_name, authors[3].suffix) == ("Four", "Jr.")


def test_split_abs_authors_braced_umlaut() -> None:
    # No real .abs file writes {\"o}; arXiv accepts it as well as \"o.
    (author,) = split_abs_authors('Martin N{\\"o}llenburg (Karlsruhe)')
    assert author.raw_name == "Martin Nöllenburg"
    assert author.family_name == "Nöllenburg"
    assert author.affiliations == ("Karlsruhe",)


def test_split_abs_authors_nickname_stays_in_name() -> None:
    (liang,) = split_abs_authors("Zhe (Rita) Liang")
    assert liang.raw_name == "Zhe (Rita) Liang"
    assert (liang.given_name, liang.family_name) == ("Zhe", "Liang")
    assert liang.affiliations == ()


def test_split_abs_authors_propagates_affiliations_backwards(data_dir: Path) -> None:
    # "Xiaolin Li, ..., Won-Seok Seo and Hongjie Dai (Department of Chemistry,
    # Stanford University.)": arXiv's own convention gives all seven Stanford.
    paper = _paper(data_dir, "ftp/arxiv/papers/0704/0704.0113.abs")
    stanford = ("Department of Chemistry, Stanford University.",)
    assert len(paper.authors) == 7
    assert all(a.affiliations == stanford for a in paper.authors)
    alone = split_abs_authors(
        "Xiaolin Li, Hongjie Dai (Stanford)", propagate_affiliations=False
    )
    assert [a.affiliations for a in alone] == [(), ("Stanford",)]


def test_split_abs_authors_drops_not_shown_note(data_dir: Path) -> None:
    # "... W. Byczynski (750 additional authors not shown)"
    paper = _paper(data_dir, "ftp/arxiv/papers/1902/1902.05884.abs")
    assert len(paper.authors) == 101
    assert paper.authors[-1].raw_name == "W. Byczynski"
    assert all(a.affiliations == () for a in paper.authors)


def test_parse_abs_withdrawn(data_dir: Path) -> None:
    # Comments: "This paper has been withdrawn"
    assert _paper(data_dir, "ftp/arxiv/papers/0704/0704.0374.abs").withdrawn
    # Comments: "withdrawn by arXiv administrators due to plagiarism. ..."
    assert _paper(data_dir, "ftp/arxiv/papers/0704/0704.0525.abs").withdrawn
    assert not _paper(data_dir, "ftp/hep-th/papers/9709/9709111.abs").withdrawn
    # v2 of 0704.0615 was already withdrawn but its v1 was not.
    assert not _paper(data_dir, "orig/arxiv/papers/0704/0704.0615v2.abs").withdrawn


def test_parse_abs_empty_file_raises(data_dir: Path) -> None:
    item = _item(data_dir, "ftp/math-ph/papers/0509/0509037.abs")
    assert (
        item.external_id == "file:arxiv/abs_files/ftp/math-ph/papers/0509/0509037.abs"
    )
    with pytest.raises(RecordError, match=r"math-ph/papers/0509/0509037\.abs: empty"):
        parse_abs(item)


def test_parse_abs_invalid_utf8_raises(data_dir: Path) -> None:
    item = _item(data_dir, "ftp/arxiv/papers/1607/1607.08199.abs")
    assert item.external_id == "1607.08199v5"
    assert item.problem == "invalid UTF-8 at byte offset 731"
    assert "\ufffd" in item.payload
    with pytest.raises(
        RecordError, match=r"1607\.08199\.abs: invalid UTF-8 at byte offset 731"
    ):
        parse_abs(item)


def test_parse_abs_missing_id_raises() -> None:
    item = read_abs_file(FIXTURES / "no_id.abs", FIXTURES)
    with pytest.raises(RecordError, match=r"^no_id\.abs: no 'arXiv:' or 'Paper:'"):
        parse_abs(item)


def test_parse_abs_unparsable_date_raises(data_dir: Path) -> None:
    item = _item(data_dir, "ftp/hep-th/papers/9709/9709111.abs")
    broken = item.payload.replace("Tue, 23 Sep 1997", "Tue, 23 Sept 1997")
    with pytest.raises(RecordError, match=r"9709111\.abs: unparsable date for v2"):
        parse_abs(RawItem(item.external_id, broken, item.locator))


def test_parse_abs_missing_title_raises(data_dir: Path) -> None:
    item = _item(data_dir, "ftp/hep-th/papers/9709/9709111.abs")
    broken = item.payload.replace("Title: On the effective", "Titel: On the effective")
    with pytest.raises(RecordError, match=r"9709111\.abs: no title"):
        parse_abs(RawItem(item.external_id, broken, item.locator))


def test_parse_abs_all_files_counts(data_dir: Path) -> None:
    """Every real .abs file: any change in these counts is a behaviour change."""
    parsed: list[PaperRecord] = []
    failed: dict[str, str] = {}
    for path in sorted((data_dir / "arxiv" / "abs_files").rglob("*.abs")):
        item = read_abs_file(path, data_dir)
        try:
            parsed.append(parse_abs(item))
        except RecordError as exc:
            failed[item.locator] = str(exc)
    assert len(parsed) == 1190
    assert sorted(failed) == [
        "arxiv/abs_files/ftp/arxiv/papers/1607/1607.08199.abs",
        "arxiv/abs_files/ftp/math-ph/papers/0509/0509037.abs",
    ]
    authors = [a for paper in parsed for a in paper.authors]
    assert len(authors) == 7869
    assert sum(a.is_collaboration for a in authors) == 28
    assert sum(paper.withdrawn for paper in parsed) == 11
    assert sum(len(paper.versions) > 1 for paper in parsed) == 462
    assert sum(paper.arxiv_id.count("/") for paper in parsed) == 96
    assert all(a.raw_name and "et al" not in a.raw_name for a in authors)
    assert all(
        v.submitted and v.submitted.tzinfo is UTC
        for paper in parsed
        for v in paper.versions
    )


def test_and_others_ends_a_byline_and_is_no_author() -> None:
    # A hostile trial found "others" stored as an author.
    slots = split_abs_authors("A. One and B. Two and others")
    assert [a.raw_name for a in slots] == ["A. One", "B. Two"]
    assert [a.raw_name for a in split_abs_authors("A. One, B. Two, et al.")] == [
        "A. One",
        "B. Two",
    ]
