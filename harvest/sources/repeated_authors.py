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
    """Whether two names can be one person's: the same folded family name and
    the same first initial (or no given name on one side). An iD on two
    incompatible names is misplaced (issue 46), not a repeat."""
    if fold(a.family_name) != fold(b.family_name):
        return False
    first_a, first_b = fold(a.given_name)[:1], fold(b.given_name)[:1]
    return not first_a or not first_b or first_a == first_b


# A name OpenAlex prints for an author it could not name (seen in the real works
# page: W4206064211 has three): placeholders for unknown people, never repeats.
_PLACEHOLDER_NAMES = frozenset({"null author id"})


def _printed_alike(a: AuthorRecord, b: AuthorRecord) -> bool:
    """Whether two entries (at most one with an iD) are one entry printed twice:
    the same name as printed (folded), the same affiliations (folded, any
    order; both none counts as the same) and no source author id that differs.
    "Kemal Pasamehmetoglu" and "K. Pasamehmetoglu" are not (OpenAlex
    W3203448837 prints both, 45 places apart, with two author ids): they could
    be two people."""
    if fold(a.raw_name) != fold(b.raw_name) or fold(a.raw_name) in _PLACEHOLDER_NAMES:
        return False
    if {fold(x) for x in a.affiliations} != {fold(x) for x in b.affiliations}:
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
      name, same first initial) are one slot, with the fullest name;
    - an entry printed as a kept slot was (the same name, the same
      affiliations, no differing source author id), at most one of the two with
      an iD, joins that slot;
    - entries of one name key that differ otherwise (in the affiliations, one
      side printing none included, in the printed form of the name, in their
      source author ids) could be two people: both are kept, and the byline is
      flagged (:data:`POSSIBLE_REPEATED_AUTHOR`);
    - two different iDs are two people; a collaboration named twice is one.

    Example: "Chidi Eze" three times, two with iD 0000-0003-1234-5678, and two
    "Anna Berg" at different universities give one Chidi Eze and two Anna
    Bergs, flagged.

    Args:
        authors: the byline as the record printed it.

    Returns:
        ``(byline with repeats collapsed, in order of each person's first
        entry; whether a possible repeat is left for a curator)``.
    """
    kept: list[AuthorRecord] = []
    flagged = False
    for author in authors:
        if author.is_collaboration:
            name = fold(author.raw_name)
            if not any(k.is_collaboration and fold(k.raw_name) == name for k in kept):
                kept.append(author)
            continue
        match = None
        for index, slot in enumerate(kept):
            if slot.is_collaboration:
                continue
            if author.orcid and slot.orcid:
                if author.orcid == slot.orcid and _compatible(author, slot):
                    match = index
                    break
                continue
            if not _key(author) or _key(author) != _key(slot):
                continue
            if _printed_alike(author, slot):
                match = index
                break
            flagged = True
        if match is None:
            kept.append(author)
        else:
            kept[match] = _fuller(kept[match], author)
    return kept, flagged
