"""Real Celery worker processes for the integration tests (Redis db 15, test DB).

A worker is ``celery -A wovepaper worker`` started as a separate process on the
test PostgreSQL database; the test process sends tasks over Redis (not eagerly)
and reads their results from Redis.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
from celery.backends.redis import RedisBackend
from django.db import connection
from kombu import pools as kombu_pools

from wovepaper.celery import app

# Another Redis database with WOVEPAPER_TEST_BROKER, so that two checkouts' runs on
# one machine do not empty each other's queues.
BROKER = os.environ.get("WOVEPAPER_TEST_BROKER", "redis://127.0.0.1:6379/15")
REPO = Path(__file__).resolve().parents[2]
QUEUES = "harvest,matching,notifications,celery"


def database_url() -> str:
    """The test database's URL, for the worker's DATABASE_URL."""
    s = connection.settings_dict
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    user = s.get("USER") or "postgres"
    auth = f"{user}:{s['PASSWORD']}" if s.get("PASSWORD") else user
    return f"postgres://{auth}@{host}:{port}/{s['NAME']}"


def start_worker(broker: str = BROKER, **env_extra: str) -> subprocess.Popen:
    """Start one worker process (solo pool) on every queue; ``env_extra`` adds env.

    Args:
        broker: the Redis URL it takes tasks from and stores results in.
    """
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "wovepaper.settings.base",
        "DATABASE_URL": database_url(),
        "REDIS_URL": broker,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "CELERY_RESULT_BACKEND": broker,
        # The suite's policy (wovepaper/settings/test.py): what the tests
        # here check is left pending, as curators find it.
        "CURATION_AUTO_APPLY": "identifiers",
        **env_extra,
    }
    return subprocess.Popen(  # noqa: S603 - fixed argv, our own worker
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "wovepaper",
            "worker",
            f"--queues={QUEUES}",
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


def stop_worker(proc: subprocess.Popen) -> None:
    """Stop a worker (warm shutdown), killing it after 20 s."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def broker_in_use(broker: str = BROKER) -> Iterator[None]:
    """Send tasks over Redis (db 15, emptied first) instead of running them eagerly."""
    redis.Redis.from_url(broker).flushdb()
    saved = {k: app.conf[k] for k in ("task_always_eager", "broker_url")}
    _use_broker(task_always_eager=False, broker_url=broker)
    try:
        yield
    finally:
        _use_broker(**saved)


def _use_broker(**conf) -> None:
    app.conf.update(**conf)
    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None
    # kombu keeps producer pools per connection in a global registry; a pool
    # closed above would be handed out again to the next test on this broker.
    kombu_pools.reset()


def task_result(
    task_id: str, proc: subprocess.Popen, seconds: float = 90.0, broker: str = BROKER
):
    """Wait for a task's result in Redis; its return value (asserts SUCCESS)."""
    backend = RedisBackend(app=app, url=broker)
    wait_for(lambda: _state(backend, task_id) in {"SUCCESS", "FAILURE"}, proc, seconds)
    meta = backend.get_task_meta(task_id)
    assert meta["status"] == "SUCCESS", meta
    return meta["result"]


def _state(backend: RedisBackend, task_id: str) -> str:
    """The task's state, or "" while Redis cannot be reached (being restarted)."""
    try:
        return backend.get_state(task_id)
    except (redis.ConnectionError, OSError):
        return ""


def wait_for(
    predicate: Callable[[], bool],
    proc: subprocess.Popen,
    seconds: float = 60.0,
    every: float = 0.3,
) -> None:
    """Poll ``predicate`` until true; fail if the worker exits or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            output = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise AssertionError(f"worker exited {proc.returncode}: {output[-2000:]}")
        time.sleep(every)
    raise AssertionError("timed out waiting for the worker")
