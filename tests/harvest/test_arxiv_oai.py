"""The arXiv OAI-PMH parser on recorded responses (read in place from shared/data)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from django.conf import settings

from harvest.records import PaperRecord, RawItem, RecordError, VersionRecord
from harvest.sources.arxiv_oai import parse_oai_record, read_oai_file, split_oai_xml

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv"
SAMPLE = "hepcrawl_oai/sample_arxiv_record.xml"
NOCK_LIST = "oai_pmh_nock/oaipmh-listrecords---should-list-identifiers-from-arxiv.json"
NOCK_GET = "oai_pmh_nock/oaipmh-getrecord---should-get-a-record.json"


@pytest.fixture
def data_dir() -> Path:
    """shared/data, the root every locator is relative to."""
    return Path(settings.WOVEPAPER_DATA_DIR)


def _items(data_dir: Path, relative: str) -> list[RawItem]:
    return list(read_oai_file(data_dir / "arxiv" / relative, data_dir))


def _papers(data_dir: Path, relative: str) -> dict[str, PaperRecord]:
    papers = (parse_oai_record(item) for item in _items(data_dir, relative))
    return {paper.arxiv_id: paper for paper in papers}


def _slots(paper: PaperRecord) -> list[tuple[str, bool]]:
    return [(a.raw_name, a.is_collaboration) for a in paper.authors]


def test_split_oai_xml_one_item_per_record(data_dir: Path) -> None:
    items = _items(data_dir, SAMPLE)
    assert len(items) == 12  # one GetRecord packing 12 records
    assert items[0].external_id == "oai:arXiv.org:1601.03238"
    assert items[0].locator == f"arxiv/{SAMPLE}#record-0"
    assert items[11].locator == f"arxiv/{SAMPLE}#record-11"
    assert items[0].payload.startswith("<record")
    assert items[0].payload.rstrip().endswith("</record>")
    assert len({item.external_id for item in items}) == 12


def test_read_oai_file_nock_skips_503_and_reads_list_records(data_dir: Path) -> None:
    items = _items(data_dir, NOCK_LIST)
    assert [item.external_id for item in items] == [
        "oai:arXiv.org:1412.8544",
        "oai:arXiv.org:hep-th/9504118",
    ]
    # Entry 0 is the recorded "503 Retry-After: 10"; entry 1 the records.
    assert items[0].locator == f"arxiv/{NOCK_LIST}#response-1#record-0"


def test_read_oai_file_nock_without_records_yields_none(data_dir: Path) -> None:
    for name in (
        "oaipmh-identify---should-identify-arxiv.json",
        "oaipmh-listidentifiers---should-list-identifiers-from-arxiv.json",
        "oaipmh-listidentifiers---should-list-identifiers-with-resumption-token-"
        "from-gulbenkian.json",
    ):
        assert _items(data_dir, f"oai_pmh_nock/{name}") == []


def test_parse_oai_record_nock_list_records(data_dir: Path) -> None:
    papers = _papers(data_dir, NOCK_LIST)
    paper = papers["1412.8544"]
    assert paper.external_id == "oai:arXiv.org:1412.8544"
    assert paper.title == (
        "A Kochen-Specker system has at least 22 vectors (extended abstract)"
    )
    assert [(a.raw_name, a.given_name, a.family_name) for a in paper.authors] == [
        ("Sander Uijlen", "Sander", "Uijlen"),
        ("Bas Westerbaan", "Bas", "Westerbaan"),
    ]
    assert all(a.affiliations == ("Radboud Universiteit",) for a in paper.authors)
    assert paper.categories == ["cs.DM"]
    assert paper.doi == "10.4204/eptcs.172.11"  # 10.4204/EPTCS.172.11
    assert paper.journal_ref == "EPTCS 172, 2014, pp. 154-164"
    assert paper.comments == "In Proceedings QPL 2014, arXiv:1412.8102"
    assert paper.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    assert paper.abstract.startswith("At the heart of the Conway-Kochen Free Will")
    assert len(paper.abstract.split("\n")) == 2  # two paragraphs
    old = papers["hep-th/9504118"]
    assert old.report_no == "GOET-TP 101/95"
    assert old.abstract.count('"strength"') == 1  # &quot; decoded


def test_parse_oai_record_datestamp_is_not_publication_date(data_dir: Path) -> None:
    paper = _papers(data_dir, NOCK_LIST)["1412.8544"]
    assert paper.published == date(2014, 12, 29)  # <created>
    assert paper.datestamp == date(2015, 1, 3)  # header <datestamp>
    assert paper.updated == date(2014, 12, 29)  # no <updated>: one version
    assert paper.version == 1
    assert paper.versions == [
        VersionRecord(1, datetime(2014, 12, 29, tzinfo=UTC)),
    ]


def test_parse_oai_record_updated_keeps_version_one(data_dir: Path) -> None:
    paper = _papers(data_dir, "hepcrawl_oai/arxiv-physics-hep-ex.xml")["1706.09418"]
    assert paper.published == date(2017, 6, 28)
    assert paper.updated == date(2017, 11, 26)
    assert paper.datestamp == date(2017, 12, 14)
    assert paper.version == 1
    assert [v.version for v in paper.versions] == [1]
    assert paper.categories == ["hep-ph", "hep-ex"]
    assert paper.primary_category == "hep-ph"


def test_parse_oai_record_getrecord_nock(data_dir: Path) -> None:
    (paper,) = _papers(data_dir, NOCK_GET).values()
    assert paper.arxiv_id == "1412.8544"
    assert len(paper.authors) == 2


def test_parse_oai_record_arxiv_element_without_namespace(data_dir: Path) -> None:
    # sample record 0's <arXiv> declares no namespace (so it sits in OAI's).
    paper = _papers(data_dir, SAMPLE)["1601.03238"]
    assert paper.title == (
        "Irreversible degradation of quantum coherence under relativistic motion"
    )
    assert paper.doi == "10.1103/physrevd.93.016005"
    assert paper.categories == ["quant-ph", "gr-qc", "hep-th"]


def test_parse_oai_record_collaboration_keynames(data_dir: Path) -> None:
    papers = _papers(data_dir, SAMPLE)
    # <keyname>Planck Collaboration</keyname> with no forenames
    assert _slots(papers["1601.03238"])[:2] == [
        ("Planck Collaboration", True),
        ("Jieci Wang", False),
    ]
    # <keyname>Teresa Maria Montaruli for the IceCube Collaboration</keyname>
    assert _slots(papers["1512.07978"]) == [
        ("Teresa Maria Montaruli", False),
        ("IceCube Collaboration", True),
    ]
    # <keyname>Sinya for JLQCD Collaboration</keyname>: a one-word name
    sinya = papers["1603.00997"]
    assert _slots(sinya) == [("Sinya", False), ("JLQCD Collaboration", True)]
    assert (sinya.authors[0].given_name, sinya.authors[0].family_name) == (
        "",
        "Sinya",
    )
    # NuPRISM / "Mark Scott for the" + collaborations / Hyper-K
    assert _slots(papers["1603.01251"]) == [
        ("Mark Scott", False),
        ("NuPRISM and Hyper-K collaborations", True),
    ]
    # Array / Keck + Collaborations / BICEP2 + a ":" keyname
    assert _slots(papers["1603.05976"])[:2] == [
        ("Keck Array and BICEP2 Collaborations", True),
        ("P. Ade", False),
    ]
    # Collaboration / "for the DES"
    assert _slots(papers["1606.06775"]) == [
        ("E. Bufanda", False),
        ("D. Hollowood", False),
        ("DES Collaboration", True),
    ]
    # Collaboration / "Dipanwita Dutta for the CMS"
    assert _slots(papers["1607.00786"]) == [
        ("Ruchi Chudasama", False),
        ("Dipanwita Dutta", False),
        ("CMS Collaboration", True),
    ]


def test_parse_oai_record_collaboration_with_affiliations(data_dir: Path) -> None:
    # Collaboration / Super-Kamiokande with two affiliations, then ":".
    paper = _papers(data_dir, SAMPLE)["1606.07538"]
    collaboration, abe = paper.authors[:2]
    assert collaboration.raw_name == "Super-Kamiokande Collaboration"
    assert collaboration.is_collaboration
    assert len(collaboration.affiliations) == 2
    assert (abe.raw_name, abe.is_collaboration) == ("K. Abe", False)


def test_parse_oai_record_on_behalf_affiliation_is_a_slot(data_dir: Path) -> None:
    # <affiliation>on behalf of Planck Collaboration</affiliation> on 5 persons
    paper = _papers(data_dir, SAMPLE)["1604.05585"]
    assert _slots(paper)[:3] == [
        ("Günter Burigana", False),
        ("Planck Collaboration", True),
        ("Tiziana Trombetti", False),
    ]
    assert len(paper.authors) == 6
    assert all(a.affiliations == () for a in paper.authors)


def test_parse_oai_record_group_keyname_is_collaboration(data_dir: Path) -> None:
    # <keyname>Group</keyname><forenames>The T2K Beam</forenames>
    paper = _papers(data_dir, SAMPLE)["1808.04927"]
    assert ("T2K Beam Group", True) in _slots(paper)
    assert _slots(paper)[:2] == [
        ("N. Abgrall", False),
        ("NA61/SHINE Collaboration", True),
    ]


def test_parse_oai_record_person_fields(data_dir: Path) -> None:
    paper = _papers(data_dir, SAMPLE)["1606.07066"]
    saxton = paper.authors[0]
    assert saxton.raw_name == "Curtis J. Saxton"
    assert (saxton.given_name, saxton.family_name) == ("Curtis J.", "Saxton")
    assert saxton.affiliations == ("Technion", "DESY")


def test_parse_oai_record_deleted_header() -> None:
    (item,) = read_oai_file(FIXTURES / "deleted_record.xml", FIXTURES)
    assert item.external_id == "oai:arXiv.org:0704.0999"
    paper = parse_oai_record(item)
    assert paper.deleted
    assert paper.arxiv_id == "0704.0999"
    assert paper.title == ""
    assert paper.datestamp == date(2024, 1, 1)
    assert paper.authors == []


def test_split_oai_xml_truncated_salvages_whole_records(data_dir: Path) -> None:
    text = (data_dir / "arxiv" / SAMPLE).read_text(encoding="utf-8")
    items = list(split_oai_xml(text[:5000], "cut.xml"))
    *records, fault = items
    assert [r.locator for r in records] == [
        f"cut.xml#record-{n}" for n in range(len(records))
    ]
    assert all(r.external_id.startswith("oai:arXiv.org:") for r in records)
    assert all(not r.problem for r in records)
    assert fault.external_id == "file:cut.xml"
    assert re.match(r"^cut\.xml: malformed XML at line 76, column \d+", fault.problem)
    assert f"({len(records)} whole <record> elements read one by one)" in fault.problem
    # Each salvaged record parses on its own, with its namespaces restored.
    assert all(parse_oai_record(r).arxiv_id for r in records)


def test_split_oai_xml_bad_character_costs_only_its_record() -> None:
    page = (
        '<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
        "<ListRecords>{}</ListRecords></OAI-PMH>"
    )
    record = (
        "<record><header><identifier>oai:arXiv.org:{id}</identifier>"
        "<datestamp>2020-01-01</datestamp></header><metadata>"
        '<arXiv xmlns="http://arxiv.org/OAI/arXiv/"><id>{id}</id>'
        "<created>2020-01-01</created><authors><author><keyname>Doe</keyname>"
        "<forenames>Jane</forenames></author></authors><title>{title}</title>"
        "<categories>hep-th</categories><abstract>A.</abstract></arXiv>"
        "</metadata></record>\n"
    )
    body = page.format(
        record.format(id="2001.00001", title="Good one")
        + record.format(id="2001.00002", title="Bad \x01 one")
        + record.format(id="2001.00003", title="Good two")
    )
    items = list(split_oai_xml(body, "page.xml"))
    assert [i.external_id for i in items] == [
        "oai:arXiv.org:2001.00001",
        "oai:arXiv.org:2001.00002",
        "oai:arXiv.org:2001.00003",
    ]
    assert parse_oai_record(items[0]).title == "Good one"
    assert parse_oai_record(items[2]).title == "Good two"
    with pytest.raises(RecordError, match=r"^page\.xml#record-1: malformed XML"):
        parse_oai_record(items[1])


def test_split_oai_xml_refuses_billion_laughs() -> None:
    data = (FIXTURES / "billion_laughs.xml").read_bytes()
    with pytest.raises(RecordError, match=r"lol\.xml: refused XML with a DTD"):
        list(split_oai_xml(data, "lol.xml"))


def test_split_oai_xml_refuses_external_entity() -> None:
    text = (FIXTURES / "xxe.xml").read_text(encoding="utf-8")
    with pytest.raises(RecordError, match=r"xxe\.xml: refused XML with a DTD"):
        list(split_oai_xml(text, "xxe.xml"))


def test_parse_oai_record_refuses_entities_in_payload() -> None:
    payload = (
        '<!DOCTYPE r [<!ENTITY a "x">]><record><header>'
        "<identifier>oai:arXiv.org:0704.0001</identifier></header></record>"
    )
    with pytest.raises(RecordError, match=r"^x#record-0: refused XML"):
        parse_oai_record(RawItem("oai:arXiv.org:0704.0001", payload, "x#record-0"))


def test_parse_oai_record_missing_id_or_title_raises(data_dir: Path) -> None:
    item = _items(data_dir, NOCK_LIST)[0]
    no_id = item.payload.replace("<id>1412.8544</id>", "")
    with pytest.raises(RecordError, match=r"#response-1#record-0: no <id>"):
        parse_oai_record(RawItem(item.external_id, no_id, item.locator))
    no_title = item.payload.replace("<title>", "<ttl>").replace("</title>", "</ttl>")
    with pytest.raises(RecordError, match=r"#response-1#record-0: no <title>"):
        parse_oai_record(RawItem(item.external_id, no_title, item.locator))


def test_parse_oai_record_all_files_counts(data_dir: Path) -> None:
    """Every hepcrawl and nock file: any change in these counts is a change."""
    folder = data_dir / "arxiv"
    paths = sorted((folder / "hepcrawl_oai").glob("*.xml"))
    paths += sorted((folder / "oai_pmh_nock").glob("*.json"))
    assert len(paths) == 25
    parsed: list[PaperRecord] = []
    failed: list[str] = []
    for path in paths:
        try:
            items = list(read_oai_file(path, data_dir))
        except RecordError as exc:
            failed.append(str(exc))
            continue
        for item in items:
            try:
                parsed.append(parse_oai_record(item))
            except RecordError as exc:
                failed.append(str(exc))
    assert failed == []
    assert len(parsed) == 33  # 30 hepcrawl records, 3 in the nock recordings
    assert len({paper.arxiv_id for paper in parsed}) == 21
    authors = [a for paper in parsed for a in paper.authors]
    assert len(authors) == 181
    assert sum(a.is_collaboration for a in authors) == 20
    assert not any(paper.deleted or paper.withdrawn for paper in parsed)
    assert all(paper.datestamp and paper.published for paper in parsed)
