"""Five minutes of mixed API and page traffic while a Celery worker harvests.

The figure issue 8 asks for: the API and the public pages under an open-loop
load (``--rate`` requests a second for ``--seconds``, 300 by default) on
PostgreSQL with bench/pages.py's corpus (100,000 papers, 30,000 researchers),
served by gunicorn (``--workers``, by default gunicorn.conf.py's: 3 on 2
cores), while one real Celery worker harvests the 1,192 real arXiv ``.abs``
files from ``WOVEPAPER_DATA_DIR`` into the same database, again and again, for
as long as the load runs. The request mix: researcher and paper pages, search
drawn with Zipf weights, API researcher detail, researcher papers and filtered
paper lists. The web and the worker share one Redis database (14) for the
broker and the cache, as production shares ``REDIS_URL``: what the worker's
changes drop from the cache, the web sees (before 2026-12-08 the web cached in
another database and never saw it).

Prints p50, p99, max and errors per kind of request and overall, the p99 of
each 30 s of the run, and how many harvest runs finished with how many records a
second. The worker runs as the Procfile runs it, ``nice -n 10`` (``--niceness``;
``--idle`` for Linux's SCHED_IDLE instead), and each run first removes what an
earlier run harvested, so its first harvest creates 1,130 papers, which queues
their matching and embedding.

Measured 2026-12-07 (100 req/s, 300 s, gunicorn 3 workers), five runs: worker
not niced, p50 26 ms, p99 6,309 ms; ``nice -n 10``, p50 12.7 and 14.2 ms, p99 654
and 807 ms; SCHED_IDLE, p99 about 640 ms; ``nice -n 10`` with
``EMBED_AFTER_HARVEST=0``, p50 about 20 ms, p99 6,776 ms. No errors; about 140
harvests of the 1,192 files each run. In every run the slow requests are in
the first 30 to 90 s, after the first harvest has created its 1,130 papers (the
p99 of each later 30 s is 33 to 125 ms, but 448, 1,187 and 1,775 ms in the
sixth: gunicorn replacing each worker after 5,000 requests, 150 s in; with
``max_requests`` 20,000 and the embedding model loaded before a new worker
serves (gunicorn.conf.py), that window is 49 ms, the run's p99 still 6,301 ms
from its first 90 s). What stalls the first seconds is not isolated: not the
embedding task (without it they were worse), not a long query (none ran over
0.3 s in pg_stat_activity sampled every 0.5 s), and every kind of request
waits at once; the run deletes the previous run's 1,130 papers and their
vectors first, so autovacuum may be repairing the HNSW index then.

Measured again 2026-12-08 (gunicorn 3 workers), seven runs, p50 and p99:
with the web caching in another Redis database than the worker's (as before),
PostgreSQL's ``shared_buffers`` 128 MB 21 and 1,524 ms; 2 GB 20 and 177, 24
and 587 (just after a PostgreSQL restart), 28 and 1,374 ms. With one Redis
database, as production: 45 and 1,884 ms, every matching batch dropping every
search page (search p50 42 ms); with automation no longer dropping the lists
of researchers found by name (wovepaper.cache.researchers_changed), 121 and
5,747 ms after six kept runs' deletes, then, each run starting vacuumed, 26
and 1,447 ms (search p50 10 ms). In every run the stall is in the first 30
to 90 s (1,601 ms there in the last), the later windows 52 to 507 ms; the
first harvest creates its 1,130 papers in 3 s and the second takes 48 to 73
s, behind their matching and embedding; 59 to 86 harvests a run.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import teardown_databases  # noqa: E402
from loadgen import (  # noqa: E402
    celery_worker_argv,
    database_url,
    gunicorn,
    load,
    module_from,
    pct,
    postgres_memory,
    production_workers,
)

BROKER = "redis://127.0.0.1:6379/14"


def _urls(rng: random.Random, words: dict) -> dict[str, list[str]]:
    """Request paths by kind, drawn from the database."""
    from wovepaper.models import Paper, Researcher

    researchers = list(
        Researcher.objects.order_by("?").values_list("pk", "slug")[:3000]
    )
    papers = [
        p.get_absolute_url()
        for p in Paper.objects.order_by("?").only("arxiv_id", "slug")[:3000]
    ]
    queries = [
        " ".join(rng.sample(words["title_words"], rng.choice((1, 2))))
        for _ in range(500)
    ]
    return {
        "researcher page": [
            Researcher(pk=pk, slug=slug).get_absolute_url() for pk, slug in researchers
        ],
        "paper page": papers,
        "search (Zipf)": [
            f"/search/?{urlencode({'q': q})}"
            for q in rng.choices(
                queries, weights=[1 / k for k in range(1, 501)], k=3000
            )
        ],
        "API researcher": [f"/api/researchers/{pk}/" for pk, _ in researchers],
        "API researcher papers": [
            f"/api/researchers/{pk}/papers/" for pk, _ in researchers
        ],
        "API paper list": [
            f"/api/papers/?category={c}&published_from={y}-01-01"
            for c in ("hep-th", "hep-ph", "gr-qc", "cs.LG")
            for y in range(2000, 2024)
        ],
    }


def _forget_harvests() -> None:
    """Remove what an earlier run's harvests added to the corpus, so that each
    run's first harvest creates the 1,130 papers again (then matching and
    embedding follow it), as the first run's did."""
    from curation.models import Constraint, CurationEvent, Proposal
    from harvest.models import HarvestRun, RawRecord
    from harvest.sources.arxiv_abs import read_abs_file
    from wovepaper.models import Paper, Researcher

    root = Path(settings.WOVEPAPER_DATA_DIR) / "arxiv" / "abs_files"
    ids = {
        read_abs_file(path, root).external_id.rpartition("v")[0]
        for path in root.rglob("*.abs")
    }
    # The corpus (bench/pages.py) holds no curation rows: all are the harvests'.
    CurationEvent.objects.all().delete()
    Constraint.objects.all().delete()
    Proposal.objects.all().delete()
    Paper.objects.filter(arxiv_id__in=ids).delete()
    Researcher.objects.filter(authorships__isnull=True).delete()
    RawRecord.objects.all().delete()
    HarvestRun.objects.all().delete()
    # What the deletes left (dead rows, the HNSW index's deleted entries) is
    # cleared, so every run starts from the same state and no autovacuum of
    # an earlier run's deletes falls inside the load.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def _harvest_loop(stop: threading.Event, results: list) -> None:
    """Send a harvest of the real .abs files, wait for it, again until ``stop``."""
    from celery.result import AsyncResult

    from harvest.tasks import harvest_arxiv_files_task
    from wovepaper.celery import app

    app.conf.update(task_always_eager=False, broker_url=BROKER, result_backend=BROKER)
    root = str(Path(settings.WOVEPAPER_DATA_DIR) / "arxiv" / "abs_files")
    while not stop.is_set():
        t0 = time.perf_counter()
        sent = harvest_arxiv_files_task.apply_async(
            args=[root], kwargs={"then_match": True}
        )
        result = AsyncResult(sent.id, app=app)
        while not result.ready() and not stop.is_set():
            time.sleep(0.5)
        if result.ready():
            counts = result.get(propagate=False)
            results.append((time.perf_counter() - t0, counts))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=300.0)
    # As in production: gunicorn.conf.py's default, 1.5 workers a core.
    parser.add_argument("--workers", type=int, default=production_workers())
    parser.add_argument("--keep", action="store_true")
    parser.add_argument(
        "--niceness",
        type=int,
        default=10,
        help="nice value of the Celery worker (the Procfile's 10; 0: none)",
    )
    parser.add_argument(
        "--idle",
        action="store_true",
        help="run the worker under Linux's SCHED_IDLE policy (chrt --idle 0)",
    )
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/soak.py needs DATABASE_URL to name a PostgreSQL database")
    pages = module_from("bench_pages", ROOT / "bench" / "pages.py")

    old, _, words = pages.open_corpus(keep=args.keep)
    try:
        from wovepaper.models import Paper, Researcher

        rng = random.Random(23)
        print(
            f"{Paper.objects.count()} papers, {Researcher.objects.count()} researchers"
        )
        _forget_harvests()
        urls = _urls(rng, words)
        kinds = {path: kind for kind, paths in urls.items() for path in paths}
        mixed = [path for paths in urls.values() for path in paths]

        import redis

        redis.Redis.from_url(BROKER).flushdb()
        worker = subprocess.Popen(  # noqa: S603 - fixed argv, our own worker
            [
                # As the Procfile runs the workers: below the web's priority.
                *(["chrt", "--idle", "0"] if args.idle else []),
                *(["nice", "-n", str(args.niceness)] if args.niceness else []),
                *celery_worker_argv(),
            ],
            cwd=ROOT,
            env={
                **os.environ,
                "DATABASE_URL": database_url(),
                "REDIS_URL": BROKER,
                "CELERY_TASK_ALWAYS_EAGER": "0",
                "CELERY_RESULT_BACKEND": BROKER,
            },
        )
        stop = threading.Event()
        harvests: list = []
        harvester = threading.Thread(target=_harvest_loop, args=(stop, harvests))
        try:
            with gunicorn(
                # One Redis database for the broker and the cache, as production
                # has (REDIS_URL): the worker's cache-version bumps reach the web.
                database_url(),
                workers=args.workers,
                REDIS_URL=BROKER,
            ) as base:
                harvester.start()
                time.sleep(5)  # the worker is harvesting before the load starts
                t0 = time.perf_counter()
                latencies, errors, by_kind = _timed_load(
                    base, mixed, kinds, args.rate, args.seconds
                )
                wall = time.perf_counter() - t0
        finally:
            stop.set()
            harvester.join(timeout=60)
            worker.terminate()
            worker.wait(timeout=60)
        print(
            f"{args.rate:.0f} req/s for {args.seconds:.0f} s ({wall:.0f} s wall), "
            f"gunicorn {args.workers} workers, one Celery worker harvesting"
        )
        print(postgres_memory())
        columns = ("requests", "p50", "p99", "max", "errors")
        print(f"{'kind':<24} " + " ".join(f"{c:>9}" for c in columns))
        for kind, (lat, err) in sorted(by_kind.items()):
            print(
                f"{kind:<24} {len(lat):>8} {statistics.median(lat):>6.1f}ms "
                f"{pct(lat, 0.99):>7.1f}ms {max(lat):>7.1f}ms {err:>7}"
            )
        print(
            f"{'all':<24} {len(latencies):>8} {statistics.median(latencies):>6.1f}ms "
            f"{pct(latencies, 0.99):>7.1f}ms {max(latencies):>7.1f}ms {errors:>7}"
        )
        for seconds, counts in harvests:
            print(
                f"harvest run {counts.get('run')}: {counts.get('seen')} records in "
                f"{seconds:.0f} s ({counts.get('seen', 0) / seconds:.0f} records/s), "
                f"{counts.get('failed')} failed, created {counts.get('created')}, "
                f"unchanged {counts.get('unchanged')}"
            )
    finally:
        if not args.keep:
            teardown_databases(old, verbosity=0)


WINDOW_SECONDS = 30


def _timed_load(base, mixed, kinds, rate, seconds):
    """:func:`loadgen.load`, with each request's figures split by kind, and
    the p99 of each :data:`WINDOW_SECONDS` of the run printed (requests in the
    order they finished): where in the run the slow ones were."""
    record: list = []
    latencies, errors = load(base, mixed, rate, seconds, record=record)
    size = int(rate * WINDOW_SECONDS)
    windows = [
        pct([ms for _, ms, _ in record[i : i + size]], 0.99)
        for i in range(0, len(record), size)
    ]
    print(
        f"p99 of each {WINDOW_SECONDS} s: "
        + " ".join(f"{ms:.0f}" for ms in windows)
        + " ms"
    )
    by_kind: dict[str, tuple[list[float], list[bool]]] = {}
    for path, ms, ok in record:
        lat, oks = by_kind.setdefault(kinds[path], ([], []))
        lat.append(ms)
        oks.append(ok)
    return (
        latencies,
        errors,
        {k: (lat, oks.count(False)) for k, (lat, oks) in by_kind.items()},
    )


if __name__ == "__main__":
    main()
