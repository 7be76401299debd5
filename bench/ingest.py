"""Ingest throughput and memory: papers/s and peak RSS, files into PostgreSQL.

The corpus is the 1,192 real arXiv ``.abs`` files (current versions) copied as many
times as needed, each copy re-keyed: a new arXiv id (``3001.00001`` ...) and its DOI
suffixed, so every copy is a new paper with its real title, abstract and byline.
Each size is harvested by ``harvest.services.harvest_files`` (what ``manage.py
harvest arxiv --dir`` runs) into an emptied database, in a child process of its own
so its peak RSS is its own. A baseline in the same run harvests the smallest size
one record at a time (``BATCH_RECORDS = 1``: how every record was written before
batching) for the ratio.

Usage::

    createdb -h 127.0.0.1 -U postgres wovepaper_ingest
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_ingest \\
        .venv/bin/python bench/ingest.py [--sizes 10000,100000] [--json]

The database must be disposable: it is migrated and emptied. ``--json`` prints one
JSON object ``{"<size>": {"papers": n, "seconds": s, "papers_per_s": r,
"peak_rss_mb": m}, ..., "baseline": {...}, "byline": {...}}``; ``--byline`` prints
only the seconds to write a 3,000-author byline and its reordered next version.
The PostgreSQL server's own memory is not in the RSS figures (another process).
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


def one_size(size: int, batch: int) -> dict:
    """In this process: empty the database, harvest ``size`` papers, measure."""
    from django.core.management import call_command

    from harvest import services
    from harvest.services import files
    from wovepaper.models import Authorship, Paper

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    files.BATCH_RECORDS = batch
    with tempfile.TemporaryDirectory(prefix="wovepaper-ingest-") as tmp:
        folder = Path(tmp)
        from django.conf import settings

        write_corpus(size, folder, real_abs_files(Path(settings.WOVEPAPER_DATA_DIR)))
        started = time.perf_counter()
        run = services.harvest_files(source="arxiv", root=folder)
        seconds = time.perf_counter() - started
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
        "batch": batch,
    }


def big_byline(authors: int = 3000) -> dict:
    """Seconds to create a paper with ``authors`` slots (the real 3,000-author
    collaboration papers of hep-ex), then to apply its next version with the
    byline reversed (every slot moves; evidence and assignments follow)."""
    import datetime as dt

    from django.core.management import call_command

    from harvest.records import AuthorRecord, PaperRecord
    from harvest.services import paper_upsert

    call_command("flush", interactive=False, verbosity=0)
    byline = [
        AuthorRecord(
            raw_name=f"A{i}. Family{i % 700}",
            given_name=f"A{i}.",
            family_name=f"Family{i % 700}",
        )
        for i in range(authors)
    ]
    first = PaperRecord(
        source="arxiv",
        external_id="3001.00001",
        title="Big collaboration",
        arxiv_id="3001.00001",
        authors=byline,
        published=dt.date(2030, 1, 1),
    )
    started = time.perf_counter()
    paper_upsert(record=first)
    created = time.perf_counter() - started
    second = PaperRecord(
        source="arxiv",
        external_id="3001.00001v2",
        title="Big collaboration",
        arxiv_id="3001.00001",
        authors=byline[::-1],
        version=2,
        published=dt.date(2030, 1, 1),
        updated=dt.date(2030, 2, 1),
    )
    started = time.perf_counter()
    paper_upsert(record=second)
    return {
        "authors": authors,
        "create_s": round(created, 2),
        "reordered_version_s": round(time.perf_counter() - started, 2),
    }


def in_child(size: int, batch: int) -> dict:
    """:func:`one_size` in a fresh interpreter, so its peak RSS is its own."""
    out = subprocess.run(
        [sys.executable, __file__, "--one", str(size), "--batch", str(batch)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--baseline", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--byline", action="store_true", help="only the 3,000-author byline figure"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        from harvest.services import BATCH_RECORDS

        print(json.dumps(one_size(args.one, args.batch or BATCH_RECORDS)))
        return
    if args.byline:
        print(json.dumps(big_byline()))
        return
    results: dict[str, dict] = {}
    if args.baseline:
        results["baseline"] = in_child(args.baseline, 1)
    from harvest.services import BATCH_RECORDS

    for size in (int(s) for s in args.sizes.split(",")):
        results[str(size)] = in_child(size, BATCH_RECORDS)
    results["byline"] = big_byline()
    if args.json:
        print(json.dumps(results))
        return
    print(
        f"{'corpus':>22} {'papers':>8} {'authorships':>12} {'seconds':>8} "
        f"{'papers/s':>9} {'peak RSS MB':>12}"
    )
    base = results.get("baseline")
    big = results.pop("byline")
    for name, r in results.items():
        label = f"{r['papers']} one by one" if name == "baseline" else f"{name} batched"
        ratio = (
            f"  {r['papers_per_s'] / base['papers_per_s']:.1f}x the one-by-one rate"
            if base and name != "baseline"
            else ""
        )
        print(
            f"{label:>22} {r['papers']:>8} {r['authorships']:>12} {r['seconds']:>8} "
            f"{r['papers_per_s']:>9} {r['peak_rss_mb']:>12}{ratio}"
        )
    print(
        f"a {big['authors']:,}-author byline: created in {big['create_s']} s, its "
        f"next version with every slot moved in {big['reordered_version_s']} s"
    )


if __name__ == "__main__":
    main()
