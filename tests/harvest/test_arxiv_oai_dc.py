"""The arXiv OAI-PMH parser on Dublin Core (``oai_dc``) records.

The real ``ListRecords`` page is read in place from shared/data; the malformed and
edge-case records are small ones written here.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from django.conf import settings

from harvest.records import PaperRecord, RawItem, RecordError, VersionRecord
from harvest.sources.arxiv_oai import parse_oai_record, read_oai_file

LIST_RECORDS = "atomiklabs_listrecords_oai_dc_cs_2024-01-25.xml"
IDS = ["1303.2033", "2401.14034", "2401.14036", "2401.14038", "2401.14040"]
DC_RECORD = """<record xmlns="http://www.openarchives.org/OAI/2.0/">
<header><identifier>oai:arXiv.org:0802.3300</identifier>
<datestamp>2024-01-01</datestamp><setSpec>cs</setSpec></header>
<metadata><oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"
 xmlns:dc="http://purl.org/dc/elements/1.1/">
{title}
<dc:creator>Collaborations, BICEP2</dc:creator>
<dc:creator>Collaboration, Dipanwita Dutta for the CMS</dc:creator>
<dc:creator>Bal\\'azs, C.</dc:creator>
<dc:description>Comment: 7 pages</dc:description>
<dc:description> An abstract
 in two paragraphs. </dc:description>
<dc:date>2008-02-22</dc:date>
<dc:identifier>{url}</dc:identifier>
<dc:identifier>J. of Math. Psychology, 53:5 (2009)</dc:identifier>
<dc:identifier>doi:10.1016/J.JMP.2009.02.001</dc:identifier>
<dc:rights>http://creativecommons.org/licenses/by/4.0/</dc:rights>
</oai_dc:dc></metadata></record>"""
TITLE = "<dc:title>A  quantum\n decision theory</dc:title>"
URL = "http://arxiv.org/abs/0802.3300"


@pytest.fixture
def data_dir() -> Path:
    """shared/data, the root every locator is relative to."""
    return Path(settings.WOVEPAPER_DATA_DIR)


@pytest.fixture
def papers(data_dir: Path) -> list[PaperRecord]:
    path = data_dir / "arxiv" / "oai_dc" / LIST_RECORDS
    return [parse_oai_record(item) for item in read_oai_file(path, data_dir)]


def _dc_item(title: str = TITLE, url: str = URL) -> RawItem:
    payload = DC_RECORD.format(title=title, url=url)
    return RawItem("oai:arXiv.org:0802.3300", payload, "dc.xml#record-0")


def test_parse_oai_record_oai_dc_all_records_parse(papers: list[PaperRecord]) -> None:
    assert [paper.arxiv_id for paper in papers] == IDS
    assert [paper.external_id for paper in papers] == [
        f"oai:arXiv.org:{arxiv_id}" for arxiv_id in IDS
    ]
    assert all(paper.source == "arxiv" and paper.title for paper in papers)


def test_parse_oai_record_oai_dc_first_record(papers: list[PaperRecord]) -> None:
    paper = papers[0]
    assert paper.title == "Extended Fourier analysis of signals"
    assert paper.published == date(2013, 3, 8)
    assert paper.updated == date(2024, 1, 23)
    assert paper.datestamp == date(2024, 1, 25)
    assert paper.version == 2
    assert paper.versions == [
        VersionRecord(1, datetime(2013, 3, 8, tzinfo=UTC)),
        VersionRecord(2, datetime(2024, 1, 23, tzinfo=UTC)),
    ]
    assert paper.abstract.startswith("This summary of the doctoral thesis is created")
    assert paper.categories == []
    assert paper.doi == paper.journal_ref == paper.license == ""


def test_parse_oai_record_oai_dc_creators_last_first(
    papers: list[PaperRecord],
) -> None:
    first = papers[0].authors[0]
    assert (first.raw_name, first.given_name, first.family_name) == (
        "Vilnis Liepins",
        "Vilnis",
        "Liepins",
    )
    byline = [(a.raw_name, a.given_name, a.family_name) for a in papers[1].authors]
    assert byline[:2] == [
        ("Chuankun Li", "Chuankun", "Li"),
        ("Shuai Li", "Shuai", "Li"),
    ]
    assert len(byline) == 6
    assert papers[2].authors[0].given_name == "Jiu-Cheng"


def test_parse_oai_record_oai_dc_comments_split_from_abstract(
    papers: list[PaperRecord],
) -> None:
    assert papers[0].comments == "32 pages, 9 figures"
    assert papers[4].comments == "Accepted to the Findings of EACL 2024"
    assert not any("Comment:" in paper.abstract for paper in papers)
    assert [paper.comments for paper in papers[1:4]] == ["", "", ""]


def test_parse_oai_record_oai_dc_file_counts(data_dir: Path) -> None:
    """Every oai_dc file: any change in these counts is a change."""
    paths = sorted((data_dir / "arxiv" / "oai_dc").glob("*.xml"))
    assert [path.name for path in paths] == [LIST_RECORDS]
    items = list(read_oai_file(paths[0], data_dir))
    assert len(items) == 5
    parsed = [parse_oai_record(item) for item in items]
    authors = [a for paper in parsed for a in paper.authors]
    assert len(authors) == 17
    assert not any(a.is_collaboration for a in authors)
    assert sum(paper.version for paper in parsed) == 6
    assert not any(paper.deleted or paper.withdrawn for paper in parsed)


def test_parse_oai_record_oai_dc_identifiers_rights_collaborations() -> None:
    paper = parse_oai_record(_dc_item())
    assert paper.arxiv_id == "0802.3300"
    assert paper.title == "A quantum decision theory"
    assert paper.doi == "10.1016/j.jmp.2009.02.001"
    assert paper.journal_ref == "J. of Math. Psychology, 53:5 (2009)"
    assert paper.license == "http://creativecommons.org/licenses/by/4.0/"
    assert paper.comments == "7 pages"
    assert paper.abstract == "An abstract\nin two paragraphs."
    assert [(a.raw_name, a.is_collaboration) for a in paper.authors] == [
        ("BICEP2 Collaborations", True),
        ("Dipanwita Dutta", False),
        ("CMS Collaboration", True),
        ("C. Balázs", False),
    ]
    assert paper.authors[3].family_name == "Balázs"


def test_parse_oai_record_oai_dc_missing_title_raises() -> None:
    with pytest.raises(RecordError, match=r"^dc\.xml#record-0: no <dc:title>"):
        parse_oai_record(_dc_item(title=""))


def test_parse_oai_record_oai_dc_id_mismatch_raises() -> None:
    with pytest.raises(RecordError, match=r"^dc\.xml#record-0: header id"):
        parse_oai_record(_dc_item(url="http://arxiv.org/abs/0704.0001"))


def test_parse_oai_record_oai_dc_missing_id_raises() -> None:
    payload = _dc_item(url="").payload.replace(
        "<identifier>oai:arXiv.org:0802.3300</identifier>", ""
    )
    with pytest.raises(RecordError, match=r"^dc\.xml#record-0: no arXiv id"):
        parse_oai_record(RawItem("dc.xml#record-0", payload, "dc.xml#record-0"))
