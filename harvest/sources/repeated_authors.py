"""Authors a publisher deposited more than once in one byline (no ORM).

Crossref author arrays repeat people: the same entry twice, or one ORCID iD on
three entries (issue 49, part 2; seen in public bug reports against other
harvesters). :func:`collapse_repeated` keeps one slot per person where the record
itself shows that two entries are one person, and says when two entries could be
one person or two, for a curator to look at.
"""

from __future__ import annotations

from dataclasses import replace

from curation.names import fold, name_key
from harvest.records import AuthorRecord

# What a paper is flagged with when two same-name entries could be two people.
POSSIBLE_REPEATED_AUTHOR = "possible repeated author"


def _key(author: AuthorRecord) -> str:
    return name_key(author.given_name, author.family_name)


def _compatible(a: AuthorRecord, b: AuthorRecord) -> bool:
    """Whether two names can be one person's: the same folded family name, and
    first given names that agree (the same initial, and the same word when both
    are written out: "Jane" and "John" Smith are two people), or no given name
    on one side. An iD on two incompatible names is misplaced (issue 46), not a
    repeat."""
    if fold(a.family_name) != fold(b.family_name):
        return False
    words_a, words_b = fold(a.given_name).split(), fold(b.given_name).split()
    if not words_a or not words_b:
        return True
    first_a, first_b = words_a[0], words_b[0]
    if first_a[0] != first_b[0]:
        return False
    return len(first_a) == 1 or len(first_b) == 1 or first_a == first_b


# A name OpenAlex prints for an author it could not name (seen in the real works
# page: W4206064211 has three): placeholders for unknown people, never repeats.
_PLACEHOLDER_NAMES = frozenset({"null author id"})


def _places(author: AuthorRecord) -> frozenset[str]:
    """An entry's affiliations, folded, in no order."""
    return frozenset(fold(x) for x in author.affiliations)


def _printed_alike(a: AuthorRecord, b: AuthorRecord) -> bool:
    """Whether two entries (at most one with an iD) are one entry printed twice:
    the same name as printed (folded), the same affiliations (folded, any
    order; both none counts as the same) and no source author id that differs.
    "Kemal Pasamehmetoglu" and "K. Pasamehmetoglu" are not (OpenAlex
    W3203448837 prints both, 45 places apart, with two author ids): they could
    be two people."""
    if fold(a.raw_name) != fold(b.raw_name) or fold(a.raw_name) in _PLACEHOLDER_NAMES:
        return False
    if _places(a) != _places(b):
        return False
    for name in ("openalex_author_id", "s2_author_id"):
        if (
            getattr(a, name)
            and getattr(b, name)
            and getattr(a, name) != getattr(b, name)
        ):
            return False
    return True


def _fuller(kept: AuthorRecord, other: AuthorRecord) -> AuthorRecord:
    """One slot of two entries of one person: the fuller name (more letters in
    the given name, then the longer printed name), every affiliation and
    institution of both in order, and each id either gives."""
    name_of = max(
        (kept, other),
        key=lambda a: (len(fold(a.given_name).replace(" ", "")), len(a.raw_name)),
    )
    affiliations = tuple(dict.fromkeys((*kept.affiliations, *other.affiliations)))
    institutions = tuple(
        {i.ror_id: i for i in (*kept.institutions, *other.institutions)}.values()
    )
    return replace(
        kept,
        raw_name=name_of.raw_name,
        given_name=name_of.given_name,
        family_name=name_of.family_name,
        suffix=name_of.suffix,
        orcid=kept.orcid or other.orcid,
        openalex_author_id=kept.openalex_author_id or other.openalex_author_id,
        s2_author_id=kept.s2_author_id or other.s2_author_id,
        affiliations=affiliations,
        institutions=institutions,
    )


def collapse_repeated(
    authors: list[AuthorRecord],
) -> tuple[list[AuthorRecord], bool]:
    """One slot per person of a byline that repeats people.

    Rules, each entry against the slots kept before it (printed order):

    - an exact repeat (same name, iD, affiliations) is dropped;
    - entries with the same valid ORCID iD and compatible names (same family
      name, agreeing first given name: "C." and "Chidi", not "Jane" and
      "John") are one slot, with the fullest name;
    - an entry printed as a kept slot was (the same name, the same
      affiliations, no differing source author id), at most one of the two with
      an iD, joins that slot;
    - entries of one name key that differ otherwise (in the affiliations, one
      side printing none included, in the printed form of the name, in their
      source author ids) could be two people: both are kept, and the byline is
      flagged (:data:`POSSIBLE_REPEATED_AUTHOR`);
    - two different iDs are two people; a collaboration named twice is one.

    Example (issue 49): "Chidi Eze" three times at one university, two with
    one iD, and two "Anna Berg" at different universities give one Chidi Eze
    and two Anna Bergs, flagged.

    Args:
        authors: the byline as the record printed it.

    Returns:
        ``(byline with repeats collapsed, in order of each person's first
        entry; whether a possible repeat is left for a curator)``.
    """
    kept: list[AuthorRecord] = []
    # Where to look, so a byline of 3,000 names (one family name among them all,
    # a collaboration's "Wang"s) costs 3,000 lookups, not 3,000 squared
    # comparisons: the slots by iD, by how they were printed, and how many of
    # each name key there are (with an iD, and in all).
    by_orcid: dict[str, list[int]] = {}
    by_print: dict[tuple, list[int]] = {}
    keys_all: dict[str, int] = {}
    keys_with_id: dict[str, int] = {}
    collaborations: set[str] = set()
    flagged = False
    for author in authors:
        if author.is_collaboration:
            name = fold(author.raw_name)
            if name not in collaborations:
                collaborations.add(name)
                kept.append(author)
            continue
        key = _key(author)
        printed = (key, fold(author.raw_name), _places(author))
        match = None
        if author.orcid:
            for index in by_orcid.get(author.orcid, ()):
                if _compatible(author, kept[index]):
                    match = index
                    break
        if match is None and key and printed[1] not in _PLACEHOLDER_NAMES:
            for index in by_print.get(printed, ()):
                slot = kept[index]
                if (not author.orcid or not slot.orcid) and _printed_alike(
                    author, slot
                ):
                    match = index
                    break
        if match is None:
            # Same name key, not one entry printed twice: could be two people,
            # unless both carry (different) iDs.
            others = keys_all.get(key, 0) - (
                keys_with_id.get(key, 0) if author.orcid else 0
            )
            if key and others and printed[1] not in _PLACEHOLDER_NAMES:
                flagged = True
            kept.append(author)
            index = len(kept) - 1
            keys_all[key] = keys_all.get(key, 0) + 1
            if author.orcid:
                keys_with_id[key] = keys_with_id.get(key, 0) + 1
        else:
            had_id = bool(kept[match].orcid)
            kept[match] = _fuller(kept[match], author)
            index = match
            if kept[match].orcid and not had_id:
                keys_with_id[key] = keys_with_id.get(key, 0) + 1
        slot = kept[index]
        if slot.orcid and index not in by_orcid.setdefault(slot.orcid, []):
            by_orcid[slot.orcid].append(index)
        for form in {printed, (_key(slot), fold(slot.raw_name), _places(slot))}:
            if index not in by_print.setdefault(form, []):
                by_print[form].append(index)
    return kept, flagged
