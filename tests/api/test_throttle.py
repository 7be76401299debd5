"""The API's rate limits: counted atomically, by the real client address, and open
while Redis is down (issue 48). Against a real Redis of the test's own."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from rest_framework.test import APIClient

from api import throttling
from wovepaper.throttle import Rate, window_hit

pytestmark = pytest.mark.django_db


@pytest.fixture
def anon_limit(monkeypatch):
    """Anonymous clients may make 5 requests a minute (DRF reads the rates
    when its throttle classes are defined, so they are set on the class)."""
    monkeypatch.setattr(
        throttling.AnonRateThrottle, "THROTTLE_RATES", {"anon": "5/minute"}
    )


def test_eight_concurrent_clients_get_exactly_the_limit_through(redis_cache):
    rate = Rate(600, 86400)  # a day's window: the test never straddles its edge

    def client(_: int) -> int:
        return sum(
            window_hit(key="anon:198.51.100.7", rate=rate)[0] for _ in range(100)
        )

    with ThreadPoolExecutor(8) as pool:
        allowed = sum(pool.map(client, range(8)))

    assert allowed == 600


def test_a_rotating_x_forwarded_for_is_not_a_new_client(redis_cache, anon_limit):
    api = APIClient()
    answers = [
        api.get("/api/papers/", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code
        for i in range(7)
    ]

    assert answers == [200] * 5 + [429] * 2
    refused = api.get("/api/papers/", HTTP_X_FORWARDED_FOR="203.0.113.99")
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 60


def test_behind_one_proxy_the_address_it_saw_is_the_client(
    redis_cache, anon_limit, settings
):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    api = APIClient()
    first = [
        api.get("/api/papers/", HTTP_X_FORWARDED_FOR="10.0.0.1, 203.0.113.1")
        for _ in range(6)
    ]
    # What the client wrote before the proxy's entry changes nothing.
    other = api.get("/api/papers/", HTTP_X_FORWARDED_FOR="10.0.0.2, 203.0.113.2")

    assert [r.status_code for r in first] == [200] * 5 + [429]
    assert other.status_code == 200


def test_the_api_answers_unthrottled_while_redis_is_down(redis_cache, anon_limit):
    api = APIClient()
    redis_cache.crash()

    assert [api.get("/api/papers/").status_code for _ in range(8)] == [200] * 8


def test_a_rate_that_is_not_one_is_refused_naming_it():
    assert Rate.parse("60/m") == Rate(60, 60)
    assert Rate.parse("10/second") == Rate(10, 1)
    with pytest.raises(ValueError, match="'sixty/minute' is not a rate"):
        Rate.parse("sixty/minute")
    with pytest.raises(ValueError, match="'0/minute': a rate allows at least one"):
        Rate.parse("0/minute")
