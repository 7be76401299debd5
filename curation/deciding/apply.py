"""Apply or reject one proposal, each in one transaction."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from curation import edits, names, selectors
from curation.changes import Change
from curation.deciding import auto_apply
from curation.exceptions import (
    IDENTIFIER_TAKEN,
    LOCKED,
    NOT_ON_RESEARCHER,
    STALE,
    ProposalConflict,
    ProposalStale,
    ResearcherConflict,
    ResearcherLocked,
)
from curation.models import Constraint, CurationEvent, Proposal
from curation.proposing.orcid_checks import misplaced_orcids
from curation.proposing.staleness import stale_reason
from curation.transitions import lock_proposal, transition
from wovepaper.models import Authorship, Researcher

S = Proposal.Status


def _apply(
    proposal: Proposal,
    actor: AbstractBaseUser | None,
    *,
    batch: CurationEvent | None = None,
    split_ids: list[int] | None = None,
    policy: auto_apply.Policy | None = None,
) -> CurationEvent | str:
    """Apply a locked proposal; return its event, or the reason it is stale."""
    change = Change(actor=actor)
    ids = [r for r in (proposal.researcher_id, proposal.other_researcher_id) if r]
    # A split locks those merged into its researcher with it, in one id
    # order: it may move them with their papers (edits.split_off).
    merged = (
        edits.merged_in(proposal.researcher_id)
        if proposal.kind == Proposal.Kind.SPLIT and proposal.researcher_id
        else []
    )
    locked = change.lock([*ids, *merged], live=False)
    researchers = {pk: locked[pk] for pk in ids}
    authorships = list(
        Authorship.objects.select_for_update().filter(proposals=proposal).order_by("pk")
    )
    reason = stale_reason(proposal, researchers, authorships)
    if reason:
        return reason
    if actor is None:
        for r in researchers.values():
            if r.locked:
                raise ResearcherLocked(LOCKED.format(pk=r.pk))
    must: list[tuple[Researcher, list[Authorship]]] = []
    extra: dict | None = None
    if proposal.kind == Proposal.Kind.SPLIT:
        source = researchers[proposal.researcher_id]
        if split_ids is not None:
            authorships = list(
                Authorship.objects.select_for_update()
                .filter(pk__in=split_ids)
                .order_by("pk")
            )
            unknown = sorted(set(split_ids) - {a.pk for a in authorships})
            if unknown:
                raise ProposalConflict(
                    NOT_ON_RESEARCHER.format(ids=unknown, pk=source.pk)
                )
        target = edits.split_off(change, source, authorships)
        # The proposal names the researcher it created, for the review page.
        Proposal.objects.filter(pk=proposal.pk).update(other_researcher=target)
        proposal.other_researcher = target
        if split_ids is not None:
            extra = {"moved": [a.pk for a in authorships]}
    elif proposal.kind == Proposal.Kind.ATTACH:
        target = researchers[proposal.researcher_id]
        change.move(authorships, target)
        must.append((target, authorships))
    elif proposal.kind == Proposal.Kind.NEW:
        display, given, family = edits.display_name_of(authorships)
        printed = {a.orcid for a in authorships if a.orcid}
        orcid = printed.pop() if len(printed) == 1 else None
        if orcid and misplaced_orcids(selectors.orcid_slots([orcid])).keys() & {
            a.pk for a in authorships
        }:
            # The iD's other slots print another person's name: a source put
            # it on this one by mistake; the new researcher does not take it.
            orcid = None
        holder = (
            Researcher.objects.filter(orcid=orcid).values_list("pk", flat=True).first()
            if orcid
            else None
        )
        if holder is not None:
            if actor is None:
                # Automation never makes a second researcher of one iD: the
                # proposal waits for a curator.
                raise ResearcherConflict(
                    IDENTIFIER_TAKEN.format(field="ORCID", value=orcid, other=holder)
                )
            # A curator says these are a new person though their iD is another
            # researcher's (a source's mistake, or a detach from it): the iD
            # stays where it is, as in a split (edits.split_off).
            orcid = None
        target = change.create_researcher(
            display_name=display, block_key=names.block_key(given, family), orcid=orcid
        )
        Proposal.objects.filter(pk=proposal.pk).update(researcher=target)
        proposal.researcher = target
        change.move(authorships, target)
        must.append((target, authorships))
    else:
        survivor = researchers[min(ids)]
        extra = {"kept": edits.held_by(survivor)}
        moved = edits.merge_into(change, survivor, [researchers[max(ids)]])
        must.append((survivor, moved))
        edits.confirm_kept(change, survivor, extra["kept"])
    if actor is None:
        # The matcher's placement, not a curator's word: no must-links.
        must = []
        extra = {
            **(extra or {}),
            "by": "the matcher",
            "policy": (policy or auto_apply.policy()).describe(),
            "model_version": proposal.model_version,
        }
    # (A split writes its own must-links and cannot-links in split_off.)
    for target, moved in must:
        for a in moved:
            change.constrain(Constraint.Kind.MUST_LINK, target, authorship=a)
    return transition(
        proposal=proposal,
        new=S.APPLIED,
        actor=actor,
        event_kind=CurationEvent.Kind.PROPOSAL_APPLIED,
        change=change,
        batch=batch,
        extra=extra,
    )


def proposal_apply(
    *,
    proposal: Proposal,
    actor: AbstractBaseUser | None,
    batch: CurationEvent | None = None,
    split_ids: list[int] | None = None,
    policy: auto_apply.Policy | None = None,
) -> Proposal:
    """Apply a proposal: move the authorships, write the event and the constraints.

    A curator's approval confirms the slots it places (must-links every later
    run obeys: "checked by a curator"). Automation's (``actor`` None, the
    auto-apply policy) writes none: its placements stay the matcher's, which
    a later run may propose to change and a curator may still confirm; its
    event names the matcher, the policy and the model version.

    One transaction; the proposal row and the researchers it touches are locked
    (``select_for_update``) and every assignment changes by compare-and-swap, so two
    curators deciding at once get one success and one clear error, never half a change.

    Args:
        proposal: a pending (or approved) proposal.
        actor: the curator, or None for automation (the auto-apply policy).
        batch: the bulk action's ``batch`` event that this decision belongs to.
        split_ids: for a ``split``, "approve with changes": the authorship ids
            (of the researcher) to move instead of the proposed partition.
        policy: for automation, the policy that applies it (recorded on the
            event); None for a curator.

    Returns:
        The proposal, now ``applied``.

    Raises:
        ProposalNotPending: it was decided already.
        ProposalStale: its authorships or researchers changed since it was made
            (the proposal is then marked ``stale``, with an event).
        ResearcherLocked: automation (``actor is None``) touched a locked researcher.
        ResearcherConflict: a merge would join two different ORCID iDs, or
            automation would make a second researcher of an ORCID iD.
        InvalidChange: an edited split partition is empty or takes everything.
        ProposalConflict: a concurrent change won the race.
    """
    with transaction.atomic():
        locked = lock_proposal(proposal)
        outcome = _apply(locked, actor, batch=batch, split_ids=split_ids, policy=policy)
        if isinstance(outcome, CurationEvent):
            return locked
        transition(
            proposal=locked,
            new=S.STALE,
            actor=actor,
            event_kind=CurationEvent.Kind.PROPOSAL_STALE,
            batch=batch,
            extra={"reason": outcome},
        )
    raise ProposalStale(STALE.format(pk=proposal.pk, reason=outcome))


@transaction.atomic
def proposal_reject(
    *,
    proposal: Proposal,
    actor: AbstractBaseUser | None,
    reason: str = "",
    batch: CurationEvent | None = None,
) -> Proposal:
    """Reject a proposal; record cannot-link constraints so it never comes back.

    An ``attach`` rejection forbids each authorship/researcher pair; a ``merge``
    rejection forbids the researcher pair; a ``split`` rejection confirms every
    authorship the researcher holds now on it (must-links: one person); a
    ``new`` rejection keeps its fingerprint from being proposed again.

    Args:
        proposal: a pending proposal.
        actor: the curator.
        reason: optional free text kept on the proposal and the event.
        batch: the bulk action's ``batch`` event that this decision belongs to.

    Returns:
        The proposal, now ``rejected``.

    Raises:
        ProposalNotPending: it was decided already.
        ProposalConflict: a concurrent change won the race.
    """
    locked = lock_proposal(proposal)
    change = Change(actor=actor)
    if locked.kind == Proposal.Kind.ATTACH and locked.researcher_id:
        for a in locked.authorships.all():
            change.constrain(
                Constraint.Kind.CANNOT_LINK, locked.researcher_id, authorship=a
            )
    elif locked.kind == Proposal.Kind.MERGE:
        change.constrain(
            Constraint.Kind.CANNOT_LINK,
            locked.researcher_id,
            other=locked.other_researcher_id,
        )
    elif locked.kind == Proposal.Kind.SPLIT and locked.researcher_id:
        # "This is one person": every authorship the researcher holds now is
        # confirmed on it, so no later run proposes splitting any part of them
        # off (only papers that arrive later can be flagged again).
        for a in Authorship.objects.filter(researcher_id=locked.researcher_id):
            change.constrain(
                Constraint.Kind.MUST_LINK, locked.researcher_id, authorship=a
            )
    transition(
        proposal=locked,
        new=S.REJECTED,
        actor=actor,
        event_kind=CurationEvent.Kind.PROPOSAL_REJECTED,
        change=change,
        batch=batch,
        extra={"reason": reason},
    )
    return locked
