"""Which byline slots an ORCID iD fits, by the names printed with it (pure, no ORM).

A source sometimes prints a co-author's iD on the wrong slot of a byline
(issue 46: Crossref puts the iD of "Wei Tan" on "Dmitri Volkov" of the same
paper). An iD is one person's, so the slots carrying it should print one
person's name; a slot whose name fits none of the names the iD is printed
with elsewhere is where the source misplaced it. Family names may differ
(a family-name change keeps the iD: "Sofia Lindberg", later "Sofia Haddad"),
given names may not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from curation import names
from curation.matching.features import full_given_key


@dataclass(frozen=True)
class IdSlot:
    """One byline slot printing an ORCID iD.

    Attributes:
        id: the Authorship primary key.
        given, family: the name parts the slot prints (Unicode).
    """

    id: int
    given: str
    family: str


def fits(a: IdSlot, b: IdSlot) -> bool:
    """Whether two slots carrying one iD can print one person's name.

    Under one family name (its core: :func:`curation.names.family_core`)
    the given names must be compatible
    (:func:`curation.names.given_names_compatible`); under two family names
    (a name change) both must print a full given name, and compatible ones:
    "W." fits "Wei Tan" under "Tan", and under "Volkov" fits nothing.

    Args:
        a, b: the two slots.

    Returns:
        True when they can be one person's. Symmetric.
    """
    same_family = names.family_core(a.family) == names.family_core(b.family)
    if not same_family and not (full_given_key(a.given) and full_given_key(b.given)):
        return False
    pinyin = names.reads_as_pinyin(a.family) or names.reads_as_pinyin(b.family)
    return names.given_names_compatible(a.given, b.given, pinyin=pinyin)


def misplaced(slots: Sequence[IdSlot]) -> dict[int, IdSlot]:
    """The slots of one iD that print a name the iD does not belong to.

    The iD's owner is the name most of its slots fit (:func:`fits`): the
    slots fitting the most others lead; when the leaders all fit each other
    they name the owner and every slot fitting none of them is misplaced.
    When they do not (one "Wei Tan" against one "Dmitri Volkov"), no one can
    tell whose the iD is, and every slot that does not fit all the others is
    suspect.

    Args:
        slots: every slot printing the iD, in any order (ids unique).

    Returns:
        ``{slot id: a leading slot it does not fit}`` (the owner's name, for
        the curator); empty when all the slots fit one another.
    """
    support = {s.id: sum(fits(s, t) for t in slots) for s in slots}
    best = max(support.values(), default=0)
    leaders = [s for s in slots if support[s.id] == best]
    if all(fits(s, t) for s in leaders for t in leaders):
        return {
            s.id: leaders[0]
            for s in slots
            if not any(fits(s, leader) for leader in leaders)
        }
    return {
        s.id: next(t for t in slots if not fits(s, t))
        for s in slots
        if not all(fits(s, t) for t in slots)
    }
