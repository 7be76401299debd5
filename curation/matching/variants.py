"""Where two blocks meet: a name read another way lands in another block.

Blocking compares only the authorships and researchers of one block key
(:mod:`curation.matching.blocking`). A person printed two ways can fall in two
blocks: ``"Zhang Ping"`` in Chinese order (family ``"Ping"``, block
``"ping z"``) and ``"Ping Zhang"`` (block ``"zhang p"``); ``"García Márquez,
J."`` and ``"García, J."``. :func:`curation.names.block_key_readings` gives the
other readings of a printed name, each a name that lands in another block (the
documented variants: particles joined, one of two surnames, the last given word
taken into the surname, swapped order). Here a profile is re-read into the
block a reading names, so it can be scored against the profiles there with the
features of one block, and the researcher who holds authorships printed both
ways is read in one frame (:func:`view_in_block`).

Pure functions over views, no ORM.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from curation import names
from curation.matching.features import (
    AuthorshipView,
    ProfileView,
    full_given_key,
)


@dataclass(frozen=True)
class Meeting:
    """A profile of one block read into another block that holds profiles.

    Attributes:
        block: the block ``profile`` is in.
        index: its index in that block's list.
        other_block: the block its reading lands in.
        read: the profile as read there (:func:`read_into`).
        reading: the rule that read it (its first given name's).
        printed: ``(given, family)`` as the profile prints the name that
            reading read.
    """

    block: str
    index: int
    other_block: str
    read: ProfileView
    reading: names.Reading
    printed: tuple[str, str]


def written(given: str, family: str) -> str:
    """A name as the evidence writes a reading: ``"Family, Given"``, so that
    a reading shows which part is the family name (``"Márquez, José García"``
    read as ``"García Márquez, José"``; ``"Ping, Zhang"`` as ``"Zhang,
    Ping"``); the family name alone without a given name."""
    return f"{family}, {given}" if given else family


def corroborated(mine: ProfileView, theirs: ProfileView) -> bool:
    """Whether a pair met across blocks has evidence beyond the name.

    A reading is itself a guess (``"Xu Feng"`` may print its family name
    first or last), so two blocks' profiles are joined or proposed as one
    only when something other than the name agrees: a co-author, the ORCID
    iD, a source's author id, or the affiliation: two of its words, or
    every word one side prints (``"Syracuse"``). One word alone is too
    common a coincidence: a hostile trial had a "Zhang Ping" of Sichuan
    University, Chengdu, China proposed to the Ping Zhang of Tsinghua
    University, Beijing, China on the word "china". A set check on the two
    profiles, before any scoring. Measured by evaluate_matching on S2AND
    Qian-partial with the default weights (B³ F1): 0.795 without the joins
    across blocks, 0.773 with joins on the name alone, 0.796 with this rule.

    Args:
        mine: the profile read into the other block (or an authorship's).
        theirs: a profile of that block.

    Returns:
        True when one of those agrees.
    """
    if mine.coauthor_keys & theirs.coauthor_keys:
        return True
    if mine.orcid and mine.orcid == theirs.orcid:
        return True
    if mine.source_ids & theirs.source_ids:
        return True
    shared = mine.affiliation_tokens & theirs.affiliation_tokens
    return len(shared) >= 2 or bool(
        shared
        and (shared == mine.affiliation_tokens or shared == theirs.affiliation_tokens)
    )


def confirms(reading: names.Reading, givens: Iterable[str]) -> bool:
    """Whether the other side's given names can confirm a reading.

    A swapped-order reading (``order``) makes a family name a given name:
    only a full given name on the other side can agree with it. Against
    initials alone ("W. Lu" for "Lu Wang" read as "Wang, Lu") it is a guess
    that nothing confirms: in bench/matching.py's population of 100,000
    researchers, all of them different people, a full run proposed 1,119
    merges across blocks, nearly all a swap read against initials (name
    similarity 0.51 or 0.68); with this rule 146, and 60 once
    :func:`corroborated` asked for two affiliation words.

    Args:
        reading: the reading of one side.
        givens: the other side's given names.

    Returns:
        False for a swapped-order reading against initials only; else True.
    """
    return reading.kind != "order" or any(full_given_key(g) for g in givens)


def read_into(
    profile: ProfileView, key: str
) -> tuple[ProfileView, names.Reading] | None:
    """A profile re-read so that it lands in block ``key``.

    Each given name the profile prints is read with its family name
    (:func:`curation.names.block_key_readings`); the given names with a
    reading into ``key`` make the re-read profile's, and the first of those
    readings gives its family name. Everything else (papers, affiliations,
    co-authors, identifiers) is the profile's. A reading that changes the
    given names (swapped order) claims no given-name rarity: a family name
    read as a given name ("Wang") is rare as a given name only by being a
    family name (a hostile trial: "Wei Wang" read as given name "Wang"
    scored 0.989 where the same evidence in one block scores 0.909).

    Args:
        profile: a researcher or cluster profile.
        key: a block key other than the profile's own.

    Returns:
        ``(re-read profile, the first reading)``, or None when no given name
        of the profile reads into ``key``.
    """
    found = [r for _, r in _readings(profile) if r.key == key]
    return _read(profile, found) if found else None


def _readings(profile: ProfileView) -> list[tuple[str, names.Reading]]:
    """``(printed given name, its reading)`` of each reading of the profile."""
    return [
        (given, r)
        for given in profile.given_names
        for r in names.block_key_readings(given, profile.family)
    ]


def _read(
    profile: ProfileView, found: list[names.Reading]
) -> tuple[ProfileView, names.Reading]:
    givens = tuple(dict.fromkeys(r.given for r in found))
    return (
        replace(
            profile,
            given_names=givens,
            family=found[0].family,
            given_rarity=profile.given_rarity if givens == profile.given_names else 0.0,
        ),
        found[0],
    )


def meetings(profiles: Mapping[str, Sequence[ProfileView]]) -> list[Meeting]:
    """Every profile read into each other block that holds profiles.

    Args:
        profiles: ``{block key: profiles}``; a key may name a sub-block
            (``"<block>/<sub>"``), whose profiles count for its block.

    Returns:
        One Meeting per profile and other block its readings land in (the
        caller pairs ``read`` with each profile of ``other_block``), in block
        order, then profile order, then reading order. Work grows with the
        profiles, not their pairs: a reading is a dictionary lookup.
    """
    by_key: dict[str, list[str]] = {}
    for block in profiles:
        by_key.setdefault(block.split("/", 1)[0], []).append(block)
    out: list[Meeting] = []
    for block, members in profiles.items():
        home = block.split("/", 1)[0]
        for index, profile in enumerate(members):
            into: dict[str, list[tuple[str, names.Reading]]] = {}
            for given, r in _readings(profile):
                if r.key != home and r.key in by_key:
                    into.setdefault(r.key, []).append((given, r))
            for key, found in into.items():
                read = _read(profile, [r for _, r in found])
                printed = (found[0][0], profile.family)
                for other in by_key[key]:
                    out.append(Meeting(block, index, other, *read, printed))
    return out


def view_in_block(view: AuthorshipView, key: str, home_family: str) -> AuthorshipView:
    """An authorship of a researcher read in the researcher's block.

    A researcher can hold authorships printed in another block (a curator
    merged ``"Zhang Ping"`` into ``"Ping Zhang"``, or moved one). Its profile
    is read in one frame, so that its given names are comparable with the
    block's: the authorship is read by the first of these that lands in
    ``key``: one of its own readings (:func:`curation.names.block_key_readings`);
    its given name with the researcher's family name, when its own family
    name is part of it (``"J. García"`` in ``"García Márquez"``); its given
    and family names swapped (``"Xiaoming Wang"`` in a researcher printed
    ``"Wang Xiaoming"``, family ``"Xiaoming"``). Otherwise, or when it is in
    ``key`` already, it is returned as it is.

    Args:
        view: one of the researcher's authorships.
        key: the researcher's block key.
        home_family: the family name the researcher's own block prints (an
            authorship of its in ``key``).

    Returns:
        The view, re-read (``given``, ``family`` and ``block_key`` changed)
        or as it was.
    """
    if not key or view.block_key == key:
        return view
    found = name_in_block(view.given, view.family, key, home_family)
    if found is None:
        return view
    given, family = found
    return replace(view, given=given, family=family, block_key=key)


# A slot proposed to a researcher, its name as printed: (given, family, block key).
Slot = tuple[str, str, str]


def names_clash(mine: Slot, theirs: Slot, home: str) -> bool:
    """Whether two slots proposed to one researcher print given names that
    cannot be one person's, compared in one frame.

    The frame is the researcher's own block ``home`` when both slots read
    into it (:func:`name_in_block`): two slots of two other blocks, "José
    Luis García Márquez" and "José Antonio García López" proposed to a
    "José García", compare there, "José Luis" with "José Antonio"; "Zhang
    Ping" (block ``ping z``) and "Ping Zhang" (``zhang p``) proposed to
    either compare "Zhang" with "Zhang". Else two slots of one block compare
    as printed. Else each is read into the other's block, and a clash is
    claimed only when every reading that exists says so, so the answer does
    not depend on which came first; when none exists, none is claimed (a
    hostile trial had "P. Zhang", read as printed against "Zhang", keep a
    researcher's own full-name papers from being proposed). Symmetric in
    ``mine`` and ``theirs``.

    Args:
        mine, theirs: ``(given, family, block key)`` as printed.
        home: the researcher's own block key.

    Returns:
        True when the given names cannot be one person's
        (:func:`curation.names.given_names_compatible`, by syllable when
        either family name is Chinese).
    """

    def clash(a: tuple[str, str], b: tuple[str, str]) -> bool:
        pinyin = names.reads_as_pinyin(a[1]) or names.reads_as_pinyin(b[1])
        return not names.given_names_compatible(a[0], b[0], pinyin=pinyin)

    def read(slot: Slot, key: str) -> tuple[str, str] | None:
        if slot[2] == key:
            return slot[0], slot[1]
        return name_in_block(slot[0], slot[1], key)

    at_home = read(mine, home), read(theirs, home)
    if at_home[0] is not None and at_home[1] is not None:
        return clash(at_home[0], at_home[1])
    if mine[2] == theirs[2]:
        return clash(mine[:2], theirs[:2])
    verdicts = []
    theirs_read = read(theirs, mine[2])
    if theirs_read is not None:
        verdicts.append(clash(mine[:2], theirs_read))
    mine_read = read(mine, theirs[2])
    if mine_read is not None:
        verdicts.append(clash(mine_read, theirs[:2]))
    return bool(verdicts) and all(verdicts)


def name_in_block(
    given: str, family: str, key: str, home_family: str = ""
) -> tuple[str, str] | None:
    """A printed name read so that it lands in block ``key``, by the rules of
    :func:`view_in_block` (``home_family`` "" leaves out the one that needs
    it).

    Returns:
        ``(given, family)`` as read, or None when no rule lands in ``key``.
    """
    for r in names.block_key_readings(given, family):
        if r.key == key:
            return r.given, r.family
    home_words = names.fold(home_family).split()
    if (
        home_words
        and set(names.fold(family).split()) <= set(home_words)
        and names.block_key(given, home_family) == key
    ):
        return given, home_family
    if given and names.block_key(family, given) == key:
        return family, given
    return None
