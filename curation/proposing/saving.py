"""Storing drafts as proposals: one per fingerprint, superseding the pending
ones newer evidence changed, and marking stale those that no longer fit.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable

from django.conf import settings
from django.db import connection, transaction

from curation import selectors
from curation.exceptions import ProposalConflict
from curation.matching import scoring
from curation.models import CurationEvent, Proposal
from curation.proposing.drafts import Draft, proposal_fingerprint
from curation.proposing.staleness import stale_reason
from curation.transitions import transition

logger = logging.getLogger(__name__)
S = Proposal.Status


def stale_dead_proposals() -> int:
    """Mark stale the pending proposals that name a researcher merged away or
    retired since, or attach or give a new researcher an authorship assigned
    since, or attach to a researcher of another block one no longer held
    there, or attach to a researcher that changed since one that no longer
    stands on it (:func:`curation.proposing.staleness._evidence_lost`), or
    hold an authorship a re-harvest deleted
    (:func:`selectors.pending_dead_proposals`), each with an event
    saying which; return how many. A full matching run starts with it, so the
    queue does not offer a merge of a researcher that is gone, nor a home
    for a paper a curator already placed."""
    with transaction.atomic():
        # Attaches across blocks are read to be checked; most still hold.
        return proposals_stale_if_dead(selectors.pending_dead_proposals())


def proposals_stale_if_dead(
    proposals: Iterable[Proposal], *, batch: CurationEvent | None = None
) -> int:
    """Mark stale each of some locked pending proposals that can no longer
    apply (:func:`stale_reason`: a side merged away or retired, an
    authorship placed since ...), each with an event saying why.

    Args:
        proposals: pending proposals locked ``select_for_update``, with their
            researchers selected.
        batch: the ``batch`` event (a block review) the events belong to, if
            any.

    Returns:
        How many were made stale.
    """
    count = 0
    for old in proposals:
        reason = stale_reason(
            old,
            {r.pk: r for r in (old.researcher, old.other_researcher) if r},
            list(old.authorships.all())
            if old.kind in (Proposal.Kind.ATTACH, Proposal.Kind.NEW)
            else [],
        )
        if reason:
            count += _mark_stale(old, reason, batch=batch)
    return count


def stale_below_model(weights: scoring.Weights) -> int:
    """Mark stale the pending attach proposals another model made that the
    model in use scores below its joining threshold (their stored features
    scored again: :func:`scoring.score_of_features`), each with an event
    giving both scores; return how many. After a switch of model (a new one
    trained, a rollback, the default weights), a full run so leaves no
    attach in the queue that the model in use would not propose; the others
    keep the score and version they were made with. Identifier-proven ones
    stay: an identifier, not the score, proposed them; so do those a rule
    proposed (their evidence's ``rule``:
    :func:`curation.proposing.attach._rule_attaches`)."""
    threshold = weights.threshold or settings.CURATION_ATTACH_THRESHOLD
    count = 0
    with transaction.atomic():
        for old in selectors.pending_attaches_of_other_models(weights.version):
            evidence = old.evidence if isinstance(old.evidence, dict) else {}
            features = evidence.get("features")
            if not isinstance(features, dict) or evidence.get("rule"):
                # A rule proposed it below the threshold; the score is not
                # why (curation.proposing.attach._rule_attaches).
                continue
            now = scoring.score_of_features(features, weights)
            if now is not None and now < threshold:
                count += _mark_stale(
                    old,
                    f"the model in use ({weights.version}) scores it {now:.2f}, "
                    f"below its threshold {threshold} (made by "
                    f"{old.model_version} at {old.score:.2f})",
                )
    return count


def _mark_stale(
    old: Proposal, reason: str, *, batch: CurationEvent | None = None
) -> bool:
    """Move a locked pending proposal to ``stale`` with an event giving
    ``reason`` (linked to ``batch`` when given, and by its curator: a
    review's stale events named no one, a new user's trial); False (and
    nothing written) when a curator decided it meanwhile (its
    compare-and-swap fails)."""
    try:
        transition(
            proposal=old,
            new=S.STALE,
            actor=batch.actor if batch else None,
            event_kind=CurationEvent.Kind.PROPOSAL_STALE,
            extra={"reason": reason},
            batch=batch,
        )
    except ProposalConflict:
        logger.info(
            "proposal %s was decided meanwhile; not made stale",
            old.pk,
            extra={"proposal": old.pk},
        )
        return False
    return True


def _draft_fingerprint(draft: Draft) -> str:
    return proposal_fingerprint(
        kind=draft.kind,
        authorship_ids=draft.authorship_ids,
        researcher_ids=[
            r for r in (draft.researcher_id, draft.other_researcher_id) if r
        ],
    )


# Proposals written per transaction by a matching run.
SAVE_BATCH = 500


def _supersede(drafts: list[tuple[str, Draft]]) -> int:
    """Mark stale the pending proposals these drafts replace; return how many.

    A fresh draft that holds an authorship of a pending ``new`` proposal carries
    newer evidence (a paper or a researcher that arrived since), and one that
    holds an authorship of a pending attach to a researcher merged away or
    retired since replaces a proposal that can never apply
    (:func:`selectors.pending_superseded_proposals`); the old proposal goes
    ``stale`` with an event naming why. One a curator decided meanwhile is
    left alone (its compare-and-swap fails).
    """
    ids = {aid for _, d in drafts for aid in d.authorship_ids}
    if not ids:
        return 0
    return sum(
        _mark_stale(old, SUPERSEDED)
        for old in selectors.pending_superseded_proposals(ids)
    )


# Why _supersede makes a proposal stale.
SUPERSEDED = (
    "superseded: matching proposes otherwise now (new papers, researchers or "
    "scoring model since)"
)


def save_drafts(
    drafts: list[Draft],
    weights: scoring.Weights,
    seen: dict[int, int],
    held: frozenset[int] = frozenset(),
    counts: Counter | None = None,
) -> list[Proposal]:
    """Store drafts whose fingerprint is neither pending nor rejected, in batches.

    Pending ``new`` proposals that the stored drafts replace are superseded in the
    same transaction (see :func:`_supersede`). Each proposal records the revisions
    of its researchers as the run read them (``seen``: ``{researcher id:
    revision}``; one read for any researcher not in it), so that a change made
    since the run read them makes it stale. ``held``: the authorship ids that a
    pending ``new`` proposal held when the run read them; a batch holding none
    supersedes nothing and is not looked up. ``counts["made_stale"]`` (when
    given) counts the proposals superseded.
    """
    fingerprints = [_draft_fingerprint(d) for d in drafts]
    known = selectors.known_fingerprints(fingerprints)
    fresh: dict[str, Draft] = {}
    again: dict[str, Draft] = {}
    for fp, draft in zip(fingerprints, drafts, strict=True):
        if fp not in known:
            fresh.setdefault(fp, draft)
        elif known[fp][1] and (draft.researcher_id or draft.other_researcher_id):
            again.setdefault(fp, draft)
    items = list(fresh.items())
    touched = {
        r
        for d in (*fresh.values(), *again.values())
        for r in (d.researcher_id, d.other_researcher_id)
        if r
    }
    revisions = {r: seen[r] for r in touched if r in seen}
    revisions.update(selectors.researcher_revisions(touched - revisions.keys()))

    def seen_by(d: Draft) -> dict[str, int]:
        return {
            str(r): revisions[r]
            for r in (d.researcher_id, d.other_researcher_id)
            if r in revisions
        }

    # A pending proposal drafted again on its researchers' newer revisions (one
    # of them changed since, by another decision such as an applied split of
    # another part) holds on the evidence read now: it takes the new revisions,
    # score and evidence, so it stays applicable instead of going stale.
    for fp, d in again.items():
        pk, before = known[fp]
        if before != seen_by(d):
            Proposal.objects.filter(pk=pk, status=Proposal.Status.PENDING).update(
                researcher_revisions=seen_by(d),
                score=min(max(d.score, 0.0), 1.0),
                evidence=d.evidence,
            )
    saved: list[Proposal] = []
    through = Proposal.authorships.through
    # Proposals are derived data: a run after a crash proposes again what a lost
    # commit held. So on PostgreSQL their transactions commit asynchronously,
    # without waiting for the WAL flush (PostgreSQL docs, 28.4 "Asynchronous
    # Commit": a crash loses at most the last few hundred milliseconds of such
    # commits, never consistency; a later synchronous commit, such as a
    # curator's or an auto-apply, flushes them with it). Not inside a caller's
    # transaction (an atomic block, or autocommit turned off), whose own commit
    # must stay as it asked.
    asynchronous = (
        connection.vendor == "postgresql"
        and connection.get_autocommit()
        and not connection.in_atomic_block
    )
    for start in range(0, len(items), SAVE_BATCH):
        batch = items[start : start + SAVE_BATCH]
        with transaction.atomic():
            if asynchronous:
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL synchronous_commit TO OFF")
            if any(aid in held for _, d in batch for aid in d.authorship_ids):
                superseded = _supersede(batch)
                if counts is not None:
                    counts["made_stale"] += superseded
            proposals = Proposal.objects.bulk_create(
                Proposal(
                    kind=d.kind,
                    score=min(max(d.score, 0.0), 1.0),
                    evidence=d.evidence,
                    model_version=d.evidence.get("model_version", weights.version),
                    block_key=d.block_key[:200],
                    fingerprint=fp,
                    identifier_proven=d.identifier_proven,
                    researcher_id=d.researcher_id,
                    other_researcher_id=d.other_researcher_id,
                    researcher_revisions=seen_by(d),
                )
                for fp, d in batch
            )
            through.objects.bulk_create(
                through(proposal_id=p.pk, authorship_id=aid)
                for p, (_, d) in zip(proposals, batch, strict=True)
                for aid in d.authorship_ids
            )
        saved.extend(proposals)
    return saved
