"""A worker killed (SIGKILL) in the middle of a live OAI-PMH harvest.

A local server on 127.0.0.1 plays arXiv's part with real answers: AtomikLabs' 2024
oai_dc page (5 records and the real resumptionToken ``6960524|1001``), then, for that
token, arXiv's 2015 ListRecords page (2 records, the end of the list). The first
worker stores page one and is killed while it waits for page two (the server holds
that answer back). Redis hands the task out again; the second worker resumes the
same run from its token. The end state must equal an uninterrupted harvest of the
same answers, row for row.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import threading
import time

import pytest
from werkzeug import Response

from harvest.models import HarvestRun, RawRecord
from harvest.services import harvest_arxiv_oai
from harvest.sources.polite_http import PoliteClient, Politeness
from harvest.tasks import harvest_arxiv_oai_task
from tests.harvest.replay import nock_exchanges
from tests.integration.test_faults import VISIBILITY, _harvested, _run_counts
from tests.integration.workers import (
    broker_in_use,
    start_worker,
    stop_worker,
    task_result,
    wait_for,
)
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db(transaction=True)

LIST_2015 = "oai_pmh_nock/oaipmh-listrecords---should-list-identifiers-from-arxiv.json"
CS_2024 = "oai_dc/atomiklabs_listrecords_oai_dc_cs_2024-01-25.xml"
TOKEN = "6960524|1001"
FIRST_PAGE = {
    "verb": "ListRecords",
    "metadataPrefix": "oai_dc",
    "from": "2024-01-25",
    "until": "2024-01-25",
    "set": "cs",
}


def test_worker_killed_waiting_for_page_two_resumes_from_the_token(server, arxiv_dir):
    page_one = (arxiv_dir / CS_2024).read_text()
    page_two = nock_exchanges(arxiv_dir / LIST_2015)[1]["response"]
    asked_for_two = threading.Event()
    release = threading.Event()

    def held_back(request):
        asked_for_two.set()
        release.wait(60)
        return Response(page_two, content_type="text/xml")

    server.expect_ordered_request("/oai2", query_string=FIRST_PAGE).respond_with_data(
        page_one, content_type="text/xml"
    )
    token_query = {"verb": "ListRecords", "resumptionToken": TOKEN}
    server.expect_ordered_request(
        "/oai2", query_string=token_query
    ).respond_with_handler(held_back)
    server.expect_ordered_request("/oai2", query_string=token_query).respond_with_data(
        page_two, content_type="text/xml"
    )
    worker_env = {
        "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY),
        "HARVEST_ARXIV_INTERVAL": "0",
    }
    with broker_in_use():
        first = start_worker(**worker_env)
        try:
            sent = harvest_arxiv_oai_task.apply_async(
                kwargs={
                    "from_date": "2024-01-25",
                    "until_date": "2024-01-25",
                    "set_spec": "cs",
                    "metadata_prefix": "oai_dc",
                    "base_url": server.url_for("/oai2"),
                    "then_match": False,
                }
            )
            wait_for(asked_for_two.is_set, first, 120, every=0.05)
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
        finally:
            stop_worker(first)
            release.set()
        run = HarvestRun.objects.get()
        assert run.status == "running"
        assert json.loads(run.cursor) == {"window": 0, "position": TOKEN}
        assert Paper.objects.count() == 5

        time.sleep(VISIBILITY + 1)
        second = start_worker(**worker_env)
        try:
            counts = task_result(sent.id, second, 120)
        finally:
            stop_worker(second)

    server.check_assertions()
    run.refresh_from_db()
    assert counts["run"] == run.pk
    assert HarvestRun.objects.count() == 1  # the same run, resumed
    assert run.status == "finished", run.error
    resumed, resumed_counts = _harvested(), _run_counts(run)
    assert len(resumed["papers"]) == 7

    # The same answers, uninterrupted, in process.
    Authorship.objects.all().delete()
    Paper.objects.all().delete()
    RawRecord.objects.all().delete()
    HarvestRun.objects.all().delete()
    server.clear()
    server.expect_ordered_request("/oai2", query_string=FIRST_PAGE).respond_with_data(
        page_one, content_type="text/xml"
    )
    server.expect_ordered_request("/oai2", query_string=token_query).respond_with_data(
        page_two, content_type="text/xml"
    )
    quick = Politeness(min_interval=0, timeout=10)
    with PoliteClient("arxiv", politeness=quick) as client:
        reference = harvest_arxiv_oai(
            from_date=dt.date(2024, 1, 25),
            until_date=dt.date(2024, 1, 25),
            set_spec="cs",
            metadata_prefix="oai_dc",
            base_url=server.url_for("/oai2"),
            client=client,
        )
    assert _run_counts(reference) == resumed_counts
    assert _harvested() == resumed
