"""The polite HTTP client against a local server: rate limit, Retry-After, backoff.

Waits go through a recorder instead of ``time.sleep`` where the figure is the point
(the real arXiv 503 asks for 10 s); the pacing and timeout tests wait for real.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from werkzeug import Response

from harvest.sources.polite_http import (
    PoliteClient,
    Politeness,
    SourceRefused,
    SourceUnavailable,
    UnusableBody,
    host_interval,
    retry_after_seconds,
    user_agent,
)
from tests.harvest.replay import expect_exchange, nock_exchanges

ARXIV_503 = "oai_pmh_nock/oaipmh-listrecords---should-list-identifiers-from-arxiv.json"
QUICK = Politeness(min_interval=0, timeout=5, max_tries=4, backoff_base=1)


def test_retry_after_seconds_reads_delay_seconds_and_http_date():
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert retry_after_seconds("10") == 10.0
    assert retry_after_seconds(" 0 ") == 0.0
    later = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds(later, now=now) == 90.0
    earlier = format_datetime(now - timedelta(seconds=90), usegmt=True)
    assert retry_after_seconds(earlier, now=now) == 0.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None


def test_real_arxiv_503_retry_after_is_waited_out_then_the_page_read(server, arxiv_dir):
    exchanges = nock_exchanges(arxiv_dir / ARXIV_503)
    assert [e["status"] for e in exchanges] == [503, 200]
    for exchange in exchanges:
        expect_exchange(server, exchange)
    waits: list[float] = []
    with PoliteClient("arxiv", politeness=QUICK, sleep=waits.append) as client:
        response = client.get(
            server.url_for("/oai2"),
            {
                "metadataPrefix": "arXiv",
                "from": "2015-01-01",
                "until": "2015-01-03",
                "verb": "ListRecords",
            },
        )
    assert response.status_code == 200
    assert "oai:arXiv.org:1412.8544" in response.text
    assert waits == [10.0]  # the recorded "Retry-After: 10", not a backoff guess
    assert client.requests == 2
    server.check_assertions()


def test_429_storm_without_retry_after_backs_off_exponentially(server):
    for _ in range(3):
        server.expect_ordered_request("/works").respond_with_data("slow", status=429)
    server.expect_ordered_request("/works").respond_with_data("{}", status=200)
    waits: list[float] = []
    politeness = Politeness(min_interval=0, max_tries=5, backoff_base=2)
    with PoliteClient("crossref", politeness=politeness, sleep=waits.append) as client:
        assert client.get(server.url_for("/works")).text == "{}"
    assert len(waits) == 3
    # 2 * 2**n seconds, plus up to 2 s of jitter.
    for n, wait in enumerate(waits):
        assert 2 * 2**n <= wait <= 2 * 2**n + 2


def test_retry_after_as_http_date_is_honoured(server):
    when = datetime.now(UTC) + timedelta(seconds=30)
    server.expect_ordered_request("/x").respond_with_data(
        "busy", status=503, headers={"Retry-After": format_datetime(when, usegmt=True)}
    )
    server.expect_ordered_request("/x").respond_with_data("ok")
    waits: list[float] = []
    with PoliteClient("arxiv", politeness=QUICK, sleep=waits.append) as client:
        assert client.get(server.url_for("/x")).text == "ok"
    assert len(waits) == 1
    assert 27 <= waits[0] <= 30


def test_endless_503_fails_after_the_budget_naming_url_and_reason(server):
    server.expect_request("/oai2").respond_with_data(
        "down", status=503, headers={"Retry-After": "5"}
    )
    waits: list[float] = []
    client = PoliteClient("arxiv", politeness=QUICK, sleep=waits.append)
    with pytest.raises(
        SourceUnavailable, match=r"/oai2 failed 4 times; last: HTTP 503"
    ):
        client.get(server.url_for("/oai2"))
    assert waits == [5.0, 5.0, 5.0]
    assert client.requests == 4


def test_retry_after_past_the_give_up_limit_fails_at_once(server):
    server.expect_request("/x").respond_with_data(
        "later", status=503, headers={"Retry-After": "86400"}
    )
    client = PoliteClient("arxiv", politeness=QUICK, sleep=lambda s: None)
    with pytest.raises(SourceUnavailable, match="retry after 86400 s; resume later"):
        client.get(server.url_for("/x"))
    assert client.requests == 1


def test_other_4xx_is_refused_without_retry(server):
    server.expect_request("/works/10.1/nope").respond_with_data(
        "Resource not found.", status=404
    )
    client = PoliteClient("crossref", politeness=QUICK, sleep=lambda s: None)
    with pytest.raises(SourceRefused, match="HTTP 404: Resource not found."):
        client.get(server.url_for("/works/10.1/nope"))
    assert client.requests == 1


def test_a_hanging_server_times_out_and_the_next_try_is_served(server):
    def hang(request):
        time.sleep(2.0)
        return Response("late")

    server.expect_ordered_request("/x").respond_with_handler(hang)
    server.expect_ordered_request("/x").respond_with_data("ok")
    politeness = Politeness(min_interval=0, timeout=0.5, max_tries=3, backoff_base=0.1)
    started = time.monotonic()
    with PoliteClient("arxiv", politeness=politeness) as client:
        assert client.get(server.url_for("/x")).text == "ok"
    assert time.monotonic() - started < 1.8  # did not wait for the hung answer
    assert client.requests == 2


def test_a_body_cut_short_is_fetched_again(server):
    def cut(request):
        response = Response("<OAI-PMH>half", content_type="text/xml")
        response.headers["Content-Length"] = "5000"
        return response

    server.expect_ordered_request("/x").respond_with_handler(cut)
    server.expect_ordered_request("/x").respond_with_data("<OAI-PMH>whole</OAI-PMH>")
    with PoliteClient("arxiv", politeness=QUICK, sleep=lambda s: None) as client:
        assert client.get(server.url_for("/x")).text.endswith("</OAI-PMH>")
    assert client.requests == 2


def test_a_body_the_check_finds_unusable_is_fetched_again(server):
    server.expect_ordered_request("/x").respond_with_data('{"message": {"items": [')
    server.expect_ordered_request("/x").respond_with_data('{"message": {"items": []}}')

    def whole_json(response: httpx.Response) -> dict:
        try:
            return response.json()
        except ValueError as exc:
            raise UnusableBody(f"not whole JSON: {exc}") from exc

    with PoliteClient("crossref", politeness=QUICK, sleep=lambda s: None) as client:
        body = client.fetch(server.url_for("/x"), None, read=whole_json)
    assert body == {"message": {"items": []}}
    assert client.requests == 2


def test_requests_are_paced_by_the_minimum_interval(server):
    arrivals: list[float] = []

    def stamp(request):
        arrivals.append(time.monotonic())
        return Response("ok")

    server.expect_request("/x").respond_with_handler(stamp)
    with PoliteClient("arxiv", politeness=Politeness(min_interval=0.4)) as client:
        for _ in range(3):
            client.get(server.url_for("/x"))
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert len(gaps) == 2
    # Paced from the previous answer: the server sees the full interval.
    assert all(gap >= 0.4 for gap in gaps), gaps


def test_arxiv_is_asked_once_every_three_seconds_by_default(server):
    """The settings' default for arXiv (its API terms: "no more than 1 request
    every 3 seconds"; HARVEST_ARXIV_INTERVAL unset), as a client built from
    them paces two requests: the wait asked of its sleep is the interval left
    after the first answer."""
    assert Politeness.of("arxiv").min_interval == 3.0
    server.expect_request("/x").respond_with_data("ok")
    waits: list[float] = []
    with PoliteClient("arxiv", sleep=waits.append) as client:
        client.get(server.url_for("/x"))
        client.get(server.url_for("/x"))
    assert len(waits) == 1
    assert 2.5 < waits[0] <= 3.0


def test_user_agent_names_the_contact_address(server, settings):
    settings.HARVEST_CONTACT_EMAIL = "harvest@example.org"
    server.expect_request("/x").respond_with_data("ok")
    with PoliteClient("crossref", politeness=QUICK) as client:
        client.get(server.url_for("/x"))
    request, _ = server.log[0]
    assert request.headers["User-Agent"] == user_agent()
    assert "mailto:harvest@example.org" in request.headers["User-Agent"]


def test_a_body_past_the_size_bound_is_refused(server):
    server.expect_request("/big").respond_with_data("x" * 5_000)
    politeness = Politeness(min_interval=0, max_body_bytes=1_000)
    with PoliteClient("crossref", politeness=politeness) as client:
        with pytest.raises(SourceRefused, match="sent more than 1,000 bytes; refused"):
            client.get(server.url_for("/big"))
        assert client.requests == 1


def test_a_server_dripping_bytes_is_cut_off_after_the_time_bound(server):
    def drip(request):
        def chunks():
            for _ in range(20):
                time.sleep(0.1)
                yield b"x"

        return Response(chunks(), direct_passthrough=True)

    server.expect_request("/drip").respond_with_handler(drip)
    politeness = Politeness(
        min_interval=0, timeout=5, max_seconds=0.35, max_tries=2, backoff_base=0.01
    )
    started = time.monotonic()
    with PoliteClient("arxiv", politeness=politeness) as client:
        with pytest.raises(SourceUnavailable, match="answer still coming after 0 s"):
            client.get(server.url_for("/drip"))
    assert time.monotonic() - started < 3  # not the 2 s of each drip, twice over


def test_a_redirect_loop_is_refused(server):
    server.expect_request("/a").respond_with_data(
        "", status=301, headers={"Location": "/b"}
    )
    server.expect_request("/b").respond_with_data(
        "", status=301, headers={"Location": "/a"}
    )
    with PoliteClient("arxiv", politeness=QUICK, sleep=lambda s: None) as client:
        with pytest.raises(SourceRefused, match="Exceeded maximum allowed redirects"):
            client.get(server.url_for("/a"))


def test_credentials_never_follow_a_redirect_to_another_origin(server):
    """An API key or client id goes to the origin asked; a redirect to another
    host (here the same server named "localhost") gets the request without it,
    while a redirect on the same origin keeps it."""
    from pytest_httpserver import HTTPServer

    other = HTTPServer(host="127.0.0.1", port=0)
    other.start()
    try:
        seen = {}

        def record(name):
            def handler(request):
                seen[name] = request.headers.get("x-api-key")
                return Response("{}", content_type="application/json")

            return handler

        server.expect_request("/same").respond_with_data(
            "", status=307, headers={"Location": "/same-target"}
        )
        server.expect_request("/same-target").respond_with_handler(record("same"))
        server.expect_request("/away").respond_with_data(
            "", status=307, headers={"Location": other.url_for("/stolen")}
        )
        other.expect_request("/stolen").respond_with_handler(record("other"))
        with PoliteClient(
            "semanticscholar",
            politeness=QUICK,
            headers={"x-api-key": "SECRET"},
            sleep=lambda s: None,
        ) as client:
            client.get(server.url_for("/same"))
            client.get(server.url_for("/away"))
        assert seen == {"same": "SECRET", "other": None}
    finally:
        other.stop()


def test_pacing_learns_from_a_server_that_refuses_two_requests_in_three(server, caplog):
    """Issue 49, part 3: a server answering 429 (no Retry-After) to two requests
    in three. The host's interval grows on each 429 (times 2, bounded) and
    shrinks by a step on each answer; every page still comes, and the changes
    are logged."""
    arrivals: list[float] = []

    def two_in_three(request):
        arrivals.append(time.monotonic())
        return Response("slow", status=429) if len(arrivals) % 3 else Response("ok")

    server.expect_request("/graph").respond_with_handler(two_in_three)
    politeness = Politeness(
        min_interval=0.02,
        max_tries=4,
        backoff_base=0.01,
        backoff_max=0.02,
        max_interval=0.3,
        pace_step=0.05,
    )
    host = f"127.0.0.1:{server.port}"
    learned = []
    with (
        caplog.at_level("INFO", logger="harvest.sources.polite_http"),
        PoliteClient("semanticscholar", politeness=politeness) as client,
    ):
        for _ in range(5):
            assert client.get(server.url_for("/graph")).text == "ok"
            learned.append(round(host_interval(host, politeness), 3))
    # Two 429s (0.02 -> 0.07 -> 0.14: times 2, at least a step), then an
    # answer (-0.05); from there each round doubles twice and steps down once,
    # up to the bound.
    assert learned == [0.09, 0.25, 0.25, 0.25, 0.25]
    assert max(learned) <= politeness.max_interval
    # A retry waited at least the interval the 429 had set.
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert min(gaps[1:3]) >= 0.07
    assert len(arrivals) == 15
    messages = [r.getMessage() for r in caplog.records]
    assert any("answered 429; pacing it 0.02 s -> 0.07 s" in m for m in messages)


def test_pacing_steps_back_to_the_minimum_after_answers(server, caplog):
    server.expect_ordered_request("/x").respond_with_data("slow", status=503)
    server.expect_request("/x").respond_with_data("ok")
    politeness = Politeness(
        min_interval=0.0, max_tries=3, backoff_base=0.01, pace_step=0.02
    )
    host = f"127.0.0.1:{server.port}"
    waits: list[float] = []
    with (
        caplog.at_level("INFO", logger="harvest.sources.polite_http"),
        PoliteClient("crossref", politeness=politeness, sleep=waits.append) as client,
    ):
        client.get(server.url_for("/x"))
        assert host_interval(host, politeness) == pytest.approx(0.0)  # 0.02 - 0.02
        assert min(waits) >= 0.02  # the retry waited the learned interval
    assert any("paced at its minimum" in r.getMessage() for r in caplog.records)


def test_a_minimum_above_the_learned_bound_is_kept():
    slow = Politeness(min_interval=120, max_interval=60)
    assert host_interval("export.arxiv.org:https", slow) == 120
