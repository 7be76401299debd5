"""Curation event log lookups on PostgreSQL, with and without its JSON indexes.

Every curation action writes a ``CurationEvent`` whose ``researchers``,
``moves`` and ``fields`` are JSON. Four reads search them by researcher id:
a researcher's History (``researchers @> [id]``), the split events of a
researcher page (``moves @> [{"before": id}]``), where a retired profile's
papers went (the same), and the merges a split reads
(``fields ?| [ids]``). Without an index each is a scan of the whole log, which
grows with every decision (the demo's 7,352 ``new`` proposals, approved, are
7,352 events).

This fills a scratch database with ``--events`` synthetic events over
``--researchers`` ids (kinds and shapes as the curation services write them:
applied proposals, merges, splits, moves), then times each read for
``--probes`` researchers with the GIN indexes of migration
``curation/0008_event_json_indexes`` dropped (the baseline) and created, in
the same run, and the write cost: inserting 5,000 more events either way.
Prints p50 and p95 in milliseconds and the ratios.

Usage (PostgreSQL only; makes and drops ``test_wovepaper_bench_events``, or
``test_<name>`` of the database ``EVENT_LOG_BENCH_URL`` names; an exported
``DATABASE_URL`` is not used, so the test suite's database is never touched)::

    .venv/bin/python bench/event_log.py [--events 200000] [--json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
# Its own database, whatever DATABASE_URL the shell exports: Django's test
# runner makes and drops test_<name>, which for the project's database would
# be the test suite's (new-user trial). EVENT_LOG_BENCH_URL names another.
os.environ["DATABASE_URL"] = os.environ.get(
    "EVENT_LOG_BENCH_URL", "postgres://postgres@127.0.0.1:5432/wovepaper_bench_events"
)
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402

KINDS = (
    ("proposal_applied", 0.7),
    ("moved", 0.15),
    ("merged", 0.1),
    ("split", 0.05),
)


def _event(rng: random.Random, researchers: int, next_authorship: list[int]):
    """One event's ``(kind, researchers, moves, fields)`` as the services write
    them (:class:`curation.changes.Change`)."""
    kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
    a, b = rng.randrange(1, researchers), rng.randrange(1, researchers)
    n = rng.randint(1, 5)
    first = next_authorship[0]
    next_authorship[0] += n
    if kind == "proposal_applied":
        moves = [
            {"authorship": first + i, "before": None, "after": a} for i in range(n)
        ]
        return kind, [a], moves, {}
    moves = [{"authorship": first + i, "before": b, "after": a} for i in range(n)]
    fields = {}
    if kind == "merged":
        fields = {str(b): {"merged_into_id": [None, a]}}
    return kind, sorted({a, b}), moves, fields


def fill(events: int, researchers: int, seed: int = 7) -> None:
    """Insert ``events`` events in batches of 10,000."""
    from curation.models import CurationEvent

    rng = random.Random(seed)
    counter = [1]
    for start in range(0, events, 10_000):
        CurationEvent.objects.bulk_create(
            CurationEvent(kind=k, researchers=r, moves=m, fields=f)
            for k, r, m, f in (
                _event(rng, researchers, counter)
                for _ in range(min(10_000, events - start))
            )
        )


def _reads(researcher: int) -> dict:
    from curation import edits
    from curation.history import researcher_history
    from wovepaper import profile
    from wovepaper.models import Researcher

    r = Researcher(pk=researcher)
    return {
        "history (researchers @>)": lambda: list(
            researcher_history(researcher_id=researcher)[:50]
        ),
        "page split events (moves @>)": lambda: profile._split_events(r),
        "retired profile (moves @>)": lambda: profile.former_holders(r),
        "split's merges (fields ?|)": lambda: edits._merges_of({researcher: 1}),
    }


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def measure(probes: list[int]) -> dict[str, dict[str, float]]:
    """``{read: {"p50", "p95"}}`` in milliseconds over the probes (one warm-up)."""
    out: dict[str, list[float]] = {}
    for fn in _reads(probes[0]).values():
        fn()
    for pk in probes:
        for name, fn in _reads(pk).items():
            out.setdefault(name, []).append(_time(fn))
    return {
        name: {
            "p50": statistics.median(ts),
            "p95": sorted(ts)[max(0, int(len(ts) * 0.95) - 1)],
        }
        for name, ts in out.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--events", type=int, default=200_000, help="events in the log (200,000)"
    )
    parser.add_argument(
        "--researchers",
        type=int,
        default=20_000,
        help="researcher ids the events name (20,000)",
    )
    parser.add_argument(
        "--probes", type=int, default=40, help="researchers each read is timed for (40)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/event_log.py measures PostgreSQL's indexes: set DATABASE_URL")
    event_indexes = importlib.import_module(
        "curation.migrations.0008_event_json_indexes"
    )

    old = setup_databases(verbosity=0, interactive=False, keepdb=False)
    try:
        start = time.perf_counter()
        fill(args.events, args.researchers)
        filled = time.perf_counter() - start
        rng = random.Random(11)
        probes = [rng.randrange(1, args.researchers) for _ in range(args.probes)]
        report: dict = {"events": args.events, "fill_seconds": round(filled, 1)}
        with connection.cursor() as cursor:
            event_indexes.drop_indexes(cursor, concurrently=False)
            cursor.execute("ANALYZE curation_curationevent")
            report["without"] = measure(probes)
            report["insert_5000_without_ms"] = _time(
                lambda: fill(5_000, args.researchers, seed=99)
            )
            start = time.perf_counter()
            event_indexes.create_indexes(cursor, concurrently=False)
            report["index_build_seconds"] = round(time.perf_counter() - start, 1)
            cursor.execute("ANALYZE curation_curationevent")
            cursor.execute(
                "SELECT sum(pg_relation_size(indexrelid)) FROM pg_index "
                "WHERE indrelid = 'curation_curationevent'::regclass "
                "AND indexrelid::regclass::text = ANY(%s)",
                [list(event_indexes.INDEXES)],
            )
            report["index_mb"] = round(cursor.fetchone()[0] / 2**20, 1)
            cursor.execute("SELECT pg_relation_size('curation_curationevent')")
            report["table_mb"] = round(cursor.fetchone()[0] / 2**20, 1)
            report["with"] = measure(probes)
            report["insert_5000_with_ms"] = _time(
                lambda: fill(5_000, args.researchers, seed=98)
            )
    finally:
        teardown_databases(old, verbosity=0)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{args.events:,} events, {args.probes} researchers probed; "
        f"filled in {report['fill_seconds']} s; table {report['table_mb']} MB, "
        f"indexes {report['index_mb']} MB, built in {report['index_build_seconds']} s"
    )
    print(
        f"{'read':<30} {'no index p50/p95':>18} {'GIN p50/p95':>16} {'p50 ratio':>10}"
    )
    for name, before in report["without"].items():
        after = report["with"][name]
        print(
            f"{name:<30} {before['p50']:>8.1f}/{before['p95']:<7.1f}ms "
            f"{after['p50']:>6.2f}/{after['p95']:<6.2f}ms "
            f"{before['p50'] / max(after['p50'], 1e-6):>9.0f}x"
        )
    w, wo = report["insert_5000_with_ms"], report["insert_5000_without_ms"]
    print(f"insert 5,000 events: {wo:.0f} ms without, {w:.0f} ms with ({w / wo:.2f}x)")


if __name__ == "__main__":
    main()
