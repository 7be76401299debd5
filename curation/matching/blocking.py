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
