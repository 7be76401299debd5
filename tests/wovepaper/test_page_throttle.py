"""Rate limits of the public HTML pages, /search/ included (issue 48)."""

from __future__ import annotations

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def limits(settings):
    settings.PAGE_ANON_RATE = "4/minute"
    settings.PAGE_SEARCH_RATE = "2/minute"
    settings.PAGE_USER_RATE = "6/minute"


def test_an_anonymous_client_past_its_rate_gets_429_with_retry_after(
    client, redis_cache, limits
):
    answers = [client.get("/", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}") for i in range(5)]

    assert [r.status_code for r in answers] == [200] * 4 + [429]
    refused = answers[-1]
    assert 0 < int(refused["Retry-After"]) <= 60
    assert "Too many requests" in refused.content.decode()
    # The API and the health check keep their own limits.
    assert client.get("/api/papers/").status_code == 200
    assert client.get("/healthz").status_code in {200, 503}


def test_searches_have_a_rate_of_their_own(client, redis_cache, limits):
    searches = [client.get("/search/", {"q": "graphene"}).status_code for _ in range(3)]

    assert searches == [200, 200, 429]
    assert client.get("/").status_code == 200  # other pages still answer


def test_a_signed_in_user_counts_by_account(client, redis_cache, limits):
    client.force_login(UserFactory())

    assert [client.get("/").status_code for _ in range(7)] == [200] * 6 + [429]


def test_pages_are_not_limited_while_redis_is_down(client, redis_cache, limits):
    redis_cache.crash()

    assert [client.get("/").status_code for _ in range(6)] == [200] * 6
