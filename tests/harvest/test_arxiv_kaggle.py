"""arXiv's metadata snapshot in JSON lines (the Kaggle dataset).

shared/data holds no snapshot file, so its lines are built here from the real
``.abs`` files, field by field, as arXiv builds the snapshot from the same
metadata: each must parse to the record its ``.abs`` file parses to.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from django.conf import settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from harvest import services
from harvest.models import RawRecord
from harvest.records import RawItem, RecordError
from harvest.services import files
from harvest.sources import arxiv_abs, arxiv_kaggle
from tests.harvest.snapshot_lines import UPDATED, snapshot_line
from tests.harvest.test_fuzz_parsers import _mutate, _mutation, _read_all
from wovepaper.models import Paper

FTP = "arxiv/abs_files/ftp"


def _abs_files() -> list[Path]:
    return sorted((settings.WOVEPAPER_DATA_DIR / FTP).rglob("*.abs"))


def _item(obj: object, n: int = 1) -> RawItem:
    text = json.dumps(obj) if not isinstance(obj, str) else obj
    return RawItem(external_id="", payload=text, locator=f"snapshot.json#line-{n}")


def _readable() -> list[tuple[Path, object]]:
    """The .abs files that parse, with their records."""
    out = []
    for path in _abs_files():
        try:
            out.append((path, arxiv_abs.parse_abs(arxiv_abs.read_abs_file(path))))
        except RecordError:
            continue
    return out


def test_every_readable_abs_file_parses_alike_as_a_snapshot_line():
    readable = _readable()
    assert len(readable) > 1000
    for path, expected in readable:
        if not expected.categories:
            continue  # old files without a Categories line: the snapshot has one
        got = arxiv_kaggle.parse_kaggle_record(_item(snapshot_line(path)))
        sizeless = [replace(v, size="") for v in expected.versions]
        assert got == replace(
            expected, versions=sizeless, datestamp=date.fromisoformat(UPDATED)
        ), path


def test_a_snapshot_line_reads_latex_bylines_affiliations_and_versions():
    path = settings.WOVEPAPER_DATA_DIR / FTP / "hep-th/papers/9709/9709111.abs"
    record = arxiv_kaggle.parse_kaggle_record(_item(snapshot_line(path)))
    assert (record.arxiv_id, record.version, record.external_id) == (
        "hep-th/9709111",
        3,
        "hep-th/9709111v3",
    )
    assert [a.raw_name for a in record.authors] == [
        "Andrea Brignole",
        "Ferruccio Feruglio",
        "Fabio Zwirner",
    ]
    assert record.authors[0].affiliations == ("CERN-TH",)
    assert (record.published, record.updated) == (date(1997, 9, 16), date(1997, 11, 3))
    assert record.datestamp == date(2024, 3, 1)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"id": None}, "no 'id'"),
        ({"id": "not an id"}, "unreadable arXiv id 'not an id'"),
        ({"title": "  "}, "no title"),
        ({"title": 7}, "'title' is int, not a string or null"),
        ({"versions": []}, "no 'versions' list"),
        ({"versions": [{"version": "1", "created": "x"}]}, "a version is not 'vN'"),
        ({"versions": [{"version": "v1"}]}, "version v1 has no 'created' date"),
        (
            {"versions": [{"version": "v1", "created": "yesterday"}]},
            "unparsable date for v1",
        ),
        ({"categories": ""}, "no categories"),
        ({"categories": "hep-th \u200b"}, r"'\u200b' is no arXiv category"),
        ({"update_date": "13/11/2008"}, "update_date '13/11/2008' is not YYYY-MM-DD"),
        # Forms date.fromisoformat reads on Python 3.11, not the snapshot's.
        ({"update_date": "20081113"}, "update_date '20081113' is not YYYY-MM-DD"),
        ({"update_date": "2008-W46-4"}, "is not YYYY-MM-DD"),
        # Digits of other scripts are no arXiv digits.
        ({"id": "\u0660\u0667\u0660\u0664.\u0660\u0660\u0660\u0667"}, "unreadable"),
        (
            {
                "versions": [
                    {"version": "v\u00b2", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}
                ]
            },
            "a version is not 'vN'",
        ),
        (
            {
                "versions": [
                    {"version": "v\u0661", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}
                ]
            },
            "a version is not 'vN'",
        ),
        (
            {
                "versions": [
                    {"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"},
                    {"version": "v1", "created": "Mon, 9 Apr 2007 19:18:42 GMT"},
                ]
            },
            "version v1 is listed twice",
        ),
        # Five digits after the dot only from 1501, four only before.
        ({"id": "0704.00001"}, "4 digits after the dot to 1412, 5 from 1501"),
        ({"id": "2501.0001"}, "4 digits after the dot to 1412, 5 from 1501"),
    ],
)
def test_a_broken_line_is_refused_naming_the_line_and_the_problem(change, problem):
    path = settings.WOVEPAPER_DATA_DIR / FTP / "hep-th/papers/9709/9709111.abs"
    line = {**snapshot_line(path), **change}
    with pytest.raises(RecordError, match=re.escape(problem)) as refused:
        arxiv_kaggle.parse_kaggle_record(_item(line, 7))
    assert str(refused.value).startswith("snapshot.json#line-7: ")


@pytest.mark.parametrize(
    ("line", "problem"),
    [("{not json", "not a JSON line"), ("[1, 2]", "a JSON list, not an object")],
)
def test_a_line_that_is_no_object_is_refused(line, problem):
    with pytest.raises(RecordError, match=re.escape(problem)):
        arxiv_kaggle.parse_kaggle_record(_item(line))


def test_recorded_exchanges_and_feeds_are_not_taken_for_snapshot_lines():
    data = settings.WOVEPAPER_DATA_DIR / "arxiv"
    recorded = sorted(data.glob("arxivpy_cassettes/*.json")) + sorted(
        data.glob("oai_pmh_nock/*.json")
    )
    assert len(recorded) >= 30
    assert not any(arxiv_kaggle.is_kaggle_file(p) for p in recorded)
    assert not arxiv_kaggle.is_kaggle_file(data / "abs_files/reasons.json")


def _snapshot_file(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    """A snapshot piece of the first ``count`` readable .abs files, one
    broken line after the second, a blank line and an invalid UTF-8 line."""
    lines, ids = [], []
    for path, record in _readable():
        if record.categories and len(ids) < count:
            lines.append(json.dumps(snapshot_line(path)).encode())
            ids.append(record.arxiv_id)
    lines[2:2] = [b'{"id": "0704.0001", "title": "cut', b"", b'{"id": "\xff"}']
    piece = tmp_path / "piece-aa.json"
    piece.write_bytes(b"\n".join(lines) + b"\n")
    return piece, ids


@pytest.mark.django_db
def test_harvesting_a_snapshot_piece_lands_every_good_line_and_records_the_rest(
    tmp_path,
):
    piece, ids = _snapshot_file(tmp_path, 40)
    run = services.harvest_arxiv_files(root=piece)
    assert set(Paper.objects.values_list("arxiv_id", flat=True)) == set(ids)
    assert run.records_failed == 2
    errors = dict(
        RawRecord.objects.exclude(error="").values_list("external_id", "error")
    )
    assert errors == {
        f"{piece}#line-3": f"{piece}#line-3: not a JSON line (Unterminated string "
        "starting at: line 1 column 30 (char 29))",
        f"{piece}#line-5": f"{piece}#line-5: invalid UTF-8 at byte offset 8",
    }
    # Harvested again: nothing changes.
    before = (Paper.objects.count(), RawRecord.objects.count())
    services.harvest_arxiv_files(root=piece)
    assert (Paper.objects.count(), RawRecord.objects.count()) == before


@pytest.mark.django_db
def test_a_snapshot_file_too_big_to_read_whole_is_skipped_saying_how_to_split_it(
    tmp_path, monkeypatch
):
    piece, _ = _snapshot_file(tmp_path, 5)
    monkeypatch.setattr(arxiv_kaggle, "MAX_FILE_BYTES", piece.stat().st_size - 1)
    run = services.harvest_arxiv_files(root=piece)
    assert not Paper.objects.exists()
    assert not RawRecord.objects.exists()
    [skipped] = run.files_skipped
    assert skipped["file"] == str(piece)
    assert (
        "over the 0 MB a file is read in; split it first (split -l 20000"
        in (skipped["reason"])
    )


def test_snapshot_pieces_are_found_under_a_folder_beside_abs_files(tmp_path):
    (tmp_path / "a.jsonl").write_text("{}\n")
    (tmp_path / "b.json").write_text("{}\n")
    (tmp_path / "c.txt").write_text("{}\n")
    found = [p.name for p in files.arxiv_files(tmp_path)]
    assert found == ["a.jsonl", "b.json"]


def test_a_file_of_one_long_line_is_not_read_whole_to_tell_it(tmp_path):
    # A minified answer: one line past the 1 MB the first line may have.
    long = tmp_path / "minified.json"
    long.write_text(json.dumps({"id": "0704.0001", "x": "y" * 2**20}))
    assert arxiv_kaggle.first_line_object(long) is None
    assert not arxiv_kaggle.is_kaggle_file(long)
    blank_first = tmp_path / "blank.json"
    blank_first.write_text('\n\n  \n{"id": "0704.0001"}\n')
    assert arxiv_kaggle.first_line_object(blank_first) == {"id": "0704.0001"}


@hypothesis_settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(_mutation, min_size=1, max_size=4))
def test_a_mutated_snapshot_piece_fails_only_with_a_record_error(tmp_path, steps):
    # Three real papers' lines, mutated as the other readers' seeds are.
    seed = b"\n".join(
        json.dumps(snapshot_line(path)).encode() for path in _abs_files()[:3]
    )
    path = tmp_path / "fuzzed.json"
    path.write_bytes(_mutate(seed, steps))
    _read_all(path)


def _killed_in_batch(monkeypatch, root: Path, n: int) -> tuple[object, list[int]]:
    """Harvest ``root`` in batches of 10, stopped by Ctrl-C as batch ``n`` is
    written; the source's writer is put back for the resume.

    Returns:
        ``(the stopped run, reloaded; the sizes of the batches begun)``.
    """
    from dataclasses import replace as with_field

    from harvest.services.runs import HarvestInterrupted

    monkeypatch.setattr(files, "BATCH_RECORDS", 10)
    source = files.FILE_SOURCES["arxiv"]
    begun: list[int] = []

    def stopped_at_n(**kwargs):
        begun.append(len(kwargs["items"]))
        if len(begun) == n:
            raise KeyboardInterrupt
        return source.write(**kwargs)

    monkeypatch.setitem(
        files.FILE_SOURCES, "arxiv", with_field(source, write=stopped_at_n)
    )
    with pytest.raises(HarvestInterrupted) as stopped:
        services.harvest_arxiv_files(root=root)
    monkeypatch.setitem(files.FILE_SOURCES, "arxiv", source)
    run = stopped.value.run
    run.refresh_from_db()
    return run, begun


@pytest.mark.django_db
def test_a_piece_is_written_in_batches_and_a_run_killed_among_them_resumes(
    tmp_path, monkeypatch
):
    piece, ids = _snapshot_file(tmp_path, 25)  # 25 papers and 2 broken lines
    run, written = _killed_in_batch(monkeypatch, piece, 2)
    # The first batch of 10 landed; the file is not done: the cursor says no
    # file, and 10 records of this one.
    assert written == [10, 10]
    assert RawRecord.objects.count() == 10
    assert services.files_cursor(run.cursor)[0] == 0
    assert files.file_progress(run.cursor) == (10, "")
    assert run.status == "failed"

    services.harvest_arxiv_files(root=piece, run=run)
    run.refresh_from_db()
    assert run.status == "finished"
    assert services.files_cursor(run.cursor)[0] == 1
    assert files.file_progress(run.cursor) == (0, "")
    assert RawRecord.objects.count() == 27  # each line once
    # Counted once each too: the resumed run skipped the 10 written.
    assert (run.records_seen, run.records_failed) == (27, 2)
    assert set(Paper.objects.values_list("arxiv_id", flat=True)) == set(ids)


@pytest.mark.parametrize(
    ("done", "last", "within", "current"),
    [
        (0, "", 0, ""),
        (3, "pieces/piece-ab.json", 0, ""),
        (0, "", 500, ""),
        (2, "a b/piece-aa.json", 1500, "a b/piece-ac.json"),
        (1, "x\udcff.json", 10, "y\udcfe z.json"),  # names that are not UTF-8
    ],
)
def test_a_file_run_cursor_keeps_the_files_done_and_a_file_written_in_part(
    done, last, within, current
):
    cursor = files._cursor(done, last, within, current)
    assert files.files_cursor(cursor) == (done, last)
    assert files.file_progress(cursor) == ((within, current) if within else (0, ""))


@pytest.mark.django_db
def test_a_folder_of_pieces_killed_inside_its_second_resumes_after_what_landed(
    tmp_path, monkeypatch
):
    folder = tmp_path / "pieces"
    folder.mkdir()
    first, _ = _snapshot_file(tmp_path, 12)  # 14 lines
    (folder / "piece-aa.json").write_bytes(first.read_bytes())
    second = [
        json.dumps(snapshot_line(path))
        for path, record in _readable()[40:80]
        if record.categories
    ][:30]
    (folder / "piece-ab.json").write_text("\n".join(second) + "\n")
    run, begun = _killed_in_batch(monkeypatch, folder, 4)
    assert begun == [10, 10, 10, 10]
    # 14 + 30 records in batches of 10: the second batch held the first
    # piece's last 4 and the second's first 6, the third 10 more of it.
    assert services.files_cursor(run.cursor) == (1, "piece-aa.json")
    assert files.file_progress(run.cursor) == (16, "piece-ab.json")
    assert RawRecord.objects.count() == 30
    services.harvest_arxiv_files(root=folder, run=run)
    run.refresh_from_db()
    assert RawRecord.objects.count() == 44
    assert run.records_seen == 44
    assert run.status == "finished"


def test_categories_keep_their_order_once_each_and_the_highest_version_names_it():
    path = settings.WOVEPAPER_DATA_DIR / FTP / "hep-th/papers/9709/9709111.abs"
    line = snapshot_line(path)
    line["categories"] = "hep-th  hep-ph hep-th"
    line["versions"] = list(reversed(line["versions"]))  # v3, v2, v1
    text = json.dumps(line)
    record = arxiv_kaggle.parse_kaggle_record(_item(text))
    assert record.categories == ["hep-th", "hep-ph"]
    assert [v.version for v in record.versions] == [1, 2, 3]
    assert arxiv_kaggle._external_id(text) == "hep-th/9709111v3"


@pytest.mark.django_db
def test_a_broken_first_line_costs_that_line_not_the_piece(tmp_path):
    piece, ids = _snapshot_file(tmp_path, 6)
    lines = piece.read_bytes().split(b"\n")
    cut = tmp_path / "cut.json"
    # As split -b leaves a piece: it starts with the end of a line.
    cut.write_bytes(b"\xef\xbb\xbf" + lines[0][40:] + b"\n" + b"\n".join(lines[1:]))
    run = services.harvest_arxiv_files(root=cut)
    landed = set(Paper.objects.values_list("arxiv_id", flat=True))
    assert landed == set(ids[1:])
    assert run.records_failed == 3  # the cut first line and the two broken


@pytest.mark.django_db
def test_a_byte_order_mark_costs_nothing(tmp_path):
    piece, ids = _snapshot_file(tmp_path, 4)
    marked = tmp_path / "marked.json"
    marked.write_bytes(b"\xef\xbb\xbf" + piece.read_bytes())
    services.harvest_arxiv_files(root=marked)
    assert set(Paper.objects.values_list("arxiv_id", flat=True)) == set(ids)


@pytest.mark.django_db
def test_files_too_long_or_too_big_to_read_whole_are_skipped_unread(
    tmp_path, monkeypatch
):
    piece, _ = _snapshot_file(tmp_path, 5)  # 8 lines
    monkeypatch.setattr(arxiv_kaggle, "MAX_FILE_LINES", 7)
    [skipped] = services.harvest_arxiv_files(root=piece).files_skipped
    assert (
        "8 lines of arXiv snapshot lines, over the 7 a file is read in"
        in (skipped["reason"])
    )
    # A recorded OAI-PMH answer bigger than a snapshot piece may be: not read.
    nock = settings.WOVEPAPER_DATA_DIR / "arxiv/oai_pmh_nock"
    big = tmp_path / "answer.json"
    big.write_bytes(sorted(nock.glob("*.json"))[0].read_bytes())
    monkeypatch.setattr(arxiv_kaggle, "MAX_FILE_BYTES", big.stat().st_size - 1)
    [skipped] = services.harvest_arxiv_files(root=big).files_skipped
    assert (
        "an arXiv response is read in, and no snapshot line among its"
        in (skipped["reason"])
    )
    assert not RawRecord.objects.exists()
    # A .jsonl file is snapshot lines or nothing.
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"a": 1}\n')
    [skipped] = services.harvest_arxiv_files(root=odd).files_skipped
    assert (
        "no arXiv snapshot line (an object with authors, id, title, versions)"
        in (skipped["reason"])
    )
