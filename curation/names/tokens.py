"""The words of a name, below the parser and the keys: given-name tokens
(initials, hyphenated parts), pinyin syllables and whether a name reads as
pinyin, and the family name's core.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from nicknames import NickNamer

from curation.names.tables import _CHINESE_SURNAMES, _PARTICLES
from curation.names.text import NAME_CACHE_SIZE, fold, remembered


@dataclass(frozen=True)
class _GivenToken:
    """One word of a given name: folded text and kind.

    Attributes:
        text: folded ASCII, non-empty.
        kind: ``"initial"`` (one letter), ``"abbrev"`` (several letters followed
            by a period, ``"Yu."``) or ``"full"``.
    """

    text: str
    kind: str


_GIVEN_WORD_RE = re.compile(r"[^\s.\-\u2010\u2011]+\.?")
_VOWELS = frozenset("AEIOUY")


def _given_tokens(given: str) -> list[_GivenToken]:
    """Split a given name into folded tokens (see initials for the rules).

    Args:
        given: given names as printed.

    Returns:
        Tokens in printed order; empty for an empty given name.
    """
    tokens: list[_GivenToken] = []
    for match in _GIVEN_WORD_RE.finditer(given):
        word = match.group()
        dotted = word.endswith(".")
        bare = word.rstrip(".")
        folded = "".join(fold(bare).split())
        if not any(ch.isalpha() for ch in folded):
            continue
        if (
            2 <= len(bare) <= 3
            and bare.isupper()
            and bare.isascii()
            and bare.isalpha()
            and not _VOWELS.intersection(bare)
        ):
            tokens.extend(_GivenToken(ch, "initial") for ch in folded)
        elif len(folded) == 1:
            tokens.append(_GivenToken(folded, "initial"))
        elif dotted:
            tokens.append(_GivenToken(folded, "abbrev"))
        else:
            tokens.append(_GivenToken(folded, "full"))
    return tokens


@functools.cache
def _nicknamer() -> NickNamer:
    """Load the nicknames table once (shipped inside the wheel, no network)."""
    return NickNamer()


@functools.cache
def _pinyin_splitter():
    """The pinyinsplit syllable trie, built once (no network, no data files)."""
    from pinyinsplit import PinyinSplit

    return PinyinSplit()


# The longest given-name word split into pinyin syllables: two syllables of
# six letters ("zhuang", "shuang") at most.
_PINYIN_WORD_CHARS = 12


@functools.lru_cache(maxsize=NAME_CACHE_SIZE)
def pinyin_syllables(word: str) -> tuple[tuple[str, str], ...]:
    """Read a folded given-name word as two run-together pinyin syllables.

    Rules: the word must split wholly into valid pinyin syllables, no syllable
    after the first may start with a, o or e (pinyin writes those after an
    apostrophe: "Xi'an"; so "xian", "chien", "shiang" are one syllable), its
    shortest split must have two syllables (a word that is one syllable,
    ``"xian"``, or needs three, ``"maria"``, stays whole: Chinese given names are
    one or two characters), it must not be an English given name of the
    nicknames table (``"anna"``, ``"susan"``, ``"linda"``), and every
    two-syllable split is returned (``"jianan"``: jia-nan; ``"fangan"``:
    fan-gan).

    Source: the syllable table and splitter of pinyinsplit 0.1.4 (MIT); the
    apostrophe (syllable-dividing mark) rule of the Basic Rules of Hanyu Pinyin
    Orthography, GB/T 16159-2012; the nicknames 1.0.1 name table; the one- or
    two-character given name is the norm of Chinese naming, as INSPIRE prints it
    ("Wang, Da-Yong", "Wang, D.Y.").

    Args:
        word: one folded, lower-case given-name word (``"dayong"``).

    Returns:
        ``(("da", "yong"),)``; ``()`` when the word is not two pinyin syllables.
    """
    if not word.isalpha() or len(word) > _PINYIN_WORD_CHARS:
        return ()
    namer = _nicknamer()
    if namer.nicknames_of(word) or namer.canonicals_of(word):
        return ()  # an English given name ("anna", "susan", "linda")
    splits = [
        split
        for split in _pinyin_splitter().split(word)
        # A syllable that starts with a, o or e is written after an apostrophe
        # inside a word (Xi'an): run together, "xian" is one syllable.
        if not any(syllable[0] in "aoe" for syllable in split[1:])
    ]
    if not splits or min(len(split) for split in splits) != 2:
        return ()
    return tuple(sorted({(split[0], split[1]) for split in splits if len(split) == 2}))


@remembered
def reads_as_pinyin(family: str) -> bool:
    """Whether a person's given names may be run-together pinyin syllables.

    True when the family name (folded, particles dropped) is a frequent Chinese
    family name in pinyin, Wade-Giles or Cantonese spelling (the list of
    block_key_variants), except "lee", as often English.

    Args:
        family: the family name as printed or parsed.

    Returns:
        True for ``"Wang"``, ``"Zhang"``, ``"Cheung"``; False for ``"Kim"``,
        ``"Lee"``, ``"Smith"``.
    """
    return _family_core(family) in _CHINESE_SURNAMES - {"lee"}


def _strip_particles(words: list[str]) -> list[str]:
    """Remove leading particles from folded family words, keeping at least one.

    Args:
        words: folded family-name words in order, e.g. ``["van", "der", "velde"]``.

    Returns:
        The words from the first non-particle on (``["velde"]``); the last word
        alone when all are particles (``["le"]`` for the family name ``"Le"``).
    """
    index = 0
    while index < len(words) - 1 and words[index] in _PARTICLES:
        index += 1
    return words[index:]


def _family_core(family: str) -> str:
    """Fold a family name, drop leading particles and join the words.

    Args:
        family: family name as printed.

    Returns:
        e.g. ``"velde"`` for ``"van der Velde"``, ``"cerdaduran"`` for
        ``"Cerdá-Durán"``.
    """
    return "".join(_strip_particles(fold(family).split()))
