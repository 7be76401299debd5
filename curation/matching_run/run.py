"""The matching run in one process: :func:`matching_run`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from curation import names, selectors
from curation.deciding import auto_apply
from curation.deciding.auto_apply_bulk import apply_sure
from curation.matching import (
    blocking,
    scoring,
)
from curation.matching.features import (
    AuthorshipView,
    NameRarities,
)
from curation.models import Proposal
from curation.proposing.attach import propose_blocks
from curation.proposing.drafts import Draft
from curation.proposing.merges import (
    propose_merges,
    propose_orcid_merges,
    propose_variant_merges,
)
from curation.proposing.orcid_checks import (
    flag_misplaced_orcids,
    unproven_where_orcid_taken,
)
from curation.proposing.saving import (
    save_drafts,
    stale_below_model,
    stale_dead_proposals,
)
from curation.proposing.splits import propose_splits, propose_suspect_splits


@dataclass
class _Proposing:
    """What the per-block part of a matching run read and drafted.

    Attributes:
        drafts: attach and ``new`` drafts of the blocks' unassigned
            authorships, then merge drafts of each block's researchers.
        snapshot: the live researchers of the blocks, as read.
        held: the authorship ids a pending ``new`` (or dead attach) held
            when read (:func:`selectors.matchable_views`).
        blocks: how many (sub-)blocks of unassigned authorships.
        vetoes: the cannot-links read (:func:`vetoes_of`).
        merging: ``{researcher id: paper ids}`` pending attaches give the
            researchers read, before this run drafted any.
        views: the blocks' unassigned authorships, as read.
    """

    drafts: list[Draft]
    snapshot: selectors.ResearcherSnapshot
    held: frozenset[int]
    blocks: int
    vetoes: set
    merging: dict[int, frozenset[int]]
    views: list[AuthorshipView]


def vetoes_of(researcher_ids: set[int]) -> set:
    """The cannot-links of these researchers (:func:`selectors.cannot_links`).

    "This authorship is not researcher A" also says A is not the researcher
    holding it now: no merge of the two is proposed (nor applied by the
    identifier policy), or a detach would come back as a merge.

    Returns:
        ``{("a", authorship id, researcher id), ("r", low id, high id)}``.
    """
    vetoes = selectors.cannot_links(researcher_ids)
    holder = selectors.holders(aid for kind, aid, _ in vetoes if kind == "a")
    vetoes |= {
        ("r", *sorted((rid, holder[aid])))
        for kind, aid, rid in list(vetoes)
        if kind == "a" and holder.get(aid) not in (None, rid)
    }
    return vetoes


def propose_in_blocks(
    block_keys: list[str] | None,
    *,
    merges: bool,
    weights: scoring.Weights,
    rarities: NameRarities,
    remembered: bool,
    whole: bool = False,
) -> _Proposing:
    """Read some blocks (or every block) and draft what is proposed in each:
    attaches and ``new`` for their unassigned authorships, merges of each
    block's researchers (with ``merges``). What crosses blocks over a whole
    corpus (merges of names read another way, ORCID splits) is the caller's.

    Args:
        block_keys: these blocks; None for every block.
        merges: draft merges of each block's researchers.
        weights: the scoring model.
        rarities: the corpus's name rarities
            (:func:`selectors.corpus_given_rarities`).
        remembered: accept the profiles this process built lately
            (:func:`selectors.researcher_snapshot`): an incremental run's.
        whole: ``block_keys`` hold every block with researchers that a name
            of their unassigned authorships, read another way, lands in (a
            shard of a full run:
            :func:`curation.matching_run.fanout.matching_plan`), so none is
            read besides them.

    Returns:
        The drafts with what was read for them (:class:`_Proposing`).
    """
    views, held = selectors.matchable_views(block_keys, rarities)
    grouped = blocking.blocks(
        views,
        key=lambda v: v.block_key,
        sub_key=lambda v: names.sub_block_key(v.given, v.family),
    )
    # One read of the researchers serves attach, merge and split: the blocks
    # read (those asked for, or every researcher's) hold every block the
    # matchable authorships fall in.
    snapshot = selectors.researcher_snapshot(
        block_keys if block_keys is not None else selectors.researcher_block_keys(),
        rarities,
        remembered=remembered,
    )
    profiles = snapshot.profiles
    # The researchers of the blocks the unassigned authorships' names, read
    # another way, land in (names.block_key_readings): a full run has read
    # them all; a block run reads those of the blocks it lacks, for attaches
    # only (their merges and splits are their own blocks' runs').
    elsewhere = profiles
    if block_keys is not None and not whole:
        lacking = {
            r.key
            for v in views
            for r in names.block_key_readings(v.given, v.family)
            if r.key not in profiles
        }
        if lacking:
            extra = selectors.researcher_snapshot(
                sorted(lacking), rarities, remembered=True
            ).profiles
            elsewhere = {**extra, **profiles}
    # The researchers of other blocks that hold authorships printed in the
    # run's blocks (a survivor of a merge across blocks): candidates of those
    # blocks' attaches, in their frame.
    visitors = selectors.visiting_profiles(grouped, rarities)
    vetoes = vetoes_of(
        {p.id for members in elsewhere.values() for p in members}
        | {v.profile.id for vs in visitors.values() for v in vs}
    )
    # The papers pending attaches give researchers: one person holds one slot
    # of a paper, so no other slot of them is proposed to the same researcher
    # (the attaches of the papers matched here), and no merge would give one
    # researcher two (the attaches of the researchers merged here). A full run
    # reads every pending attach once for both.
    attached = (
        selectors.pending_attach_papers()
        if block_keys is None
        else selectors.pending_attach_papers(paper_ids={v.paper_id for v in views})
    )
    taken = frozenset((paper, r) for r, papers in attached.items() for paper in papers)
    merging = attached
    if merges and block_keys is not None:
        merging = selectors.pending_attach_papers(
            researcher_ids=[p.id for members in profiles.values() for p in members]
        )
    drafts: list[Draft] = []
    givens = selectors.pending_attach_names(
        None
        if block_keys is None
        else [
            *block_keys,
            *elsewhere,
            *(v.home for vs in visitors.values() for v in vs),
        ]
    )
    drafts.extend(
        propose_blocks(
            grouped,
            lambda block: profiles.get(block.split("/", 1)[0], []),
            vetoes,
            weights,
            taken,
            givens,
            elsewhere,
            visitors,
        )
    )
    for block, members in profiles.items() if merges else ():
        drafts.extend(propose_merges(block, members, vetoes, weights, merging))
    return _Proposing(drafts, snapshot, held, len(grouped), vetoes, merging, views)


def count_created(created: list[Proposal], counts: Counter) -> None:
    """Add each of ``created`` to ``counts`` under ``proposed_<kind>``."""
    for proposal in created:
        counts[f"proposed_{proposal.kind}"] += 1


def split_and_save(
    found: _Proposing,
    conflicts: list[selectors.OrcidConflict],
    weights: scoring.Weights,
    counts: Counter,
    *,
    orcid_splits: bool = True,
) -> list[Proposal]:
    """Add to ``found``'s drafts the splits of its researchers (those of
    ``conflicts`` with several ORCID iDs unless not ``orcid_splits``, and the
    suspects among the others), then store them all, counting each kind.

    Returns:
        The proposals created, in draft order.
    """
    drafts = found.drafts
    if orcid_splits:
        drafts.extend(propose_splits(conflicts, weights))
    drafts.extend(
        propose_suspect_splits(
            found.snapshot.suspects, {c.researcher_id for c in conflicts}, weights
        )
    )
    flag_misplaced_orcids(drafts, found.views)
    unproven_where_orcid_taken(drafts)
    created = save_drafts(
        drafts, weights, found.snapshot.revisions(), found.held, counts
    )
    count_created(created, counts)
    return created


def matching_run(
    *, block_keys: list[str] | None = None, merges: bool = True
) -> dict[str, int]:
    """Propose assignments for every unassigned authorship (optionally in some blocks).

    Steps per block: score each authorship against the block's live researchers
    (attach above ``CURATION_ATTACH_THRESHOLD``), cluster the rest into ``new``
    proposals; and in every block that holds researchers, propose merges of
    researcher pairs above ``CURATION_MERGE_THRESHOLD`` or that a rule joins
    (spelling variants with co-authors in common, initials with one
    expansion: :func:`propose_merges`), in a full run also across blocks
    (names read another way, one ORCID iD under two family names:
    :func:`propose_orcid_merges`), and splits of researchers
    that look over-merged: several ORCID iDs (:func:`propose_splits`), or groups
    of papers sharing no field and no co-author, or more papers a year than one
    person writes (:func:`propose_suspect_splits`). Attaches and ``new``
    proposals holding a slot whose ORCID iD a source misplaced are flagged
    for a curator (:func:`flag_misplaced_orcids`). Cannot-link constraints and
    rejected fingerprints are obeyed. Then the auto-apply policy
    (``CURATION_AUTO_APPLY``, :mod:`curation.deciding.auto_apply`) applies the ``new``
    and ``attach`` proposals it clears (identifier-proven, or scored at least
    its threshold) that touch no locked researcher: those the run created, and
    in a full run also those an earlier run left pending. Merges and splits
    always wait for a curator. A full run first marks stale the pending
    proposals that can no longer apply (:func:`stale_dead_proposals`) and the
    attaches another model made that the one in use scores below its
    threshold (:func:`stale_below_model`).

    All in this process: :mod:`curation.matching_run.fanout`'s
    ``matching_plan``, ``matching_shard`` and ``matching_finish`` are the
    same run fanned out over Celery workers
    (``curation.tasks.matching_run_task``), and propose the same.

    Idempotent: a second run proposes nothing new while nothing changed.

    Args:
        block_keys: restrict to these blocks; None means every block.
        merges: also propose merges. A harvest's incremental run leaves them out
            (``False``): new unassigned authorships change no researcher, and
            scoring every researcher pair of a block is most of such a run's
            cost; the nightly full run and curators' runs propose them.

    Returns:
        Counts: ``blocks``, ``proposed_<kind>``, ``auto_applied`` and
        ``made_stale`` (pending proposals superseded by this run's, or that
        can no longer apply).
    """
    # A bad CURATION_AUTO_APPLY fails the run here, before it writes
    # anything (it failed after saving the proposals: hostile trial).
    auto_apply.policy()
    full = block_keys is None
    stale = 0
    weights = selectors.active_weights(remembered=not full)
    if full:
        stale = stale_dead_proposals() + stale_below_model(weights)
    found = propose_in_blocks(
        block_keys,
        merges=merges,
        weights=weights,
        rarities=selectors.corpus_given_rarities(remembered=not full),
        remembered=not full,
    )
    counts: Counter[str] = Counter(blocks=found.blocks, made_stale=stale)
    drafts = found.drafts
    if merges and full:
        # Across blocks only in a full run: it reads every block's researchers,
        # so each reading finds the block it names.
        drafts.extend(
            propose_variant_merges(
                found.snapshot.profiles, found.vetoes, weights, found.merging
            )
        )
        drafts.extend(
            propose_orcid_merges(
                found.snapshot.profiles,
                selectors.orcids_shared(),
                found.vetoes,
                weights,
                found.merging,
            )
        )
    # A full run asks the database for every live researcher's conflicts (those
    # with no block key too); an incremental run takes its snapshot's.
    conflicts = selectors.orcid_conflicts() if full else found.snapshot.orcid_conflicts
    created = split_and_save(found, conflicts, weights, counts)
    policy = auto_apply.policy()
    if policy.applies_any:
        # A full run applies, besides those it created, the ones an earlier run
        # left pending (killed between saving and applying, held by a clash,
        # or made under a stricter policy); an incremental run, the ones it
        # created (one query less, for a harvest's many small runs).
        apply_sure(
            selectors.pending_auto_apply(policy) if full else created,
            counts,
            policy,
        )
    return dict(counts)
