"""Faults an operator can repeat: what each costs in failed requests and records.

The fault tests of issue 48's hostile trial, as one script on a scratch
PostgreSQL database (``test_<name>`` of ``DATABASE_URL``, made and dropped) and a
Redis of its own (``127.0.0.1:--redis-port``, append-only file on, as a
production broker must run: broker and cache). gunicorn serves the site (as
``gunicorn.conf.py`` would, ``DEBUG=0``) under ``--rate`` requests a second of
pages and API calls throughout; Celery workers harvest the 1,192 real arXiv
``.abs`` files of ``WOVEPAPER_DATA_DIR``. Each fault in turn:

1. **web worker killed**: SIGKILL to one gunicorn worker under load;
2. **Celery worker killed mid-harvest**: SIGKILL to the worker running a harvest
   task, a new worker started; the task comes back (visibility timeout) and
   resumes its run;
3. **harvest command killed**: SIGKILL to ``manage.py harvest arxiv --dir``
   mid-run, then ``--resume`` of its run;
4. **Redis stopped** for ``--outage`` seconds under load, then started again;
5. **PostgreSQL backends terminated** (``pg_terminate_backend``, every
   connection of the database) under load and mid-harvest.

Printed per fault: requests sent while it lasted, answers 500 and above, requests
without an answer, and for the harvest faults the records lost (a readable record
of the files with no stored paper) and duplicated (a record stored twice, a
paper or a byline slot twice). ``--json`` prints the same as one object.

Usage (about 4 minutes)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_faults \\
        .venv/bin/python bench/faults.py [--rate 20] [--outage 15] [--json]
        [--only web,celery,command,redis,postgres]

Measured 2026-12-07 (20 requests a second, 3 gunicorn workers): web worker killed,
320 requests, 0 5xx, 0 unanswered; Celery worker killed mid-harvest, 2,120
requests, 0, 0, 0 records lost, 0 duplicated; harvest command killed and
resumed, 160, 0, 0, 0, 0; Redis stopped 15 s, 520, 0, 0; PostgreSQL backends
terminated mid-harvest, 200 requests, 3 answers 500 (connections the server had
dropped, reused), 0 lost, 0 duplicated; with connection health checks turned on
since (settings: ``conn_health_checks``), 120 requests, 0 5xx, 0 unanswered, 0
lost, 0 duplicated.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402
from loadgen import celery_worker_argv, database_url, gunicorn, load  # noqa: E402

from tests.redis_server import OwnRedis  # noqa: E402

# Seconds Redis waits before handing a dead worker's task to another
# (production keeps 3,600; CELERY_VISIBILITY_TIMEOUT).
VISIBILITY = 5
# Records a harvest has stored when it is killed.
KILL_AFTER_RECORDS = 300
PATHS = (
    "/",
    "/search/?q=graphene",
    "/search/?q=superconductivity",
    "/llms.txt",
    "/api/papers/",
    "/api/papers/?category=hep-th",
    "/api/researchers/",
    "/robots.txt",
)


def _env(redis_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "wovepaper.settings.base",
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "CELERY_RESULT_BACKEND": redis_url,
        "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY),
        "EMBED_AFTER_HARVEST": "0",
    }


def _worker(redis_url: str) -> subprocess.Popen:
    return subprocess.Popen(  # noqa: S603 - fixed argv, our own worker
        celery_worker_argv(),
        cwd=ROOT,
        env=_env(redis_url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def _wait(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"waited {seconds:.0f} s for {what}")
        time.sleep(0.2)


def _expected(root: Path) -> set[str]:
    """The arXiv ids of the readable records under ``root``."""
    from harvest.records import RecordError
    from harvest.sources.arxiv_abs import parse_abs, read_abs_file

    ids = set()
    for path in sorted(root.rglob("*.abs")):
        try:
            ids.add(parse_abs(read_abs_file(path, root)).arxiv_id)
        except (RecordError, OSError):
            continue
    return ids


def _wipe() -> None:
    """Empty what a harvest fills, for the next fault."""
    from curation.models import Constraint, CurationEvent, Proposal
    from harvest.models import HarvestRun, RawRecord
    from wovepaper.models import Paper, Researcher

    Proposal.objects.all().delete()
    CurationEvent.objects.all().delete()
    Constraint.objects.all().delete()
    Paper.objects.all().delete()
    Researcher.objects.all().delete()
    RawRecord.objects.all().delete()
    HarvestRun.objects.all().delete()


def _records(expected: set[str]) -> dict[str, int]:
    """Records lost and duplicated against ``expected`` arXiv ids."""
    from django.db.models import Count

    from harvest.models import RawRecord
    from wovepaper.models import Authorship, Paper

    stored = set(Paper.objects.values_list("arxiv_id", flat=True))
    twice_raw = (
        RawRecord.objects.values("external_id", "content_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    twice_paper = (
        Paper.objects.values("arxiv_id").annotate(n=Count("id")).filter(n__gt=1).count()
    )
    twice_slot = (
        Authorship.objects.values("paper_id", "position")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    return {
        "records_lost": len(expected - stored),
        "records_duplicated": twice_raw + twice_paper + twice_slot,
    }


class Load:
    """Requests at ``rate`` a second in a thread, their statuses counted."""

    def __init__(self, base: str, rate: float) -> None:
        self.base, self.rate = base, rate
        self.statuses: Counter = Counter()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            load(
                self.base,
                list(PATHS),
                self.rate,
                2.0,
                threads=8,
                statuses=self.statuses,
            )

    def __enter__(self) -> Load:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=60)

    def figures(self) -> dict[str, int]:
        return {
            "requests": sum(self.statuses.values()),
            "errors_5xx": sum(n for s, n in self.statuses.items() if s >= 500),
            "no_answer": self.statuses.get(0, 0),
        }


def _harvest_task(redis_url: str, root: Path):
    from harvest.tasks import harvest_arxiv_files_task
    from wovepaper.celery import app

    app.conf.update(
        task_always_eager=False, broker_url=redis_url, result_backend=redis_url
    )
    return harvest_arxiv_files_task.apply_async(
        args=[str(root)], kwargs={"then_match": False}
    )


def _stored() -> int:
    from harvest.models import RawRecord

    return RawRecord.objects.count()


def fault_web_worker(base: str, rate: float, server_pid: int) -> dict:
    """SIGKILL one gunicorn worker under load."""
    with Load(base, rate) as traffic:
        time.sleep(6)
        children = subprocess.run(  # noqa: S603 - fixed argv
            ["pgrep", "-P", str(server_pid)],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        os.kill(int(children[0]), signal.SIGKILL)
        time.sleep(10)
    return traffic.figures()


def fault_celery_worker(base: str, rate: float, redis: OwnRedis, root: Path) -> dict:
    """SIGKILL the worker running a harvest; a new worker finishes the run."""
    expected = _expected(root)
    _wipe()
    first = _worker(redis.url)
    with Load(base, rate) as traffic:
        sent = _harvest_task(redis.url, root)
        _wait(lambda: _stored() >= KILL_AFTER_RECORDS, 300, "the harvest to start")
        _kill(first)
        second = _worker(redis.url)
        try:
            sent.get(timeout=600)
        finally:
            second.terminate()
            second.wait(timeout=60)
    return {**traffic.figures(), **_records(expected)}


def fault_harvest_command(base: str, rate: float, redis: OwnRedis, root: Path) -> dict:
    """SIGKILL ``manage.py harvest`` mid-run; ``--resume`` its run."""
    from harvest.models import HarvestRun

    expected = _expected(root)
    _wipe()
    command = [str(ROOT / ".venv/bin/python"), "manage.py", "harvest", "arxiv"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    env = {**_env(redis.url), "CELERY_TASK_ALWAYS_EAGER": "1"}
    with Load(base, rate) as traffic:
        proc = subprocess.Popen(  # noqa: S603 - fixed argv
            [*command, "--dir", str(root)], cwd=ROOT, env=env, **quiet
        )
        _wait(lambda: _stored() >= KILL_AFTER_RECORDS, 300, "the harvest to start")
        _kill(proc)
        run = HarvestRun.objects.latest("pk")
        subprocess.run(  # noqa: S603 - fixed argv
            [*command, "--resume", str(run.pk)], cwd=ROOT, env=env, check=True, **quiet
        )
    return {**traffic.figures(), **_records(expected)}


def fault_redis(base: str, rate: float, redis: OwnRedis, outage: float) -> dict:
    """Redis (broker and cache) down for ``outage`` seconds under load."""
    with Load(base, rate) as traffic:
        time.sleep(4)
        redis.crash()
        time.sleep(outage)
        redis.start()
        time.sleep(6)
    return traffic.figures()


def _terminate_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def fault_postgres(base: str, rate: float, redis: OwnRedis, root: Path) -> dict:
    """Every connection of the database terminated under load, mid-harvest."""
    expected = _expected(root)
    _wipe()
    worker = _worker(redis.url)
    try:
        with Load(base, rate) as traffic:
            sent = _harvest_task(redis.url, root)
            _wait(lambda: _stored() >= KILL_AFTER_RECORDS, 300, "the harvest to start")
            terminated = _terminate_backends()
            sent.get(timeout=600)
            time.sleep(2)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    return {**traffic.figures(), **_records(expected), "backends": terminated}


def main() -> None:
    """Run every fault; print one row each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=20.0, help="requests a second")
    parser.add_argument("--outage", type=float, default=15.0, help="Redis down, s")
    parser.add_argument("--redis-port", type=int, default=6395)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--only",
        default="web,celery,command,redis,postgres",
        help="the faults to run, of web,celery,command,redis,postgres (default all)",
    )
    options = parser.parse_args()
    only = set(options.only.split(","))
    if connection.vendor != "postgresql":
        sys.exit("bench/faults.py needs DATABASE_URL to name a PostgreSQL server")
    root = Path(settings.WOVEPAPER_DATA_DIR) / "arxiv" / "abs_files"
    folder = tempfile.mkdtemp(prefix="wovepaper-faults-")
    redis = OwnRedis(folder, port=options.redis_port)
    old = setup_databases(verbosity=0, interactive=False, keepdb=False)
    report: dict[str, dict] = {}
    try:
        call_command("migrate", verbosity=0)
        redis.start()
        with gunicorn(database_url(), workers=3, REDIS_URL=redis.url) as base:
            server = subprocess.run(  # noqa: S603 - fixed argv
                ["pgrep", "-f", "gunicorn wovepaper.wsgi"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout.split()
            master = min(int(pid) for pid in server)
            rate = options.rate
            if "web" in only:
                report["web worker killed"] = fault_web_worker(base, rate, master)
            if "celery" in only:
                report["Celery worker killed mid-harvest"] = fault_celery_worker(
                    base, rate, redis, root
                )
            if "command" in only:
                report["harvest command killed"] = fault_harvest_command(
                    base, rate, redis, root
                )
            if "redis" in only:
                report[f"Redis stopped {options.outage:.0f} s"] = fault_redis(
                    base, rate, redis, options.outage
                )
            if "postgres" in only:
                report["PostgreSQL backends terminated"] = fault_postgres(
                    base, rate, redis, root
                )
    finally:
        redis.crash()
        teardown_databases(old, verbosity=0)
    if options.json:
        print(json.dumps(report))
        return
    columns = (
        "requests",
        "errors_5xx",
        "no_answer",
        "records_lost",
        "records_duplicated",
    )
    print(f"{'fault':<34} " + " ".join(f"{c:>18}" for c in columns))
    for fault, figures in report.items():
        cells = " ".join(f"{figures.get(c, '-')!s:>18}" for c in columns)
        print(f"{fault:<34} {cells}")


if __name__ == "__main__":
    main()
