"""The matching run fanned out over Celery workers: a plan of block shards,
a task a shard holding its blocks' locks, and a finish that proposes what
spans blocks (merges, splits) and auto-applies.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from curation import selectors
from curation.deciding import auto_apply
from curation.deciding.auto_apply_bulk import apply_sure
from curation.exceptions import (
    MATCHING_BUSY,
    MatchingBusy,
)
from curation.matching import blocking
from curation.matching_run.run import (
    count_created,
    matching_run,
    propose_in_blocks,
    split_and_save,
    vetoes_of,
)
from curation.models import Proposal
from curation.proposing.drafts import Draft
from curation.proposing.merges import propose_orcid_merges, propose_variant_merges
from curation.proposing.orcid_checks import unproven_where_orcid_taken
from curation.proposing.saving import (
    save_drafts,
    stale_below_model,
    stale_dead_proposals,
)
from curation.proposing.splits import propose_splits


@dataclass(frozen=True)
class MatchingPlan:
    """A matching run cut into shards of blocks (:func:`matching_plan`).

    Attributes:
        shards: each shard's block keys, sorted; the costliest shard first.
            No block is in two shards, and blocks whose matching meets (see
            :func:`matching_plan`) are in one.
        made_stale: pending proposals the plan made stale (a full run's
            :func:`stale_dead_proposals` and :func:`stale_below_model`).
        started: when the plan read the proposals, an aware UTC datetime in
            ISO 8601: the pending attaches older than this are those the
            run-wide merges weigh (:func:`matching_finish`).
    """

    shards: list[list[str]]
    made_stale: int
    started: str


def matching_plan(*, block_keys: list[str] | None = None) -> MatchingPlan:
    """The step before a fanned-out matching run: cut it into shards.

    A full run first makes stale what can no longer apply, as
    :func:`matching_run` does. Blocks whose matching meets go in one shard,
    so that each shard proposes exactly what :func:`matching_run` proposes
    for its blocks: a name of one read into a block with researchers (both
    weigh attaches to those researchers, and one researcher takes one slot of
    a paper and one person's names in a run), a researcher of one holding
    papers printed in the other (a visitor: a candidate in both), unassigned
    authorships of both carrying one ORCID iD (whose clusters are proven only
    when alone in the run).

    Args:
        block_keys: the run's blocks; None for every block (those of
            unassigned authorships and those of live researchers).

    Returns:
        The plan (:class:`MatchingPlan`).
    """
    started = timezone.now().isoformat()
    auto_apply.policy()  # a bad CURATION_AUTO_APPLY fails before any write
    stale = 0
    if block_keys is None:
        weights = selectors.active_weights()
        stale = stale_dead_proposals() + stale_below_model(weights)
    wanted = None if block_keys is None else set(block_keys)
    if wanted is not None and len(wanted) < 2:
        # Nothing to cut (a harvest's run over the one block it touched).
        return MatchingPlan([sorted(wanted)] if wanted else [], stale, started)
    links = selectors.block_links(wanted)
    keys = set(links.sizes) | set(links.researchers) if wanted is None else wanted
    return MatchingPlan(
        blocking.shards(
            keys,
            links.pairs,
            cost=lambda b: (
                (links.sizes.get(b, 0) + links.researchers.get(b, 0)) ** 2 + 1
            ),
            # A shard holds an advisory lock a block on PostgreSQL only.
            count=max(
                settings.CURATION_MATCHING_SHARDS,
                math.ceil(len(keys) / settings.CURATION_MATCHING_SHARD_BLOCKS)
                if connection.vendor == "postgresql"
                else 1,
            ),
        ),
        stale,
        started,
    )


def _lock_key(name: str) -> int:
    """A signed 64-bit advisory lock key for a block key (SHA-256's first 8
    bytes), as PostgreSQL's ``bigint`` form takes it."""
    return int.from_bytes(
        hashlib.sha256(name.encode()).digest()[:8], "big", signed=True
    )


# The lock name of a full run's run-wide step (matching_finish); no block key
# is "*" (curation.names.block_key folds to letters and spaces).
RUN_WIDE = "*"


@contextmanager
def block_locks(block_keys: Iterable[str]) -> Iterator[None]:
    """Hold the lock of each of these blocks, or raise at once if any is held.

    No global lock: two runs over different blocks proceed at once, and two
    over one block take turns. On PostgreSQL a session-level advisory lock per
    block, keyed by :func:`_lock_key` (released on the way out, and when the
    connection ends: a killed worker leaves none behind; PostgreSQL docs,
    13.3.5 "Advisory Locks"), all tried in one statement; and the
    :data:`MATCHING_LOCK_KEY` lock shared, so that a single-process run
    (:func:`matching_run_exclusive`, which holds it alone) excludes every
    block. Elsewhere (the SQLite demo, one process) a cache entry per block
    that expires after ``CURATION_MATCHING_LOCK_SECONDS``.

    Each lock counts against PostgreSQL's shared lock table
    (``max_locks_per_transaction`` times ``max_connections``, 6,400 by
    default): a shard holds at most about ``CURATION_MATCHING_SHARD_BLOCKS``.

    Args:
        block_keys: the blocks (or :data:`RUN_WIDE`).

    Raises:
        MatchingBusy: another run holds one of them, or the single-process
            run holds every block (:data:`MATCHING_BUSY`); none is held then.
    """
    keys = sorted({_lock_key(k) for k in block_keys})
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_try_advisory_lock_shared(%s)", [MATCHING_LOCK_KEY]
            )
            if not cursor.fetchone()[0]:
                raise MatchingBusy(MATCHING_BUSY)
            try:
                # Every row's lock is tried (a filter is evaluated row by row).
                cursor.execute(
                    "SELECT k FROM unnest(%s::bigint[]) AS k "
                    "WHERE NOT pg_try_advisory_lock(k)",
                    [keys],
                )
                refused = {row[0] for row in cursor.fetchall()}
                if refused:
                    cursor.execute(
                        "SELECT pg_advisory_unlock(k) FROM unnest(%s::bigint[]) AS k",
                        [[k for k in keys if k not in refused]],
                    )
                    raise MatchingBusy(MATCHING_BUSY)
            except BaseException:
                cursor.execute(
                    "SELECT pg_advisory_unlock_shared(%s)", [MATCHING_LOCK_KEY]
                )
                raise
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_unlock(k) FROM unnest(%s::bigint[]) AS k",
                    [keys],
                )
                cursor.execute(
                    "SELECT pg_advisory_unlock_shared(%s)", [MATCHING_LOCK_KEY]
                )
        return
    if cache.get(_CACHE_LOCK) is not None:
        raise MatchingBusy(MATCHING_BUSY)
    timeout = settings.CURATION_MATCHING_LOCK_SECONDS
    names_held = [f"{_CACHE_LOCK}:{k:x}" for k in keys]
    taken: list[str] = []
    for name in names_held:
        if not cache.add(name, "1", timeout=timeout):
            cache.delete_many(taken)
            raise MatchingBusy(MATCHING_BUSY)
        taken.append(name)
    try:
        yield
    finally:
        cache.delete_many(taken)


def matching_shard(
    *, block_keys: list[str], full: bool, merges: bool = True, started: str = ""
) -> dict[str, int | list[int]]:
    """One shard of a fanned-out matching run: its blocks, under their locks.

    Proposes for its blocks what :func:`matching_run` proposes for them:
    attaches, ``new``, merges and suspect splits of their researchers, and,
    in a run over some blocks, ORCID splits. In a full run the ORCID splits
    and the merges across blocks are :func:`matching_finish`'s, and it reads
    afresh as a full run does. Applies nothing: the proposals it made that
    the auto-apply policy applies are returned for :func:`matching_finish`.

    Args:
        block_keys: the shard's blocks (:attr:`MatchingPlan.shards`).
        full: a shard of a run over every block.
        merges: as for :func:`matching_run`.
        started: :attr:`MatchingPlan.started`: a full run's shard takes the
            name rarities this process counted since (those of an earlier
            shard of the run), or counts them.

    Returns:
        Counts as :func:`matching_run` gives (``blocks``, ``made_stale``,
        ``proposed_<kind>``), and ``proven``: the ids of the proposals it
        created that the auto-apply policy (:mod:`curation.deciding.auto_apply`)
        applies, in order.

    Raises:
        MatchingBusy: another run holds one of its blocks (:func:`block_locks`);
            nothing was written.
    """
    with block_locks(block_keys):
        weights = selectors.active_weights(remembered=not full)
        since = datetime.fromisoformat(started) if full and started else None
        found = propose_in_blocks(
            block_keys,
            merges=merges,
            weights=weights,
            rarities=selectors.corpus_given_rarities(remembered=not full, since=since),
            remembered=not full,
            whole=full,
        )
        counts: Counter[str] = Counter(blocks=found.blocks, made_stale=0)
        created = split_and_save(
            found,
            # A full run's ORCID splits are its finishing step's.
            selectors.orcid_conflicts(block_keys)
            if full
            else found.snapshot.orcid_conflicts,
            weights,
            counts,
            orcid_splits=not full,
        )
    policy = auto_apply.policy()
    return {
        **counts,
        "proven": [p.pk for p in created if policy.clears_proposal(p)],
    }


def matching_finish(
    *,
    shard_counts: Sequence[Mapping[str, int | list[int]]],
    full: bool,
    merges: bool = True,
    started: str = "",
    made_stale: int = 0,
) -> dict[str, int]:
    """The step after a fanned-out matching run's shards (the chord callback).

    A full run proposes here what crosses blocks (merges of researchers
    whose names, read another way, meet: :func:`propose_variant_merges`,
    and of researchers of two blocks holding one ORCID iD:
    :func:`propose_orcid_merges`,
    weighing the pending attaches older than ``started`` as
    :func:`matching_run` weighs those before its own; and the ORCID splits
    of every live researcher), under the :data:`RUN_WIDE` lock, then applies
    every pending proposal the auto-apply policy clears; a run over some
    blocks applies those its shards created.

    Args:
        shard_counts: what each :func:`matching_shard` returned.
        full: a run over every block.
        merges: as for :func:`matching_run`.
        started: :attr:`MatchingPlan.started`.
        made_stale: :attr:`MatchingPlan.made_stale`.

    Returns:
        The run's counts, as :func:`matching_run` gives them.

    Raises:
        MatchingBusy: another full run is in its run-wide step.
    """
    counts: Counter[str] = Counter(blocks=0, made_stale=made_stale)
    proven: list[int] = []
    for shard in shard_counts:
        for key, value in shard.items():
            if key == "proven":
                proven.extend(value)
            else:
                counts[key] += value
    policy = auto_apply.policy()
    if not full:
        if policy.applies_any:
            by_id = Proposal.objects.filter(
                pk__in=proven, status=Proposal.Status.PENDING
            ).in_bulk()
            apply_sure([by_id[pk] for pk in proven if pk in by_id], counts, policy)
        return dict(counts)
    with block_locks([RUN_WIDE]):
        weights = selectors.active_weights()
        drafts: list[Draft] = []
        revisions: dict[int, int] = {}
        if merges:
            rarities = selectors.corpus_given_rarities(
                since=datetime.fromisoformat(started) if started else None
            )
            snapshot = selectors.researcher_snapshot(
                selectors.researcher_block_keys(), rarities
            )
            profiles = snapshot.profiles
            revisions = snapshot.revisions()
            vetoes = vetoes_of({p.id for members in profiles.values() for p in members})
            pending = selectors.pending_attach_papers(
                created_before=datetime.fromisoformat(started) if started else None
            )
            drafts.extend(propose_variant_merges(profiles, vetoes, weights, pending))
            drafts.extend(
                propose_orcid_merges(
                    profiles, selectors.orcids_shared(), vetoes, weights, pending
                )
            )
        drafts.extend(propose_splits(selectors.orcid_conflicts(), weights))
        unproven_where_orcid_taken(drafts)
        count_created(save_drafts(drafts, weights, revisions, counts=counts), counts)
        if policy.applies_any:
            apply_sure(selectors.pending_auto_apply(policy), counts, policy)
    return dict(counts)


# The key of the PostgreSQL advisory lock every matching run takes ("wove" in
# ASCII); advisory lock keys are the application's to choose (PostgreSQL docs,
# 9.27.10 "Advisory Lock Functions").
MATCHING_LOCK_KEY = 0x776F7665
_CACHE_LOCK = "matching-lock"


@contextmanager
def matching_lock() -> Iterator[None]:
    """Hold the matching lock for a run, or raise at once if another run has it.

    On PostgreSQL a session-level advisory lock (``pg_try_advisory_lock``): it is
    released on the way out, and also when the connection ends, so a worker killed
    mid-run (kill -9, a lost machine) leaves no lock behind and the redelivered
    task runs at once (PostgreSQL docs, 13.3.5 "Advisory Locks"). Elsewhere (the
    SQLite demo, one process) a cache entry that expires after
    ``CURATION_MATCHING_LOCK_SECONDS``.

    The lock of every block at once, for a run in one process: a fanned-out
    run's shards hold it shared (:func:`block_locks`), so this one waits for
    them and they for it; a nightly full run and a harvest's run over a few
    blocks would otherwise both write those blocks' proposals from stale
    snapshots.

    Raises:
        MatchingBusy: another run holds the lock (:data:`MATCHING_BUSY`).
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [MATCHING_LOCK_KEY])
            if not cursor.fetchone()[0]:
                raise MatchingBusy(MATCHING_BUSY)
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [MATCHING_LOCK_KEY])
        return
    if not cache.add(_CACHE_LOCK, "1", timeout=settings.CURATION_MATCHING_LOCK_SECONDS):
        raise MatchingBusy(MATCHING_BUSY)
    try:
        yield
    finally:
        cache.delete(_CACHE_LOCK)


def matching_run_exclusive(
    *, block_keys: list[str] | None = None, merges: bool = True
) -> dict[str, int]:
    """:func:`matching_run` in this process under :func:`matching_lock`: no
    other run, single-process or fanned out, touches any block meanwhile.

    Args:
        block_keys, merges: as for :func:`matching_run`.

    Returns:
        The counts of :func:`matching_run`.

    Raises:
        MatchingBusy: another run holds the lock; the caller tries again later
            (the task retries after ``CURATION_MATCHING_RETRY_SECONDS``), since
            that run's snapshot may predate the authorships this one was for.
    """
    with matching_lock():
        return matching_run(block_keys=block_keys, merges=merges)
