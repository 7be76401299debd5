"""Hostile and broken inputs: each costs only itself, with an error that names it.

Inputs are small files written here from the real hep-th/9901001 record.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.conf import settings

from harvest import services
from harvest.models import RawRecord
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db


@pytest.fixture
def real_abs(arxiv_dir) -> str:
    return (arxiv_dir / "abs_files/ftp/hep-th/papers/9901/9901001.abs").read_text()


def _failed() -> dict[str, str]:
    return dict(
        RawRecord.objects.filter(status="failed").values_list("external_id", "error")
    )


def test_two_arxiv_records_with_one_doi_stay_two_papers(real_abs, tmp_path):
    (tmp_path / "a.abs").write_text(real_abs)
    other = real_abs.replace("arXiv:hep-th/9901001", "arXiv:hep-th/9912345").replace(
        "String Junctions and Their Duals", "A different paper"
    )
    (tmp_path / "b.abs").write_text(other)

    services.harvest_arxiv_files(root=tmp_path)

    first = Paper.objects.get(arxiv_id="hep-th/9901001")
    second = Paper.objects.get(arxiv_id="hep-th/9912345")
    assert first.title.startswith("String Junctions")
    assert first.doi == "10.1143/ptp.101.1155"
    assert second.title == "A different paper in Heterotic String Theory"
    assert second.doi is None  # the DOI is held once, by the paper that had it first


def test_too_long_category_is_refused_naming_the_field(real_abs, tmp_path):
    (tmp_path / "long.abs").write_text(
        real_abs.replace("Categories: hep-th", "Categories: hep-th " + "x" * 60)
    )
    (tmp_path / "good.abs").write_text(
        real_abs.replace("arXiv:hep-th/9901001", "arXiv:hep-th/9901002")
    )

    run = services.harvest_arxiv_files(root=tmp_path)

    assert run.records_failed == 1
    (error,) = _failed().values()
    assert "categories[1] is 60 characters long, at most 40 fit" in error
    assert Paper.objects.filter(arxiv_id="hep-th/9901002").exists()


def test_version_out_of_range_is_refused(real_abs, tmp_path):
    (tmp_path / "v.abs").write_text(
        real_abs.replace("Date (revised v3)", "Date (revised v99999)")
    )
    services.harvest_arxiv_files(root=tmp_path)
    (error,) = _failed().values()
    assert "version 99999 is out of range 1..32767" in error
    assert not Paper.objects.exists()


def test_control_characters_and_nul_are_removed(real_abs, tmp_path):
    (tmp_path / "c.abs").write_text(
        real_abs.replace("String Junctions", "Str\x00ing \x1b[31mJunctions").replace(
            "Authors: Yosuke Imamura", "Authors: Yosuke\x00 Imamura\x01"
        )
    )
    services.harvest_arxiv_files(root=tmp_path)
    paper = Paper.objects.get()
    assert paper.title.startswith("String [31mJunctions")
    assert Authorship.objects.get().raw_name == "Yosuke Imamura"
    raw = RawRecord.objects.get()
    assert "\x00" not in raw.payload
    assert "\x1b" in raw.payload  # the raw record keeps what PostgreSQL can store


def test_deeply_nested_json_fails_alone(arxiv_dir, tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "good.xml").write_bytes(
        (arxiv_dir / "hepcrawl_oai/arxiv-single.xml").read_bytes()
    )

    run = services.harvest_arxiv_files(root=tmp_path)

    assert Paper.objects.filter(arxiv_id="1401.2122").exists()
    (error,) = _failed().values()
    assert error.startswith(f"{tmp_path / 'deep.json'}: ")
    assert "nested too deeply" in error
    assert run.status == "finished"


def test_lone_surrogate_in_a_recording_fails_alone(arxiv_dir, tmp_path):
    body = (arxiv_dir / "hepcrawl_oai/arxiv-single.xml").read_text()
    recording = [
        {
            "status": 200,
            "path": "/oai2?verb=GetRecord&metadataPrefix=arXiv",
            "response": body.replace("New integrable", "New \ud800integrable"),
        }
    ]
    (tmp_path / "rec.json").write_text(json.dumps(recording))
    (tmp_path / "ok.abs").write_text(
        (arxiv_dir / "abs_files/ftp/hep-th/papers/9901/9901001.abs").read_text()
    )

    services.harvest_arxiv_files(root=tmp_path)

    assert Paper.objects.filter(arxiv_id="hep-th/9901001").exists()
    (error,) = _failed().values()
    assert "invalid Unicode at character" in error
    assert "rec.json#response-0" in error


def test_file_name_that_is_not_utf8_is_named_readably(real_abs, tmp_path):
    weird = os.fsencode(tmp_path) + b"/bad\xffname.abs"
    with open(weird, "wb") as handle:
        handle.write(real_abs.encode())

    run = services.harvest_arxiv_files(root=tmp_path)

    assert run.papers_created == 1
    raw = RawRecord.objects.get()
    assert raw.locator.endswith("bad\ufffdname.abs")


def test_file_of_unknown_kind_is_listed_as_skipped(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    run = services.harvest_arxiv_files(root=notes)
    assert run.files_skipped == [
        {
            "file": str(notes),
            "reason": f"{notes}: not an arXiv .abs file, OAI-PMH or Atom .xml, "
            "recorded .json, or snapshot JSON lines",
        }
    ]
    assert not RawRecord.objects.exists()


def test_a_failed_record_is_logged_with_its_run_and_locator(real_abs, tmp_path, caplog):
    (tmp_path / "long.abs").write_text(
        real_abs.replace("Categories: hep-th", "Categories: hep-th " + "x" * 60)
    )
    with caplog.at_level("WARNING", logger="harvest.services"):
        run = services.harvest_arxiv_files(root=tmp_path)
    (entry,) = [r for r in caplog.records if "record failed" in r.getMessage()]
    raw = RawRecord.objects.get(status="failed")
    # The structured fields a JSON log line carries (LOG_FORMAT=json).
    assert (entry.harvest_run, entry.raw_record, entry.source) == (
        run.pk,
        raw.pk,
        "arxiv",
    )
    assert entry.record.endswith("long.abs")


def test_nul_in_a_version_size_and_an_empty_byline_piece_cost_nothing(
    real_abs, tmp_path
):
    """Text inside the version history is cleaned like every other string, and
    a byline piece that prints as nothing (``{}``) names nobody: the paper lands
    with its real authors."""
    text = real_abs.replace("kb)", "kb\x00)", 1).replace(
        "Authors: Yosuke Imamura", "Authors: Yosuke Imamura, {}"
    )
    assert "\x00" in text
    assert ", {}" in text
    (tmp_path / "v.abs").write_text(text)
    run = services.harvest_arxiv_files(root=tmp_path)
    assert (run.papers_created, run.records_failed) == (1, 0), _failed()
    paper = Paper.objects.get()
    assert all("\x00" not in str(v) for v in paper.versions)
    assert list(paper.authorships.values_list("raw_name", flat=True)) == [
        "Yosuke Imamura"
    ]


def test_a_stray_carriage_return_in_a_header_does_not_cut_the_field(real_abs, tmp_path):
    (tmp_path / "r.abs").write_text(
        real_abs.replace(
            "Authors: Yosuke Imamura", "Authors: Yosuke\rImamura, Bob\u2028Newline"
        ),
        newline="",
    )
    services.harvest_arxiv_files(root=tmp_path)
    assert list(Authorship.objects.values_list("raw_name", flat=True)) == [
        "Yosuke Imamura",
        "Bob Newline",
    ]


def _unreadable(monkeypatch, name: str) -> None:
    """Reading the file called ``name`` fails as a file without read permission
    does (root, running the tests, reads any file, so chmod cannot show it)."""
    read_bytes, read_text = Path.read_bytes, Path.read_text

    def refuse(path):
        if path.name == name:
            raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(Path, "read_bytes", lambda p: refuse(p) or read_bytes(p))
    monkeypatch.setattr(
        Path, "read_text", lambda p, *a, **k: refuse(p) or read_text(p, *a, **k)
    )


def test_an_unreadable_file_is_a_failed_record_and_the_harvest_goes_on(
    real_abs, tmp_path, monkeypatch
):
    (tmp_path / "a.abs").write_text(real_abs)
    (tmp_path / "b.abs").write_text(real_abs)
    (tmp_path / "c.abs").write_text(real_abs.replace("9901001", "9912345"))
    _unreadable(monkeypatch, "b.abs")
    run = services.harvest_arxiv_files(root=tmp_path)
    assert run.status == run.Status.FINISHED
    assert run.papers_created == 2
    assert run.records_failed == 1
    (error,) = _failed().values()
    assert error.startswith(f"{tmp_path / 'b.abs'}: unreadable file (PermissionError")


def test_an_unreadable_saved_answer_is_a_failed_record_for_the_json_sources(
    tmp_path, monkeypatch
):
    source = settings.WOVEPAPER_DATA_DIR / "openalex/peneira_works_page"
    for path in sorted(source.glob("*.json")):
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "zz.json").write_text("{}")
    _unreadable(monkeypatch, "zz.json")
    run = services.harvest_files(source="openalex", root=tmp_path)
    assert run.status == run.Status.FINISHED
    assert run.papers_created > 0
    (error,) = _failed().values()
    assert error.startswith(f"{tmp_path / 'zz.json'}: unreadable file")
