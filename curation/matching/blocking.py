"""Blocking: only authorships and researchers sharing a block key are compared.

Block key: folded family name + first given initial (:func:`curation.names.block_key`),
so the work grows with the block, not with the corpus. Blocks larger than
``max_size`` are split further by full name key (family + all initials), the
sub-blocking INSPIRE's beard applies to common surnames. A sub-block can still be
large (one identical name thousands of times); :mod:`curation.matching.pipeline`
clusters it in chunks and then merges the chunks' clusters, so no step is
quadratic in the whole sub-block.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

MAX_BLOCK = 200


def blocks(
    items: Iterable[T],
    key: Callable[[T], str],
    *,
    sub_key: Callable[[T], str],
    max_size: int = MAX_BLOCK,
) -> dict[str, list[T]]:
    """Group items by block key, sub-blocking oversized blocks.

    Args:
        items: authorships (or anything with a block key).
        key: the block key of an item; items with an empty key are dropped.
        sub_key: the finer key used inside a block of more than ``max_size`` items.
        max_size: largest block left whole.

    Returns:
        ``{block: [items in input order]}``; a sub-block's name is
        ``"<block>/<sub_key>"``.
    """
    grouped: dict[str, list[T]] = defaultdict(list)
    for item in items:
        k = key(item)
        if k:
            grouped[k].append(item)
    out: dict[str, list[T]] = {}
    for k, members in grouped.items():
        if len(members) <= max_size:
            out[k] = members
            continue
        for item in members:
            out.setdefault(f"{k}/{sub_key(item)}", []).append(item)
    return out


def shards(
    keys: Iterable[str],
    pairs: Iterable[tuple[str, str]],
    *,
    cost: Callable[[str], int],
    count: int,
) -> list[list[str]]:
    """Cut blocks into at most ``count`` shards of about equal cost.

    Blocks joined by ``pairs`` (transitively: connected components, by union
    and find with path halving) go in one shard; the groups are dealt,
    costliest first, to the shard with the least cost so far (longest
    processing time first: R. L. Graham (1969), "Bounds on multiprocessing
    timing anomalies", SIAM J. Appl. Math. 17(2), within 4/3 of the best).

    Args:
        keys: the block keys to cut.
        pairs: ``(block, block)`` whose matching meets; a pair may name a
            block not in ``keys``, which joins two of them through it.
        cost: a block's cost, a positive number (pairs it scores, say).
        count: how many shards at most, at least 1.

    Returns:
        The shards' sorted block keys, the costliest shard first (ties by
        the order dealt); none empty, every key in one.
    """
    root = components(pairs)
    groups: dict[str, list[str]] = defaultdict(list)
    for key in sorted(set(keys)):
        groups[root(key)].append(key)
    weighed = sorted(
        ((sum(cost(k) for k in members), members) for members in groups.values()),
        key=lambda cm: (-cm[0], cm[1][0]),
    )
    bins: list[tuple[int, int, list[str]]] = [
        (0, n, []) for n in range(min(max(count, 1), len(weighed)))
    ]
    heapq.heapify(bins)
    for weight, members in weighed:
        load, n, held = heapq.heappop(bins)
        heapq.heappush(bins, (load + weight, n, held + members))
    return [sorted(held) for _, _, held in sorted(bins, key=lambda b: (-b[0], b[1]))]


def components(pairs: Iterable[tuple[str, str]]) -> Callable[[str], str]:
    """The connected components of a graph given by its edges (union-find with
    path halving: Tarjan and van Leeuwen 1984).

    Args:
        pairs: ``(node, node)`` edges, nodes as strings.

    Returns:
        A function from a node to its component's root: the smallest node of
        the component (a node on no edge is its own root), the same on every
        run whatever the edges' order.
    """
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return root
