"""``manage.py demo`` and ``manage.py harvest`` end to end on real arXiv files."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from curation.models import Proposal
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db


def _demo(path) -> str:
    out = io.StringIO()
    call_command("demo", data=path, stdout=out)
    return out.getvalue()


def _counts() -> tuple[int, int, int]:
    return Paper.objects.count(), Authorship.objects.count(), Proposal.objects.count()


def test_demo_prints_summary_and_second_run_changes_no_counts(arxiv_dir):
    text = _demo(arxiv_dir / "hepcrawl_oai")
    first = _counts()

    assert re.search(
        r"harvest run #\d+: 30 records read, 19 papers created, 7 updated, 4 "
        r"unchanged, 0 rejected",
        text,
    )
    assert "records rejected: 0" in text
    assert re.search(r"new\s+pending\s+\d+", text)
    assert "wall time:" in text
    assert "demo curator: curator / curator-demo" in text
    assert first[0] == 19
    curator = get_user_model().objects.get(username="curator")
    assert curator.is_staff
    assert curator.has_perm("curation.decide_proposal")

    again = _demo(arxiv_dir / "hepcrawl_oai")

    assert _counts() == first
    assert re.search(r"0 papers created, 0 updated, 30 unchanged", again)


def test_demo_lists_rejected_records_with_their_reasons(arxiv_dir):
    text = _demo(arxiv_dir / "abs_files" / "ftp" / "math-ph")
    assert "records rejected: 1" in text
    assert "math-ph/papers/0509/0509037.abs" in text
    assert "empty file" in text


def test_demo_missing_data_folder_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="no such folder"):
        call_command("demo", data=tmp_path / "nowhere", stdout=io.StringIO())


def test_harvest_command_file_reports_counts(arxiv_dir):
    out = io.StringIO()
    call_command(
        "harvest",
        "arxiv",
        file=arxiv_dir / "hepcrawl_oai" / "sample_arxiv_record.xml",
        no_progress=True,
        stdout=out,
    )
    assert re.search(r"12 records, \d+ created", out.getvalue())
    assert Paper.objects.count() >= 10


def test_harvest_command_resume_unknown_run_is_an_error():
    with pytest.raises(CommandError, match="no harvest run 999"):
        call_command("harvest", "arxiv", resume=999, stdout=io.StringIO())


def test_harvest_command_lists_skipped_files(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not metadata")
    out = io.StringIO()
    call_command("harvest", "arxiv", file=notes, no_progress=True, stdout=out)
    assert "0 records" in out.getvalue()
    assert f"  skipped {notes}: not an arXiv .abs file" in out.getvalue()
