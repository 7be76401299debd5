"""``/healthz`` answers 200 when the database and the broker answer, 503 when not."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from wovepaper.celery import app
from wovepaper.views import health

pytestmark = pytest.mark.django_db


@pytest.fixture
def broker(settings):
    """Point the Celery app at a broker URL for one test (tasks not eager)."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    saved = app.conf.broker_url

    def use(url: str) -> None:
        app.conf.broker_url = url

    yield use
    app.conf.broker_url = saved


def test_healthz_eager_when_no_broker_is_configured(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["database"], body["broker"]) == ("ok", "ok", "eager")
    assert "no-cache" in response["Cache-Control"]


def test_healthz_checks_the_real_redis(client, broker):
    broker("redis://127.0.0.1:6379/15")
    body = client.get("/healthz").json()
    assert (body["status"], body["broker"]) == ("ok", "ok")


def test_healthz_is_503_when_the_broker_is_down(client, broker):
    broker("redis://127.0.0.1:1/0")  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["broker"] not in ("ok", "eager")
    assert body["database"] == "ok"


def test_healthz_is_503_when_the_database_is_down(client, monkeypatch):
    def refuse(*args, **kwargs):
        raise OperationalError("connection refused (password=secret)")

    monkeypatch.setattr(health.connection, "cursor", refuse)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"] == "OperationalError"
    assert b"secret" not in response.content  # never the error's message
