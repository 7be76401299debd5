"""The steps a merge or a split takes, shared by the direct edits and the
proposals: display names, :func:`merge_into`, :func:`split_off`, what a
curator's merges hold together and who was merged in.
"""

from __future__ import annotations

import unicodedata

from curation import names
from curation.changes import Change
from curation.exceptions import (
    CLAIMED_BY_TWO,
    IDENTIFIERS_DIFFER,
    NOT_ON_RESEARCHER,
    SPLIT_ALL,
    SPLIT_EMPTY,
    InvalidChange,
    ProposalConflict,
    ResearcherConflict,
)
from curation.models import Constraint, CurationEvent
from wovepaper.models import Authorship, Researcher
from wovepaper.text import slug_for

MUST, CANNOT = Constraint.Kind.MUST_LINK, Constraint.Kind.CANNOT_LINK


IDENTIFIER_FIELDS = ("orcid", "s2_author_id", "openalex_author_id")
EDITABLE_FIELDS = ("display_name", *IDENTIFIER_FIELDS)
MAX_DISPLAY_NAME = 300


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
