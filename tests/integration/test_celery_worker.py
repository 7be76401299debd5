"""Harvest and matching through a real Celery worker process and the real Redis.

The worker is a separate process started here (``celery -A wovepaper worker``) on
Redis database 15 and the test PostgreSQL database; tasks are sent over the broker,
not run eagerly, and the test waits on the database for their effects.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from celery.backends.redis import RedisBackend
from django.db import connection

from curation.models import Proposal
from harvest.models import HarvestRun
from wovepaper.celery import app
from wovepaper.models import Paper

BROKER = "redis://127.0.0.1:6379/15"
REPO = Path(__file__).resolve().parents[2]


def _database_url() -> str:
    s = connection.settings_dict
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    user = s.get("USER") or "postgres"
    auth = f"{user}:{s['PASSWORD']}" if s.get("PASSWORD") else user
    return f"postgres://{auth}@{host}:{port}/{s['NAME']}"


@pytest.fixture
def worker(transactional_db):
    """A real worker process on the test database; the app sends over Redis."""
    redis.Redis.from_url(BROKER).flushdb()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "wovepaper.settings.base",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": BROKER,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "CELERY_RESULT_BACKEND": BROKER,
    }
    proc = subprocess.Popen(  # noqa: S603 - fixed argv, our own worker
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "wovepaper",
            "worker",
            "--queues=harvest,matching,notifications,celery",
            "--pool=solo",
            "--concurrency=1",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel=WARNING",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    saved = {k: app.conf[k] for k in ("task_always_eager", "broker_url")}
    _use_broker(task_always_eager=False, broker_url=BROKER)
    try:
        yield proc
    finally:
        _use_broker(**saved)
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _use_broker(**conf) -> None:
    app.conf.update(**conf)
    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None


def _result(task_id: str, proc, seconds: float = 90.0):
    backend = RedisBackend(app=app, url=BROKER)
    _wait_for(
        lambda: backend.get_state(task_id) in {"SUCCESS", "FAILURE"}, proc, seconds
    )
    meta = backend.get_task_meta(task_id)
    assert meta["status"] == "SUCCESS", meta
    return meta["result"]


def _wait_for(predicate, proc, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            output = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise AssertionError(f"worker exited {proc.returncode}: {output[-2000:]}")
        time.sleep(0.3)
    raise AssertionError("timed out waiting for the worker")


def test_worker_runs_harvest_then_matching_over_redis(worker, arxiv_dir):
    from curation.tasks import matching_run_task
    from harvest.tasks import harvest_arxiv_files_task

    sent = harvest_arxiv_files_task.delay(str(arxiv_dir / "hepcrawl_oai"))

    counts = _result(sent.id, worker)

    assert counts["seen"] == 30
    assert counts["created"] == 19
    assert counts["failed"] == 0
    run = HarvestRun.objects.get(pk=counts["run"])
    assert run.status == "finished"
    assert Paper.objects.count() == 19

    # The harvest queued matching of the blocks it touched; wait for that task.
    assert counts["blocks_queued"] > 0
    matched = _result(counts["matching_task"], worker)

    assert matched["proposed_new"] == Proposal.objects.filter(kind="new").count()
    assert matched["proposed_new"] > 0
    assert not Proposal.objects.exclude(status="pending").exists()

    again = _result(matching_run_task.delay().id, worker)
    assert again.get("proposed_new", 0) == 0  # nothing new to propose
