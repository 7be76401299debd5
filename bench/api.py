"""API latency at 100 req/s behind gunicorn on PostgreSQL, with 100k papers.

Builds a scratch PostgreSQL database (``test_<name>`` of ``DATABASE_URL``) holding
100,000 papers, 30,000 researchers and 400,000 authorships (four a paper, the
first two curated), starts gunicorn (2 sync workers, the production WSGI app on
loopback), and sends an open-loop load of ``RATE`` requests a second for
``SECONDS`` to each endpoint in turn, timing every response:

- ``/api/`` (the API root: the framework's own floor, the baseline of the run),
- researcher detail (random researcher, cache cleared before the run),
- researcher papers (first page, random researcher),
- a filtered paper list (category + published range, first page).

Prints p50, p99 and max in milliseconds, errors, and the ratio of each p99 to the
baseline's. The load generator runs on the same 2 cores as the server, so the
figures are an upper bound. Usage (about 4 minutes):
``DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper .venv/bin/python
bench/api.py [--papers N] [--rate R] [--seconds S]``.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402  (only to wait for the server)
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402

CATEGORIES = ["hep-th", "hep-ph", "gr-qc", "cond-mat.str-el", "math.AG", "cs.LG"]
PORT = 8765


def build(papers: int, researchers: int) -> None:
    """Fill the scratch database in batches of 10,000 rows."""
    from wovepaper.models import Authorship, Paper, Researcher

    rng = random.Random(7)
    Researcher.objects.bulk_create(
        (
            Researcher(display_name=f"Researcher {i}", block_key=f"r{i % 5000}")
            for i in range(researchers)
        ),
        batch_size=10_000,
    )
    rids = list(Researcher.objects.values_list("pk", flat=True))
    start = date(2000, 1, 1)
    for base in range(0, papers, 10_000):
        batch = Paper.objects.bulk_create(
            Paper(
                arxiv_id=f"{2000 + i % 25}{i % 12 + 1:02d}.{i:06d}",
                title=f"Paper {i}",
                published=start + timedelta(days=i % 9000),
                categories=[CATEGORIES[i % 6], CATEGORIES[(i + 1) % 6]],
                primary_category=CATEGORIES[i % 6],
            )
            for i in range(base, min(base + 10_000, papers))
        )
        Authorship.objects.bulk_create(
            Authorship(
                paper=p,
                position=pos,
                raw_name=f"A. Author{pos}",
                family_name=f"Author{pos}",
                researcher_id=rng.choice(rids) if pos <= 2 else None,
            )
            for p in batch
            for pos in range(1, 5)
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def load(
    base: str, paths: list[str], rate: float, seconds: float, threads: int = 24
) -> tuple[list[float], int]:
    """Open-loop load: request i is due at ``i / rate`` s, whatever came before.

    Latency runs from the moment a request was due, so a backlog counts against
    the server (no coordinated omission). Plain ``http.client`` in threads: the
    generator must cost little CPU, since it shares the 2 cores with the server.
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
            ok = True
            try:
                conn = http.client.HTTPConnection(host, int(port), timeout=30)
                conn.request("GET", chosen[i])
                response = conn.getresponse()
                response.read()
                ok = response.status < 400
                conn.close()
            except OSError:
                ok = False
            elapsed = (time.perf_counter() - (t_start + due[i])) * 1000
            with lock:
                latencies.append(elapsed)
                errors += not ok

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return latencies, errors


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--researchers", type=int, default=30_000)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/api.py needs DATABASE_URL to name a PostgreSQL database")

    old = setup_databases(verbosity=0, interactive=False, keepdb=False)
    server = None
    try:
        t0 = time.perf_counter()
        build(args.papers, args.researchers)
        print(
            f"built {args.papers} papers, {args.researchers} researchers, "
            f"{args.papers * 4} authorships in {time.perf_counter() - t0:.0f} s"
        )
        from wovepaper.models import Researcher

        rids = list(Researcher.objects.values_list("pk", flat=True))
        db = settings.DATABASES["default"]
        url = (
            f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:"
            f"{db['PORT'] or 5432}/{db['NAME']}"
        )
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "DJANGO_SETTINGS_MODULE": "wovepaper.settings.base",
            "DEBUG": "0",
            "ALLOWED_HOSTS": "127.0.0.1",
            "API_ANON_RATE": "1000000/minute",
            # Persistent connections, as production runs them (a new PostgreSQL
            # connection per request costs more than the request).
            "DB_CONN_MAX_AGE": "60",
        }
        server = subprocess.Popen(
            [
                str(ROOT / ".venv/bin/gunicorn"),
                "wovepaper.wsgi:application",
                "--workers",
                "2",
                "--bind",
                f"127.0.0.1:{PORT}",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
        )
        base = f"http://127.0.0.1:{PORT}"
        for _ in range(100):
            try:
                httpx.get(base + "/api/", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        rng = random.Random(11)
        picks = [rng.choice(rids) for _ in range(2000)]
        scenarios = {
            "API root (baseline)": ["/api/"],
            "researcher detail": [f"/api/researchers/{r}/" for r in picks],
            "researcher papers": [f"/api/researchers/{r}/papers/" for r in picks],
            "filtered paper list": [
                f"/api/papers/?category={c}&published_from=2010-01-01"
                f"&published_to=2020-12-31"
                for c in CATEGORIES
            ],
        }
        print(
            f"{args.rate:.0f} req/s for {args.seconds:.0f} s each, gunicorn 2 workers"
        )
        print(
            f"{'endpoint':<22} {'p50':>8} {'p99':>8} {'max':>8} {'errors':>7} "
            f"{'p99/base':>9}"
        )
        baseline_p99 = None

        for name, paths in scenarios.items():
            load(base, paths[:50], 20, 2)  # warm up
            lat, errors = load(base, paths, args.rate, args.seconds)
            p99 = pct(lat, 0.99)
            baseline_p99 = baseline_p99 or p99
            print(
                f"{name:<22} {statistics.median(lat):>6.1f}ms "
                f"{p99:>6.1f}ms {max(lat):>6.1f}ms {errors:>7} "
                f"{p99 / baseline_p99:>8.1f}x",
                flush=True,
            )
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
