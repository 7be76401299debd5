"""The curators' proposal search with 100,000 proposals, in milliseconds.

Issue 48's target: a search of the proposal queue over all statuses answers in
300 ms with 100,000 proposals (a hostile trial measured about 2 s). Builds, on a
scratch PostgreSQL database (``<DATABASE_URL's name>_bench``, made and dropped),
N proposals (default 100,000: 55% applied, 30% pending, 15% rejected; kinds new,
attach and merge) over the real names of the INSPIRE Wang and S2AND Qian labelled
sets (one to three authorships a proposal, each on its own paper with an arXiv
id, some with an ORCID iD), then asks the admin's changelist
(``/admin/curation/proposal/?q=...``, a signed-in curator, all statuses) for a
surname, the one family name of the Wang set (most proposals built carry it:
the worst case), a full name, a block key, an arXiv id, an ORCID iD and a name
nobody has, each 5 times. Printed per query: the median and the slowest time of the
whole page, and, in the same run, of Django's own search (the admin's
``search_fields`` as ``icontains`` over every field) on the same page.

Usage::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper \\
        .venv/bin/python bench/admin_search.py [--proposals 100000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib import admin  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402

RUNS = 5
# The queue's search_fields before its own search (Django's icontains over each).
DJANGO_SEARCH_FIELDS = (
    "block_key",
    "authorships__raw_name",
    "researcher__display_name",
    "other_researcher__display_name",
    "authorships__paper__arxiv_id",
    "authorships__orcid",
    "researcher__orcid",
)
ORCIDS = ("0000-0002-1825-0097", "0000-0001-5109-3700", "0000-0003-1527-0030")


def _names() -> list[tuple[str, str]]:
    """``(given, family)`` of every mention of the Wang and Qian sets."""
    from curation.matching import labelled

    data = Path(settings.WOVEPAPER_DATA_DIR) / "and"
    out = []
    for folder in ("beard_inspire_wang", "s2and/qian_partial"):
        out += [(v.given, v.family) for v in labelled.load(data / folder).views]
    return out


def build(n: int, seed: int = 0) -> dict[str, str]:
    """``n`` proposals with their authorships, papers and researchers.

    Returns:
        The queries to time: ``{label: text}``, taken from what was built.
    """
    from curation import names as name_keys
    from curation.models import Proposal
    from wovepaper.models import Authorship, Paper, Researcher

    rng = random.Random(seed)  # noqa: S311 - test data, not security
    pool = _names()
    picks = [pool[rng.randrange(len(pool))] for _ in range(n)]
    researchers = Researcher.objects.bulk_create(
        Researcher(
            display_name=f"{given} {family}",
            block_key=name_keys.block_key(given, family),
        )
        for given, family in picks[: n // 3]
    )
    papers, slots, proposals, links = [], [], [], []
    for i, (given, family) in enumerate(picks):
        kind = ("new", "attach", "merge")[i % 3]
        status = rng.choices(["applied", "pending", "rejected"], [55, 30, 15])[0]
        proposal = Proposal(
            kind=kind,
            status=status,
            score=round(rng.random(), 3),
            model_version="bench",
            fingerprint=f"bench-{i}",
            block_key=name_keys.block_key(given, family),
            researcher=researchers[i % len(researchers)] if kind != "new" else None,
            other_researcher=(
                researchers[(i + 1) % len(researchers)] if kind == "merge" else None
            ),
        )
        proposals.append(proposal)
        for j in range(1 + i % 3 if kind != "merge" else 0):
            paper = Paper(arxiv_id=f"{2000 + i // 10000}.{i % 10000:05d}{j}")
            papers.append(paper)
            slots.append(
                Authorship(
                    paper=paper,
                    position=1,
                    raw_name=f"{given} {family}",
                    given_name=given,
                    family_name=family,
                    name_key=name_keys.name_key(given, family),
                    block_key=name_keys.block_key(given, family),
                    orcid=ORCIDS[i % len(ORCIDS)] if i % 50 == 0 else "",
                )
            )
            links.append((len(proposals) - 1, len(slots) - 1))
    Paper.objects.bulk_create(papers, batch_size=5000)
    for slot in slots:
        slot.paper_id = slot.paper.pk
    Authorship.objects.bulk_create(slots, batch_size=5000)
    Proposal.objects.bulk_create(proposals, batch_size=5000)
    through = Proposal.authorships.through
    through.objects.bulk_create(
        (
            through(proposal_id=proposals[p].pk, authorship_id=slots[a].pk)
            for p, a in links
        ),
        batch_size=10000,
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    # The Wang set is one family name: "Wang" names most proposals built (the
    # worst case of a search); a Qian name is a typical one.
    given, family = next(p for p in picks if p[1] != "Wang" and len(p[0]) > 2)
    return {
        "surname": family,
        "Wang (most)": "Wang",
        "full name": f"{given} {family}",
        "block key": name_keys.block_key(given, family),
        "arXiv id": papers[len(papers) // 2].arxiv_id,
        "ORCID iD": ORCIDS[0],
        "nobody": "Zyxwvutsrq",
    }


def _page(client: Client, text: str) -> float:
    started = time.perf_counter()
    answer = client.get("/admin/curation/proposal/", {"q": text})
    seconds = time.perf_counter() - started
    assert answer.status_code == 200, answer.status_code
    return seconds * 1000


def timed(client: Client, queries: dict[str, str]) -> dict[str, dict[str, float]]:
    """Each query :data:`RUNS` times after one warm-up: median and slowest ms."""
    out = {}
    for label, text in queries.items():
        _page(client, text)
        times = [_page(client, text) for _ in range(RUNS)]
        out[label] = {
            "median_ms": round(statistics.median(times), 1),
            "max_ms": round(max(times), 1),
        }
    return out


def main() -> None:
    """Build, time ours and Django's own search, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proposals", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the scratch database, and reuse one a --keep run left",
    )
    options = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/admin_search.py needs DATABASE_URL to name a PostgreSQL server")
    old = setup_databases(verbosity=0, interactive=False, keepdb=options.keep)
    try:
        from curation.models import Proposal

        call_command("migrate", verbosity=0)
        started = time.perf_counter()
        if options.keep and Proposal.objects.count() == options.proposals:
            queries = json.loads(
                Path(settings.VAR_DIR, "admin_search.json").read_text()
            )
        else:
            Proposal.objects.all().delete()
            queries = build(options.proposals)
            Path(settings.VAR_DIR, "admin_search.json").write_text(json.dumps(queries))
        built = time.perf_counter() - started
        from curation.admin.proposals import ProposalAdmin
        from curation.services import curator_ensure

        client = Client()
        client.force_login(curator_ensure(username="bench-cura", password="pw-b"))
        ours = timed(client, queries)
        ProposalAdmin.get_search_results = admin.ModelAdmin.get_search_results
        ProposalAdmin.search_fields = DJANGO_SEARCH_FIELDS
        django_own = timed(client, queries)
        report = {
            "proposals": options.proposals,
            "built_seconds": round(built, 1),
            "queries": queries,
            "ours": ours,
            "django_search_fields": django_own,
        }
        if options.json:
            print(json.dumps(report))
            return
        print(f"{options.proposals:,} proposals built in {built:.0f} s")
        head = ("query", "ours median", "max", "Django median", "max")
        print("{:<12} {:>12} {:>8} {:>14} {:>8}".format(*head))
        for label in queries:
            a, b = ours[label], django_own[label]
            print(
                f"{label:<12} {a['median_ms']:>10.0f}ms {a['max_ms']:>6.0f}ms "
                f"{b['median_ms']:>12.0f}ms {b['max_ms']:>6.0f}ms"
            )
    finally:
        if not options.keep:
            teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
