"""API latency at 100 req/s behind gunicorn on PostgreSQL, with 100k papers.

Builds a scratch PostgreSQL database (``test_<name>`` of ``DATABASE_URL``) holding
100,000 papers, 30,000 researchers and 400,000 authorships (four a paper, the
first two curated), starts gunicorn (2 sync workers, the production WSGI app on
loopback), and sends an open-loop load of ``RATE`` requests a second for
``SECONDS`` to each endpoint in turn, timing every response:

- ``/api/`` (the API root: the framework's own floor, the baseline of the run),
- researcher detail (random researcher, cache cleared before the run),
- researcher papers (first page, random researcher),
- a filtered paper list (first page of one of 1,440 category + published-range
  combinations, so the run measures queries, not a cache).

Prints p50, p99 and max in milliseconds, errors, and the ratio of each p99 to the
baseline's. The load generator runs on the same 2 cores as the server, so the
figures are an upper bound. Usage (about 4 minutes):
``DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper .venv/bin/python
bench/api.py [--papers N] [--rate R] [--seconds S]``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402
from loadgen import database_url, gunicorn, run_scenarios  # noqa: E402

CATEGORIES = ["hep-th", "hep-ph", "gr-qc", "cond-mat.str-el", "math.AG", "cs.LG"]


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
    try:
        t0 = time.perf_counter()
        build(args.papers, args.researchers)
        print(
            f"built {args.papers} papers, {args.researchers} researchers, "
            f"{args.papers * 4} authorships in {time.perf_counter() - t0:.0f} s"
        )
        from wovepaper.models import Researcher

        rids = list(Researcher.objects.values_list("pk", flat=True))
        rng = random.Random(11)
        picks = [rng.choice(rids) for _ in range(2000)]
        years = range(2000, 2024)
        scenarios = {
            "API root (baseline)": ["/api/"],
            "researcher detail": [f"/api/researchers/{r}/" for r in picks],
            "researcher papers": [f"/api/researchers/{r}/papers/" for r in picks],
            # 6 categories x 24 start years x 1-10 year spans: 1,440 distinct
            # lists, so no cache could serve them from memory.
            "filtered paper list": [
                f"/api/papers/?category={c}&published_from={y}-01-01"
                f"&published_to={y + span}-12-31"
                for c in CATEGORIES
                for y in years
                for span in range(10)
            ],
        }
        with gunicorn(database_url()) as base:
            print("gunicorn 2 workers")
            run_scenarios(base, scenarios, rate=args.rate, seconds=args.seconds)
    finally:
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
