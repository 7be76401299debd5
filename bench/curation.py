"""Curation action cost as profiles grow: merge, split, undo, in milliseconds.

Builds two researchers of N authorships each (N = 10, 100, 1000) on the database
``DATABASE_URL`` names (SQLite in ``var/`` by default; a PostgreSQL URL for the
production figure), then times, per N: merging them (2N authorships touched,
must-links written), splitting half off again, undoing the split and undoing the
merge. The baseline in the same run is the bare assignment write the action must
do anyway: one ``UPDATE authorship SET researcher`` for the same rows, so the ratio
shows what the audit event, constraints, locks and compare-and-swap cost on top.

Usage: ``.venv/bin/python bench/curation.py`` (it makes and drops a scratch
database ``<name>_bench`` on PostgreSQL; on SQLite it uses ``var/bench.sqlite3``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
if "DATABASE_URL" not in os.environ:
    os.environ["DATABASE_URL"] = "sqlite:///" + str(
        Path(__file__).resolve().parent.parent / "var" / "bench.sqlite3"
    )
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402

SIZES = (10, 100, 1000)


def build(n: int):
    """Two researchers of ``n`` authorships each, on 2n papers."""
    from django.contrib.auth import get_user_model

    from wovepaper.models import Authorship, Paper, Researcher

    user, _ = get_user_model().objects.get_or_create(username="bench-curator")
    a = Researcher.objects.create(display_name=f"A Serre {n}", block_key="serre_a")
    b = Researcher.objects.create(display_name=f"A. Serre {n}", block_key="serre_a")
    papers = Paper.objects.bulk_create(
        Paper(arxiv_id=f"bench.{n}.{i}", title=f"Paper {i}") for i in range(2 * n)
    )
    Authorship.objects.bulk_create(
        Authorship(
            paper=p,
            position=1,
            raw_name="A. Serre",
            given_name="A.",
            family_name="Serre",
            researcher=a if i < n else b,
        )
        for i, p in enumerate(papers)
    )
    return user, a, b


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def run(n: int) -> dict[str, float]:
    from curation import edits
    from curation.history import event_undo
    from curation.models import CurationEvent
    from wovepaper.models import Authorship

    user, a, b = build(n)
    ids = list(Authorship.objects.filter(researcher=b).values_list("pk", flat=True))
    baseline = (
        timed(
            lambda: (
                Authorship.objects.filter(pk__in=ids).update(researcher=a),
                Authorship.objects.filter(pk__in=ids).update(researcher=b),
            )
        )
        / 2
    )
    out = {"baseline_update": baseline}
    out["merge"] = timed(lambda: edits.researcher_merge(researchers=[a, b], actor=user))
    half = list(
        Authorship.objects.filter(researcher=a).values_list("pk", flat=True)[:n]
    )
    out["split"] = timed(
        lambda: edits.researcher_split(researcher=a, authorship_ids=half, actor=user)
    )
    split = CurationEvent.objects.filter(kind="split").latest("pk")
    out["undo_split"] = timed(lambda: event_undo(event=split, actor=user))
    merge = CurationEvent.objects.filter(kind="merged").latest("pk")
    out["undo_merge"] = timed(lambda: event_undo(event=merge, actor=user))
    return out


def main() -> None:
    # No options: --help says what the script measures.
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    old = setup_databases(verbosity=0, interactive=False, keepdb=False)
    try:
        call_command("migrate", verbosity=0)
        print(f"database: {connection.vendor}")
        print(
            f"{'N per profile':>14} {'bare UPDATE':>12} {'merge':>10} {'split':>10} "
            f"{'undo split':>11} {'undo merge':>11} {'merge/UPDATE':>13}"
        )
        for n in SIZES:
            t = run(n)
            print(
                f"{n:>14} {t['baseline_update']:>10.1f}ms {t['merge']:>8.1f}ms "
                f"{t['split']:>8.1f}ms {t['undo_split']:>9.1f}ms "
                f"{t['undo_merge']:>9.1f}ms {t['merge'] / t['baseline_update']:>12.1f}x"
            )
    finally:
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
