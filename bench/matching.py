"""Matching cost on the real INSPIRE "Wang" signatures: blocks, re-cluster, attach.

15,424 real author mentions whose names contain "Wang" (shared/data/and/
beard_inspire_wang) all fall in a handful of blocks: the worst case for a matcher.
Three parts, each printed as figures (``--json``: one JSON object):

- ``blocks``: the block-size distribution before and after sub-blocking, and the
  pairs inside sub-blocks against the all-pairs baseline.
- ``recluster``: a full re-cluster (the pure pipeline: names, blocking, scoring,
  clustering) of N authorships, at each of ``--sizes``. The population is the
  Wang set re-keyed as many times as the largest size needs (7 for
  100,000: ``Wang``, then ``Bai``, ``Cai``, ``Cao`` ...: the
  Chinese family names of curation.names in alphabetical order, as the family
  name; papers and ids offset), shuffled with a fixed seed; each size is a prefix,
  so blocks grow with the corpus as they do in life. The growth exponent between
  two sizes is ``log(t2 / t1) / log(n2 / n1)`` (1.0 is linear), printed for each
  two consecutive sizes (``growth_exponent`` is the first two's).
- ``attach`` (needs PostgreSQL in ``DATABASE_URL``; the database is migrated and
  emptied): ``--researchers`` researchers, one per real Wang gold cluster,
  re-keyed over as many East Asian family names as needed, each with one
  authorship (the person's first mention). The corpus tables a run reads
  first (name rarities and block repeats: two grouping queries over every
  authorship) are timed (``corpus_tables_ms``). After one full matching run (timed;
  every merge it proposes is false, since no two researchers are one person,
  and their number is printed),
  each probe is a new paper carrying another real mention of a random person,
  matched by ``matching_run(block_keys=[its block], merges=False)`` as a
  harvest's incremental run does: per-authorship latency p50 / p95 / max, and
  how many probes got an ``attach`` proposal to their own researcher; then the
  same with merges (as a curator's run over a block), first with no merge
  scores remembered (a worker that has not seen the block lately), then again;
  and a last set in one harvest-like run: milliseconds per authorship.

Usage::

    .venv/bin/python bench/matching.py --sizes 10000,100000 --skip-attach
    createdb -h 127.0.0.1 -U postgres wovepaper_bm
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wovepaper_bm \\
        .venv/bin/python bench/matching.py [--skip-recluster] --researchers 100000 \\
        --probes 200 [--json]

The attach part runs ``migrate`` and ``flush`` on the database ``DATABASE_URL``
names: give it a disposable one. With ``--json`` the figures are printed as one
JSON object on standard output and the running commentary goes to standard error.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import os
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
# As in production: with DEBUG on, Django keeps the text of every query.
os.environ["DEBUG"] = "0"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from curation import names  # noqa: E402
from curation.matching import blocking, pipeline  # noqa: E402
from curation.matching.features import AuthorshipView  # noqa: E402
from curation.matching.labelled import LabelledSet  # noqa: E402
from curation.matching.labelled import load as load_labelled  # noqa: E402
from curation.proposing import merges  # noqa: E402

# The family names the Wang set is re-keyed to, in order: "wang" itself, then the
# frequent Chinese family names of curation.names alphabetically (the hardest
# blocks), then the other East Asian ones.
FAMILIES = sorted(names._CHINESE_SURNAMES, key=lambda f: (f != "wang", f)) + sorted(
    names._EAST_ASIAN_SURNAMES - names._CHINESE_SURNAMES
)
SEED = 20261130
# Where the running commentary goes (standard error under --json).
_commentary = sys.stdout


def say(text: str) -> None:
    """Print one line of commentary."""
    print(text, file=_commentary, flush=True)


def wang() -> LabelledSet:
    """The Wang signatures as matcher views, with gold clusters.

    Raises:
        SystemExit: the labelled set is not under ``WOVEPAPER_DATA_DIR``.
    """
    folder = Path(settings.WOVEPAPER_DATA_DIR) / "and/beard_inspire_wang"
    if not folder.is_dir():
        raise SystemExit(f"{folder}: no such folder (set WOVEPAPER_DATA_DIR)")
    return load_labelled(folder)


def rekeyed(view: AuthorshipView, copy: int, size: int) -> AuthorshipView:
    """Copy ``copy`` of a Wang mention: another family name, ids offset."""
    family = FAMILIES[copy].title()
    return dataclasses.replace(
        view,
        id=view.id + copy * size,
        paper_id=hash((view.paper_id, copy)),
        family=family,
        block_key=names.block_key(view.given, family),
    )


def histogram(sizes: list[int]) -> str:
    bands = Counter(
        next(b for b in (1, 10, 100, 200, 1000, 10**9) if s <= b) for s in sizes
    )
    return ", ".join(
        f"{'>1000' if b == 10**9 else f'<={b}'}: {bands[b]}" for b in sorted(bands)
    )


def blocks_report(views: list[AuthorshipView]) -> dict:
    """Block sizes before and after sub-blocking, and the pairs compared."""
    n = len(views)
    raw = Counter(v.block_key for v in views)
    grouped = blocking.blocks(
        views,
        key=lambda v: v.block_key,
        sub_key=lambda v: names.sub_block_key(v.given, v.family),
    )
    sizes = [len(m) for m in grouped.values()]
    pairs = sum(s * (s - 1) // 2 for s in sizes)
    all_pairs = n * (n - 1) // 2
    say(f"signatures: {n}; blocks: {len(raw)} (largest {max(raw.values())})")
    say(f"block sizes before sub-blocking: {histogram(list(raw.values()))}")
    say(
        f"after sub-blocking: {len(grouped)} blocks, largest {max(sizes)}; "
        f"{histogram(sizes)}"
    )
    say(
        f"pairs inside sub-blocks: {pairs} = {pairs / all_pairs:.4%} of all "
        f"{all_pairs} (an upper bound: sub-blocks over {pipeline.CHUNK} are "
        "clustered in chunks, then their clusters merged)"
    )
    return {
        "signatures": n,
        "blocks": len(raw),
        "largest_block": max(raw.values()),
        "sub_blocks": len(grouped),
        "largest_sub_block": max(sizes),
        "pairs_in_blocks": pairs,
        "all_pairs": all_pairs,
    }


def recluster(data: LabelledSet, sizes: list[int]) -> dict:
    """Seconds to re-cluster a prefix of the shuffled re-keyed population."""
    copies = math.ceil(max(sizes) / len(data.views))
    population = [
        rekeyed(v, copy, len(data.views)) for copy in range(copies) for v in data.views
    ]
    random.Random(SEED).shuffle(population)
    out: dict = {}
    for size in sizes:
        views = population[:size]
        started = time.perf_counter()
        labels = pipeline.cluster_all(
            views, threshold=settings.CURATION_ATTACH_THRESHOLD
        )
        seconds = time.perf_counter() - started
        out[str(size)] = {
            "authorships": size,
            "seconds": round(seconds, 2),
            "authorships_per_s": round(size / seconds, 1),
            "clusters": len(set(labels.values())),
        }
        say(
            f"re-cluster {size:>7} authorships: {seconds:7.1f} s, "
            f"{size / seconds:7.0f} authorships/s, {out[str(size)]['clusters']} "
            "clusters"
        )
    exponents = {}
    for n1, n2 in itertools.pairwise(sizes):
        t1, t2 = out[str(n1)]["seconds"], out[str(n2)]["seconds"]
        exponent = math.log(t2 / t1) / math.log(n2 / n1)
        exponents[f"{n1}-{n2}"] = round(exponent, 3)
        say(
            f"{n1} -> {n2} authorships (x{n2 / n1:.1f}) -> x{t2 / t1:.1f} time: "
            f"growth exponent {exponent:.2f} (1.0 linear, 2.0 quadratic)"
        )
    if exponents:
        out["growth_exponent"] = next(iter(exponents.values()))
        out["growth_exponents"] = exponents
    return out


def _person_mentions(data: LabelledSet) -> list[list[AuthorshipView]]:
    by_person: dict[str, list[AuthorshipView]] = defaultdict(list)
    for v in data.views:
        by_person[data.gold[v.id]].append(v)
    return [by_person[k] for k in sorted(by_person)]


def _paper(n: int):
    from wovepaper.models import Paper

    return Paper(
        arxiv_id=f"9{n // 100000:03d}.{n % 100000:05d}",
        title=f"Benchmark paper {n}",
        categories=["hep-ex"],
        primary_category="hep-ex",
    )


def _authorship(paper, view: AuthorshipView, raw: str, researcher=None):
    from wovepaper.models import Authorship

    return Authorship(
        paper=paper,
        position=1,
        raw_name=raw,
        given_name=view.given,
        family_name=view.family,
        name_key=names.name_key(view.given, view.family),
        block_key=view.block_key,
        # The content words of the printed affiliation re-read as one string:
        # the matcher derives the same words from it.
        affiliations=[" ".join(sorted(view.affiliation_tokens))]
        if view.affiliation_tokens
        else [],
        researcher=researcher,
    )


def attach(data: LabelledSet, researchers: int, probes: int) -> dict:
    """Incremental attach latency with ``researchers`` researchers in PostgreSQL."""
    from django.core.management import call_command
    from django.db import connection

    from curation import selectors, services
    from curation.models import Proposal
    from wovepaper.models import Authorship, Paper, Researcher

    if connection.vendor != "postgresql":
        raise SystemExit("attach: DATABASE_URL must name a disposable PostgreSQL db")
    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)
    people = _person_mentions(data)
    copies = math.ceil(researchers / len(people))
    if copies > len(FAMILIES):
        raise SystemExit(f"attach: at most {len(FAMILIES) * len(people)} researchers")
    started = time.perf_counter()
    chosen = [(c, p) for c in range(copies) for p in range(len(people))][:researchers]
    rows = []
    for n, (copy, person) in enumerate(chosen):
        first = rekeyed(people[person][0], copy, len(data.views))
        rows.append((n, first, data.raw_names[people[person][0].id]))
    for start in range(0, len(rows), 5000):
        batch = rows[start : start + 5000]
        papers = Paper.objects.bulk_create(_paper(n) for n, _, _ in batch)
        made = Researcher.objects.bulk_create(
            Researcher(
                display_name=f"{v.given} {v.family}",
                block_key=v.block_key,
                slug=f"r{n}",
            )
            for n, v, _ in batch
        )
        Authorship.objects.bulk_create(
            _authorship(paper, v, raw, researcher)
            for paper, researcher, (_, v, raw) in zip(papers, made, batch, strict=True)
        )
    load_seconds = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum would after a bulk load
    say(
        f"attach: {Researcher.objects.count()} researchers, "
        f"{Authorship.objects.count()} authorships loaded in {load_seconds:.0f} s"
    )
    # What a full run reads first, and an incremental worker once every
    # CURATION_RARITY_SECONDS: the name rarities and the blocks' repeats.
    started = time.perf_counter()
    tables = selectors.corpus_given_rarities()
    tables_ms = (time.perf_counter() - started) * 1000
    say(
        f"corpus tables read in {tables_ms:.0f} ms ({len(tables)} full given "
        f"names, {len(tables.block_repeat)} blocks with a repeat)"
    )
    started = time.perf_counter()
    first_run = services.matching_run()
    full_seconds = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # the proposals it wrote
    say(
        f"first full matching run: {full_seconds:.1f} s, "
        + ", ".join(f"{k} {v}" for k, v in sorted(first_run.items()))
        + " (blocks: of unassigned authorships; none here)"
    )
    # Every researcher here is another gold person (one per gold cluster and
    # copy), so every merge proposed is a false one: what a curator would
    # reject, on one mention a researcher and names and affiliations alone.
    false_merges = Proposal.objects.filter(kind=Proposal.Kind.MERGE).count()
    say(
        f"  all {false_merges} merges proposed are false: each joins two "
        f"different gold people ({false_merges / max(1, researchers):.1%} of the "
        "researchers; with one mention each and only names and affiliations, "
        "namesakes at one institution look alike)"
    )

    rng = random.Random(SEED)
    researcher_of = {
        (copy, person): pk
        for (copy, person), pk in zip(
            chosen,
            Researcher.objects.order_by("id").values_list("id", flat=True),
            strict=True,
        )
    }
    with_more = [cp for cp in chosen if len(people[cp[1]]) > 1]

    def new_probe(n: int, copy: int, person: int) -> tuple[Authorship, int]:
        mention = rng.choice(people[person][1:])
        view = rekeyed(mention, copy, len(data.views))
        paper = _paper(n)
        paper.save()
        authorship = _authorship(paper, view, data.raw_names[mention.id])
        authorship.save()
        return authorship, researcher_of[copy, person]

    def probe_pass(
        start: int,
        picks: list[tuple[int, int]],
        merges: bool = False,
        task: bool = False,
    ) -> tuple[dict, int]:
        from curation.tasks import matching_run_task

        latencies, right = [], 0
        for n, (copy, person) in enumerate(picks):
            authorship, expected = new_probe(start + n, copy, person)
            began = time.perf_counter()
            if task:
                # As a harvest queues it, run eagerly: the plan, one shard
                # under its block's lock, the finishing step.
                matching_run_task.apply(
                    kwargs={"block_keys": [authorship.block_key], "merges": merges}
                ).get()
            else:
                services.matching_run(block_keys=[authorship.block_key], merges=merges)
            latencies.append((time.perf_counter() - began) * 1000)
            right += Proposal.objects.filter(
                kind="attach", researcher_id=expected, authorships=authorship
            ).exists()
        latencies.sort()
        return {
            "p50_ms": round(statistics.median(latencies), 1),
            "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
            "max_ms": round(latencies[-1], 1),
        }, right

    picks = [rng.choice(with_more) for _ in range(probes)]
    # As a harvest queues it: attaches and new researchers, no merges.
    first, right = probe_pass(10**7, picks)
    # The same through the matching task (eagerly, in this process).
    through_task, _ = probe_pass(5 * 10**7, picks, task=True)
    # With merges, as a curator's run over a block: first by a worker that has
    # not seen these blocks lately (no remembered merge scores), then again.
    merges._merge_scores.clear()
    merging_first, _ = probe_pass(2 * 10**7, picks, merges=True)
    merging_again, _ = probe_pass(3 * 10**7, picks, merges=True)
    batch = [new_probe(4 * 10**7 + n, *pick) for n, pick in enumerate(picks)]
    started = time.perf_counter()
    services.matching_run(
        block_keys=sorted({a.block_key for a, _ in batch}), merges=False
    )
    batch_ms = (time.perf_counter() - started) * 1000 / probes
    out = {
        "researchers": Researcher.objects.filter(authorships__isnull=False)
        .distinct()
        .count(),
        "load_seconds": round(load_seconds, 1),
        "corpus_tables_ms": round(tables_ms, 1),
        "first_full_run_seconds": round(full_seconds, 1),
        "false_merges_proposed": false_merges,
        "probes": probes,
        "incremental": first,
        "incremental_through_task": through_task,
        "with_merges_first_in_block": merging_first,
        "with_merges_again": merging_again,
        "attached_to_own_researcher": right,
        "batch_ms_per_authorship": round(batch_ms, 2),
    }
    for name, figures in (
        ("as a harvest runs it (no merges)", first),
        ("the same through matching_run_task, eagerly", through_task),
        ("with merges, first in its block", merging_first),
        ("with merges, again in the block", merging_again),
    ):
        say(
            f"incremental attach, one authorship a run, {name} ({probes} probes): "
            f"p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms, "
            f"max {figures['max_ms']} ms"
        )
    say(f"{right} of {probes} proposed to their own researcher")
    say(f"{probes} authorships in one run: {batch_ms:.2f} ms per authorship")
    return out


def main() -> None:
    global _commentary
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes",
        default="10000,100000",
        help="authorships to re-cluster, increasing, comma-separated; a growth "
        "exponent is printed for each two consecutive sizes (default 10000,100000)",
    )
    parser.add_argument(
        "--researchers",
        type=int,
        default=100000,
        help="researchers loaded for the attach part (default 100000)",
    )
    parser.add_argument(
        "--probes",
        type=int,
        default=200,
        help="new authorships matched one a run, per pass (default 200)",
    )
    parser.add_argument("--skip-attach", action="store_true", help="no database part")
    parser.add_argument(
        "--skip-recluster", action="store_true", help="no re-cluster part"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object on standard output; commentary on standard error",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if not args.skip_recluster and (
        not sizes or min(sizes) < 1 or sizes != sorted(set(sizes))
    ):
        parser.error("--sizes: positive sizes in increasing order, e.g. 10000,100000")
    if args.researchers < 1 or args.probes < 1:
        parser.error("--researchers and --probes must be at least 1")
    if not args.skip_attach:
        from django.db import connection

        if connection.vendor != "postgresql":
            parser.error(
                "the attach part needs DATABASE_URL naming a disposable PostgreSQL "
                "database (or --skip-attach)"
            )
    if args.json:
        _commentary = sys.stderr
    data = wang()
    report: dict = {"blocks": blocks_report(data.views)}
    if not args.skip_recluster:
        report["recluster"] = recluster(data, sizes)
    if not args.skip_attach:
        report["attach"] = attach(data, args.researchers, args.probes)
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
