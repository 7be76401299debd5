"""Retiring the profiles a change leaves with no paper (unless claimed or
with a claim pending), and whether a change would.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from curation.changes import Change
from curation.edits.steps import IDENTIFIER_FIELDS
from curation.models import ClaimRequest, CurationEvent
from wovepaper.models import Authorship, Researcher


def retire_emptied(change: Change, researcher_ids: set[int] | list[int]) -> list[int]:
    """Retire, in ``change``, each of these profiles a curator's change left
    holding no paper.

    Every paper it held went to other profiles or was detached (a block
    review, *move…*, *not this person…*); before, it stayed public with
    "0 papers" and kept its identifiers, so a profile that took its papers
    could not take its ORCID iD (a new user's and a hostile trial). It is
    recorded as fields of the change (``retired`` False → True, each
    identifier → None), so undoing the change brings it back with them;
    kept, so its URL answers 410 naming where its papers are, and its
    history stays. Left as they are: a profile merged away or retired
    already, and one a user claimed or asks to claim (a curator decides the
    claim first; retiring it would leave the claim nothing to approve).

    Args:
        change: the open change (the researchers are locked here, in id
            order, as every service locks them).
        researcher_ids: the profiles the change took papers from.

    Returns:
        The ids retired, ascending.
    """
    wanted = sorted(set(researcher_ids))
    if not wanted:
        return []
    # Locked before reading what they hold: one that gains a paper
    # meanwhile is not retired.
    locked = change.lock(wanted, live=False)
    holding = set(
        Authorship.objects.filter(researcher_id__in=wanted).values_list(
            "researcher_id", flat=True
        )
    )
    claimed = set(
        ClaimRequest.objects.filter(
            researcher_id__in=wanted, status=ClaimRequest.Status.PENDING
        ).values_list("researcher_id", flat=True)
    )
    retired = []
    for pk in wanted:
        researcher = locked[pk]
        if _kept_live(researcher, holds=pk in holding, claim_pending=pk in claimed):
            continue
        change.set(researcher, retired=True, **dict.fromkeys(IDENTIFIER_FIELDS, None))
        retired.append(pk)
    return retired


def _kept_live(researcher: Researcher, *, holds: bool, claim_pending: bool) -> bool:
    """:func:`retire_emptied`'s rule: a profile is not retired while it
    holds a paper (``holds``), a user asks to claim it (``claim_pending``)
    or claimed it, or it is merged away or retired already."""
    return bool(
        holds
        or claim_pending
        or researcher.merged_into_id
        or researcher.retired
        or researcher.claimed_by_id
    )


def would_retire(researcher: Researcher, taking: list[int]) -> bool:
    """Whether taking the authorships ``taking`` (ids) off ``researcher``
    retires it (:func:`retire_emptied`'s rule, read without locks): what a
    confirmation page warns of before a move or a detach (a new user's
    trial)."""
    return not _kept_live(
        researcher,
        holds=researcher.authorships.exclude(pk__in=taking).exists(),
        claim_pending=researcher.claims.filter(
            status=ClaimRequest.Status.PENDING
        ).exists(),
    )


@transaction.atomic
def researchers_retire_emptied(
    *,
    researcher_ids: set[int] | list[int],
    actor: AbstractBaseUser,
    batch: CurationEvent | None = None,
) -> list[CurationEvent]:
    """Retire the profiles of ``researcher_ids`` that hold no paper now, each
    as a ``retired`` event of its own: what a block review does once at its
    end, after all its steps (retiring at each step refused a swap of two
    one-paper profiles' papers, and a move then a merge of the profile it
    emptied). One event a profile, so undoing one brings back that one
    alone (one event for all brought back every profile the review emptied,
    and none could be retired again once one held a paper: a hostile trial).

    Args:
        researcher_ids: the profiles a review took papers from.
        actor: the curator.
        batch: the review's ``batch`` event.

    Returns:
        The ``retired`` events (``extra["retired"]``: the one id), by id;
        empty when none qualifies (:func:`retire_emptied`).
    """
    events = []
    for pk in sorted(set(researcher_ids)):
        change = Change(actor=actor)
        retired = retire_emptied(change, {pk})
        if retired:
            events.append(
                change.commit(
                    kind=CurationEvent.Kind.RETIRED,
                    batch=batch,
                    extra={"retired": retired},
                )
            )
    return events
