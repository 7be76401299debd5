"""Hostile and broken answers from live sources and saved files, from a tester's
probes: each costs only itself and ends with a clear reason, never a traceback or
a run left ``running``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from harvest import services
from harvest.models import HarvestRun, RawRecord
from harvest.sources.arxiv_oai import read_oai_file
from harvest.sources.polite_http import PoliteClient, Politeness
from harvest.sources.ror import ror_id_of
from wovepaper.identifiers import ror_normalise
from wovepaper.models import Institution, Paper

pytestmark = pytest.mark.django_db

DATA = Path(settings.WOVEPAPER_DATA_DIR)
QUICK = Politeness(min_interval=0, timeout=5, max_tries=2, backoff_base=0.01)
CROSSREF_WORK = "crossref/habanero_decoded/test-works__test_works_with_one_id__0.json"


def test_ror_ids_are_anchored_and_their_check_digits_verified():
    assert ror_normalise("https://ror.org/019wvm592") == "019wvm592"
    assert ror_id_of("https://evil.example/019wvm592") == ""
    assert ror_id_of("not-a-ror 019wvm592 trailing") == ""
    assert ror_id_of("https://ror.org/019wvm593") == ""  # wrong check digits
    with pytest.raises(ValueError, match="wrong check digits"):
        ror_normalise("019wvm593")


def test_a_ror_look_alike_does_not_overwrite_the_real_institution(tmp_path):
    Institution.objects.create(
        ror_id="019wvm592", name="Australian National University"
    )
    spoof = tmp_path / "spoof.json"
    spoof.write_text(
        json.dumps([{"id": "https://evil.example/019wvm592", "name": "EVIL"}])
    )
    run = services.harvest_files(source="ror", root=spoof)
    assert run.files_skipped  # no organisation record in it
    assert Institution.objects.get().name == "Australian National University"


def test_a_citation_count_past_the_column_costs_its_record_only(tmp_path):
    answer = json.loads((DATA / CROSSREF_WORK).read_text())
    good = answer["message"]
    huge = dict(good, DOI="10.1234/huge", **{"is-referenced-by-count": 2**63})
    page = {
        "status": "ok",
        "message-type": "work-list",
        "message": {"items": [good, huge]},
    }
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    run = services.harvest_files(source="crossref", root=path)
    assert (run.status, run.papers_created, run.records_failed) == ("finished", 1, 1)
    failed = RawRecord.objects.get(status="failed")
    assert "citation count 9223372036854775808 is out of range" in failed.error


def test_an_unexpected_error_ends_a_live_run_failed_not_running(server, monkeypatch):
    server.expect_request("/oai2").respond_with_data("x")

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr("harvest.sources.oai_pmh.oai_pages", broken)
    run = services.harvest_arxiv_oai(
        from_date=dt.date(2024, 1, 1),
        until_date=dt.date(2024, 1, 1),
        base_url=server.url_for("/oai2"),
        client=PoliteClient("arxiv", politeness=QUICK),
    )
    assert run.status == HarvestRun.Status.FAILED
    assert run.error == "unexpected error KeyError: 'a bug'"


def test_an_html_page_is_refused_at_once_not_retried_as_cut_short(server):
    server.expect_request("/oai2").respond_with_data(
        "<html><body>Service moved</body></html>", content_type="text/html"
    )
    with PoliteClient("arxiv", politeness=QUICK) as client:
        run = services.harvest_arxiv_oai(
            from_date=dt.date(2024, 1, 1),
            until_date=dt.date(2024, 1, 1),
            base_url=server.url_for("/oai2"),
            client=client,
        )
        assert client.requests == 1
    assert "not an OAI-PMH answer" in run.error


def test_a_url_that_is_not_one_is_refused_at_once():
    with PoliteClient("arxiv", politeness=QUICK) as client:
        run = services.harvest_arxiv_oai(
            from_date=dt.date(2024, 1, 1),
            until_date=dt.date(2024, 1, 1),
            base_url="notaurl",
            client=client,
        )
        assert client.requests == 1
    assert run.status == HarvestRun.Status.FAILED
    assert "notaurl" in run.error


def test_resume_zero_is_no_run_not_a_new_harvest():
    with pytest.raises(CommandError, match="no harvest run 0"):
        call_command("harvest", "arxiv", "--resume", "0", "--no-progress")
    assert HarvestRun.objects.count() == 0


def test_windows_reach_the_first_day_of_the_calendar_without_overflow():
    windows = services.oai_windows(dt.date(1, 1, 1), dt.date(1, 1, 20), 7)
    assert windows[-1] == ["0001-01-01", "0001-01-06"]


def test_a_refused_response_in_a_recording_costs_only_itself(arxiv_dir, tmp_path):
    nock = json.loads(
        (
            arxiv_dir
            / "oai_pmh_nock"
            / "oaipmh-listrecords---should-list-identifiers-from-arxiv.json"
        ).read_text()
    )
    good = nock[1]
    hostile = dict(
        good,
        response='<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "b">]><r>&a;</r>',
    )
    path = tmp_path / "recording.json"
    path.write_text(json.dumps([hostile, good]))
    items = list(read_oai_file(path))
    assert "refused XML with a DTD declaring entities" in items[0].problem
    assert [i.external_id for i in items[1:]] == [
        "oai:arXiv.org:1412.8544",
        "oai:arXiv.org:hep-th/9504118",
    ]


def test_a_one_line_page_cut_inside_its_last_record_reports_the_cut(
    arxiv_dir, tmp_path
):
    body = (
        arxiv_dir / "oai_dc" / "atomiklabs_listrecords_oai_dc_cs_2024-01-25.xml"
    ).read_text()
    one_line = " ".join(body.split("\n"))
    cut = one_line[: one_line.rindex("</record>") - 300]
    path = tmp_path / "cut.xml"
    path.write_text(cut)
    run = services.harvest_files(source="arxiv", root=path)
    assert run.papers_created == 4
    assert run.records_failed == 1
    assert "malformed XML" in RawRecord.objects.get(status="failed").error
    assert Paper.objects.count() == 4
