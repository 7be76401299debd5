"""Clustering of unassigned authorships within one block (pure, no ORM).

Average-linkage agglomerative clustering over pairwise scores with cannot-link
constraints (two authorships of one paper are never one person), stopped when no
pair of clusters links at or above the threshold. Source: the block-wise
agglomerative clustering of INSPIRE's beard and of S2AND (Subramanian et al. 2021,
"S2AND: A Benchmark and Evaluation System for Author Name Disambiguation");
Lance and Williams (1967) for the average-linkage update.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np

# Largest block clustered at once: an n x n score matrix (float64) and n merge
# steps of O(n^2) each; callers cut bigger blocks into chunks (blocking.py).
MAX_ITEMS = 400
# The link of a must-link pair: above any score, so it merges first, and still
# above any threshold once averaged into clusters of MAX_ITEMS (finite, so that
# averaging it with a forbidden pair's -inf gives -inf, not NaN).
MUST_LINK = 1e9


def cluster(
    n: int,
    pair_score: Callable[[int, int], float],
    *,
    threshold: float,
    cannot_link: Callable[[Sequence[int], Sequence[int]], bool],
    must_link: Collection[tuple[int, int]] = (),
) -> list[list[int]]:
    """Group ``n`` items while the average linkage of two groups reaches ``threshold``.

    Args:
        n: number of items (indices ``0..n-1``), at most :data:`MAX_ITEMS`.
        pair_score: pairwise score in [0, 1] of items ``i < j``; called once per pair.
        threshold: average-linkage score in [0, 1] below which clusters stay apart.
        cannot_link: True when two single items must never share a cluster; it is
            asked once per pair and the constraint carries over to their clusters.
        must_link: pairs of items that must share a cluster (a curator's
            decision); they link at :data:`MUST_LINK`, so they are joined
            first and their clusters carry the constraint. A pair that is also
            cannot-linked stays apart: a cannot-link wins.

    Returns:
        Clusters as sorted index lists, ordered by their smallest index; every index
        appears exactly once.

    Raises:
        ValueError: ``n`` exceeds :data:`MAX_ITEMS`.
    """
    if n > MAX_ITEMS:
        raise ValueError(f"block of {n} items: cluster at most {MAX_ITEMS} at once")
    if n == 0:
        return []
    link = np.full((n, n), -np.inf)
    forbidden = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1, n):
            if cannot_link([i], [j]):
                forbidden[i, j] = forbidden[j, i] = True
            else:
                link[i, j] = link[j, i] = pair_score(i, j)
    for i, j in must_link:
        if i != j and not forbidden[i, j]:
            link[i, j] = link[j, i] = MUST_LINK
    sizes = np.ones(n)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    alive = np.ones(n, dtype=bool)
    while True:
        masked = np.where(forbidden, -np.inf, link)
        flat = int(np.argmax(masked))
        x, y = divmod(flat, n)
        if masked[x, y] < threshold:
            break
        # Lance-Williams average linkage: the merged cluster's link to k is the
        # size-weighted mean of the two links.
        merged = (sizes[x] * link[x] + sizes[y] * link[y]) / (sizes[x] + sizes[y])
        link[x], link[:, x] = merged, merged
        link[x, x] = -np.inf
        forbidden[x] |= forbidden[y]
        forbidden[:, x] = forbidden[x]
        sizes[x] += sizes[y]
        members[x].extend(members.pop(y))
        alive[y] = False
        link[y], link[:, y] = -np.inf, -np.inf
    return sorted((sorted(m) for m in members.values()), key=lambda c: c[0])
