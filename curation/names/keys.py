"""Keys of a name: :func:`block_key` and its readings and variants (which
pairs are ever compared), :func:`sub_block_key`, :func:`name_key` and the
family name's core.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from curation.names.parsing import _is_initial_word, initials
from curation.names.tables import _CONNECTORS, _EAST_ASIAN_SURNAMES
from curation.names.text import fold, remembered
from curation.names.tokens import (
    _family_core,
    _given_tokens,
    _strip_particles,
    pinyin_syllables,
    reads_as_pinyin,
)


@remembered
def block_key(given: str, family: str) -> str:
    """Return the primary blocking key: family core and first given initial.

    Rules: the family name is folded, leading particles are removed (while any word
    is left) and the remaining words are joined without spaces, hyphens or
    apostrophes; then a space and the first folded letter of the given name.
    Removing particles makes a source that mis-splits them land in the same block:
    ``("J.", "van der Velde")`` and ``("J.", "Der Velde")`` both give
    ``"velde j"``. With no given name the key is the family core alone
    (``("", "Madonna")`` -> ``"madonna"``); with no family name, the given name
    takes its place.

    Source: beard ``clustering/blocking_funcs.py``
    ``block_last_name_first_initial`` (INSPIRE's "last name + first initial"
    blocks).

    Args:
        given: given names as printed or parsed.
        family: family name with particles as printed or parsed.

    Returns:
        ``"<family core> <initial>"`` in lower-case ASCII, e.g. ``"serre j"``; ""
        when both parts are empty.
    """
    core = _family_core(family)
    initial = _first_initial(given)
    if not core:
        core, initial = "".join(fold(given).split()), ""
    return f"{core} {initial}".strip()


# What each kind of block-key reading is, as a curator reads it (Reading.kind).
READING_KINDS = {
    "particles": "family name with its particles joined",
    "surname": "one of two surnames",
    "compound": "last given word taken into the surname",
    "order": "given and family names swapped",
}


@dataclass(frozen=True)
class Reading:
    """Another way to read a printed name, under which it has another block key.

    Attributes:
        key: the block key of this reading (:func:`block_key` of ``given``
            and ``family``), never the name's primary key.
        given, family: the name read this way (``("Xiaoming", "Wang")`` for
            the printed ``("Wang", "Xiaoming")``).
        kind: which rule read it: a key of :data:`READING_KINDS`.
    """

    key: str
    given: str
    family: str
    kind: str


# A run of letters and digits: a printed name's words without their hyphens,
# periods, apostrophes and spaces.
_WORD_RE = re.compile(r"[^\W_]+")


# What parts the words of a family name: spaces and hyphens (an apostrophe
# belongs to its word: "O'Brien-Smith" has the words "O'Brien" and "Smith").
_FAMILY_SPLIT_RE = re.compile(r"[\s\-\u2010\u2011]+")


def _printed_word(family: str, folded: str) -> str:
    """The word of ``family`` as printed that folds to ``folded`` (its first
    such), or ``folded`` itself."""
    for word in _FAMILY_SPLIT_RE.split(family):
        if "".join(fold(word).split()) == folded:
            return word
    return folded


@remembered
def block_key_readings(given: str, family: str) -> tuple[Reading, ...]:
    """Return the other readings of a name, each with its block key.

    Readings, in this order (one per key, the primary key left out):
        1. ``particles``: the family with its particles kept and joined
           (``"De Luca"`` read as ``"DeLuca"``, key ``"deluca g"``).
        2. ``surname``: each word of a multi-word or hyphenated family core
           (``"García Márquez"`` read as ``"García"`` and as ``"Márquez"``;
           ``"Cerdá-Durán"`` as ``"Cerdá"`` and ``"Durán"``): Spanish and
           Portuguese authors are often cited under one of their two surnames
           (Chicago ch. 8).
        3. ``compound``: the last full given word taken into the family
           (``("José García", "Márquez")`` read as ``("José", "García
           Márquez")``, key ``"garciamarquez j"``): a two-part surname printed
           without a comma reaches its comma form.
        4. ``order``: given and family swapped for a possibly reversed East
           Asian name: when the given name has no initials, its first word
           is a frequent East Asian family name and the family name has no
           particle (``("Li", "Van Der Waals")`` is not read so), that word
           becomes the family name and the printed family name leads the
           given names
           (``("Wang", "Xiaoming")`` read as ``("Xiaoming", "Wang")``, key
           ``"wang x"``, meeting ``"Xiaoming Wang"``; ``("Nguyen Van",
           "Khue")`` as ``("Khue Van", "Nguyen")``, key ``"nguyen k"``).

    Each reading's key is :func:`block_key` of the reading, so a reading is
    the name as it lands in that block; a reading whose key is the primary
    one (``("Chao En", "Wang")`` read with ``"En Wang"``, whose particle
    ``"En"`` is dropped again) or another reading's is left out.

    Source: Chicago Manual of Style ch. 8; INSPIRE/beard blocking on family
    name plus first initial.

    Args:
        given: given names as printed or parsed.
        family: family name with particles as printed or parsed.

    Returns:
        The readings, at most one per key; empty for most names.
    """
    primary = block_key(given, family)
    family_words = fold(family).split()
    core_words = _strip_particles(family_words)
    found: list[Reading] = []

    def read(kind: str, reading_given: str, reading_family: str) -> None:
        key = block_key(reading_given, reading_family)
        if key and key != primary and all(r.key != key for r in found):
            found.append(Reading(key, reading_given, reading_family, kind))

    if family.strip():
        read("particles", given, "".join(_WORD_RE.findall(family)))
    if len(core_words) >= 2:
        for word in core_words:
            if word not in _CONNECTORS:
                read("surname", given, _printed_word(family, word))
    given_words = given.split()
    if len(given_words) >= 2 and not _is_initial_word(given_words[-1]) and core_words:
        read("compound", " ".join(given_words[:-1]), f"{given_words[-1]} {family}")
    if (
        given_words
        and all(t.kind == "full" for t in _given_tokens(given))
        and "".join(fold(given_words[0]).split()) in _EAST_ASIAN_SURNAMES
        and core_words
        and len(core_words) == len(family_words)
    ):
        read("order", " ".join([family, *given_words[1:]]), given_words[0])
    return tuple(found)


def block_key_variants(given: str, family: str) -> list[str]:
    """Return the primary block key followed by the keys of its other readings.

    The variants are the keys of :func:`block_key_readings`, in its order:
    particles kept and joined, each of two surnames, the last given word taken
    into the surname, and swapped order for a possibly reversed East Asian
    name.

    Source: Chicago Manual of Style ch. 8; INSPIRE/beard blocking on
    family name plus first initial.

    Args:
        given: given names as printed or parsed.
        family: family name with particles as printed or parsed.

    Returns:
        Keys in the shape of block_key, primary first; at least one element
        (possibly ``""`` for an empty name).
    """
    return [
        block_key(given, family),
        *(r.key for r in block_key_readings(given, family)),
    ]


@remembered
def name_key(given: str, family: str) -> str:
    """Return the precise name key stored on an authorship: ``family|initials``.

    Rules: the family name folded with particles kept and all spaces removed
    (``"van der Velde"`` -> ``"vandervelde"``, ``"Cerdá-Durán"`` ->
    ``"cerdaduran"``), a ``|``, then initials(given). Particles are kept here, unlike
    in block_key, because this key is meant to be precise; blocking provides recall.

    Source: our rule, after the "Last, Initials" form INSPIRE prints
    (``"Wang, W.F."``); see initials().

    Args:
        given: given names as printed or parsed.
        family: family name with particles as printed or parsed.

    Returns:
        e.g. ``"serre|jp"`` for ``("Jean-Pierre", "Serre")``, ``("J.-P.", "Serre")``
        and ``("J. P.", "Serre")``; ``"madonna|"`` for a mononym; ``""`` for a
        name of which nothing folds to a letter or digit (``"?"``, ``"!!!"``, a
        zero-width space): such names are no one's, so two of them never count
        as one co-author.
    """
    key = f"{''.join(fold(family).split())}|{initials(given)}"
    return "" if key == "|" else key


@remembered
def sub_block_key(given: str, family: str) -> str:
    """Return the key that splits an oversized block: ``family|initials``.

    Like :func:`name_key`, except that for a Chinese family name
    (:func:`reads_as_pinyin`) a run-together two-syllable given name gives
    both syllables' initials (``("Dayong", "Wang")`` -> ``"wang|dy"``, as
    ``"D.Y."`` and ``"Da-Yong"``), so the spellings of one person's name land
    in one sub-block. Not stored: :func:`name_key` stays the stored key.

    Source: beard's sub-blocking of common surnames by further initials; the
    syllable rule of :func:`pinyin_syllables`.

    Args:
        given: given names as printed or parsed.
        family: family name with particles as printed or parsed.

    Returns:
        e.g. ``"wang|dy"``; ``"wang|xi"`` for ``"Xian"`` (one syllable: ``"wang|x"``).
    """
    if not reads_as_pinyin(family):
        return name_key(given, family)
    letters = []
    for token in _given_tokens(given):
        splits = pinyin_syllables(token.text) if token.kind != "initial" else ()
        if splits:
            letters.extend(syllable[0] for syllable in splits[0])
        else:
            letters.append(token.text[0])
    return f"{''.join(fold(family).split())}|{''.join(letters)}"


def _first_initial(given: str) -> str:
    """Return the first folded letter of a given name, or "".

    Args:
        given: given names as printed.

    Returns:
        One lower-case ASCII character or "".
    """
    folded = fold(given)
    return folded[:1]


def family_core(family: str) -> str:
    """A family name's core for aligning one byline with another source's.

    Folded, leading particles dropped, words joined: ``"van der Velde"``,
    ``"Der Velde"`` and ``"Velde"`` all give ``"velde"`` (one source mis-splits a
    particle into the given name).

    Args:
        family: family name as printed.

    Returns:
        The core ("" for an empty name).
    """
    return _family_core(family)
