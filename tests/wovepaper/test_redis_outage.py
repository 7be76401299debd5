"""A Redis outage: pages and the API answer from the database, a committed curation
step answers success, and what it could not queue or invalidate is done once
Redis is back (issue 48). Against a real Redis on a port of the test's own, killed
and restarted with its entries (append-only file on)."""

from __future__ import annotations

import logging
import time

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from tests.integration.workers import broker_in_use
from wovepaper.models import Follow, Notification, OutboxMessage
from wovepaper.outbox import outbox_flush

pytestmark = pytest.mark.django_db(transaction=True)


def _profile() -> tuple:
    ada = ResearcherFactory(display_name="Ada Lovelace")
    for _ in range(2):
        AuthorshipFactory(researcher=ada, raw_name="Ada Lovelace")
    return ada, [
        "/",
        f"/researchers/{ada.pk}/",
        "/search/?q=Lovelace",
        "/llms.txt",
        "/api/papers/",
        f"/api/researchers/{ada.pk}/",
    ]


def test_pages_and_the_api_answer_while_redis_is_down(client, redis_cache, caplog):
    ada, urls = _profile()
    warm = {url: client.get(url, follow=True) for url in urls}
    assert {url: r.status_code for url, r in warm.items()} == dict.fromkeys(urls, 200)

    redis_cache.crash()
    with caplog.at_level(logging.WARNING, logger="wovepaper.failsafe_cache"):
        started = time.monotonic()
        down = {url: client.get(url, follow=True) for url in urls * 3}
        seconds = time.monotonic() - started

    assert {url: r.status_code for url, r in down.items()} == dict.fromkeys(urls, 200)
    assert "Ada Lovelace" in down[f"/researchers/{ada.pk}/"].content.decode()
    assert down[f"/api/researchers/{ada.pk}/"].json()["paper_count"] == 2
    # One warning for the outage, not one a request.
    said = [r for r in caplog.records if "cache unreachable" in r.getMessage()]
    assert len(said) == 1
    # A refused connection costs nothing like a timeout a call.
    assert seconds < 10


def test_a_curation_step_during_the_outage_answers_success_and_is_finished_after(
    client, curator, redis_cache
):
    survivor, _ = _profile()
    merged = ResearcherFactory(display_name="A. Lovelace")
    AuthorshipFactory(researcher=merged, raw_name="A. Lovelace")
    follower = UserFactory()
    Follow.objects.create(user=follower, researcher=merged)
    detail = f"/api/researchers/{survivor.pk}/"
    assert client.get(detail).json()["paper_count"] == 2  # cached in Redis

    client.force_login(curator)
    # The broker on another database of the same Redis, as production shares
    # one (broker_in_use empties the broker's database first).
    with broker_in_use(redis_cache.url[:-1] + "1"):
        redis_cache.crash()
        started = time.monotonic()
        answer = client.post(
            reverse("admin:wovepaper_researcher_changelist"),
            {
                "action": "merge_selected",
                ACTION_CHECKBOX_NAME: [survivor.pk, merged.pk],
                "post": "yes",
            },
            follow=True,
        )
        seconds = time.monotonic() - started
        assert answer.status_code == 200
        assert seconds < 3, seconds
        assert f"Merged researchers {merged.pk} into" in answer.content.decode()
        waiting = dict(OutboxMessage.objects.values_list("task", "attempts"))
        assert waiting["curation.notify_followers"] == 1
        assert waiting["wovepaper.cache_versions_bump"] == 1
        assert not Notification.objects.exists()

        redis_cache.start()  # with its entries: the old rendering is still there
        time.sleep(0.3)
        assert client.get(detail).json()["paper_count"] == 2  # stale until flushed

    # A worker would run what the flush sends; here the tasks run eagerly.
    sent = outbox_flush(older_than=0)

    assert sent == {"sent": len(waiting), "refused": 0, "unknown": 0, "left": 0}
    assert client.get(detail).json()["paper_count"] == 3
    assert Notification.objects.filter(user=follower).exists()


def test_the_outbox_sends_what_the_broker_took_and_keeps_what_it_refused(redis_cache):
    import redis

    from wovepaper.outbox import outbox_send

    queue = redis.Redis.from_url(redis_cache.url)
    with broker_in_use(redis_cache.url):
        outbox_send(task="wovepaper.outbox_flush", kwargs={})
        assert not OutboxMessage.objects.exists()
        assert queue.llen("notifications") == 1  # the task's queue

        redis_cache.crash()
        kept = outbox_send(task="wovepaper.outbox_flush", kwargs={})
        kept.refresh_from_db()
        assert kept.attempts == 1
        assert "OperationalError" in kept.last_error
        assert outbox_flush(older_than=0) == {
            "sent": 0,
            "refused": 1,
            "unknown": 0,
            "left": 1,
        }

        redis_cache.start()
        assert outbox_flush(older_than=0)["sent"] == 1
        assert queue.llen("notifications") == 2
    assert outbox_send(task="no.such_task", kwargs={}).pk
    assert outbox_flush(older_than=0) == {
        "sent": 0,
        "refused": 0,
        "unknown": 1,
        "left": 1,
    }


def test_every_cache_call_shares_one_client_which_outlives_a_restart(redis_cache):
    from django.core.cache import cache

    backend = cache._cache
    # Django's own client builds a redis.Redis (and its 170 callbacks) per call.
    assert backend.get_client("a") is backend.get_client("b", write=True)

    cache.set("shared", 1)
    redis_cache.crash()
    assert cache.get("shared", "missed") == "missed"
    redis_cache.start()
    time.sleep(0.3)  # past the bypass after a failure (0.2 s in tests)
    cache.set("shared", 2)
    assert cache.get("shared") == 2
    assert backend.get_client("c") is backend.get_client("d")
