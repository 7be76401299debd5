"""Clustering of unassigned authorships within one block (pure, no ORM).

Average-linkage agglomerative clustering over pairwise scores, with cannot-link
constraints (two authorships of one paper are never one person). Source: the
block-wise agglomerative clustering of INSPIRE's beard and of S2AND (Subramanian et
al. 2021, "S2AND: A Benchmark and Evaluation System for Author Name Disambiguation").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def cluster(
    n: int,
    pair_score: Callable[[int, int], float],
    *,
    threshold: float,
    cannot_link: Callable[[Sequence[int], Sequence[int]], bool],
) -> list[list[int]]:
    """Group ``n`` items so that clusters are joined while their linkage is high.

    Args:
        n: number of items (indices ``0..n-1``); O(n^3) time at worst, so callers keep
            blocks small (sub-blocking).
        pair_score: pairwise score in [0, 1] of items ``i`` and ``j``.
        threshold: average-linkage score in [0, 1] below which clusters stay apart.
        cannot_link: True when two clusters (index lists) must never be joined.

    Returns:
        Clusters as sorted index lists, ordered by their smallest index; every index
        appears exactly once.
    """
    scores = {(i, j): pair_score(i, j) for i in range(n) for j in range(i + 1, n)}
    clusters: list[list[int]] = [[i] for i in range(n)]
    while len(clusters) > 1:
        best, best_pair = threshold, None
        for x in range(len(clusters)):
            for y in range(x + 1, len(clusters)):
                a, b = clusters[x], clusters[y]
                link = sum(scores[min(i, j), max(i, j)] for i in a for j in b) / (
                    len(a) * len(b)
                )
                if link >= best and not cannot_link(a, b):
                    best, best_pair = link, (x, y)
        if best_pair is None:
            break
        x, y = best_pair
        clusters[x] = sorted(clusters[x] + clusters[y])
        del clusters[y]
    return sorted(clusters, key=lambda c: c[0])
