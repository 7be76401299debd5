"""Ingest throughput and memory: papers/s and peak RSS, files into PostgreSQL.

The corpus is the 1,192 real arXiv ``.abs`` files (current versions) copied as many
times as needed, each copy re-keyed: a new arXiv id (``3001.00001`` ...) and its DOI
suffixed, so every copy is a new paper with its real title, abstract and byline.
Each size is harvested by ``harvest.services.harvest_files`` (what ``manage.py
harvest arxiv --dir`` runs) into an emptied database, in a child process of its own
so its peak RSS is its own. Two baselines in the same run: the first size
without prepare workers (parsed in the harvest's own process), and 2,000 papers
one record at a time (``BATCH_RECORDS = 1``: how every record was written before
batching).

With ``--snapshot`` the same re-keyed papers are harvested from arXiv's
metadata snapshot in JSON lines instead (the Kaggle dataset, as
:mod:`harvest.sources.arxiv_kaggle` reads it): one line a paper built from
its ``.abs`` file (``tests/harvest/snapshot_lines.py``), in pieces of
:data:`PIECE_LINES` lines, as the README says to split the snapshot.

Usage::

    createdb -h 127.0.0.1 -U postgres wovepaper_ingest
    WOVEPAPER_DATA_DIR=../shared/data \\
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_ingest \\
        .venv/bin/python bench/ingest.py [--sizes 10000,100000] [--baseline 2000] \\
        [--snapshot] [--json]

The database must be disposable: it is dropped and created again for each size
(its role needs ``CREATEDB``), so every size is a first harvest into a new
database, with no planner statistics, whatever ran before. ``--json`` prints one
JSON object ``{"<size>": {"papers": n, "seconds": s, "papers_per_s": r,
"peak_rss_mb": m, "worker_peak_rss_mb": w, "cpu_s": {"harvest", "workers",
"postgres", "postgres_all"}, "workers": k}, ..., "no_workers": {...},
"baseline": {...}, "byline": [{...}, {...}], "host_loop_s": t}``; ``--byline``
prints only the seconds to write a 3,000-author byline, its reordered next
version and an unchanged third (:func:`big_byline`), with 700 and with 16
family names.
The PostgreSQL server's own memory is not in the RSS figures (another process);
its CPU is, read from ``/proc`` (when the server runs on this machine):
``postgres`` for the backend serving the harvest (the serial part: the harvest
waits on it), ``postgres_all`` for the whole server (that backend, the
checkpointer, the WAL writer, autovacuum and any other backend: what the
harvest costs the server in all, if nothing else uses it meanwhile).
``no_workers`` is the first size without prepare workers
(``HARVEST_PREPARE_WORKERS=0``), for the ratio; ``host_loop_s`` is the seconds
of a fixed Python loop on this host (:func:`host_speed`), so figures from
different hosts compare.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
# As in production: with DEBUG on, Django keeps the text of the last 9,000 queries,
# and a batch insert's text is megabytes.
os.environ["DEBUG"] = "0"

import django  # noqa: E402

django.setup()

_ID_LINE = re.compile(r"^(?:arXiv|Paper):[ \t]*\S+", re.MULTILINE)
_DOI_LINE = re.compile(r"^(DOI:[ \t]*)(\S+)", re.MULTILINE)


def real_abs_files(data_dir: Path) -> list[Path]:
    """The current-version ``.abs`` files (``ftp/``), sorted."""
    return sorted((data_dir / "arxiv" / "abs_files" / "ftp").rglob("*.abs"))


def write_corpus(size: int, folder: Path, sources: list[Path]) -> int:
    """Write ``size`` re-keyed copies of the real files into ``folder``.

    Copy k of file i gets the id ``YYMM.NNNNN`` with YY = 30 + k // 12, MM = k % 12
    + 1, NNNNN = i + 1, and its DOI suffixed ``-c<k>``.

    Returns:
        How many files were written (``size``; unreadable sources are skipped).
    """
    texts = []
    for path in sources:
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if _ID_LINE.search(text):
            texts.append(text)
    if not texts:
        # Without this, the copies below would never add up to ``size``.
        raise SystemExit(
            "no real arXiv .abs files to copy: set WOVEPAPER_DATA_DIR to the "
            "shared data folder (it holds arxiv/abs_files/ftp)"
        )
    written = 0
    copy = 0
    while written < size:
        sub = folder / f"copy{copy:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        yymm = f"{30 + copy // 12:02d}{copy % 12 + 1:02d}"
        for index, text in enumerate(texts):
            if written == size:
                break
            new_id = f"{yymm}.{index + 1:05d}"
            body = _ID_LINE.sub(f"arXiv:{new_id}", text, count=1)
            body = _DOI_LINE.sub(rf"\g<1>\g<2>-c{copy}", body)
            (sub / f"{new_id}.abs").write_text(body)
            written += 1
        copy += 1
    return written


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (``/proc/<pid>/stat``,
    fields 14 and 15, proc(5))."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_cpu_seconds(backend: int) -> float:
    """CPU seconds of the whole PostgreSQL server so far: its postmaster (the
    parent of ``backend``) with the children it has reaped (fields 14-17 of
    ``/proc/<pid>/stat``, proc(5)), and every live child. A backend that ends
    during the run counts once its postmaster has reaped it."""
    ticks = os.sysconf("SC_CLK_TCK")
    parent = int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
    fields = Path(f"/proc/{parent}/stat").read_text().rsplit(")", 1)[1].split()
    total = sum(int(f) for f in fields[11:15]) / ticks
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            rest = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile: reaped, so counted above
            continue
        if int(rest[1]) == parent:
            total += (int(rest[11]) + int(rest[12])) / ticks
    return total


def _rusage_cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def database_recreate() -> None:
    """Drop the benchmark's database and create it again (empty, unmigrated).

    A first harvest into a new database starts with no planner statistics; a
    flushed one keeps those of the last ``ANALYZE``, so a size measured after
    another would plan with the other's statistics. Each size starts new.

    Raises:
        SystemExit: ``DATABASE_URL`` does not name a PostgreSQL database; its
            role may not create databases (checked before anything is
            dropped); or the drop or the create failed.
    """
    import psycopg
    from django.db import connection
    from psycopg import sql

    if connection.vendor != "postgresql":
        raise SystemExit(
            "bench/ingest.py measures PostgreSQL: set DATABASE_URL to a "
            "disposable PostgreSQL database"
        )
    conf = connection.settings_dict
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user"
        )
        (may_create,) = cursor.fetchone()
    if not may_create:
        raise SystemExit(
            f"the role of DATABASE_URL may not create databases (CREATEDB): "
            f"bench/ingest.py drops and creates {conf['NAME']} for each size"
        )
    params = {
        **{k: v for k, v in conf["OPTIONS"].items() if k in _LIBPQ_OPTIONS},
        "dbname": "postgres",
        "host": conf["HOST"],
        "port": conf["PORT"],
        "user": conf["USER"],
        "password": conf["PASSWORD"],
    }
    connection.close()
    name = sql.Identifier(conf["NAME"])
    try:
        with psycopg.connect(
            **{k: v for k, v in params.items() if v}, autocommit=True
        ) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name)
            )
            admin.execute(sql.SQL("CREATE DATABASE {}").format(name))
    except psycopg.Error as exc:
        raise SystemExit(
            f"could not drop and create the benchmark database {conf['NAME']}: {exc}"
        ) from exc


# Connection options passed on to the maintenance connection (libpq keywords).
_LIBPQ_OPTIONS = {
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "passfile",
    "connect_timeout",
}


# Lines a snapshot piece holds (README: split -l 20000).
PIECE_LINES = 20_000


def write_snapshot(size: int, folder: Path, sources: list[Path]) -> int:
    """Write ``size`` re-keyed snapshot lines of the real files into pieces of
    :data:`PIECE_LINES` lines in ``folder``, re-keyed as :func:`write_corpus`
    re-keys (copy k of file i: id ``YYMM.NNNNN``, DOI suffixed ``-c<k>``).

    Files without a Categories line (a snapshot line always has one) and
    files that are not UTF-8 are passed over.

    Returns:
        How many lines were written (``size``).
    """
    from tests.harvest.snapshot_lines import snapshot_line

    lines = []
    for path in sources:
        try:
            line = snapshot_line(path)
        except (UnicodeDecodeError, IndexError, AttributeError):
            continue
        if line["categories"]:
            lines.append(line)
    if not lines:
        raise SystemExit(
            "no real arXiv .abs files to build snapshot lines from: set "
            "WOVEPAPER_DATA_DIR to the shared data folder"
        )
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    piece = None
    while written < size:
        copy, index = divmod(written, len(lines))
        if written % PIECE_LINES == 0:
            if piece is not None:
                piece.close()
            piece = (folder / f"piece-{written // PIECE_LINES:04d}.json").open("w")
        line = dict(lines[index])
        line["id"] = f"{30 + copy // 12:02d}{copy % 12 + 1:02d}.{index + 1:05d}"
        if line["doi"]:
            line["doi"] = f"{line['doi']}-c{copy}"
        piece.write(json.dumps(line) + "\n")
        written += 1
    if piece is not None:
        piece.close()
    return written


def one_size(
    size: int, batch: int, workers: int | None, snapshot: bool = False
) -> dict:
    """In this process: a new database, ``size`` papers harvested, measured.

    Args:
        size: papers to ingest.
        batch: records a batch (``BATCH_RECORDS``).
        workers: ``HARVEST_PREPARE_WORKERS`` (None: the setting's default).
        snapshot: harvest snapshot pieces (:func:`write_snapshot`), not
            ``.abs`` files.

    Returns:
        The figures, with the CPU seconds of the harvest's process, of its
        prepare workers, of its PostgreSQL backend (the server process
        serving its connection, read from ``/proc``) and of the whole server.
    """
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from harvest import services
    from harvest.services import files
    from harvest.services.prepare import prepare_workers
    from wovepaper.models import Authorship, Paper

    database_recreate()
    call_command("migrate", verbosity=0)
    files.BATCH_RECORDS = batch
    if workers is not None:
        settings.HARVEST_PREPARE_WORKERS = workers
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    try:
        _cpu_seconds(backend)
    except OSError:  # a server on another machine
        backend = None
    with tempfile.TemporaryDirectory(prefix="wovepaper-ingest-") as tmp:
        folder = Path(tmp)
        write = write_snapshot if snapshot else write_corpus
        write(size, folder, real_abs_files(Path(settings.WOVEPAPER_DATA_DIR)))
        cpu = (
            _rusage_cpu(resource.RUSAGE_SELF),
            _rusage_cpu(resource.RUSAGE_CHILDREN),
            _cpu_seconds(backend) if backend else 0.0,
            _server_cpu_seconds(backend) if backend else 0.0,
        )
        started = time.perf_counter()
        run = services.harvest_files(source="arxiv", root=folder)
        seconds = time.perf_counter() - started
        cpu = (
            _rusage_cpu(resource.RUSAGE_SELF) - cpu[0],
            _rusage_cpu(resource.RUSAGE_CHILDREN) - cpu[1],
            (_cpu_seconds(backend) - cpu[2]) if backend else None,
            (_server_cpu_seconds(backend) - cpu[3]) if backend else None,
        )
    papers = Paper.objects.count()
    return {
        "papers": papers,
        "authorships": Authorship.objects.count(),
        "failed": run.records_failed,
        "seconds": round(seconds, 2),
        "papers_per_s": round(papers / seconds, 1),
        "peak_rss_mb": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
        ),
        # The largest prepare worker (they are waited for when the pool stops).
        "worker_peak_rss_mb": round(
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
        ),
        "cpu_s": {
            "harvest": round(cpu[0], 2),
            "workers": round(cpu[1], 2),
            "postgres": None if cpu[2] is None else round(cpu[2], 2),
            "postgres_all": None if cpu[3] is None else round(cpu[3], 2),
        },
        "batch": batch,
        "workers": prepare_workers(),
        "snapshot": snapshot,
    }


def host_speed() -> float:
    """Seconds this host takes for a fixed pure-Python loop (20 million
    additions, one core), printed beside the figures so runs on different hosts,
    or on one shared host at different times, can be told apart."""
    started = time.perf_counter()
    total = 0
    for i in range(20_000_000):
        total += i
    return round(time.perf_counter() - started, 2)


def big_byline(authors: int = 3000, families: int = 700) -> dict:
    """Seconds to create a paper with ``authors`` slots (the real 3,000-author
    collaboration papers of hep-ex), to apply its next version with the
    byline reversed (every slot moves; evidence and assignments follow), and
    to apply a third version with that byline unchanged (a re-harvest).

    ``families`` is how many family names the slots share: 700 (about four
    slots each), or 16 as in a big collaboration's Wangs, Lis and Zhangs,
    where each name meets about 190 slots of its family."""
    import datetime as dt

    from django.core.management import call_command

    from harvest.records import AuthorRecord, PaperRecord
    from harvest.services import paper_upsert

    call_command("flush", interactive=False, verbosity=0)
    byline = [
        AuthorRecord(
            raw_name=f"A{i}. Family{i % families}",
            given_name=f"A{i}.",
            family_name=f"Family{i % families}",
        )
        for i in range(authors)
    ]

    def version(n: int, slots: list[AuthorRecord]) -> PaperRecord:
        return PaperRecord(
            source="arxiv",
            external_id=f"3001.00001v{n}",
            title="Big collaboration",
            arxiv_id="3001.00001",
            authors=slots,
            version=n,
            published=dt.date(2030, 1, 1),
            updated=dt.date(2030, 1, n),
        )

    seconds = []
    for n, slots in enumerate((byline, byline[::-1], byline[::-1]), start=1):
        started = time.perf_counter()
        paper_upsert(record=version(n, slots))
        seconds.append(round(time.perf_counter() - started, 2))
    return {
        "authors": authors,
        "families": families,
        "create_s": seconds[0],
        "reordered_version_s": seconds[1],
        "unchanged_version_s": seconds[2],
    }


def big_bylines() -> list[dict]:
    """:func:`big_byline` with 700 family names and with 16."""
    return [big_byline(families=700), big_byline(families=16)]


def in_child(
    size: int, batch: int, workers: int | None = None, snapshot: bool = False
) -> dict:
    """:func:`one_size` in a fresh interpreter, so its peak RSS is its own."""
    argv = [sys.executable, __file__, "--one", str(size), "--batch", str(batch)]
    if workers is not None:
        argv += ["--workers", str(workers)]
    if snapshot:
        argv.append("--snapshot")
    out = subprocess.run(argv, check=False, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"ingesting {size} papers failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default="10000,100000", help="papers to ingest, comma-separated"
    )
    parser.add_argument(
        "--baseline",
        type=int,
        default=2000,
        help="papers ingested one by one for the ratio (0: none)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object of the figures"
    )
    parser.add_argument(
        "--byline", action="store_true", help="only the 3,000-author byline figure"
    )
    parser.add_argument(
        "--snapshot",
        action="store_true",
        help="harvest the papers from snapshot JSON lines in pieces of "
        f"{PIECE_LINES:,}, not from .abs files",
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        from harvest.services import BATCH_RECORDS

        print(
            json.dumps(
                one_size(
                    args.one, args.batch or BATCH_RECORDS, args.workers, args.snapshot
                )
            )
        )
        return
    if args.byline:
        print(json.dumps(big_bylines()))
        return
    from django.conf import settings

    if not real_abs_files(Path(settings.WOVEPAPER_DATA_DIR)):
        raise SystemExit(
            f"no arXiv .abs files under {settings.WOVEPAPER_DATA_DIR}: set "
            "WOVEPAPER_DATA_DIR to the shared data folder"
        )
    results: dict[str, dict] = {"host_loop_s": host_speed()}
    if args.baseline:
        results["baseline"] = in_child(
            args.baseline, 1, workers=0, snapshot=args.snapshot
        )
    from harvest.services import BATCH_RECORDS

    sizes = [int(s) for s in args.sizes.split(",")]
    # The same first size batched without workers: what the workers add.
    results["no_workers"] = in_child(
        sizes[0], BATCH_RECORDS, workers=0, snapshot=args.snapshot
    )
    for size in sizes:
        results[str(size)] = in_child(size, BATCH_RECORDS, snapshot=args.snapshot)
    results["byline"] = big_bylines()
    if args.json:
        print(json.dumps(results))
        return
    source = ".abs files"
    if args.snapshot:
        source = f"snapshot lines in pieces of {PIECE_LINES:,}"
    print(
        f"host: a fixed Python loop (20 million additions) takes "
        f"{results.pop('host_loop_s')} s; papers from {source}"
    )
    print(
        f"{'corpus':>30} {'papers':>8} {'authorships':>12} {'seconds':>8} "
        f"{'papers/s':>9} {'peak RSS MB':>12} "
        f"{'CPU s: harvest/workers/postgres (all)':>38}"
    )
    base = results.get("baseline")
    alone = results["no_workers"]
    bylines = results.pop("byline")
    for name, r in results.items():
        if name == "baseline":
            label = f"{r['papers']} one by one"
        elif name == "no_workers":
            label = f"{r['papers']} batched, no workers"
        else:
            label = f"{name} batched, {r['workers']} workers"
        ratios = []
        if name not in {"baseline", "no_workers"}:
            ratios.append(
                f"{r['papers_per_s'] / alone['papers_per_s']:.2f}x without workers"
            )
        if base and name != "baseline":
            ratios.append(f"{r['papers_per_s'] / base['papers_per_s']:.1f}x one by one")
        cpu = r["cpu_s"]
        cpu_text = (
            f"{cpu['harvest']}/{cpu['workers']}/{cpu['postgres']}"
            f" ({cpu['postgres_all']})"
        )
        rss = f"{r['peak_rss_mb']}+{r['worker_peak_rss_mb']}"
        print(
            f"{label:>30} {r['papers']:>8} {r['authorships']:>12} {r['seconds']:>8} "
            f"{r['papers_per_s']:>9} {rss:>12} {cpu_text:>38}  {', '.join(ratios)}"
        )
    print(
        "peak RSS: the harvest's process + its largest prepare worker (the "
        "PostgreSQL server's memory is not counted)"
    )
    for big in bylines:
        print(
            f"a {big['authors']:,}-author byline of {big['families']} family names: "
            f"created in {big['create_s']} s, its next version with every slot "
            f"moved in {big['reordered_version_s']} s, a third with that byline "
            f"unchanged in {big['unchanged_version_s']} s"
        )


if __name__ == "__main__":
    main()
