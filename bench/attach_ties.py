"""How often attach candidates tie, and which tie rule picks the right person.

On the labelled sets of ``$WOVEPAPER_DATA_DIR/and`` (INSPIRE Wang, S2AND
Qian-partial): each gold person becomes a researcher holding a seeded four
fifths of their mentions (at least one); the remaining mentions are
attached against the researchers of their block by the matching service's
own step (``curation.proposing.attach._attach_candidates``), as a harvest's
incremental run attaches new papers. Printed per set and model (the
default weights at ``CURATION_ATTACH_THRESHOLD``, and a model trained on
the set with ``train_matcher``'s fit at 0.4): the attaches, how many
were tied (researchers scoring alike at the top), and how many of those
each rule gives the right person:

- ``most papers``: the rule matching uses (``attach._untied``);
- ``lowest id``: the first researcher in id order, as matching did
  before that rule (ids follow the order people were first met).

Usage::

    WOVEPAPER_DATA_DIR=/work/shared/data .venv/bin/python bench/attach_ties.py

Trained on the whole set it attaches (the point is the tie rule, not the
model), so the learned figures are not a held-out score.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from curation.matching import labelled, scoring, training  # noqa: E402
from curation.matching.features import profile_of  # noqa: E402
from curation.proposing import attach  # noqa: E402

SETS = {
    "wang": "and/beard_inspire_wang",
    "qian": "and/s2and/qian_partial",
}
KEPT = 0.8  # a person's mentions the researcher holds


def measure(data: labelled.LabelledSet, weights: scoring.Weights, threshold: float):
    """``{attached, right, tied, tied_right_most_papers, tied_right_lowest_id,
    gold_among_tied}`` for one set and model (counts of held-out mentions)."""
    rng = random.Random(0)  # noqa: S311 - sampling, not security
    people: dict[str, list] = defaultdict(list)
    for v in sorted(data.views, key=lambda v: v.id):
        people[data.gold[v.id]].append(v)
    gold_of: dict[int, str] = {}
    blocks: dict[str, list] = defaultdict(list)
    held: dict[str, list] = defaultdict(list)
    for person, views in sorted(people.items()):
        rng.shuffle(views)
        kept = max(1, int(len(views) * KEPT))
        # Ids in a seeded random order: which person was met first is not
        # the set's order.
        researcher = rng.randrange(10**9)
        gold_of[researcher] = person
        blocks[views[0].block_key].append(profile_of(views[:kept], id=researcher))
        for v in views[kept:]:
            held[v.block_key].append(v)
    out = dict.fromkeys(
        (
            "attached",
            "right",
            "tied",
            "tied_right_most_papers",
            "tied_right_lowest_id",
            "gold_among_tied",
        ),
        0,
    )
    for block, views in held.items():
        for a, best in attach._attach_candidates(
            views, blocks.get(block, []), set(), weights, {}, threshold
        ):
            if best is None:
                continue
            truth = data.gold[a.id]
            out["attached"] += 1
            out["right"] += gold_of[best[2].id] == truth
            tied = best[1].get("tied")
            if not tied:
                continue
            everyone = [best[2].id] + [t["researcher"] for t in tied["with"]]
            if tied["others"] > len(tied["with"]):
                continue  # not all recorded: the lowest id is unknown
            out["tied"] += 1
            out["tied_right_most_papers"] += gold_of[best[2].id] == truth
            out["tied_right_lowest_id"] += gold_of[min(everyone)] == truth
            out["gold_among_tied"] += any(gold_of[r] == truth for r in everyone)
    return out


def main() -> None:
    """Print the figures, or one JSON object with ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=list(SETS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = Path(settings.WOVEPAPER_DATA_DIR)
    report = {}
    for name in args.sets:
        data = labelled.load(root / SETS[name])
        examples = training.labelled_pairs(data.views, data.gold)
        learned = training.fit(examples, version="bench")
        for model, weights, threshold in (
            ("default", scoring.DEFAULT, settings.CURATION_ATTACH_THRESHOLD),
            ("learned", learned, 0.4),
        ):
            figures = measure(data, weights, threshold)
            report[f"{name}/{model}"] = figures
            if not args.json:
                print(
                    f"{name:5} {model:8} at {threshold}: {figures['attached']} "
                    f"attached, {figures['right']} right; {figures['tied']} tied: "
                    f"right by most papers {figures['tied_right_most_papers']}, "
                    f"by lowest id {figures['tied_right_lowest_id']} "
                    f"(the right person among the tied: "
                    f"{figures['gold_among_tied']})",
                    flush=True,
                )
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
