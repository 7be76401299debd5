"""The arXiv API client against a local server replaying arxiv.py's real answers:
paging by start, an empty page before totalResults retried, id lookups, the HTTP
400 error feed."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from harvest import services
from harvest.models import HarvestRun
from harvest.sources.arxiv_atom import _body_bytes, arxiv_api_pages
from harvest.sources.polite_http import PoliteClient, Politeness
from wovepaper.models import Paper

QUICK = Politeness(min_interval=0, timeout=5, max_tries=3, backoff_base=0.01)
CASSETTES = "arxivpy_cassettes"


def cassette(arxiv_dir, prefix: str) -> dict:
    [path] = (arxiv_dir / CASSETTES).glob(f"{prefix}_*.json")
    return json.loads(path.read_text())


def answer(server, query: dict, recorded: dict) -> None:
    server.expect_ordered_request("/api/query", query_string=query).respond_with_data(
        _body_bytes(recorded["body"]),
        status=recorded["status_code"],
        content_type="application/atom+xml",
    )


def test_pages_follow_start_and_an_empty_page_before_the_total_is_asked_again(
    server, arxiv_dir
):
    first = cassette(arxiv_dir, "q_testing_s0_m10")
    # The same feed with its entries cut: what the API sometimes answers under
    # load although totalResults is 214,881.
    hollow = dict(
        first, body=re.sub(r"<entry>.*</entry>", "", first["body"], flags=re.S)
    )
    asked = {"search_query": "testing", "id_list": "", "max_results": "10"}
    answer(server, {**asked, "start": "0"}, first)
    answer(server, {**asked, "start": "10"}, hollow)
    for start in (10, 20, 30):
        answer(
            server,
            {**asked, "start": str(start)},
            cassette(arxiv_dir, f"q_testing_s{start}_m10"),
        )
    with PoliteClient("arxiv", politeness=QUICK) as client:
        pages = list(
            itertools.islice(
                arxiv_api_pages(
                    client,
                    server.url_for("/api/query"),
                    search_query="testing",
                    max_results=10,
                ),
                4,
            )
        )
        assert client.requests == 5  # the hollow page was asked again
    server.check_assertions()
    assert [p.start for p in pages] == [0, 10, 20, 30]
    assert all(len(p.items) == 10 and p.total == 214881 for p in pages)
    ids = [i.external_id for p in pages for i in p.items]
    assert len(set(ids)) == 40


@pytest.mark.django_db
def test_an_id_lookup_stores_what_the_api_knows_and_counts_the_rest(server, arxiv_dir):
    answer(
        server,
        {
            "search_query": "",
            "id_list": "0808.05394,1707.08567",
            "start": "0",
            "max_results": "100",
        },
        cassette(arxiv_dir, "id_0808.05394_1707.08567"),
    )
    with PoliteClient("arxiv", politeness=QUICK) as client:
        run = services.harvest_arxiv_ids(
            ids=["0808.05394", "1707.08567"],
            base_url=server.url_for("/api/query"),
            client=client,
        )
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert list(Paper.objects.values_list("arxiv_id", flat=True)) == ["1707.08567"]
    assert run.params["missing"] == 1


@pytest.mark.django_db
def test_a_malformed_id_fails_the_run_with_the_apis_own_words(server, arxiv_dir):
    answer(
        server,
        {"search_query": "", "id_list": "abc", "start": "0", "max_results": "100"},
        cassette(arxiv_dir, "id_abc"),
    )
    with PoliteClient("arxiv", politeness=QUICK) as client:
        run = services.harvest_arxiv_ids(
            ids=["abc"], base_url=server.url_for("/api/query"), client=client
        )
        assert client.requests == 1  # a 400 is not asked again
    assert run.status == HarvestRun.Status.FAILED
    assert "arXiv API error (HTTP 400): incorrect id format for abc" in run.error
