"""Proposal status transitions: the only way a proposal's status changes.

:func:`transition` is a compare-and-swap on the status
(``filter(pk=..., status=old).update(status=new)``, proceed only if one row
changed) plus an append-only CurationEvent, after the pattern of healthchecks'
``Flip`` rows; :data:`TRANSITIONS` lists the moves allowed.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from curation.changes import Change
from curation.exceptions import (
    CONFLICT,
    ILLEGAL_TRANSITION,
    NOT_PENDING,
    NOT_PENDING_STALE,
    IllegalTransition,
    ProposalConflict,
    ProposalNotPending,
)
from curation.models import CurationEvent, Proposal

S = Proposal.Status

TRANSITIONS: dict[str, set[str]] = {
    S.PENDING: {S.APPROVED, S.APPLIED, S.REJECTED, S.STALE, S.FAILED},
    S.APPROVED: {S.APPLIED, S.STALE, S.FAILED},
    S.APPLIED: {S.REVERTED},
    S.REJECTED: {S.PENDING},  # an undo of the rejection
    S.REVERTED: {S.APPLIED},
    S.STALE: set(),
    S.FAILED: set(),
}


def transition(
    *,
    proposal: Proposal,
    new: str,
    actor: AbstractBaseUser | None,
    event_kind: str,
    change: Change | None = None,
    batch: CurationEvent | None = None,
    extra: dict | None = None,
) -> CurationEvent:
    """Move a proposal's status by compare-and-swap and write its event.

    Args:
        change: the state change that goes with it (moves, fields, constraints),
            written into the same event.
        batch: the bulk action's ``batch`` event, if any.

    Raises:
        IllegalTransition: ``new`` is not allowed from the current status.
        ProposalConflict: the status changed under us.
    """
    old = proposal.status
    if new not in TRANSITIONS[old]:
        raise IllegalTransition(
            ILLEGAL_TRANSITION.format(pk=proposal.pk, old=old, new=new)
        )
    now = timezone.now()
    changed = Proposal.objects.filter(pk=proposal.pk, status=old).update(
        status=new,
        decided_at=now,
        decided_by=actor,
        reason=(extra or {}).get("reason", proposal.reason),
    )
    if changed != 1:
        raise ProposalConflict(CONFLICT.format(pk=proposal.pk))
    proposal.status, proposal.decided_at, proposal.decided_by = new, now, actor
    return (change or Change(actor=actor)).commit(
        kind=event_kind,
        proposal=proposal,
        batch=batch,
        researchers=[
            r for r in (proposal.researcher_id, proposal.other_researcher_id) if r
        ],
        extra=extra,
    )


def lock_proposal(proposal: Proposal) -> Proposal:
    """``proposal`` read again under ``select_for_update``, to be decided.

    Raises:
        ProposalNotPending: it is stale (with its reason), or neither pending
            nor approved (decided already).
    """
    locked = Proposal.objects.select_for_update().get(pk=proposal.pk)
    if locked.status == S.STALE:
        raise ProposalNotPending(
            NOT_PENDING_STALE.format(pk=locked.pk, reason=locked.reason or "no reason")
        )
    if locked.status not in (S.PENDING, S.APPROVED):
        raise ProposalNotPending(NOT_PENDING.format(pk=locked.pk, status=locked.status))
    return locked
