"""Live arXiv OAI-PMH harvest against a local server replaying real arXiv answers.

The pages are real: arXiv's 2015 ListRecords answer (preceded by its real ``503
Retry-After: 10``), AtomikLabs' 2024 oai_dc page with its real resumptionToken
``6960524|1001``, and a Gulbenkian ListIdentifiers list paged by a real token to an
empty final token. Only the OAI error answers (``noRecordsMatch``,
``badResumptionToken``, ``badArgument``) are written here, in the protocol's words.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from lxml import etree
from pytest_httpserver import HTTPServer

from harvest import selectors, services
from harvest.models import HarvestRun, RawRecord
from harvest.sources.oai_pmh import OAI_NS, OaiLoop, oai_pages
from harvest.sources.polite_http import PoliteClient, Politeness
from tests.harvest.replay import expect_exchange, nock_exchanges, split_path
from wovepaper.models import Paper

pytestmark = pytest.mark.django_db

NOCK = "oai_pmh_nock/"
LIST_2015 = NOCK + "oaipmh-listrecords---should-list-identifiers-from-arxiv.json"
GULBENKIAN = (
    NOCK + "oaipmh-listidentifiers---should-list-identifiers-with-resumption-token-"
    "from-gulbenkian.json"
)
CS_2024 = "oai_dc/atomiklabs_listrecords_oai_dc_cs_2024-01-25.xml"
TOKEN_2024 = "6960524|1001"
QUICK = Politeness(min_interval=0, timeout=5, max_tries=3, backoff_base=0.01)


def oai_error(code: str, text: str) -> str:
    """An OAI-PMH error answer (protocol section 3.6)."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<OAI-PMH xmlns="{OAI_NS}"><responseDate>2026-11-30T00:00:00Z</responseDate>'
        f'<request verb="ListRecords">http://127.0.0.1/oai2</request>'
        f'<error code="{code}">{text}</error></OAI-PMH>'
    )


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
def client(waits):
    with PoliteClient("arxiv", politeness=QUICK, sleep=waits.append) as http:
        yield http


@pytest.fixture
def page_2015(arxiv_dir) -> str:
    return nock_exchanges(arxiv_dir / LIST_2015)[1]["response"]


@pytest.fixture
def page_2024(arxiv_dir) -> str:
    return (arxiv_dir / CS_2024).read_text()


def ids_in(body: str) -> list[str]:
    return re.findall(r"<identifier>oai:arXiv.org:([^<]+)</identifier>", body)


def expect_2024_first_page(server: HTTPServer, body: str) -> None:
    server.expect_ordered_request(
        "/oai2",
        query_string={
            "verb": "ListRecords",
            "metadataPrefix": "oai_dc",
            "from": "2024-01-25",
            "until": "2024-01-25",
            "set": "cs",
        },
    ).respond_with_data(body, content_type="text/xml")


def expect_token(server: HTTPServer, token: str):
    return server.expect_ordered_request(
        "/oai2", query_string={"verb": "ListRecords", "resumptionToken": token}
    )


def harvest_2024(server, client, **kwargs) -> HarvestRun:
    return services.harvest_arxiv_oai(
        from_date=dt.date(2024, 1, 25),
        until_date=dt.date(2024, 1, 25),
        set_spec="cs",
        metadata_prefix="oai_dc",
        base_url=server.url_for("/oai2"),
        client=client,
        **kwargs,
    )


def test_oai_windows_are_newest_first_and_cover_the_range():
    windows = services.oai_windows(dt.date(2015, 1, 1), dt.date(2015, 1, 12), 5)
    assert windows == [
        ["2015-01-08", "2015-01-12"],
        ["2015-01-03", "2015-01-07"],
        ["2015-01-01", "2015-01-02"],
    ]
    assert services.oai_windows(dt.date(2015, 1, 2), dt.date(2015, 1, 1), 5) == []


def test_live_harvest_waits_out_the_real_503_and_lands_the_page(
    server, client, waits, arxiv_dir, page_2015
):
    for exchange in nock_exchanges(arxiv_dir / LIST_2015):
        expect_exchange(server, exchange)
    run = services.harvest_arxiv_oai(
        from_date=dt.date(2015, 1, 1),
        until_date=dt.date(2015, 1, 3),
        base_url=server.url_for("/oai2"),
        client=client,
    )
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert waits == [10.0]
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == sorted(
        ids_in(page_2015)
    )
    assert (run.records_seen, run.papers_created, run.records_failed) == (2, 2, 0)
    assert json.loads(run.cursor) == {"window": 1, "position": ""}
    assert run.params["windows"] == [["2015-01-01", "2015-01-03"]]
    paper = Paper.objects.get(arxiv_id="1412.8544")
    assert paper.source_datestamp == dt.date(2015, 1, 3)


def test_a_run_that_failed_mid_list_resumes_from_its_token_losing_nothing(
    server, client, page_2024, page_2015
):
    expect_2024_first_page(server, page_2024)
    # The second page is unavailable past the retry budget (3 tries).
    for _ in range(3):
        expect_token(server, TOKEN_2024).respond_with_data("down", status=503)
    run = harvest_2024(server, client)
    server.check_assertions()
    assert run.status == HarvestRun.Status.FAILED
    assert "failed 3 times; last: HTTP 503" in run.error
    assert json.loads(run.cursor) == {"window": 0, "position": TOKEN_2024}
    assert Paper.objects.count() == 5

    # Later the source answers: the run asks for the token's page, not the first.
    server.clear()
    expect_token(server, TOKEN_2024).respond_with_data(
        page_2015, content_type="text/xml"
    )
    run = services.harvest_arxiv_oai(run=run, client=client)
    server.check_assertions()
    assert len(server.log) == 1
    assert run.status == HarvestRun.Status.FINISHED
    assert run.error == ""
    expected = sorted(ids_in(page_2024) + ids_in(page_2015))
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == expected
    assert RawRecord.objects.count() == 7
    assert (run.records_seen, run.papers_created, run.records_failed) == (7, 7, 0)
    assert run.params["pages"] == 2


def test_a_repeated_resumption_token_stops_the_list_instead_of_looping(
    server, client, page_2024
):
    expect_2024_first_page(server, page_2024)
    expect_token(server, TOKEN_2024).respond_with_data(
        page_2024, content_type="text/xml"
    )
    run = harvest_2024(server, client)
    server.check_assertions()
    assert run.status == HarvestRun.Status.FAILED
    assert f"resumptionToken '{TOKEN_2024}' was handed out before" in run.error
    assert Paper.objects.count() == 5
    assert RawRecord.objects.count() == 5
    assert (run.papers_created, run.papers_unchanged) == (5, 5)


def test_an_expired_token_on_resume_restarts_the_window(
    server, client, arxiv_dir, page_2015
):
    run = services.harvest_run_start(
        source="arxiv",
        params={
            "mode": "oai",
            "base_url": server.url_for("/oai2"),
            "metadata_prefix": "arXiv",
            "set": "",
            "from": "2015-01-01",
            "until": "2015-01-03",
            "windows": [["2015-01-01", "2015-01-03"]],
            "pages": 0,
        },
    )
    run.cursor = json.dumps({"window": 0, "position": "expired-token"})
    run.save()
    expect_token(server, "expired-token").respond_with_data(
        oai_error("badResumptionToken", "The value of resumptionToken is invalid"),
        content_type="text/xml",
    )
    path, query = split_path(nock_exchanges(arxiv_dir / LIST_2015)[1]["path"])
    server.expect_ordered_request(path, query_string=query).respond_with_data(
        page_2015, content_type="text/xml"
    )
    run = services.harvest_arxiv_oai(run=run, client=client)
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == sorted(
        ids_in(page_2015)
    )


def test_windows_are_asked_newest_first_and_no_records_match_is_an_empty_window(
    server, client, page_2015, settings
):
    settings.HARVEST_WINDOW_DAYS = 5
    server.expect_ordered_request(
        "/oai2",
        query_string={
            "verb": "ListRecords",
            "metadataPrefix": "arXiv",
            "from": "2015-01-04",
            "until": "2015-01-08",
        },
    ).respond_with_data(
        oai_error("noRecordsMatch", "No records match"), content_type="text/xml"
    )
    server.expect_ordered_request(
        "/oai2",
        query_string={
            "verb": "ListRecords",
            "metadataPrefix": "arXiv",
            "from": "2015-01-01",
            "until": "2015-01-03",
        },
    ).respond_with_data(page_2015, content_type="text/xml")
    run = services.harvest_arxiv_oai(
        from_date=dt.date(2015, 1, 1),
        until_date=dt.date(2015, 1, 8),
        base_url=server.url_for("/oai2"),
        client=client,
    )
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert run.papers_created == 2
    assert json.loads(run.cursor) == {"window": 2, "position": ""}


def test_the_next_run_continues_from_the_last_finished_until(
    server, client, arxiv_dir, page_2015
):
    for exchange in nock_exchanges(arxiv_dir / LIST_2015)[1:]:
        expect_exchange(server, exchange)
    base = server.url_for("/oai2")
    first = services.harvest_arxiv_oai(
        from_date=dt.date(2015, 1, 1),
        until_date=dt.date(2015, 1, 3),
        base_url=base,
        client=client,
    )
    assert first.status == HarvestRun.Status.FINISHED
    assert selectors.live_next_from(
        source="arxiv", mode="oai", base_url=base, metadata_prefix="arXiv", set=""
    ) == dt.date(2015, 1, 3)
    # Another set is another list: it has no past.
    assert (
        selectors.live_next_from(
            source="arxiv", mode="oai", base_url=base, metadata_prefix="arXiv", set="cs"
        )
        is None
    )
    server.expect_ordered_request(
        "/oai2",
        query_string={
            "verb": "ListRecords",
            "metadataPrefix": "arXiv",
            "from": "2015-01-03",
            "until": "2015-01-05",
        },
    ).respond_with_data(page_2015, content_type="text/xml")
    second = services.harvest_arxiv_oai(
        until_date=dt.date(2015, 1, 5), base_url=base, client=client
    )
    server.check_assertions()
    assert second.params["from"] == "2015-01-03"
    assert (second.papers_created, second.papers_unchanged) == (0, 2)
    assert Paper.objects.count() == 2


def test_an_oai_error_fails_the_run_with_its_code_and_text(server, client):
    server.expect_request("/oai2").respond_with_data(
        oai_error("badArgument", "Illegal set value: nonsense"),
        content_type="text/xml",
    )
    run = services.harvest_arxiv_oai(
        from_date=dt.date(2024, 1, 1),
        until_date=dt.date(2024, 1, 2),
        set_spec="nonsense",
        base_url=server.url_for("/oai2"),
        client=client,
    )
    assert run.status == HarvestRun.Status.FAILED
    assert "OAI-PMH error badArgument: Illegal set value: nonsense" in run.error
    assert len(server.log) == 1


def test_a_page_cut_short_is_asked_again(server, client, waits, page_2024, page_2015):
    server.expect_ordered_request("/oai2").respond_with_data(
        page_2024[: len(page_2024) // 2], content_type="text/xml"
    )
    expect_2024_first_page(server, page_2024)
    expect_token(server, TOKEN_2024).respond_with_data(
        page_2015, content_type="text/xml"
    )
    run = harvest_2024(server, client)
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert (run.records_seen, run.papers_created, run.records_failed) == (7, 7, 0)
    assert len(waits) == 1  # one backoff before asking again


def test_one_bad_record_in_a_whole_page_costs_itself_and_paging_goes_on(
    server, client, page_2024, page_2015
):
    # A forbidden control character in the third record's title: the page is
    # complete but not well-formed XML.
    third = page_2024.index("<dc:title>", page_2024.index("2401.14036"))
    broken = page_2024[: third + 10] + "\x0b" + page_2024[third + 10 :]
    expect_2024_first_page(server, broken)
    expect_token(server, TOKEN_2024).respond_with_data(
        page_2015, content_type="text/xml"
    )
    run = harvest_2024(server, client)
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert (run.records_seen, run.papers_created, run.records_failed) == (7, 6, 1)
    failed = RawRecord.objects.get(status=RawRecord.Status.FAILED)
    assert failed.external_id == "oai:arXiv.org:2401.14036"
    assert "malformed XML" in failed.error
    assert not Paper.objects.filter(arxiv_id="2401.14036").exists()


def test_oai_pages_follow_the_real_gulbenkian_token_to_its_empty_end(
    server, client, arxiv_dir
):
    exchanges = nock_exchanges(arxiv_dir / GULBENKIAN)
    for exchange in exchanges:
        expect_exchange(server, exchange)
    path, query = split_path(exchanges[0]["path"])
    pages = list(
        oai_pages(
            client,
            server.url_for(path),
            verb="ListIdentifiers",
            metadata_prefix="oai_dc",
            from_date=query["from"],
            until_date=query["until"],
        )
    )
    server.check_assertions()
    assert [p.token for p in pages] == [
        "oai_dc/2016-01-01T00:00:00Z/2017-01-01T00:00:00Z//100",
        "",
    ]
    assert [p.complete_list_size for p in pages] == [154, 154]
    headers = [
        h
        for p in pages
        for h in etree.fromstring(p.body.encode()).iter(f"{{{OAI_NS}}}header")
    ]
    assert len(headers) == 154
    assert [h.get("status") for h in headers].count("deleted") == 1
    # The second request carries the token alone, as the protocol requires.
    second, _ = server.log[1]
    assert dict(second.args) == {
        "verb": "ListIdentifiers",
        "resumptionToken": pages[0].token,
    }


def test_oai_pages_refuse_a_token_that_comes_back(server, client, page_2024):
    expect_2024_first_page(server, page_2024)
    expect_token(server, TOKEN_2024).respond_with_data(
        page_2024, content_type="text/xml"
    )
    pages = oai_pages(
        client,
        server.url_for("/oai2"),
        metadata_prefix="oai_dc",
        from_date="2024-01-25",
        until_date="2024-01-25",
        set_spec="cs",
    )
    assert next(pages).token == TOKEN_2024
    assert next(pages).token == TOKEN_2024
    with pytest.raises(OaiLoop, match="handed out before"):
        next(pages)


def test_a_deleted_header_in_a_later_live_list_hides_the_paper(
    server, client, page_2024
):
    """The real 2024 cs page makes five papers; a later ListRecords answer
    (written here, in the protocol's words: arXiv's own lists hold none)
    reports one of them deleted: that paper is hidden, the others stay."""
    expect_2024_first_page(server, page_2024.replace(TOKEN_2024, ""))
    harvest_2024(server, client)
    gone = ids_in(page_2024)[2]
    assert Paper.objects.filter(hidden=False).count() == 5
    deleted = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<OAI-PMH xmlns="{OAI_NS}"><responseDate>2024-02-02T00:00:00Z'
        '</responseDate><request verb="ListRecords">http://127.0.0.1/oai2</request>'
        f'<ListRecords><record><header status="deleted"><identifier>oai:arXiv.org:'
        f"{gone}</identifier><datestamp>2024-02-01</datestamp><setSpec>cs</setSpec>"
        "</header></record></ListRecords></OAI-PMH>"
    )
    server.clear()
    server.expect_ordered_request(
        "/oai2",
        query_string={
            "verb": "ListRecords",
            "metadataPrefix": "oai_dc",
            "from": "2024-02-01",
            "until": "2024-02-01",
            "set": "cs",
        },
    ).respond_with_data(deleted, content_type="text/xml")
    run = services.harvest_arxiv_oai(
        from_date=dt.date(2024, 2, 1),
        until_date=dt.date(2024, 2, 1),
        set_spec="cs",
        metadata_prefix="oai_dc",
        base_url=server.url_for("/oai2"),
        client=client,
    )
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert (run.records_seen, run.papers_updated, run.records_failed) == (1, 1, 0)
    assert list(
        Paper.objects.filter(hidden=True).values_list("arxiv_id", flat=True)
    ) == [gone]
    assert Paper.objects.filter(hidden=False).count() == 4
