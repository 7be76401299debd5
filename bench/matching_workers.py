"""A full matching run fanned out over real Celery workers: one worker against two.

The population is bench/matching.py's: the real INSPIRE "Wang" mentions re-keyed
over East Asian family names and shuffled with a fixed seed, a prefix of each size.
Each mention is stored as the one authorship of its own paper, unassigned (no
researchers: a full re-cluster). For each size the same full run
(``curation.tasks.matching_run_task``: a plan, one task per shard of blocks, a
finishing step) is sent over Redis to one worker, then, its proposals deleted, to
two, each a ``celery worker --concurrency 1`` process of its own on PostgreSQL;
the time from sending to its counts is printed with the two-to-one ratio, and
the growth exponent between sizes (``log(t2 / t1) / log(n2 / n1)``, 1.0 linear).
``--in-process`` also times ``services.matching_run()`` in this process first.

The machine's load (``os.getloadavg``) is printed before and after each run: on
a shared machine other work takes cores from the workers. So is the CPU time each
worker spent on the run (``/proc/<pid>/stat``): with two, how evenly the shards
shared the work, which bounds the speed-up on two free cores (the run's CPU
seconds over the busier worker's).

Measured on 2 cores (PostgreSQL and Redis on the same machine), 2026-12-06 15:25
to 15:31 UTC with the machine otherwise quiet (load average 0.2 to 1.6): 100,000
authorships, one worker 88.1 s and 89.2 s, two workers 44.7 s and 45.2 s (x1.97
both times; CPU seconds per worker 41.4 + 38.6 and 39.6 + 42.2); 10,000 with two
workers 4.6 s, growth exponent 0.99. Under other developers' load (1.9 to 3.2)
the same run gave x1.36 and x1.13, the second worker finding no free core.

Usage::

    createdb -h 127.0.0.1 -U postgres wovepaper_fanbench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_fanbench \\
        REDIS_URL=redis://127.0.0.1:6379/14 \\
        .venv/bin/python bench/matching_workers.py --sizes 10000,100000 [--json]

It runs ``migrate`` and ``flush`` on the database ``DATABASE_URL`` names, and
empties the Redis database ``REDIS_URL`` names: give it disposable ones.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
os.environ["DEBUG"] = "0"
# Tasks go over the broker to the workers, never run in this process.
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"

import django  # noqa: E402

django.setup()

import matching as population  # noqa: E402  (bench/matching.py, beside this one)
from django.conf import settings  # noqa: E402

_commentary = sys.stdout


def say(text: str) -> None:
    """Print one line of commentary."""
    print(text, file=_commentary, flush=True)


def load() -> str:
    """The 1, 5 and 15 minute load averages, as ``uptime`` prints them."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def store(views) -> None:
    """Empty the database and store each view as the one authorship of a paper."""
    from django.core.management import call_command
    from django.db import connection

    from curation import selectors
    from wovepaper.models import Authorship, Paper

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    for start in range(0, len(views), 5000):
        batch = views[start : start + 5000]
        papers = Paper.objects.bulk_create(
            population._paper(start + n) for n in range(len(batch))
        )
        Authorship.objects.bulk_create(
            population._authorship(paper, v, f"{v.given} {v.family}")
            for paper, v in zip(papers, batch, strict=True)
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum would after a bulk load
    selectors.forget_given_rarities()


def forget_proposals() -> None:
    """Delete every proposal, so that the next run proposes everything again."""
    from curation.models import CurationEvent, Proposal

    CurationEvent.objects.all().delete()
    Proposal.authorships.through.objects.all().delete()
    Proposal.objects.all().delete()


def start_workers(count: int, queues: str = "matching") -> list[subprocess.Popen]:
    """Start ``count`` worker processes on ``queues`` (comma-separated), one
    task at a time each; wait until every one answers a ping."""
    from wovepaper.celery import app

    env = {
        **os.environ,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "CELERY_RESULT_BACKEND": settings.CELERY_RESULT_BACKEND,
    }
    procs = [
        subprocess.Popen(  # noqa: S603 - fixed argv, our own worker
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "wovepaper",
                "worker",
                f"--queues={queues}",
                "--concurrency=1",
                "--pool=solo",
                f"--hostname=bench{n}@%h",
                "--without-gossip",
                "--without-mingle",
                "--loglevel=WARNING",
            ],
            cwd=REPO,
            env=env,
            # The banner and warnings; errors reach the run's result.
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for n in range(count)
    ]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if len(app.control.ping(timeout=1.0) or []) >= count:
            return procs
    stop_workers(procs)
    raise SystemExit("the workers did not start")


def stop_workers(procs: list[subprocess.Popen]) -> None:
    """Stop the workers (warm shutdown), killing any after 30 s."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds a process has used (``/proc/<pid>/stat``
    fields 14 and 15, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_run(workers: int, timeout: float) -> tuple[float, dict, list[float]]:
    """Seconds from sending a full matching run to its counts, on ``workers``
    fresh workers (started before the clock, stopped after), and the CPU
    seconds each worker spent meanwhile: how evenly the shards shared the
    work, whatever else the machine ran."""
    from curation.tasks import matching_run_task

    forget_proposals()
    procs = start_workers(workers)
    try:
        say(f"  {workers} worker(s) up; load {load()}")
        before = [cpu_seconds(p.pid) for p in procs]
        started = time.perf_counter()
        counts = matching_run_task.delay().get(timeout=timeout)
        seconds = time.perf_counter() - started
        cpu = [
            round(cpu_seconds(p.pid) - b, 1) for p, b in zip(procs, before, strict=True)
        ]
    finally:
        stop_workers(procs)
    say(
        f"  {workers} worker(s): {seconds:.1f} s (CPU s per worker {cpu}), "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        + f"; load {load()}"
    )
    return seconds, counts, cpu


def main() -> None:
    global _commentary
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes",
        default="10000,100000",
        help="authorships, increasing, comma-separated (default 10000,100000)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="also time services.matching_run() in this process at each size",
    )
    parser.add_argument(
        "--one-worker",
        default="",
        help="sizes (comma-separated) to time on one worker too; default all",
    )
    parser.add_argument(
        "--timeout", type=float, default=7200, help="seconds a run may take"
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the authorships a run of one size left stored (the same "
        "prefix): only their proposals are deleted",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object on standard output; commentary on standard error",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if not sizes or min(sizes) < 1 or sizes != sorted(set(sizes)):
        parser.error("--sizes: positive sizes in increasing order, e.g. 10000,100000")
    one = {int(s) for s in args.one_worker.split(",") if s.strip()} or set(sizes)
    from django.db import connection

    if connection.vendor != "postgresql" or not settings.REDIS_URL:
        parser.error(
            "DATABASE_URL (PostgreSQL) and REDIS_URL must name disposable ones"
        )
    if args.json:
        _commentary = sys.stderr
    import redis

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    data = population.wang()
    copies = math.ceil(max(sizes) / len(data.views))
    people = [
        population.rekeyed(v, copy, len(data.views))
        for copy in range(copies)
        for v in data.views
    ]
    random.Random(population.SEED).shuffle(people)
    say(f"cores: {os.cpu_count()}; load {load()}")
    out: dict = {}
    for size in sizes:
        from wovepaper.models import Authorship

        started = time.perf_counter()
        if not (args.reuse and len(sizes) == 1 and Authorship.objects.count() == size):
            store(people[:size])
        say(f"{size} authorships stored in {time.perf_counter() - started:.0f} s")
        figures: dict = {"authorships": size}
        if args.in_process:
            from curation import services

            forget_proposals()
            began = time.perf_counter()
            services.matching_run()
            figures["in_process_seconds"] = round(time.perf_counter() - began, 1)
            say(f"  in this process: {figures['in_process_seconds']} s; load {load()}")
        if size in one:
            seconds, _, cpu = timed_run(1, args.timeout)
            figures["one_worker_seconds"] = round(seconds, 1)
            figures["one_worker_cpu_seconds"] = cpu
        seconds, counts, cpu = timed_run(2, args.timeout)
        figures["two_workers_seconds"] = round(seconds, 1)
        figures["two_workers_cpu_seconds"] = cpu
        figures["counts"] = counts
        if "one_worker_seconds" in figures:
            figures["ratio"] = round(figures["one_worker_seconds"] / seconds, 2)
            say(
                f"{size}: one worker {figures['one_worker_seconds']} s, two "
                f"{figures['two_workers_seconds']} s: x{figures['ratio']}"
            )
        out[str(size)] = figures
    for n1, n2 in itertools.pairwise(sizes):
        t1 = out[str(n1)]["two_workers_seconds"]
        t2 = out[str(n2)]["two_workers_seconds"]
        exponent = round(math.log(t2 / t1) / math.log(n2 / n1), 3)
        out.setdefault("growth_exponents", {})[f"{n1}-{n2}"] = exponent
        say(f"two workers, {n1} -> {n2} authorships: growth exponent {exponent}")
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
