"""The curators' direct edits: merge, split, move, detach, lock and edit a
researcher, each one service and one transaction.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from curation.changes import Change
from curation.edits.locks import (
    _check_revisions,
    _lock_authorship_and_researchers,
    _locked_authorships,
)
from curation.edits.renames import named_by_their_papers, renamed_after_papers
from curation.edits.retire import retire_emptied
from curation.edits.steps import (
    EDITABLE_FIELDS,
    MAX_DISPLAY_NAME,
    clean_display_name,
    confirm_kept,
    held_by,
    merge_into,
    merged_in,
    split_off,
)
from curation.exceptions import (
    ALREADY,
    CHANGED,
    IDENTIFIER_TAKEN,
    INVALID,
    MERGE_NEEDS_TWO,
    NOT_ASSIGNED,
    NOT_ON_RESEARCHER,
    SAME_RESEARCHER,
    InvalidChange,
    ProposalConflict,
    ResearcherChanged,
    ResearcherConflict,
)
from curation.models import Constraint, CurationEvent
from wovepaper.identifiers import NORMALISERS
from wovepaper.models import Authorship, Researcher
from wovepaper.text import slug_for

MUST, CANNOT = Constraint.Kind.MUST_LINK, Constraint.Kind.CANNOT_LINK


@transaction.atomic
def researcher_merge(
    *,
    researchers: list[Researcher],
    actor: AbstractBaseUser,
    expected_revisions: dict[int, int] | None = None,
    batch: CurationEvent | None = None,
) -> Researcher:
    """Merge two or more researchers into the one with the lowest id.

    The others get ``merged_into`` (their URLs redirect to the survivor) and every
    authorship they held moves to the survivor with a must-link constraint; any
    earlier cannot-link between them is retired.

    Args:
        researchers: two or more live researchers.
        actor: the curator.
        expected_revisions: ``{researcher id: revision}`` as the curator saw them
            on the confirmation page; None accepts the current state.
        batch: the ``batch`` event of the review it is part of, if any.

    Returns:
        The survivor.

    Raises:
        InvalidChange: fewer than two distinct researchers.
        ResearcherGone: one was merged away or retired meanwhile.
        ResearcherChanged: one changed since the curator looked at it.
        ResearcherConflict: they carry different ORCID iDs or source author ids.
        ProposalConflict: an authorship moved concurrently.
    """
    ids = sorted({r.pk for r in researchers})
    if len(ids) < 2:
        raise InvalidChange(MERGE_NEEDS_TWO.format(ids=ids))
    change = Change(actor=actor)
    locked = change.lock(ids)
    _check_revisions(locked, expected_revisions)
    survivor, losers = locked[ids[0]], [locked[pk] for pk in ids[1:]]
    kept = held_by(survivor)
    moved = merge_into(change, survivor, losers)
    for a in moved:
        change.constrain(MUST, survivor, authorship=a)
    confirm_kept(change, survivor, kept)
    change.commit(
        kind=CurationEvent.Kind.MERGED,
        batch=batch,
        extra={"survivor": survivor.pk, "kept": kept},
    )
    return survivor


@transaction.atomic
def researcher_split(
    *,
    researcher: Researcher,
    authorship_ids: list[int],
    actor: AbstractBaseUser,
    display_name: str = "",
    expected_revision: int | None = None,
    batch: CurationEvent | None = None,
    whole: bool = False,
) -> Researcher:
    """Split the chosen authorships off a researcher into a new researcher.

    Args:
        researcher: the live researcher that holds two people.
        authorship_ids: the authorships (of ``researcher``) that are the other
            person; at least one, not all.
        actor: the curator.
        display_name: the new researcher's name; by default the fullest printed
            name among the moved authorships.
        expected_revision: the researcher's revision as the curator saw it.
        batch: the ``batch`` event of the review it is part of, if any.
        whole: all its authorships may go (a block review, which retires
            the profile it emptied at its end); otherwise that is refused.

    Returns:
        The new researcher.

    Raises:
        ResearcherChanged: it changed since the curator looked at it.
        ResearcherGone, InvalidChange, ProposalConflict: see :func:`split_off`.
    """
    change = Change(actor=actor)
    # Those merged into it are locked with it, in one id order: the split may
    # move them with their papers (split_off).
    change.lock([researcher.pk, *merged_in(researcher.pk)], live=False)
    locked = change.lock([researcher.pk])  # refuses a merged-away or retired one
    if expected_revision is not None:
        _check_revisions(locked, {researcher.pk: expected_revision})
    source = locked[researcher.pk]
    authorships = _locked_authorships(authorship_ids)
    missing = sorted(set(authorship_ids) - {a.pk for a in authorships})
    if missing:
        raise ProposalConflict(NOT_ON_RESEARCHER.format(ids=missing, pk=source.pk))
    target = split_off(
        change, source, authorships, display_name=display_name, whole=whole
    )
    change.commit(
        kind=CurationEvent.Kind.SPLIT,
        batch=batch,
        extra={"source": source.pk, "new": target.pk},
    )
    return target


@transaction.atomic
def authorship_move(
    *,
    authorship: Authorship,
    to: Researcher,
    actor: AbstractBaseUser,
    expected_researcher: int | None | str = "current",
    batch: CurationEvent | None = None,
) -> CurationEvent:
    """Move one authorship to another researcher ("this paper is that person's").

    The authorship gets must-link to ``to`` and cannot-link to the researcher it
    left; constraints that said the opposite (cannot-link to ``to``, must-link to
    the old one) are retired. The researcher it left is retired in the same
    event when it holds no other paper (:func:`retire_emptied`; in a review,
    once at its end), and renamed after the papers it keeps when none of them
    prints its name any more (:mod:`curation.edits.renames`; in a review,
    once at its end too).

    Args:
        authorship: the authorship.
        to: a live researcher.
        actor: the curator.
        expected_researcher: the researcher id the curator saw it on (None for
            unassigned); the default accepts whatever it is on now.
        batch: the ``batch`` event of the review it is part of, if any.

    Returns:
        The ``moved`` event (``extra["retired"]``: the ids retired, if any).

    Raises:
        InvalidChange: it is already on ``to``.
        ResearcherGone: ``to`` or its current researcher is merged away.
        ResearcherChanged: it is no longer where the curator saw it.
    """
    change = Change(actor=actor)
    current, locked = _lock_authorship_and_researchers(
        change, authorship, extra=[to.pk]
    )
    _check_expected(current, expected_researcher)
    if current.researcher_id == to.pk:
        raise InvalidChange(SAME_RESEARCHER.format(a=current.pk, pk=to.pk))
    old = current.researcher_id
    # A review renames what it moved papers off once, at its end
    # (researchers_renamed): a later step may move papers back.
    named = named_by_their_papers([old]) if old and batch is None else set()
    change.move([current], locked[to.pk])
    if old:
        change.set(
            locked[old],
            name_variants=_variants_without(locked[old], current),
            **(renamed_after_papers(locked[old]) if old in named else {}),
        )
    change.retire_constraints(
        Constraint.objects.filter(authorship=current).filter(
            Q(kind=CANNOT, researcher_id=to.pk) | Q(kind=MUST, researcher_id=old)
        )
    )
    change.constrain(MUST, to.pk, authorship=current)
    if old:
        change.constrain(CANNOT, old, authorship=current)
    # A review retires what it emptied once, at its end
    # (researchers_retire_emptied): a later step of it may name this profile.
    retired = retire_emptied(change, {old} if old and batch is None else set())
    return change.commit(
        kind=CurationEvent.Kind.MOVED,
        batch=batch,
        extra={"authorship": current.pk} | ({"retired": retired} if retired else {}),
    )


@transaction.atomic
def authorship_detach(
    *,
    authorship: Authorship,
    actor: AbstractBaseUser,
    expected_researcher: int | None | str = "current",
) -> CurationEvent:
    """Detach an authorship from its researcher ("not this person").

    It becomes unassigned with a cannot-link to that researcher, so the next
    matching run proposes another home for it but never this one. The
    researcher is retired in the same event when it holds no other paper
    (:func:`retire_emptied`), and renamed after the papers it keeps when
    none of them prints its name any more
    (:mod:`curation.edits.renames`).

    Returns:
        The ``detached`` event (``extra["retired"]``: the id retired, if any).

    Raises:
        InvalidChange: it is not assigned.
        ResearcherChanged: it is no longer where the curator saw it.
    """
    change = Change(actor=actor)
    current, locked = _lock_authorship_and_researchers(change, authorship, live=False)
    _check_expected(current, expected_researcher)
    if current.researcher_id is None:
        raise InvalidChange(NOT_ASSIGNED.format(a=current.pk))
    old = locked[current.researcher_id]
    named = named_by_their_papers([old.pk])
    change.move([current], None)
    change.set(
        old,
        name_variants=_variants_without(old, current),
        **(renamed_after_papers(old) if old.pk in named else {}),
    )
    change.retire_constraints(
        Constraint.objects.filter(authorship=current, kind=MUST, researcher=old)
    )
    change.constrain(CANNOT, old, authorship=current)
    retired = retire_emptied(change, {old.pk})
    return change.commit(
        kind=CurationEvent.Kind.DETACHED,
        extra={"authorship": current.pk} | ({"retired": retired} if retired else {}),
    )


@transaction.atomic
def researcher_set_locked(
    *, researcher: Researcher, locked: bool, actor: AbstractBaseUser
) -> Researcher:
    """Lock (curator-confirmed: automation never changes it) or unlock a researcher.

    Raises:
        InvalidChange: it is already in that state.
        ResearcherGone: it was merged away.
    """
    change = Change(actor=actor)
    current = change.lock([researcher.pk])[researcher.pk]
    if current.locked == locked:
        state = "locked" if locked else "unlocked"
        raise InvalidChange(ALREADY.format(pk=current.pk, state=state))
    change.set(current, locked=locked)
    kind = CurationEvent.Kind.LOCKED if locked else CurationEvent.Kind.UNLOCKED
    change.commit(kind=kind)
    return current


@transaction.atomic
def researcher_update(
    *,
    researcher: Researcher,
    actor: AbstractBaseUser,
    changes: dict[str, str | None],
    expected: dict[str, Any] | None = None,
) -> Researcher:
    """Edit the display name and add, change or remove identifiers.

    Args:
        researcher: a live researcher.
        actor: the curator.
        changes: ``{field: value}`` over ``display_name``, ``orcid``,
            ``s2_author_id``, ``openalex_author_id``; ``None`` or "" removes an
            identifier; identifiers may be given as URLs.
        expected: the values the curator saw (``{field: value}``); if one differs
            now, someone else edited the researcher meanwhile.

    Returns:
        The researcher, edited.

    Raises:
        InvalidChange: an unknown field, an empty or over-long name, an invalid iD.
        ResearcherConflict: the iD belongs to another researcher.
        ResearcherChanged: it changed since the curator loaded it.
        ResearcherGone: it was merged away.
    """
    change = Change(actor=actor)
    current = change.lock([researcher.pk])[researcher.pk]
    for field, seen in (expected or {}).items():
        if getattr(current, field) != seen:
            raise ResearcherChanged(CHANGED.format(pk=current.pk, field=field))
    clean: dict[str, Any] = {}
    for field, value in changes.items():
        if field not in EDITABLE_FIELDS:
            raise InvalidChange(
                INVALID.format(pk=current.pk, problem=f"{field} is not editable")
            )
        clean[field] = _clean_value(current, field, value)
    if "display_name" in clean:
        clean["slug"] = slug_for(clean["display_name"], fallback="researcher")
    if not any(getattr(current, f) != v for f, v in clean.items()):
        return current
    change.set(current, **clean)
    change.commit(kind=CurationEvent.Kind.EDITED)
    return current


def _clean_value(researcher: Researcher, field: str, value: str | None) -> Any:
    if field == "display_name":
        name = clean_display_name(value)
        if not name or len(name) > MAX_DISPLAY_NAME:
            raise InvalidChange(
                INVALID.format(
                    pk=researcher.pk,
                    problem=f"display name must be 1 to {MAX_DISPLAY_NAME} characters",
                )
            )
        return name
    if not value or not value.strip():
        return None
    try:
        normal = NORMALISERS[field](value)
    except ValueError as exc:
        raise InvalidChange(INVALID.format(pk=researcher.pk, problem=exc)) from exc
    other = (
        Researcher.objects.filter(**{field: normal})
        .exclude(pk=researcher.pk)
        .values_list("pk", flat=True)
        .first()
    )
    if other:
        raise ResearcherConflict(
            IDENTIFIER_TAKEN.format(field=field, value=normal, other=other)
        )
    return normal


def _check_expected(authorship: Authorship, expected: int | None | str) -> None:
    if expected != "current" and authorship.researcher_id != expected:
        raise ResearcherChanged(
            CHANGED.format(
                pk=expected, field=f"authorship {authorship.pk} moved meanwhile"
            )
        )


def _variants_without(researcher: Researcher, leaving: Authorship) -> list[str]:
    """Name variants still printed on the researcher's other authorships."""
    still = set(
        Authorship.objects.filter(researcher=researcher)
        .exclude(pk=leaving.pk)
        .values_list("raw_name", flat=True)
    )
    return [v for v in researcher.name_variants if v in still]
