"""Claims: a signed-in user asks to be recognised as a researcher; a curator decides."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from curation import edits
from curation.changes import Change
from curation.exceptions import (
    CLAIM_DUPLICATE,
    CLAIM_NOT_PENDING,
    CLAIM_ORCID,
    CLAIM_TAKEN,
    IDENTIFIER_TAKEN,
    ClaimError,
    ResearcherConflict,
)
from curation.models import ClaimRequest, CurationEvent
from wovepaper.identifiers import orcid_normalise
from wovepaper.models import Researcher

MAX_MESSAGE = 2000


def claim_submit(
    *, user: AbstractBaseUser, researcher: Researcher, orcid: str, message: str = ""
) -> ClaimRequest:
    """Record a user's request to claim a researcher profile.

    Args:
        user: the signed-in user.
        researcher: a live researcher.
        orcid: the user's ORCID iD (bare or as an orcid.org URL).
        message: optional note to the curators (first 2000 characters kept).

    Returns:
        The pending ClaimRequest.

    Raises:
        ClaimError: the iD is invalid, the profile is merged away or claimed by
            someone else, its ORCID iD is another one, or the user already has a
            pending claim on it.
    """
    try:
        orcid = orcid_normalise(orcid)
    except ValueError as exc:
        raise ClaimError(str(exc)) from exc
    try:
        with transaction.atomic():
            # Read again under the row's lock: a curator's review that
            # retires it meanwhile holds the lock, and a copy read before
            # let a claim onto a retired profile (a hostile trial).
            researcher = Researcher.objects.select_for_update().get(pk=researcher.pk)
            if researcher.merged_into_id or researcher.retired:
                raise ClaimError(
                    f"researcher {researcher.pk} is no longer a live profile"
                )
            if researcher.claimed_by_id and researcher.claimed_by_id != user.pk:
                raise ClaimError(CLAIM_TAKEN.format(pk=researcher.pk))
            if researcher.orcid and researcher.orcid != orcid:
                raise ClaimError(
                    CLAIM_ORCID.format(pk="(new)", have=researcher.orcid, given=orcid)
                )
            return ClaimRequest.objects.create(
                user=user,
                researcher=researcher,
                orcid=orcid,
                message=message[:MAX_MESSAGE],
            )
    except IntegrityError as exc:
        raise ClaimError(CLAIM_DUPLICATE.format(pk=researcher.pk)) from exc


def _decide(claim: ClaimRequest, new: str, actor, reason: str) -> ClaimRequest:
    changed = ClaimRequest.objects.filter(
        pk=claim.pk, status=ClaimRequest.Status.PENDING
    ).update(status=new, decided_at=timezone.now(), decided_by=actor, reason=reason)
    if changed != 1:
        current = ClaimRequest.objects.get(pk=claim.pk)
        raise ClaimError(CLAIM_NOT_PENDING.format(pk=claim.pk, status=current.status))
    claim.refresh_from_db()
    return claim


@transaction.atomic
def claim_approve(*, claim: ClaimRequest, actor: AbstractBaseUser) -> ClaimRequest:
    """Approve a claim: the user becomes ``claimed_by``, the profile is locked.

    The profile takes the claim's ORCID iD when it has none. One ``claim_approved``
    event records the before and after, so the approval can be undone.

    Raises:
        ClaimError: the claim was decided already, the profile is claimed by
            someone else, or has a different ORCID iD.
        ResearcherConflict: the iD belongs to another researcher.
        ResearcherGone: the profile was merged away meanwhile.
    """
    claim = ClaimRequest.objects.select_for_update().get(pk=claim.pk)
    if claim.status != ClaimRequest.Status.PENDING:
        raise ClaimError(CLAIM_NOT_PENDING.format(pk=claim.pk, status=claim.status))
    change = Change(actor=actor)
    researcher = change.lock([claim.researcher_id])[claim.researcher_id]
    if researcher.claimed_by_id and researcher.claimed_by_id != claim.user_id:
        raise ClaimError(CLAIM_TAKEN.format(pk=researcher.pk))
    if researcher.orcid and researcher.orcid != claim.orcid:
        raise ClaimError(
            CLAIM_ORCID.format(pk=claim.pk, have=researcher.orcid, given=claim.orcid)
        )
    other = (
        Researcher.objects.filter(orcid=claim.orcid)
        .exclude(pk=researcher.pk)
        .values_list("pk", flat=True)
        .first()
    )
    if other:
        raise ResearcherConflict(
            IDENTIFIER_TAKEN.format(field="orcid", value=claim.orcid, other=other)
        )
    change.set(researcher, claimed_by_id=claim.user_id, locked=True, orcid=claim.orcid)
    claim = _decide(claim, ClaimRequest.Status.APPROVED, actor, "")
    change.commit(kind=CurationEvent.Kind.CLAIM_APPROVED, extra={"claim": claim.pk})
    return claim


@transaction.atomic
def claim_reject(
    *, claim: ClaimRequest, actor: AbstractBaseUser, reason: str = ""
) -> ClaimRequest:
    """Reject a claim, with an optional reason kept on it and its event.

    A profile a curator emptied while the claim waited (kept for it:
    :func:`curation.edits.retire_emptied`) is retired in the same event
    once no claim on it is pending; before, it stayed live with no paper
    for good (a hostile trial). Undoing the rejection brings it back.

    Raises:
        ClaimError: the claim was decided already.
    """
    claim = _decide(claim, ClaimRequest.Status.REJECTED, actor, reason[:2000])
    change = Change(actor=actor)
    retired = edits.retire_emptied(change, {claim.researcher_id})
    change.commit(
        kind=CurationEvent.Kind.CLAIM_REJECTED,
        researchers=[claim.researcher_id],
        extra={"claim": claim.pk, "reason": reason[:2000]}
        | ({"retired": retired} if retired else {}),
    )
    return claim
