"""Matching cost on the real INSPIRE "Wang" signatures: blocks, pairs, seconds.

15,424 real author mentions whose names contain "Wang" (shared/data/and/
beard_inspire_wang) all fall in a handful of blocks: the worst case for a matcher.
This runs the pure pipeline (names, blocking, scoring, clustering; no database)
and prints the block-size distribution before and after sub-blocking, the pairs
inside sub-blocks against the all-pairs baseline (n(n-1)/2 over the whole set),
and the time.

Usage: ``.venv/bin/python bench/matching.py``
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from curation import names  # noqa: E402
from curation.matching import blocking, pipeline  # noqa: E402
from curation.matching.features import AuthorshipView  # noqa: E402
from curation.matching.labelled import load as load_labelled  # noqa: E402


def load() -> list[AuthorshipView]:
    """The Wang signatures as matcher views (no co-authors: records are missing)."""
    folder = Path(settings.WOVEPAPER_DATA_DIR) / "and/beard_inspire_wang"
    return load_labelled(folder).views


def cluster_block(members: list[AuthorshipView]) -> int:
    """Cluster one block as matching_run does; return the number of clusters."""
    threshold = settings.CURATION_ATTACH_THRESHOLD
    return len(pipeline.cluster_authorships(members, threshold=threshold))


def histogram(sizes: list[int]) -> str:
    bands = Counter(
        next(f"<={b}" for b in (1, 10, 100, 200, 1000, 10**9) if s <= b) for s in sizes
    )
    return ", ".join(
        f"{k}: {v}" for k, v in sorted(bands.items(), key=lambda kv: int(kv[0][2:]))
    )


def main() -> None:
    views = load()
    n = len(views)
    raw = Counter(v.block_key for v in views)
    grouped = blocking.blocks(
        views,
        key=lambda v: v.block_key,
        sub_key=lambda v: names.sub_block_key(v.given, v.family),
    )
    print(f"signatures: {n}; blocks: {len(raw)} (largest {max(raw.values())})")
    print(f"block sizes before sub-blocking: {histogram(list(raw.values()))}")
    sizes = [len(m) for m in grouped.values()]
    print(
        f"after sub-blocking by full name key: {len(grouped)} blocks, "
        f"largest {max(sizes)}; {histogram(sizes)}"
    )
    pairs = sum(s * (s - 1) // 2 for s in sizes)
    all_pairs = n * (n - 1) // 2
    print(
        f"pairs inside sub-blocks: {pairs} = {pairs / all_pairs:.4%} of all "
        f"{all_pairs} (an upper bound: sub-blocks over {pipeline.CHUNK} are "
        "clustered in chunks, then their clusters merged)"
    )

    started = time.perf_counter()
    clusters = 0
    for members in grouped.values():
        clusters += cluster_block(members)
    took = time.perf_counter() - started
    print(
        f"scoring + clustering: {took:.1f} s, {n / took:.0f} signatures/s, "
        f"{clusters} clusters (INSPIRE labels: 524)"
    )


if __name__ == "__main__":
    main()
