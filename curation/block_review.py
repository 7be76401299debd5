"""Review by name block: one page per block, decided as one change.

Issue 47, part 2. A curator reviews a name block (``"serre j"``: every
profile and pending proposal of a folded family name and first initial) side
by side, and applies the whole review in one transaction: the pending
proposals approved or rejected, papers moved between the block's profiles or
to a new one, profiles merged. One ``batch`` event links every change it
made, each of which stays undoable on its own; a step that fails rolls the
whole review back and names the step, so nothing is half applied.

The queue of blocks (:func:`block_queue`) orders them by expected gain: the
papers whose placement waits, times how uncertain the matcher is about each
(the binary entropy of its probability: 1 at 0.5, 0 when sure).

A block here is always a name block (:func:`name_block`). Matching clusters a
large block in sub-blocks and files their proposals under the sub-block's
key (``"wang y/wang|yy"``), while researchers keep the name block's
(``"wang y"``): a review of the sub-block alone showed none of the block's
profiles, so a curator could not merge or move what matching had left apart
(on INSPIRE Wang, bench/curator_effort.py stalled at B³ F1 0.956 with every
proposal decided).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from curation import edits, selectors, services
from curation.exceptions import CurationError, InvalidChange
from curation.models import CurationEvent, Proposal
from wovepaper.models import Authorship, Researcher

# Blocks the queue page lists.
QUEUE_SHOWN = 50
# Papers of each profile the block page lists (newest first).
PAPERS_SHOWN = 25
# A move's target that makes a new profile of the papers moved there.
NEW = "new"


def name_block(block_key: str) -> str:
    """The name block of a block or sub-block key: ``"wang y/wang|yy"`` ->
    ``"wang y"``; a name block's key is returned as it is."""
    return block_key.split("/", 1)[0]


def pending_in(block_key: str):
    """The pending proposals of a name block and of all its sub-blocks.

    Args:
        block_key: a name block's key (:func:`name_block`).

    Returns:
        A Proposal queryset.
    """
    return Proposal.objects.filter(status=Proposal.Status.PENDING).filter(
        Q(block_key=block_key) | Q(block_key__startswith=f"{block_key}/")
    )


@dataclass(frozen=True)
class BlockItem:
    """One block of the review queue.

    Attributes:
        block_key: the name block (folded family name and first initial).
        proposals: its pending proposals, its sub-blocks' included.
        papers: the papers they would place (their ``impact`` summed).
        gain: the papers times how uncertain each placement is, summed
            (:func:`uncertainty`); the queue's order, largest first.
    """

    block_key: str
    proposals: int
    papers: int
    gain: float


def uncertainty(score: float) -> float:
    """How uncertain a placement of probability ``score`` is: the binary
    entropy in bits, 1.0 at 0.5, 0.0 at 0 or 1 (Shannon 1948)."""
    p = min(max(score, 0.0), 1.0)
    if p in (0.0, 1.0):
        return 0.0
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def block_queue(limit: int | None = QUEUE_SHOWN) -> list[BlockItem]:
    """The name blocks with pending proposals (of the block or of any of its
    sub-blocks), largest expected gain first.

    Args:
        limit: how many blocks (None: all).

    Returns:
        BlockItems; ties by more papers, then by block key. One query.
    """
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])
    rows = (
        selectors.proposal_queue(
            Proposal.objects.filter(status=Proposal.Status.PENDING)
        )
        .exclude(block_key="")
        .values_list("block_key", "impact", "score")
    )
    for block, impact, score in rows:
        item = totals[name_block(block)]
        item[0] += 1
        item[1] += impact
        item[2] += impact * uncertainty(score)
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1][2], -kv[1][1], kv[0]))
    return [
        BlockItem(block, int(n), int(papers), round(gain, 3))
        for block, (n, papers, gain) in (ranked if limit is None else ranked[:limit])
    ]


def next_block(after: str) -> str | None:
    """The block the queue lists after ``after`` (a block or sub-block key):
    the one following it, or the first when ``after`` is not queued (its
    review left nothing waiting); None past the last. Skipping block after
    block so walks the whole queue (it used to bounce between the first two:
    a new-user trial)."""
    queue = [item.block_key for item in block_queue(limit=None)]
    here = name_block(after)
    if here not in queue:
        return queue[0] if queue else None
    position = queue.index(here)
    return queue[position + 1] if position + 1 < len(queue) else None


@dataclass(frozen=True)
class PendingItem:
    """A pending proposal of the block as the page shows it.

    Attributes:
        proposal: the proposal (``impact`` and ``uncertainty`` annotated).
        incoming: the authorships it places (attach, new) or moves (split),
            as review rows (:func:`curation.selectors.incoming_papers`).
    """

    proposal: Proposal
    incoming: list[selectors.DossierPaper]


@dataclass(frozen=True)
class Block:
    """Everything of one block a review shows.

    Attributes:
        block_key: the name block.
        profiles: the live researchers of the block, most papers first, as
            dossiers (:func:`curation.selectors.researcher_dossier`).
        pending: its pending proposals in queue order, its sub-blocks'
            included.
    """

    block_key: str
    profiles: list[selectors.Dossier]
    pending: list[PendingItem]


def block_of(block_key: str) -> Block:
    """Read a name block for review.

    Args:
        block_key: a block key as matching writes it (``"serre j"``); a
            sub-block's (``"wang y/wang|yy"``) reads its name block.

    Returns:
        The Block; empty lists for a block nothing is in.
    """
    block_key = name_block(block_key)
    researchers = sorted(
        Researcher.objects.live().filter(block_key=block_key),
        key=lambda r: (-r.authorships.count(), r.pk),
    )
    pending = list(selectors.proposal_queue(pending_in(block_key)))
    return Block(
        block_key,
        [selectors.researcher_dossier(r, limit=PAPERS_SHOWN) for r in researchers],
        [
            PendingItem(
                p,
                selectors.incoming_papers(
                    p.authorships.select_related("paper").order_by("pk")
                ),
            )
            for p in pending
        ],
    )


@dataclass
class Review:
    """What a curator decided on a block's page.

    Attributes:
        decisions: ``{proposal id: True to approve, False to reject}``;
            proposals left out wait.
        moves: ``{authorship id: researcher id, or NEW}``: the papers to
            move, and where (every one moved to NEW goes to one new profile).
        merges: ``[(researcher id, researcher id)]``: pairs that are one
            person.
        reason: kept on each rejected proposal.
        shown_on: ``{authorship id: researcher id}``: where the page showed
            a moved paper (a ticked paper's profile); the review is refused
            when it is elsewhere now (the page is stale).
        if_waiting: proposals of ``decisions`` the curator left waiting and
            approved with "approve the waiting ones": one decided or made
            stale since the page was read is passed over, not refused.
    """

    decisions: dict[int, bool] = field(default_factory=dict)
    moves: dict[int, int | str] = field(default_factory=dict)
    merges: list[tuple[int, int]] = field(default_factory=list)
    reason: str = ""
    shown_on: dict[int, int] = field(default_factory=dict)
    if_waiting: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.decisions or self.moves or self.merges)


def review_apply(
    *, block_key: str, review: Review, actor: AbstractBaseUser
) -> CurationEvent:
    """Apply a block's review in one transaction, as one audit event.

    In order: the proposals decided (by :func:`curation.services.proposal_apply`
    and :func:`~curation.services.proposal_reject`, in id order; one of
    ``review.if_waiting`` decided since the page was read is passed over), the papers
    moved (:func:`curation.edits.authorship_move`; those moved to a new profile
    are split off the first one's researcher, :func:`curation.edits.researcher_split`,
    and the rest moved to it), then the merges
    (:func:`curation.edits.researcher_merge`; a side an earlier merge of the
    review took away, or a merge proposal it approved, is its survivor).
    Everything it names must be of the
    block (:func:`_check_in_block`). Last, the profiles the review left
    holding no paper are retired, each as a ``retired`` event of its own
    (:func:`curation.edits.researchers_retire_emptied`; not step by step, so
    a review may swap the papers of two one-paper profiles, or move a paper
    and merge the profile it left), and the block's pending proposals naming
    a profile merged away (on the page or by an approved merge proposal) or
    retired go stale. Before it all, so do those naming a profile merged
    away or retired since they were made (by a single *move…*, say), and a
    decision the page made on one is passed over (``extra["stale_before"]``
    lists them): left pending, "approve the waiting ones" failed on them,
    review after review. At its end too, a profile the review moved papers
    off that was named after its papers, and is no longer, takes a name they
    print (:func:`curation.edits.researchers_renamed`: a review that swaps
    the papers of two profiles swaps their names). Each change is its own
    event, undoable alone (a step that emptied a retired profile once that
    retirement is undone); a ``batch`` event (``extra["review"]``: the
    block) links them all.

    Args:
        block_key: the block reviewed (recorded as its name block,
            :func:`name_block`).
        review: what the curator decided.
        actor: the curator.

    Returns:
        The ``batch`` event (``extra["done"]``: the changes it links;
        ``extra["retired"]``: the researchers retired, ``extra["renamed"]``:
        those renamed after their papers, ``extra["stale_before"]``
        and ``extra["stale_after"]``: the proposals it made stale before
        deciding and after its steps, when any; ``researchers``: every
        researcher its changes touched).

    Raises:
        InvalidChange: the review decides nothing.
        CurationError: it names what is not of the block or does not exist,
            or a step failed (decided already, stale, locked, in conflict, a
            paper not where the page showed it, a researcher merged away);
            its message names the step, and nothing of the review is
            applied.
    """
    block_key = name_block(block_key)
    if not review:
        raise InvalidChange(f"the review of block {block_key!r} decides nothing")
    with transaction.atomic():
        _check_in_block(block_key, review)
        batch = CurationEvent.objects.create(
            kind=CurationEvent.Kind.BATCH,
            actor=actor,
            extra={"review": block_key, "verb": "reviewed"},
        )
        # Proposals naming a profile merged away or retired since they were
        # made (by a single move..., say) can no longer apply: left pending,
        # every later review of the block failed on them. They go stale in
        # this review, and a decision the page made on one is passed over.
        stale_before = _stale_dead(block_key, batch)
        decided_since = set(
            Proposal.objects.filter(pk__in=review.if_waiting)
            .exclude(status=Proposal.Status.PENDING)
            .values_list("pk", flat=True)
        )
        decisions = {
            pk: approve
            for pk, approve in review.decisions.items()
            if pk not in decided_since | stale_before
        }
        if not (decisions or review.moves or review.merges or stale_before):
            raise InvalidChange(
                f"the review of block {block_key!r} decides nothing: the "
                "proposals it would approve were decided since the page was read"
            )
        named = {pk for pair in review.merges for pk in pair}
        gone_before = set(
            Researcher.objects.filter(
                pk__in=named, merged_into__isnull=False
            ).values_list("pk", flat=True)
        )
        batch.extra |= {
            "proposals": sorted(decisions),
            "moves": len(review.moves),
            "merges": [list(pair) for pair in review.merges],
        }
        if stale_before:
            batch.extra["stale_before"] = sorted(stale_before)
        # The profiles it moves papers off that are named after their papers:
        # at its end, one no longer printed by its papers takes a name they
        # print (a review that swaps the papers of two profiles swaps names).
        named_after_papers = edits.named_by_their_papers(
            Authorship.objects.filter(pk__in=review.moves)
            .exclude(researcher=None)
            .values_list("researcher_id", flat=True)
        )
        for pk in sorted(decisions):
            _step(
                f"proposal {pk}",
                lambda pk=pk: _decide(pk, decisions[pk], review, actor, batch),
            )
        _move(review.moves, actor, batch)
        # A merge proposal the review approved joined a pair it may merge
        # again (ticked "one person"): that side acts through its survivor.
        merged: dict[int, int] = dict(
            Researcher.objects.filter(pk__in=named - gone_before)
            .exclude(merged_into__isnull=True)
            .values_list("pk", "merged_into_id")
        )
        for a, b in review.merges:
            _step(
                f"merging researchers {a} and {b}",
                lambda a=a, b=b: _merge(a, b, merged, actor, batch),
            )
        retired = [
            pk
            for event in edits.researchers_retire_emptied(
                researcher_ids=_left(batch), actor=actor, batch=batch
            )
            for pk in event.extra["retired"]
        ]
        renamed = [
            pk
            for event in edits.researchers_renamed(
                named=named_after_papers, actor=actor, batch=batch
            )
            for pk in event.researchers
        ]
        # Merged away on the page or by an approved merge proposal, or
        # retired: what names them can no longer apply.
        stale_after = _stale_dead(block_key, batch)
        linked = CurationEvent.objects.filter(batch=batch).values_list(
            "researchers", flat=True
        )
        batch.extra["done"] = len(linked)
        if retired:
            batch.extra["retired"] = retired
        if renamed:
            batch.extra["renamed"] = renamed
        if stale_after:
            batch.extra["stale_after"] = sorted(stale_after)
        # So the review is listed in the History of every profile it touched
        # (a new user's trial found it in none).
        batch.researchers = sorted({pk for touched in linked for pk in touched})
        batch.save(update_fields=["extra", "researchers"])
    return batch


def _stale_dead(block_key: str, batch: CurationEvent) -> set[int]:
    """Mark stale the block's pending proposals naming a researcher merged
    away or retired (:func:`_stale_after`); return their ids."""
    dead = _dead_named(block_key)
    if not dead:
        return set()
    naming = set(
        pending_in(block_key)
        .filter(Q(researcher_id__in=dead) | Q(other_researcher_id__in=dead))
        .values_list("pk", flat=True)
    )
    _stale_after(block_key, dead, batch)
    return set(
        Proposal.objects.filter(
            pk__in=naming, status=Proposal.Status.STALE
        ).values_list("pk", flat=True)
    )


def _dead_named(block_key: str) -> set[int]:
    """The researchers merged away or retired that the block's pending
    proposals name."""
    named = pending_in(block_key).values_list("researcher_id", "other_researcher_id")
    ids = {pk for pair in named for pk in pair if pk}
    return set(
        Researcher.objects.filter(pk__in=ids)
        .filter(Q(retired=True) | Q(merged_into__isnull=False))
        .values_list("pk", flat=True)
    )


def _left(batch: CurationEvent) -> set[int]:
    """The researchers the review's steps took a paper from."""
    return {
        m["before"]
        for moves in CurationEvent.objects.filter(batch=batch).values_list(
            "moves", flat=True
        )
        for m in moves
        if m["before"]
    }


def _step(what: str, run) -> None:
    """Run one step of a review; a failure names the step."""
    try:
        run()
    except CurationError as exc:
        raise type(exc)(f"{what}: {exc}") from exc


def _check_in_block(block_key: str, review: Review) -> None:
    """Refuse a review that names what is not on its block's page: a proposal
    of another block, a paper on a profile of another block (or on none), a
    researcher of another block, or ids that do not exist (a hostile trial
    approved, moved and merged across blocks from one block's page).

    Raises:
        InvalidChange: naming the first such id and where it is.
    """
    found = dict(
        Proposal.objects.filter(pk__in=list(review.decisions)).values_list(
            "pk", "block_key"
        )
    )
    for pk in sorted(review.decisions):
        if pk not in found:
            raise InvalidChange(f"proposal {pk} does not exist")
        if name_block(found[pk]) != block_key:
            raise InvalidChange(
                f"proposal {pk} is in block {found[pk]!r}, not {block_key!r}"
            )
    slots = {
        pk: (researcher, block)
        for pk, researcher, block in Authorship.objects.filter(
            pk__in=list(review.moves)
        ).values_list("pk", "researcher_id", "researcher__block_key")
    }
    for pk in sorted(review.moves):
        if pk not in slots:
            raise InvalidChange(f"authorship {pk} does not exist")
        researcher, block = slots[pk]
        if researcher is None:
            raise InvalidChange(
                f"authorship {pk} is on no researcher: approve its proposal instead"
            )
        if block != block_key:
            raise InvalidChange(
                f"authorship {pk} is on researcher {researcher} of block "
                f"{block!r}, not {block_key!r}"
            )
        shown = review.shown_on.get(pk, researcher)
        if shown != researcher:
            raise InvalidChange(
                f"authorship {pk} is on researcher {researcher} now, not on "
                f"researcher {shown} where the page showed it: read the block again"
            )
    named = {t for t in review.moves.values() if t != NEW}
    named |= {pk for pair in review.merges for pk in pair}
    blocks = dict(
        Researcher.objects.filter(pk__in=named).values_list("pk", "block_key")
    )
    for pk in sorted(named):
        if pk not in blocks:
            raise InvalidChange(f"researcher {pk} does not exist")
        if blocks[pk] != block_key:
            raise InvalidChange(
                f"researcher {pk} is in block {blocks[pk]!r}, not {block_key!r}"
            )


def _merge(a: int, b: int, merged: dict[int, int], actor, batch: CurationEvent) -> None:
    """Merge researchers ``a`` and ``b``; a side an earlier merge of this
    review took away acts through its survivor there ("merge A with B" then
    "B with C" is one person of three), and ``merged`` records this one's.
    A side merged away before the review is refused by the merge itself."""
    while a in merged:
        a = merged[a]
    while b in merged:
        b = merged[b]
    if a == b:
        return  # one already, by an earlier merge of this review
    survivor = edits.researcher_merge(
        researchers=list(Researcher.objects.filter(pk__in=[a, b])),
        actor=actor,
        batch=batch,
    )
    for pk in (a, b):
        if pk != survivor.pk:
            merged[pk] = survivor.pk


def _stale_after(block_key: str, gone: set[int], batch: CurationEvent) -> int:
    """Mark stale the block's pending proposals that name a researcher the
    review merged away or retired (a merge proposal of the pair just merged
    on the page, an attach to the side that is gone), each with its event,
    as a matching run would (:func:`curation.services.proposals_stale_if_dead`);
    before, they waited, and approving one failed the next review. The
    events are linked to the review's ``batch`` (a hostile trial found them
    outside its audit entry and its count). Returns how many."""
    if not gone:
        return 0
    return services.proposals_stale_if_dead(
        pending_in(block_key)
        .select_for_update(of=("self",))
        .select_related("researcher", "other_researcher")
        .filter(Q(researcher_id__in=gone) | Q(other_researcher_id__in=gone)),
        batch=batch,
    )


def _decide(
    pk: int, approve: bool, review: Review, actor, batch: CurationEvent
) -> None:
    proposal = Proposal.objects.get(pk=pk)
    if approve:
        services.proposal_apply(proposal=proposal, actor=actor, batch=batch)
    else:
        services.proposal_reject(
            proposal=proposal, actor=actor, reason=review.reason, batch=batch
        )


def _move(moves: dict[int, int | str], actor, batch: CurationEvent) -> None:
    """The review's moves: to researchers, then to one new profile."""
    found = Authorship.objects.in_bulk(list(moves))
    missing = sorted(set(moves) - set(found))
    if missing:
        raise InvalidChange(f"authorships {missing} do not exist")
    for pk, target in sorted(moves.items()):
        if target == NEW:
            continue
        _step(
            f"moving authorship {pk}",
            lambda pk=pk, target=target: edits.authorship_move(
                authorship=found[pk],
                to=Researcher.objects.get(pk=target),
                actor=actor,
                batch=batch,
            ),
        )
    fresh = sorted(pk for pk, target in moves.items() if target == NEW)
    if not fresh:
        return
    first = Authorship.objects.get(pk=fresh[0])
    if first.researcher_id is None:
        raise InvalidChange(
            f"authorship {first.pk} is on no researcher: approve its proposal instead"
        )
    source = first.researcher
    off = [pk for pk in fresh if found[pk].researcher_id == source.pk]
    new = None
    _step(
        f"splitting authorships {off} off researcher {source.pk}",
        lambda: _split(source, off, actor, batch),
    )
    new = Authorship.objects.get(pk=fresh[0]).researcher
    for pk in fresh:
        if pk in off:
            continue
        _step(
            f"moving authorship {pk} to the new profile",
            lambda pk=pk: edits.authorship_move(
                authorship=Authorship.objects.get(pk=pk),
                to=new,
                actor=actor,
                batch=batch,
            ),
        )


def _split(source: Researcher, ids: list[int], actor, batch) -> None:
    # Every paper of the source may go: the review retires it at its end
    # (refused before, so moving papers of two profiles to a new one worked
    # or not by the order of their ids: a hostile trial).
    edits.researcher_split(
        researcher=source, authorship_ids=ids, actor=actor, batch=batch, whole=True
    )
