"""Curators' direct edits of researchers: merge, split, move, detach, lock, edit.

Each public function is one service: one transaction, the researchers it touches
locked ``FOR UPDATE``, assignments changed by compare-and-swap, one CurationEvent
with the before and after of everything changed, and the constraints that keep the
decision in force for every later matching run, written in the same transaction.
Curators may edit locked researchers (a lock stops automation, not curators).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from curation import names
from curation.changes import Change
from curation.exceptions import (
    ALREADY,
    CHANGED,
    CLAIMED_BY_TWO,
    IDENTIFIER_TAKEN,
    IDENTIFIERS_DIFFER,
    INVALID,
    MERGE_NEEDS_TWO,
    NOT_ASSIGNED,
    NOT_ON_RESEARCHER,
    SAME_RESEARCHER,
    SPLIT_ALL,
    SPLIT_EMPTY,
    InvalidChange,
    ProposalConflict,
    ResearcherChanged,
    ResearcherConflict,
)
from curation.models import ClaimRequest, Constraint, CurationEvent
from wovepaper.identifiers import NORMALISERS
from wovepaper.models import Authorship, Researcher
from wovepaper.text import slug_for

IDENTIFIER_FIELDS = ("orcid", "s2_author_id", "openalex_author_id")
EDITABLE_FIELDS = ("display_name", *IDENTIFIER_FIELDS)
MAX_DISPLAY_NAME = 300
MUST, CANNOT = Constraint.Kind.MUST_LINK, Constraint.Kind.CANNOT_LINK


# --- shared by the direct edits and the proposals ----------------------------


def clean_display_name(value: str | None) -> str:
    """A name as typed, without control or invisible format characters (Unicode
    categories Cc, Cf, Zl, Zp: NUL, zero-width spaces, direction marks), with its
    whitespace collapsed; "" when nothing visible is left."""
    kept = "".join(
        ch
        for ch in value or ""
        if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") or ch in "\t\n"
    )
    return " ".join(kept.split())


def display_name_of(authorships: list[Authorship]) -> tuple[str, str, str]:
    """The fullest printed name among authorships: ``(display, given, family)``.

    The display name is cut to :data:`MAX_DISPLAY_NAME` characters (a byline
    slot holds up to 500: a source's run-on author string must not make the
    researcher it founds impossible to save), and cleaned as a curator's
    edit is (:func:`clean_display_name`): a source's zero-width space or
    right-to-left override must not reach the profile's heading, where an
    override reverses the text after it.
    """
    best = max(authorships, key=lambda a: (len(a.given_name.replace(".", "")), -a.pk))
    display = clean_display_name(f"{best.given_name} {best.family_name}")
    display = display or clean_display_name(best.raw_name) or best.raw_name.strip()
    return display[:MAX_DISPLAY_NAME].strip(), best.given_name, best.family_name


def merge_into(
    change: Change, survivor: Researcher, losers: list[Researcher]
) -> list[Authorship]:
    """Move every authorship of ``losers`` to ``survivor``; losers get ``merged_into``.

    Identifiers the survivor lacks move over from a loser; name variants join.
    Researchers must be locked by ``change``.

    Returns:
        The authorships moved.

    Raises:
        ResearcherConflict: two of them carry different values of one identifier.
    """
    for field in IDENTIFIER_FIELDS:
        values = {
            r.pk: getattr(r, field) for r in [survivor, *losers] if getattr(r, field)
        }
        if len(set(values.values())) > 1:
            (a, va), (b, vb) = sorted(values.items())[:2]
            raise ResearcherConflict(
                IDENTIFIERS_DIFFER.format(a=a, b=b, field=field, va=va, vb=vb)
            )
    moved: list[Authorship] = []
    for loser in losers:
        authorships = list(
            Authorship.objects.select_for_update()
            .filter(researcher=loser)
            .order_by("pk")
        )
        change.move(authorships, survivor)
        moved += authorships
        taken = {
            field: getattr(loser, field)
            for field in IDENTIFIER_FIELDS
            if getattr(loser, field) and not getattr(survivor, field)
        }
        if loser.claimed_by_id and survivor.claimed_by_id not in (
            None,
            loser.claimed_by_id,
        ):
            raise ResearcherConflict(CLAIMED_BY_TWO.format(a=survivor.pk, b=loser.pk))
        # The person's claim and a curator's lock follow the papers.
        if loser.claimed_by_id:
            taken["claimed_by_id"] = loser.claimed_by_id
        if loser.locked:
            taken["locked"] = True
        # Free the unique iD on the loser before the survivor takes it.
        change.set(
            loser,
            merged_into_id=survivor.pk,
            **dict.fromkeys(k for k in taken if k != "locked"),
        )
        change.set(
            survivor,
            name_variants=list(
                dict.fromkeys([*survivor.name_variants, *loser.name_variants])
            ),
            **taken,
        )
    # A curator's merge overrides an earlier "these are not one person".
    ids = [survivor.pk, *(r.pk for r in losers)]
    change.retire_constraints(
        Constraint.objects.filter(
            kind=CANNOT, researcher_id__in=ids, other_researcher_id__in=ids
        )
    )
    return moved


def split_off(
    change: Change,
    source: Researcher,
    authorships: list[Authorship],
    *,
    display_name: str = "",
    whole: bool = False,
) -> Researcher:
    """Move ``authorships`` off ``source`` to a new researcher; forbid moving back.

    The moved authorships get must-link to the new researcher and cannot-link to
    the source, and the pair a cannot-link, so no later matching run attaches them
    back or proposes merging the two.

    ``whole`` lets it take every authorship of ``source`` (a block review,
    which retires what it emptied at its end).

    Returns:
        The new researcher.

    Raises:
        InvalidChange: nothing to move, or it would move every authorship
            (unless ``whole``).
        ProposalConflict: an authorship is no longer on ``source``.
    """
    if not authorships:
        raise InvalidChange(SPLIT_EMPTY)
    elsewhere = [a.pk for a in authorships if a.researcher_id != source.pk]
    if elsewhere:
        raise ProposalConflict(NOT_ON_RESEARCHER.format(ids=elsewhere, pk=source.pk))
    moving = {a.pk for a in authorships}
    if (
        not whole
        and not Authorship.objects.filter(researcher=source)
        .exclude(pk__in=moving)
        .exists()
    ):
        raise InvalidChange(SPLIT_ALL.format(pk=source.pk))
    display, given, family = display_name_of(authorships)
    display = (clean_display_name(display_name) or display)[:MAX_DISPLAY_NAME]
    orcids = {a.orcid for a in authorships if a.orcid}
    orcid = orcids.pop() if len(orcids) == 1 else None
    if orcid and (
        orcid == source.orcid or Researcher.objects.filter(orcid=orcid).exists()
    ):
        orcid = None  # a taken iD stays where it is
    target = change.create_researcher(
        display_name=display, block_key=names.block_key(given, family), orcid=orcid
    )
    change.move(authorships, target)
    staying = list(Authorship.objects.filter(researcher=source).order_by("pk"))
    _merged_in_follow(change, source, target, moving, {a.pk for a in staying})
    renamed = {}
    # Emptied (``whole``), it keeps its name: it is retired, not renamed.
    if (
        staying
        and names.display_name_fits(
            source.display_name, [(a.given_name, a.family_name) for a in authorships]
        )
        and not names.display_name_fits(
            source.display_name, [(a.given_name, a.family_name) for a in staying]
        )
    ):
        # The person the profile was named after left with the moved part: the
        # profile takes the name its own papers print (its URL follows). A name
        # no paper prints (a curator's choice) stays.
        display, given, family = display_name_of(staying)
        renamed = {
            "display_name": display,
            "slug": slug_for(display, fallback="researcher"),
            "block_key": names.block_key(given, family),
        }
    change.set(
        source,
        name_variants=list(
            Authorship.objects.filter(researcher=source)
            .values_list("raw_name", flat=True)
            .distinct()
            .order_by("raw_name")
        ),
        **renamed,
    )
    for a in authorships:
        change.constrain(MUST, target, authorship=a)
        change.constrain(CANNOT, source, authorship=a)
    change.constrain(CANNOT, source, other=target)
    return target


# Merge chains are short (a survivor merged again later); past this depth
# the researchers merged in are not looked for (wovepaper.selectors caps
# its chains alike).
MERGE_DEPTH = 20
# The fields a merge hands from a merged-away researcher to its survivor and
# a split may hand back with its old id (merge_into).
_HANDED = (*IDENTIFIER_FIELDS, "claimed_by_id")


def confirm_kept(change: Change, survivor: Researcher, kept: list[int]) -> None:
    """A curator's merge says every paper of the profiles is one person's:
    the survivor's own slots (``kept``) are confirmed on it too, with
    must-links like those of the slots it took in, so the whole profile reads
    "checked by a curator" (the new-user trial found the survivor's own
    papers still "automatic" after a merge). Slots a curator confirmed there
    already are left as they are; the merge's undo retires these with the
    rest of its constraints."""
    if change.actor is None or not kept:
        return
    confirmed = set(
        Constraint.objects.filter(
            kind=MUST,
            active=True,
            researcher=survivor,
            authorship_id__in=kept,
            event__actor__isnull=False,
        ).values_list("authorship_id", flat=True)
    )
    for pk in kept:
        if pk not in confirmed:
            change.constrain(MUST, survivor, authorship=pk)


def held_by(researcher: Researcher) -> list[int]:
    """The ids of the authorships a researcher holds, ascending: what a merge
    records as its survivor's side (``extra["kept"]``), so that later runs know
    which authorships the curator saw joined (:func:`curation.selectors.
    curator_merges`). One query."""
    return list(
        Authorship.objects.filter(researcher=researcher)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def merged_in(researcher_id: int) -> list[int]:
    """The ids of the researchers whose merges lead to this one: merged into
    it, or into one merged into it, and so on; for a split to lock with it,
    in one id order (:meth:`Change.lock`). One query a link of the chains."""
    found: list[int] = []
    level = [researcher_id]
    for _ in range(MERGE_DEPTH):
        level = list(
            Researcher.objects.filter(merged_into_id__in=level).values_list(
                "pk", flat=True
            )
        )
        if not level:
            break
        found += level
    return found


def _merges_of(parents: dict[int, int]) -> dict[int, tuple[set[int], dict]]:
    """What the latest event merging each researcher into its parent
    (``{researcher id: the id it is merged into}``) and moving anything off
    it moved: a merge, an applied merge proposal, or a redo (an undone split
    sends a researcher back but moves nothing off it). One query for all.

    Returns:
        ``{researcher id: (authorship ids, {field: value it handed to the
        survivor})}``; ``(set(), {})`` for one no such event names.
    """
    kinds = (
        CurationEvent.Kind.MERGED,
        CurationEvent.Kind.PROPOSAL_APPLIED,
        CurationEvent.Kind.UNDONE,
    )
    found: dict[int, tuple[set[int], dict]] = {}
    events = (
        CurationEvent.objects.filter(
            kind__in=kinds, fields__has_any_keys=[str(pk) for pk in parents]
        )
        .order_by("-pk")
        .values_list("moves", "fields")
    )
    for moves, fields in events:
        if len(found) == len(parents):
            break
        for pk, into in parents.items():
            if pk in found or not isinstance(fields, dict):
                continue
            mine = fields.get(str(pk))
            merged = mine.get("merged_into_id") if isinstance(mine, dict) else None
            if not (isinstance(merged, list) and merged[-1:] == [into]):
                continue
            brought = {
                m.get("authorship")
                for m in moves
                if isinstance(m, dict) and m.get("before") == pk
            }
            if brought:
                handed = {
                    f: v[0]
                    for f, v in mine.items()
                    if f in _HANDED
                    and isinstance(v, list)
                    and len(v) == 2
                    and v[0]
                    and v[1] is None
                }
                found[pk] = (brought, handed)
    return {pk: found.get(pk, (set(), {})) for pk in parents}


def _merged_in_follow(
    change: Change,
    source: Researcher,
    target: Researcher,
    moving: set[int],
    staying: set[int],
) -> None:
    """A researcher merged into ``source`` (directly or along a chain) whose
    own authorships mostly leave with a split leads to ``target`` instead:
    its old id (its page, its followers, the API) goes with the person its
    papers went with, and so do the identifiers and the claim its merge
    handed over, where ``source`` still holds them and ``target`` has none.

    A follower of G. Ghisellini, merged into J. L. Bourjaily and split off
    again by a curator, followed Bourjaily from then on, and the split-off
    Ghisellini not at all (new-user trial). A researcher's own authorships
    are those its merge moved off it (:func:`_merges_of`) less those the
    researchers merged into it had brought (A merged into B, B into C: B's
    merge moved A's papers too). More of its own on ``target`` than on
    ``source``: it leads to ``target``; fewer: to ``source`` (re-pointed
    there if its chain now passes through ``target``); as many: as its chain
    leads. Each change is recorded in the event (the split's undo restores
    it). The researchers are locked with ``source`` by the callers
    (:func:`merged_in`); locked here again, they wait for nothing.
    """
    ids = merged_in(source.pk)
    if not ids:
        return
    locked = change.lock(ids, live=False)
    parent = {pk: r.merged_into_id for pk, r in locked.items()}
    merges = _merges_of(parent)
    below: dict[int, set[int]] = {}
    for pk, up in parent.items():
        below.setdefault(up, set()).update(merges[pk][0])
    way: dict[int, int | None] = {}
    for pk in locked:
        own = merges[pk][0] - below.get(pk, set())
        gone, kept = len(own & moving), len(own & staying)
        way[pk] = target.pk if gone > kept else source.pk if kept > gone else None

    def leads(pk: int) -> int:
        """Where ``pk``'s chain ends once the split has re-pointed it."""
        for _ in range(MERGE_DEPTH):
            if pk == source.pk or way.get(pk) is not None:
                return source.pk if pk == source.pk else way[pk]
            pk = parent[pk]
        return source.pk

    for pk in sorted(locked):
        if way[pk] is None or leads(parent[pk]) == way[pk]:
            continue
        change.set(locked[pk], merged_into_id=way[pk])
    for pk in sorted(locked):
        if way[pk] != target.pk:
            continue
        handed = {
            f: v
            for f, v in merges[pk][1].items()
            if getattr(source, f) == v and not getattr(target, f)
        }
        if handed:
            # Free the unique iD on the source before the target takes it.
            change.set(source, **dict.fromkeys(handed))
            change.set(target, **handed)


def _lock_authorship_and_researchers(
    change: Change,
    authorship: Authorship,
    *,
    extra: list[int] = (),
    live: bool = True,
) -> tuple[Authorship, dict[int, Researcher]]:
    """Lock researchers before the authorship, as every service does.

    One lock order everywhere (researchers by id, then authorships) is what keeps
    two curators from deadlocking; the authorship's researcher is read first
    without a lock and checked again once both are locked.

    Raises:
        ResearcherChanged: the authorship moved between the read and the lock.
    """
    seen = Authorship.objects.values_list("researcher_id", flat=True).get(
        pk=authorship.pk
    )
    locked = change.lock([r for r in (*extra, seen) if r], live=live)
    current = Authorship.objects.select_for_update().get(pk=authorship.pk)
    if current.researcher_id != seen:
        raise ResearcherChanged(
            CHANGED.format(pk=seen, field=f"authorship {current.pk} moved meanwhile")
        )
    return current, locked


def _check_revisions(
    researchers: dict[int, Researcher], expected: dict[int, int] | None
) -> None:
    """Refuse when a researcher changed since the curator looked at it."""
    for pk, revision in sorted((expected or {}).items()):
        now = researchers[pk].revision if pk in researchers else None
        if now is not None and now != revision:
            raise ResearcherChanged(
                CHANGED.format(pk=pk, field=f"revision {revision} is now {now}")
            )


def _locked_authorships(ids: list[int]) -> list[Authorship]:
    return list(
        Authorship.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    )


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


# --- the services --------------------------------------------------------------


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
    once at its end).

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
    change.move([current], locked[to.pk])
    if old:
        change.set(locked[old], name_variants=_variants_without(locked[old], current))
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
    (:func:`retire_emptied`).

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
    change.move([current], None)
    change.set(old, name_variants=_variants_without(old, current))
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
