"""How much two authorships' arXiv archives apart say they are two people.

The evidence behind the default weight of ``field_conflict``
(curation/matching/scoring.py), measured on the corpus in the database that
the settings name (``make demo`` builds one from the bundled arXiv records).
Pairs of non-collaboration authorships on different papers in one block (of
at most ``--max-block`` authorships, so no common name's block dominates):

- taken as one person: the same full given name (three letters or more),
  of a family name printed with at most two full given names in the corpus;
- taken as two people: full given names on both sides that are incompatible
  (``names.given_name_similarity`` below ``names.COMPATIBLE_SIMILARITY``).

Printed: each group's pairs and how many have archives apart, and the log
likelihood ratio ``ln(P(apart | one) / P(apart | two))`` with its 95%
interval (the Katz log method for a ratio of two proportions; Katz et al.,
Biometrics 34 (1978) 469-474). Neither group is labelled by hand: the two
proxies are how the number can be read, not gold.

Usage::

    WOVEPAPER_VAR_DIR=/tmp/demo_var NO_SERVE=1 make demo
    WOVEPAPER_VAR_DIR=/tmp/demo_var .venv/bin/python bench/field_conflict.py
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

import django  # noqa: E402

django.setup()

from curation import names  # noqa: E402
from curation.matching.features import field_conflict, full_given_key  # noqa: E402
from wovepaper.models import Authorship  # noqa: E402


def main() -> None:
    """Print the two groups' counts and the log likelihood ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-block", type=int, default=400)
    args = parser.parse_args()

    rows = list(
        Authorship.objects.filter(is_collaboration=False)
        .exclude(paper__categories=[])
        .values_list(
            "paper_id", "given_name", "family_name", "block_key", "paper__categories"
        )
    )
    givens_of_family: dict[str, set[str]] = defaultdict(set)
    by_block: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        if key := full_given_key(row[1]):
            givens_of_family[names.fold(row[2])].add(key)
        by_block[row[3]].append(row)

    one, two = Counter(), Counter()
    for block in by_block.values():
        if len(block) > args.max_block:
            continue
        for a, b in itertools.combinations(block, 2):
            given_a, given_b = full_given_key(a[1]), full_given_key(b[1])
            if a[0] == b[0] or not given_a or not given_b:
                continue
            apart = field_conflict(frozenset(a[4]), frozenset(b[4])) == 1.0
            if (
                given_a == given_b
                and len(given_a) >= 3
                and len(givens_of_family[names.fold(a[2])]) <= 2
            ):
                one[apart] += 1
            elif names.given_name_similarity(a[1], b[1]) < names.COMPATIBLE_SIMILARITY:
                two[apart] += 1

    print(
        f"authorships with arXiv categories: {len(rows):,} in {len(by_block):,} blocks"
    )
    for label, counts in (("one person", one), ("two people", two)):
        total = counts[True] + counts[False]
        print(f"{label:>11}: {counts[True]:,} of {total:,} pairs archives apart")
    if not (one[True] and two[True]):
        print("too few pairs archives apart for a ratio")
        return
    n_one, n_two = sum(one.values()), sum(two.values())
    llr = math.log((one[True] / n_one) / (two[True] / n_two))
    se = math.sqrt(1 / one[True] - 1 / n_one + 1 / two[True] - 1 / n_two)
    low, high = llr - 1.96 * se, llr + 1.96 * se
    print(
        f"ln(P(apart | one) / P(apart | two)) = {llr:.2f} (95%: {low:.2f}, {high:.2f})"
    )


if __name__ == "__main__":
    main()
