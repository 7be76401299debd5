"""arXivRaw records and the free-text bylines they carry (issue 49, part 1).

The input is ``tests/fixtures/arxiv/arxivraw_listrecords.xml``, written for these
tests: arXiv 0704.0001 as its real ``.abs`` file prints it, and records whose
bylines are of the kinds other harvesters got wrong. The ``.abs`` reader is
checked on the same bylines, in a real file rewritten with each.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from harvest import services
from harvest.records import RawItem
from harvest.sources.arxiv_abs import byline_incomplete, split_abs_authors
from harvest.sources.arxiv_oai import parse_oai_record, read_oai_file
from wovepaper.models import Authorship, Paper

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "arxiv"
RAW = FIXTURE / "arxivraw_listrecords.xml"
ABS_0704_0001 = "abs_files/ftp/arxiv/papers/0704/0704.0001.abs"


def _records() -> dict:
    return {r.arxiv_id: r for r in (parse_oai_record(i) for i in read_oai_file(RAW))}


def _slots(record) -> list[tuple[str, bool, tuple[str, ...]]]:
    return [(a.raw_name, a.is_collaboration, a.affiliations) for a in record.authors]


def test_an_arxivraw_record_reads_like_its_abs_file(arxiv_dir):
    raw = _records()["0704.0001"]
    abs_record = services.arxiv_reader_for(arxiv_dir / ABS_0704_0001).parse(
        next(
            services.arxiv_reader_for(arxiv_dir / ABS_0704_0001).split(
                arxiv_dir / ABS_0704_0001, None
            )
        )
    )
    assert raw.external_id == "0704.0001v2"
    assert [(v.version, v.submitted.isoformat(), v.size) for v in raw.versions] == [
        (1, "2007-04-02T19:18:42+00:00", "443kb"),
        (2, "2007-07-24T20:10:27+00:00", "370kb"),
    ]
    assert raw.versions == abs_record.versions
    assert (raw.published, raw.updated) == (abs_record.published, abs_record.updated)
    assert _slots(raw) == _slots(abs_record)
    assert [a.raw_name for a in raw.authors][0] == "C. Balázs"
    for field in ("title", "abstract", "doi", "journal_ref", "report_no", "categories"):
        assert getattr(raw, field) == getattr(abs_record, field), field
    assert raw.datestamp.isoformat() == "2008-11-13"
    assert not raw.authors_incomplete


def test_and_before_the_last_name_separates_people():
    assert _slots(_records()["2401.00011"]) == [
        ("Ana Ruiz", False, ()),
        ("Tomasz Nowak", False, ()),
        ("Li Wei", False, ()),
    ]


def test_an_affiliation_holding_commas_and_and_belongs_to_the_person_before_it():
    assert _slots(_records()["2401.00012"]) == [
        ("J. Smith", False, ("Univ. of Oxford, UK and CERN",)),
        ("K. Lee", False, ("KEK",)),
    ]


def test_et_al_is_no_author_and_marks_the_byline_incomplete():
    record = _records()["2401.00013"]
    assert _slots(record) == [("M. Rossi", False, ()), ("P. Conti", False, ())]
    assert record.authors_incomplete
    assert record.version == 2


@pytest.mark.parametrize(
    ("arxiv_id", "person"),
    [("2401.00014", "Kalle Virtanen"), ("2401.00015", "R. Singh")],
)
def test_a_person_for_a_collaboration_is_a_person_and_a_collaboration(arxiv_id, person):
    names = [(a.raw_name, a.is_collaboration) for a in _records()[arxiv_id].authors]
    collaboration = "ATLAS Collaboration" if "14" in arxiv_id else "CMS Collaboration"
    assert names == [(person, False), (collaboration, True)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "Kalle Virtanen for the ATLAS Collaboration",
            [("Kalle Virtanen", False), ("ATLAS Collaboration", True)],
        ),
        (
            "A. Ito and B. Sato on behalf of the Belle II Collaboration",
            [("A. Ito", False), ("B. Sato", False), ("Belle II Collaboration", True)],
        ),
        ("for the PHENIX Collaboration", [("PHENIX Collaboration", True)]),
        (
            "The Alliance for Cellular Signaling Collaboration",
            [("Alliance for Cellular Signaling Collaboration", True)],
        ),
        (
            "Sinya for JLQCD Collaboration",
            [("Sinya", False), ("JLQCD Collaboration", True)],
        ),
    ],
)
def test_the_abs_reader_splits_a_person_for_a_collaboration(line, expected):
    assert [(a.raw_name, a.is_collaboration) for a in split_abs_authors(line)] == (
        expected
    )


def test_an_affiliation_before_for_the_is_the_persons():
    [person, collaboration] = split_abs_authors(
        "Jane Doe (CERN) for the ATLAS Collaboration"
    )
    assert (person.raw_name, person.affiliations) == ("Jane Doe", ("CERN",))
    assert (collaboration.raw_name, collaboration.is_collaboration) == (
        "ATLAS Collaboration",
        True,
    )


@pytest.mark.parametrize(
    ("line", "incomplete"),
    [
        ("M. Rossi, P. Conti, et al.", True),
        ("M. Rossi et al", True),
        ("A. Smith and others", True),
        ("R. Aaij, M. Zhou (750 additional authors not shown)", True),
        ("Ana Ruiz, Tomasz Nowak and Li Wei", False),
        ("E. Etal, M. Alba", False),
        ("", False),
    ],
)
def test_byline_incomplete(line, incomplete):
    assert byline_incomplete(line) is incomplete


@pytest.mark.django_db
def test_harvesting_arxivraw_files_stores_the_incomplete_mark_and_shows_it(client):
    run = services.harvest_files(source="arxiv", root=RAW)
    assert (run.records_seen, run.records_failed) == (6, 0)
    cut = Paper.objects.get(arxiv_id="2401.00013")
    assert cut.authors_incomplete
    assert not Paper.objects.get(arxiv_id="0704.0001").authors_incomplete
    assert list(
        Authorship.objects.filter(paper__arxiv_id="2401.00014")
        .order_by("position")
        .values_list("raw_name", "is_collaboration")
    ) == [("Kalle Virtanen", False), ("ATLAS Collaboration", True)]
    assert Paper.objects.get(arxiv_id="0704.0001").versions[1]["size"] == "370kb"

    page = client.get(cut.get_absolute_url(), follow=True).content.decode()
    assert "The source lists only some of the authors" in page
    api = client.get("/api/papers/2401.00013/").json()
    assert api["authors_incomplete"] is True
    assert client.get("/api/papers/0704.0001/").json()["authors_incomplete"] is False


@pytest.mark.django_db
def test_live_harvest_asks_for_arxivraw(httpserver, tmp_path):
    httpserver.expect_ordered_request(
        "/oai2",
        query_string={
            "verb": "ListRecords",
            "metadataPrefix": "arXivRaw",
            "from": "2024-01-01",
            "until": "2024-01-03",
        },
    ).respond_with_data(RAW.read_text(), content_type="text/xml")
    call_command(
        "harvest",
        "arxiv",
        "--url",
        httpserver.url_for("/oai2"),
        "--from",
        "2024-01-01",
        "--until",
        "2024-01-03",
        "--format",
        "arXivRaw",
        "--no-progress",
    )
    assert Paper.objects.count() == 6
    assert Paper.objects.get(arxiv_id="0704.0001").latest_version == 2


def test_an_arxivraw_record_without_versions_names_the_problem():
    body = RAW.read_text()
    start = body.index("<record><header><identifier>oai:arXiv.org:2401.00011")
    end = body.index("</record>", start) + len("</record>")
    record = body[start:end].replace(
        '<version version="v1"><date>Mon, 1 Jan 2024 09:00:00 GMT</date>'
        "<size>120kb</size></version>",
        "",
    )
    item = RawItem(external_id="oai:arXiv.org:2401.00011", payload=record, locator="x")
    with pytest.raises(Exception, match="x: no <version>"):
        parse_oai_record(item)


@pytest.mark.django_db
def test_the_harvest_command_embeds_what_it_harvested(settings, capsys):
    settings.EMBED_AFTER_HARVEST = True
    call_command("harvest", "arxiv", "--file", str(RAW), "--no-progress")
    out = capsys.readouterr().out
    assert "embedded 6, 0 unchanged" in out
    from wovepaper.models import PaperEmbedding

    assert PaperEmbedding.objects.count() == 6


@pytest.mark.django_db
def test_format_is_refused_with_files():
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="files are read in whatever format"):
        call_command("harvest", "arxiv", "--file", str(RAW), "--format", "oai_dc")
