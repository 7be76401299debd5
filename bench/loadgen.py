"""Shared by the HTTP benchmarks: gunicorn on loopback and an open-loop load.

Used by ``bench/api.py`` and ``bench/pages.py``; not a benchmark itself.
"""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import os
import random
import statistics
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PORT = 8765
# The Redis database the served app caches in (production caches in Redis too).
REDIS_CACHE = "redis://127.0.0.1:6379/9"


@contextlib.contextmanager
def gunicorn(database_url: str, *, workers: int = 2, **env: str) -> Iterator[str]:
    """Serve the production WSGI app with gunicorn on 127.0.0.1:PORT.

    Args:
        database_url: the PostgreSQL database to serve.
        workers: gunicorn sync workers.
        env: extra environment variables for the server.

    Yields:
        The base URL, once ``/robots.txt`` answers (at most 20 s).
    """
    server = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/gunicorn"),
            "wovepaper.wsgi:application",
            "--workers",
            str(workers),
            "--bind",
            f"127.0.0.1:{PORT}",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DATABASE_URL": database_url,
            "DJANGO_SETTINGS_MODULE": "wovepaper.settings.base",
            "DEBUG": "0",
            "ALLOWED_HOSTS": "127.0.0.1",
            # The load comes from one address: no rate limit of the API or
            # the pages may answer it with 429.
            "API_ANON_RATE": "1000000/minute",
            "PAGE_ANON_RATE": "1000000/minute",
            "PAGE_SEARCH_RATE": "1000000/minute",
            # Persistent connections, as production runs them (a new PostgreSQL
            # connection per request costs more than the request).
            "DB_CONN_MAX_AGE": "60",
            # gunicorn.conf.py (read from the repository root) logs every request.
            "GUNICORN_ACCESS_LOG": "",
            **env,
        },
    )
    base = f"http://127.0.0.1:{PORT}"
    try:
        for _ in range(100):
            try:
                conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=1)
                conn.request("GET", "/robots.txt")
                conn.getresponse().read()
                break
            except OSError:
                time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def load(
    base: str,
    paths: list[str],
    rate: float,
    seconds: float,
    threads: int = 24,
    record: list | None = None,
    statuses: Counter | None = None,
) -> tuple[list[float], int]:
    """Open-loop load: request i is due at ``i / rate`` s, whatever came before.

    Latency runs from the moment a request was due, so a backlog counts against
    the server (no coordinated omission). Plain ``http.client`` in threads: the
    generator must cost little CPU, since it shares the 2 cores with the server.

    Args:
        base: ``http://host:port``.
        paths: request paths, drawn at random (seeded) for each request.
        rate: requests per second.
        seconds: how long.
        threads: concurrent connections at most.
        record: if given, ``(path, ms, ok)`` is appended for each request.
        statuses: if given, counts each answer's HTTP status (0: no answer).

    Returns:
        (latencies in ms, one per request; number of errors: status >= 400 or
        no answer).
    """
    host, port = base.removeprefix("http://").split(":")
    n = int(rate * seconds)
    due = [i / rate for i in range(n)]
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    counter = iter(range(n))
    rng = random.Random(5)
    chosen = [rng.choice(paths) for _ in range(n)]
    t_start = time.perf_counter() + 0.05

    def worker() -> None:
        nonlocal errors
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            wait = t_start + due[i] - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            ok, status = True, 0
            try:
                conn = http.client.HTTPConnection(host, int(port), timeout=30)
                conn.request("GET", chosen[i])
                response = conn.getresponse()
                response.read()
                status = response.status
                ok = status < 400
                conn.close()
            except (OSError, http.client.HTTPException):
                ok = False
            elapsed = (time.perf_counter() - (t_start + due[i])) * 1000
            with lock:
                latencies.append(elapsed)
                errors += not ok
                if record is not None:
                    record.append((chosen[i], elapsed, ok))
                if statuses is not None:
                    statuses[status] += 1

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return latencies, errors


def celery_worker_argv() -> list[str]:
    """One Celery worker process on every queue (solo pool), errors logged only:
    the benchmarks' worker."""
    return [
        str(ROOT / ".venv/bin/celery"),
        "-A",
        "wovepaper",
        "worker",
        "--queues=harvest,matching,notifications,celery",
        "--pool=solo",
        "--without-gossip",
        "--without-mingle",
        "--loglevel=ERROR",
    ]


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def database_url() -> str:
    """The URL of the database Django is using now (the bench's scratch one)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    return (
        f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}"
    )


def run_scenarios(
    base: str, scenarios: dict[str, list[str]], *, rate: float, seconds: float
) -> None:
    """Warm up, then load each scenario in turn and print a row of figures.

    Prints p50, p99 and max in ms, errors, and each p99 over the first
    scenario's (the run's baseline).

    Args:
        base: ``http://host:port`` of the server.
        scenarios: ``{name: request paths}``, the baseline first.
        rate: requests per second.
        seconds: how long each scenario runs.
    """
    width = max(len(name) for name in scenarios) + 2
    print(f"{rate:.0f} req/s for {seconds:.0f} s each")
    print(
        f"{'scenario':<{width}} {'p50':>8} {'p99':>8} {'max':>8} {'errors':>7} "
        f"{'p99/base':>9}"
    )
    baseline = None
    for name, paths in scenarios.items():
        load(base, paths[:20], 10, 2)  # warm up the workers
        lat, errors = load(base, paths, rate, seconds)
        p99 = pct(lat, 0.99)
        baseline = baseline or p99
        print(
            f"{name:<{width}} {statistics.median(lat):>6.1f}ms {p99:>6.1f}ms "
            f"{max(lat):>6.1f}ms {errors:>7} {p99 / baseline:>8.1f}x",
            flush=True,
        )


def module_from(name: str, path: Path):
    """The Python file ``path`` loaded as a module named ``name`` (another
    bench script, gunicorn.conf.py)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def production_workers() -> int:
    """gunicorn.conf.py's default number of sync workers on this machine."""
    return module_from("gunicorn_conf", ROOT / "gunicorn.conf.py").default_workers()


def postgres_memory() -> str:
    """A line on PostgreSQL's buffer cache against what the pages read most.

    pgvector's README ("Tuning") advises ``shared_buffers`` of about 25% of the
    server's memory; PostgreSQL's default is 128 MB. With 100,000 papers the
    HNSW index alone is about 195 MB: below it, a search by meaning reads its
    index pages through the operating system's cache and evicts others
    (docs/operations.md, "Deploying"). The figures of a run depend on it.

    Returns:
        ``"PostgreSQL shared_buffers 2 GB; HNSW index 195 MB, papers 616 MB"``,
        with a warning appended when the index does not fit.
    """
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setting::bigint * current_setting('block_size')::bigint "
            "FROM pg_settings WHERE name = 'shared_buffers'"
        )
        buffers = cursor.fetchone()[0]
        cursor.execute(
            "SELECT coalesce(sum(pg_relation_size(indexrelid)), 0) FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
            "WHERE a.amname = 'hnsw'"
        )
        hnsw = cursor.fetchone()[0]
        cursor.execute("SELECT pg_total_relation_size('wovepaper_paper')")
        papers = cursor.fetchone()[0]

    def mb(n: int) -> str:
        return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"

    line = (
        f"PostgreSQL shared_buffers {mb(buffers)}; HNSW index {mb(hnsw)}, "
        f"papers {mb(papers)}"
    )
    if hnsw > buffers:
        line += (
            " (the index does not fit: raise shared_buffers, pgvector's README "
            "advises about 25% of memory)"
        )
    return line
