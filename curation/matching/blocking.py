"""Blocking: only authorships and researchers sharing a block key are compared.

Block key: folded family name + first given initial (:func:`curation.names.block_key`),
so the work grows with the block, not with the corpus. Blocks larger than
``max_size`` are split further by full name key (family + all initials), the
sub-blocking INSPIRE's beard applies to common surnames; a sub-block still larger
(one identical name thousands of times) is cut into chunks of ``max_size`` in
input order, so clustering (quadratic in the block) stays bounded. Authorships in
different chunks are never compared in one run: a known limit until re-clustering
merges across chunks.
"""

from __future__ import annotations

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
        ``"<block>/<sub_key>"``, a chunk's ``"<block>/<sub_key>#<n>"``; no list is
        longer than ``max_size``.
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
        subs: dict[str, list[T]] = defaultdict(list)
        for item in members:
            subs[f"{k}/{sub_key(item)}"].append(item)
        for name, sub in subs.items():
            if len(sub) <= max_size:
                out[name] = sub
                continue
            # Identical names cannot be split by name: cut the sub-block into
            # chunks in input order, so no step is quadratic in thousands.
            for n, start in enumerate(range(0, len(sub), max_size)):
                out[f"{name}#{n}"] = sub[start : start + max_size]
    return out
