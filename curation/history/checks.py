"""What an undo would do or forbid, before it is tried: the refusal
(:func:`undo_refusal`), the preview, the pairs an undone merge parts, and the
decision a proposal returns to.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from curation.changes import Change
from curation.edits import IDENTIFIER_FIELDS
from curation.exceptions import (
    NOTHING_LEFT_TO_UNDO,
    UNDO_CLAIM_PENDING,
    UNDO_CLAIMED,
    UNDO_DEAD,
    UNDO_HOLDS,
    UNDO_PENDING_TWIN,
    UNDO_TAKEN,
    UNREADABLE_EVENT,
    CurationError,
    UndoConflict,
)
from curation.history.reads import _is_id_text, is_id, unreadable
from curation.models import ClaimRequest, Constraint, CurationEvent, Proposal
from wovepaper.models import Authorship, Researcher


def _split_gone(
    event: CurationEvent, existing: set[int]
) -> tuple[list[int], list[dict]]:
    """``(ids of the authorships the event moved that are not in ``existing``,
    sorted; its moves of those that are)``."""
    gone = sorted({m["authorship"] for m in event.moves} - existing)
    return gone, [m for m in event.moves if m["authorship"] in existing]


def _nothing_left(event: CurationEvent, gone: list[int], moves: list[dict]) -> bool:
    """Whether an event whose moved authorships ``gone`` no longer exist has
    nothing else to undo: no move left, no field set (``name_variants`` is
    derived from the authorships held, and so is the retirement of a profile
    the moves emptied, with the identifiers it freed), no constraint left."""
    return bool(
        gone
        and not moves
        and all(
            set(f) <= {"name_variants"}
            # A profile the move emptied and retired (edits.retire_emptied)
            # stays retired: the papers it would hold again are gone.
            or (
                set(f) <= {"name_variants", "retired", *IDENTIFIER_FIELDS}
                and f.get("retired") == [False, True]
            )
            for f in event.fields.values()
        )
        and not Constraint.objects.filter(
            pk__in=[*event.constraints_on, *event.constraints_off]
        ).exists()
    )


class _TriedOnly(Exception):
    """Rolls back an undo :func:`undo_refusal` only tried."""


def undo_refusal(undo: Callable[[], object]) -> str:
    """Why an undo would be refused now, or "": ``undo`` (an
    :func:`event_undo` or :func:`batch_undo` call) is run in a transaction
    that is then rolled back, so its confirmation page says what the click
    would, before it (a curator read "Yes, undo it" and then the refusal:
    a new user's trial). Must not run inside an outer transaction that
    other work shares.

    Returns:
        The :class:`~curation.exceptions.CurationError` message, or "".
    """
    try:
        with transaction.atomic():
            undo()
            raise _TriedOnly
    except _TriedOnly:
        return ""
    except CurationError as exc:
        return str(exc)


def undo_preview(*, event: CurationEvent) -> tuple[list[int], str]:
    """What an undo of ``event`` would leave out, for its confirmation page.

    Args:
        event: the event a curator is about to undo.

    Returns:
        ``(ids of the authorships it moved that no longer exist, sorted; the
        reason nothing is left to undo, or "")``; a record an undo cannot
        read (:func:`unreadable`) gives ``([], why)``.
    """
    problem = unreadable(event)
    if problem:
        return [], UNREADABLE_EVENT.format(pk=event.pk, problem=problem)
    ids = [m["authorship"] for m in event.moves]
    gone, moves = _split_gone(
        event, set(Authorship.objects.filter(pk__in=ids).values_list("pk", flat=True))
    )
    if _nothing_left(event, gone, moves):
        return gone, NOTHING_LEFT_TO_UNDO.format(
            pk=event.pk, kind=event.get_kind_display(), ids=", ".join(map(str, gone))
        )
    return gone, ""


def _check_outcome(
    original: CurationEvent,
    moves: list[dict],
    locked: dict[int, Researcher],
    restores: list[tuple[bool, int, str, object, object]],
) -> None:
    """Refuse an undo whose result would break an invariant later changes rely on.

    After the undo, every authorship it moves back must land on a live researcher,
    a researcher it retires or merges away must hold nothing, and an identifier it
    restores must not belong to another researcher.

    Args:
        original: the event undone.
        moves: its moves whose authorships still exist.
        locked: the researchers it touched, locked.
        restores: ``(prior value set, researcher id, field, before, after)``
            of each field it set.

    Raises:
        UndoConflict: naming the authorship, researcher or identifier.
    """
    final = {
        pk: {
            "merged_into_id": r.merged_into_id,
            "retired": r.retired,
            "claimed_by_id": r.claimed_by_id,
        }
        for pk, r in locked.items()
    }
    for _, pk, field, before, _after in restores:
        if field in ("merged_into_id", "retired", "claimed_by_id"):
            final[pk][field] = before

    def how(pk: int) -> str:
        if final[pk]["merged_into_id"]:
            return f"merged into researcher {final[pk]['merged_into_id']}"
        return "retired" if final[pk]["retired"] else ""

    for m in moves:
        if m["before"] and how(m["before"]):
            raise UndoConflict(
                UNDO_DEAD.format(
                    pk=original.pk,
                    a=m["authorship"],
                    r=m["before"],
                    how=_how_named(m["before"], how(m["before"])),
                )
            )
    leaving = {m["authorship"] for m in moves}
    for pk in sorted(p for p in final if how(p)):
        if final[pk]["claimed_by_id"]:
            raise UndoConflict(UNDO_CLAIMED.format(pk=original.pk, r=pk, how=how(pk)))
        claim = (
            ClaimRequest.objects.filter(researcher_id=pk, status="pending")
            .values_list("pk", flat=True)
            .first()
        )
        if claim is not None and not locked[pk].retired and final[pk]["retired"]:
            # Retiring it again (a redo) would leave the claim nothing to
            # approve (a hostile trial).
            raise UndoConflict(
                UNDO_CLAIM_PENDING.format(
                    pk=original.pk, r=pk, how=how(pk), claim=claim
                )
            )
        stays = list(
            Authorship.objects.filter(researcher_id=pk)
            .exclude(pk__in=leaving)
            .values_list("pk", flat=True)[:10]
        )
        if stays:
            raise UndoConflict(
                UNDO_HOLDS.format(pk=original.pk, r=pk, how=how(pk), ids=stays)
            )
    cleared = {(pk, field) for _, pk, field, before, _ in restores if before is None}
    for _, pk, field, before, _after in restores:
        if field not in IDENTIFIER_FIELDS or before is None:
            continue
        holders = [
            other
            for other in Researcher.objects.filter(**{field: before})
            .exclude(pk=pk)
            .values_list("pk", flat=True)
            if (other, field) not in cleared
        ]
        if holders:
            raise UndoConflict(
                UNDO_TAKEN.format(
                    pk=original.pk, field=field, value=before, r=pk, other=holders[0]
                )
            )


def _how_named(pk: int, how: str) -> str:
    """``how`` researcher ``pk`` is not live, naming the change to undo first
    when it was retired: the latest event that retired it (a review's
    ``retired`` event, say), which the curator can undo from History."""
    event = retiring_event(pk) if how == "retired" else None
    if event is None:
        return how
    return f"retired (by event {event.pk}, {event.get_kind_display()})"


# How many of a researcher's latest field-setting events retiring_event
# reads: a profile's history holds a few dozen at most.
RETIREMENT_EVENTS_READ = 100


def retiring_event(researcher_id: int) -> CurationEvent | None:
    """The latest event that set researcher ``researcher_id``'s ``retired``
    from False to True (of its latest :data:`RETIREMENT_EVENTS_READ` that
    set a field), or None."""
    key = str(researcher_id)
    events = CurationEvent.objects.filter(fields__has_key=key).order_by("-pk")
    for event in events[:RETIREMENT_EVENTS_READ]:
        mine = event.fields.get(key) if isinstance(event.fields, dict) else None
        if isinstance(mine, dict) and mine.get("retired") == [False, True]:
            return event
    return None


def _restore_variants(
    change: Change, researcher: Researcher, before: list[str], after: list[str]
) -> None:
    """Restore the prior name variants, or, if a later change altered them, the
    variants printed on the authorships the researcher holds now."""
    held = list(
        Authorship.objects.filter(researcher=researcher)
        .values_list("raw_name", flat=True)
        .distinct()
        .order_by("raw_name")
    )
    # What the researcher showed before this undo's own moves added to it.
    now = change.fields.get(str(researcher.pk), {}).get(
        "name_variants", [researcher.name_variants]
    )[0]
    if now != after:
        kept = [v for v in now if v in held]
        before = kept + [v for v in held if v not in kept]
    change.set(researcher, name_variants=before)


def _forbid_undone_attach(
    change: Change, original: CurationEvent, moves: list[dict]
) -> None:
    """Record a cannot-link for each authorship an undone attach had moved.

    Undoing an applied ``attach`` is the curator's word that the authorship is
    not that researcher's, as a rejection is (:func:`curation.services.
    proposal_reject`). The proposal goes ``reverted``, so its fingerprint is not
    proposed again; without the constraint the matcher would cluster the
    authorship with the same researcher again, draft that same fingerprint,
    drop it, and leave the authorship with no proposal at all (hostile trial,
    stop 39). With it, the next run offers the authorship to another
    researcher or as a new person. The constraints are written with the undo
    event, so undoing the undo retires them. ``moves``: the moves being undone
    (those whose authorship still exists).
    """
    researcher = undo_forbids(event=original)
    for m in moves:
        if researcher and m["before"] is None and m["after"] == researcher:
            change.constrain(
                Constraint.Kind.CANNOT_LINK, researcher, authorship=m["authorship"]
            )


def undo_forbids(*, event: CurationEvent) -> int | None:
    """The researcher an undo of ``event`` forbids its authorships, or None.

    Args:
        event: an event a curator undoes or is about to undo.

    Returns:
        The id of the researcher of an applied ``attach`` proposal (an undo
        records a cannot-link for each authorship the attach moved onto it,
        :func:`_forbid_undone_attach`); None for any other event.
    """
    if event.kind != CurationEvent.Kind.PROPOSAL_APPLIED or not event.proposal_id:
        return None
    proposal = event.proposal
    if proposal.kind != Proposal.Kind.ATTACH:
        return None
    return proposal.researcher_id


def event_undone(*, event_id: int) -> bool:
    """Whether an event's effect is undone now: its latest undo stands (is
    not itself undone). One query per link of the undo chain.

    For what cannot be read from rows: a departed byline slot's constraints
    (:class:`harvest.models.DepartedSlot`) were off the database while an
    undo of their event ran."""
    undo = (
        CurationEvent.objects.filter(undoes_id=event_id)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    return undo is not None and not event_undone(event_id=undo)


def undone_merge_pairs(*, event: CurationEvent) -> list[tuple[int, int]]:
    """The researcher pairs an undo of ``event`` says are not one person.

    Undoing a merge (a curator's direct merge, or an applied ``merge``
    proposal) is the curator's word that the researchers it joined are two
    people, as rejecting a merge proposal is: each pair of them gets a
    cannot-link, written with the undo event (so undoing the undo retires
    it). An undone proposal goes ``reverted`` and is not proposed again,
    but a direct merge has no proposal: a hostile trial had the next run
    propose the same merge on an ORCID iD the survivor's papers carried
    and the identifier policy apply it, reversing the undo.

    Args:
        event: an event a curator undoes or is about to undo.

    Returns:
        ``[(lower id, higher id)]`` of the survivor and each researcher
        merged into it, and of those among themselves; ``[]`` for any event
        but a merge.
    """
    if event.kind not in (
        CurationEvent.Kind.MERGED,
        CurationEvent.Kind.PROPOSAL_APPLIED,
    ):
        return []
    joined: set[int] = set()
    for pk, fields in event.fields.items():
        change = fields.get("merged_into_id") if isinstance(fields, dict) else None
        if (
            isinstance(change, list | tuple)
            and len(change) == 2
            and change[0] is None
            and is_id(change[1])
            and _is_id_text(pk)
        ):
            joined |= {int(pk), change[1]}
    ids = sorted(joined)
    return [(a, b) for n, a in enumerate(ids) for b in ids[n + 1 :]]


def undo_would_forbid(*, event: CurationEvent) -> int | None:
    """What the confirmation page of an undo of ``event`` says it forbids:
    the researcher of :func:`undo_forbids`, when the event is not undone
    already and one of the authorships it moved is still on that researcher
    (else the undo is refused, or has nothing of it to undo); None
    otherwise. One query at most."""
    researcher = undo_forbids(event=event)
    if researcher is None or event.undone_by.exists():
        return None
    moved = [m["authorship"] for m in event.moves if m["after"] == researcher]
    if Authorship.objects.filter(pk__in=moved, researcher_id=researcher).exists():
        return researcher
    return None


def decision_after_undo(*, event: CurationEvent) -> tuple[int, str] | None:
    """What an undo of ``event`` does to the proposal it decided, for the
    undo page and its message (:func:`_revert_decision` does it).

    Returns:
        ``(proposal id, status it takes)``: an applied proposal goes
        ``reverted``, a rejected one back to ``pending`` (the queue); an
        undo of such an undo the other way; None for an event that decided
        no proposal. One query per link of the undo chain.
    """
    return _decision_of(*event.undo_chain_root())


def _decision_of(first: CurationEvent, redo: bool) -> tuple[int, str] | None:
    """:func:`decision_after_undo` from the event the undo chain starts
    from and whether the undo redoes it."""
    if not first.proposal_id:
        return None
    if first.kind == CurationEvent.Kind.PROPOSAL_APPLIED:
        return first.proposal_id, "applied" if redo else "reverted"
    if first.kind == CurationEvent.Kind.PROPOSAL_REJECTED:
        return first.proposal_id, "rejected" if redo else "pending"
    return None


def _revert_decision(original: CurationEvent) -> None:
    """Keep the proposal's or claim's status in step with the undo."""
    first, redo = original.undo_chain_root()
    decided = _decision_of(first, redo)
    if decided is not None:
        pk, new = decided
        old = {
            Proposal.Status.REVERTED: Proposal.Status.APPLIED,
            Proposal.Status.APPLIED: Proposal.Status.REVERTED,
            Proposal.Status.PENDING: Proposal.Status.REJECTED,
            Proposal.Status.REJECTED: Proposal.Status.PENDING,
        }[new]
        if new == Proposal.Status.PENDING:
            proposal = Proposal.objects.get(pk=pk)
            if Proposal.objects.filter(
                fingerprint=proposal.fingerprint, status=Proposal.Status.PENDING
            ).exists():
                raise UndoConflict(
                    UNDO_PENDING_TWIN.format(pk=original.pk, proposal=proposal.pk)
                )
        Proposal.objects.filter(pk=pk, status=old).update(status=new)
    claim = first.extra.get("claim")
    if claim and first.kind == CurationEvent.Kind.CLAIM_APPROVED:
        old, new = (
            (ClaimRequest.Status.PENDING, ClaimRequest.Status.APPROVED)
            if redo
            else (ClaimRequest.Status.APPROVED, ClaimRequest.Status.PENDING)
        )
        ClaimRequest.objects.filter(pk=claim, status=old).update(status=new)
