"""Harvest and matching throughput on the bundled real arXiv files.

Prints, for one run over ``WOVEPAPER_DATA_DIR/arxiv``:
- parse only (cut files into raw records and parse them, no database): the baseline;
- harvest (store RawRecords, parse, upsert Papers and Authorships) into a fresh
  database, as records/s and the ratio to the parse-only baseline;
- a second harvest of the same files (everything unchanged): the idempotent re-run;
- matching (blocking, scoring, clustering, storing proposals) as authorships/s.

Usage: ``.venv/bin/python bench/harvest.py`` (fresh SQLite in a temporary folder), or
with ``DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_bench`` (the database
must exist and be disposable: it is migrated and filled).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
os.environ.setdefault("WOVEPAPER_VAR_DIR", tempfile.mkdtemp(prefix="wovepaper-bench-"))

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from curation.services import matching_run  # noqa: E402
from harvest import services  # noqa: E402
from harvest.records import RecordError  # noqa: E402
from wovepaper.models import Authorship  # noqa: E402


def parse_only(root: Path) -> tuple[int, float]:
    """Cut and parse every file, no database; return (records, seconds)."""
    started = time.perf_counter()
    records = 0
    for path in services.arxiv_files(root):
        reader = services.arxiv_reader_for(path)
        try:
            items = list(reader.split(path, root))
        except RecordError:
            continue
        for item in items:
            records += 1
            try:
                reader.parse(item)
            except RecordError:
                pass
    return records, time.perf_counter() - started


def main() -> None:
    # No options: --help says what the script measures.
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    root = Path(settings.WOVEPAPER_DATA_DIR) / "arxiv"
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; data: {root}")

    n, base = parse_only(root)
    print(f"parse only      {n:6d} records {base:7.2f} s {n / base:8.1f} records/s")

    started = time.perf_counter()
    run = services.harvest_arxiv_files(root=root)
    first = time.perf_counter() - started
    print(
        f"harvest (new)   {run.records_seen:6d} records {first:7.2f} s "
        f"{run.records_seen / first:8.1f} records/s  "
        f"{first / base:5.1f}x parse-only time"
    )

    started = time.perf_counter()
    again = services.harvest_arxiv_files(root=root)
    second = time.perf_counter() - started
    print(
        f"harvest (again) {again.records_seen:6d} records {second:7.2f} s "
        f"{again.records_seen / second:8.1f} records/s  "
        f"{second / base:5.1f}x parse-only time  "
        f"({again.papers_unchanged} unchanged)"
    )

    people = Authorship.objects.filter(is_collaboration=False).count()
    started = time.perf_counter()
    counts = matching_run()
    took = time.perf_counter() - started
    print(
        f"matching        {people:6d} authorships {took:5.2f} s "
        f"{people / took:8.1f} authorships/s  {counts}"
    )


if __name__ == "__main__":
    main()
