"""Given names compared: compatibility, similarity by aligned tokens
(nicknames, initials, pinyin syllables), spelling variants, and whether a
printed name fits a display name.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable

from rapidfuzz.distance import JaroWinkler

from curation.names.keys import block_key
from curation.names.parsing import parse_name
from curation.names.text import NAME_CACHE_CHARS, NAME_CACHE_SIZE, fold
from curation.names.tokens import (
    _given_tokens,
    _GivenToken,
    _nicknamer,
    pinyin_syllables,
    reads_as_pinyin,
)

# given_name_similarity of compatible names is at least this; of incompatible
# ones at most 0.25 (its scale).
COMPATIBLE_SIMILARITY = 0.3


def display_name_fits(display_name: str, printed: Iterable[tuple[str, str]]) -> bool:
    """Whether a researcher's display name is a name some of its authorships print.

    True when one printed name has the display name's block (:func:`block_key`:
    the family core, particles and case aside, and the first initial) and given
    names compatible with it (:func:`given_names_compatible`, by pinyin syllable
    for a Chinese family name): ``"A. Pasquali"`` fits ``"Anna Pasquali"``,
    ``"Adrian Del Maestro"`` does not. An empty display name fits anything.
    Source: our rule; a profile is named after the person whose papers it holds.

    Args:
        display_name: the researcher's display name, "Given Family".
        printed: ``(given, family)`` of its authorships.

    Returns:
        Whether the name belongs on a profile holding those authorships.
    """
    if not display_name.strip():
        return True
    shown = parse_name(display_name)
    key = block_key(shown.given, shown.family)
    pinyin = reads_as_pinyin(shown.family)
    return any(
        block_key(given, family) == key
        and given_names_compatible(shown.given, given, pinyin=pinyin)
        for given, family in printed
    )


def given_names_compatible(a: str, b: str, *, pinyin: bool = False) -> bool:
    """Tell whether two given-name strings can belong to the same person.

    Rules (strict: spelling variants such as Yuri/Yury are not compatible here, only
    similar, see given_name_similarity):
        - An empty given name is compatible with anything (no evidence).
        - Names equal after folding and removing spaces and hyphens are compatible
          (``"Jean-Pierre"``, ``"Jean Pierre"``, ``"Xinnian"``, ``"Xin-Nian"``).
        - Otherwise words are aligned: the first words must match and the other
          words of the shorter name must match words of the longer one in order
          (a missing middle name is allowed: ``"John"`` vs ``"John Paul"``; a
          different one is not: ``"J. Q."`` vs ``"John Paul"``). Two words match
          when equal, when one is an initial of the other (``"J."`` vs ``"John"``),
          when one is a period-abbreviation prefix of the other (``"Yu."`` vs
          ``"Yuri"``, ``"Chr."`` vs ``"Christian"``), or when one is an English
          nickname of the other (``"Bill"`` vs ``"William"``; nicknames 1.0.1 data).
        - With ``pinyin`` (the family name is Chinese, see
          :func:`reads_as_pinyin`), a run-together two-syllable pinyin word
          counts as its two syllables (:func:`pinyin_syllables`): ``"Dayong"``
          meets ``"D.Y."`` and ``"Da-Yong"`` but not ``"D.X."``; ``"Yifang"``
          meets ``"Y.F."``. A word that splits two ways matches under either
          reading (at most 4 readings of a whole name are tried).

    Source: our rule; initials and abbreviations as printed on arXiv (``"Yu.V.
    Ralchenko"``) and INSPIRE (``"Wang, W.F."``); English nicknames from the
    nicknames 1.0.1 package (a hand-curated name/nickname table shipped with it);
    pinyin syllables as INSPIRE prints them ("Wang, Dayong" and "Wang, D.Y." are
    one profile in the beard Wang benchmark), split by pinyinsplit 0.1.4.

    Args:
        a: given names as printed (LaTeX decoded).
        b: given names as printed (LaTeX decoded).
        pinyin: read run-together pinyin given names by syllable.

    Returns:
        True when compatible.
    """
    return _alignment(a, b, pinyin) is not None


# The letters whose swap makes a spelling variant (spelling_variants): vowels,
# and "y", which transliterations write for "i" ("Yuri"/"Yury",
# "Sergei"/"Sergey") or "j".
_VARIANT_LETTERS = frozenset("aeiouy")


def spelling_variants(a: str, b: str, *, pinyin: bool = False) -> bool:
    """Tell whether two given names are one name spelled two ways.

    True for two full one-word given names of four letters or more, folded,
    of one length and one first letter, that differ in one letter, a vowel
    (or ``"y"``) on both sides: ``"Jurik"``/``"Jurek"``,
    ``"Yuri"``/``"Yury"``, ``"Sergei"``/``"Sergey"``. Transliteration and
    diminutive forms differ so (Polish "Jurek" is written "Jurik" in Czech
    and Slovak transliterations); so do other people's names ("Maria" and
    "Mario"), which is why :func:`given_names_compatible` keeps them apart
    and only strong evidence beside the name joins them
    (``curation.services``). Never for pinyin given names (``pinyin``):
    "Jian" and "Jiun" are two names there.

    Source: our rule, after the transliteration variants of
    :func:`given_name_similarity` (``"Yuri"``/``"Yury"``).

    Args:
        a, b: given names as printed.
        pinyin: the family name reads as Chinese (:func:`reads_as_pinyin`).

    Returns:
        True when they are spelling variants; False for equal names.
    """
    if pinyin:
        return False
    x, y = fold(a).split(), fold(b).split()
    if len(x) != 1 or len(y) != 1:
        return False
    x, y = x[0], y[0]
    if len(x) != len(y) or len(x) < 4 or not (x.isalpha() and y.isalpha()):
        return False
    differ = [(i, j) for i, j in zip(x, y, strict=True) if i != j]
    return len(differ) == 1 and x[0] == y[0] and set(differ[0]) <= _VARIANT_LETTERS


def given_name_similarity(a: str, b: str, *, pinyin: bool = False) -> float:
    """Score how alike two given names are, for use as a pairwise feature.

    Scale (probability-like, in [0, 1]):
        - 1.0: identical after folding and removing spaces and hyphens.
        - 0.35 to 1.0: compatible (see given_names_compatible). Each aligned word
          pair scores 1.0 (equal), 0.85 (nickname), 0.6 (abbreviation prefix
          ``"Yu."``/``"Yuri"``) or 0.5 (initial); the similarity is
          ``0.35 + 0.65 * sum(pair scores) / words in the longer name``. So
          ``"Bill"``/``"William"`` is 0.90, ``"J."``/``"John"`` and
          ``"John"``/``"John Paul"`` 0.675, ``"J."``/``"John Paul"`` 0.51.
        - 0.3: one side (or both) empty: no evidence either way.
        - 0.0 to 0.25: incompatible; 0.25 times the Jaro-Winkler similarity of the
          folded names, so a transliteration variant (``"Yuri"``/``"Yury"``) scores
          near 0.23 and an unrelated name (``"John"``/``"James"``) lower.

    With ``pinyin`` the words are aligned by syllable (see
    given_names_compatible): ``"Dayong"``/``"D.Y."`` is 0.675,
    ``"Dayong"``/``"D."`` 0.51.

    Source: our own scale; Jaro-Winkler from rapidfuzz.

    Args:
        a: given names as printed (LaTeX decoded).
        b: given names as printed (LaTeX decoded).
        pinyin: read run-together pinyin given names by syllable.

    Returns:
        A similarity in [0, 1], symmetric in its arguments.
    """
    score = _alignment(a, b, pinyin)
    if score is not None:
        return score
    left, right = "".join(fold(a).split()), "".join(fold(b).split())
    return round(0.25 * JaroWinkler.similarity(left, right), 6)


@functools.lru_cache(maxsize=4096)
def _nickname_related(x: str, y: str) -> bool:
    """Tell whether two folded given names are nicknames of one another.

    Args:
        x: a folded full given name.
        y: another folded full given name.

    Returns:
        True when one is listed as a nickname of the other.
    """
    namer = _nicknamer()
    return y in namer.nicknames_of(x) or x in namer.nicknames_of(y)


def _token_score(x: _GivenToken, y: _GivenToken) -> float:
    """Score one aligned pair of given-name words.

    Args:
        x: a given-name token.
        y: another given-name token.

    Returns:
        1.0 equal, 0.85 nickname, 0.6 abbreviation prefix, 0.5 initial, 0.0 no
        match.
    """
    if x.kind == "full" and y.kind == "full":
        if x.text == y.text:
            return 1.0
        return 0.85 if _nickname_related(x.text, y.text) else 0.0
    if x.kind == "initial" or y.kind == "initial":
        return 0.5 if x.text[0] == y.text[0] else 0.0
    if x.text == y.text:
        return 0.6 if "full" in (x.kind, y.kind) else 0.5
    shorter, longer = sorted((x, y), key=lambda t: len(t.text))
    if shorter.kind == "abbrev" and longer.text.startswith(shorter.text):
        return 0.6 if longer.kind == "full" else 0.5
    return 0.0


def _alignment(a: str, b: str, pinyin: bool) -> float | None:
    """:func:`_given_alignment`, remembered for short names (a matching run
    compares the same given-name pairs in every run over a block)."""
    if len(a) + len(b) <= NAME_CACHE_CHARS:
        return _remembered_alignment(a, b, pinyin)
    return _given_alignment(a, b, pinyin)


def _given_alignment(a: str, b: str, pinyin: bool = False) -> float | None:
    """Align two given names and score them (see given_name_similarity).

    Args:
        a: given names as printed.
        b: given names as printed.
        pinyin: align run-together pinyin words by syllable.

    Returns:
        The similarity in [0.3, 1.0] when compatible, None when not.
    """
    left, right = _given_tokens(a), _given_tokens(b)
    if not left or not right:
        return COMPATIBLE_SIMILARITY
    if all(t.kind == "full" for t in left + right) and "".join(
        t.text for t in left
    ) == "".join(t.text for t in right):
        return 1.0
    if not pinyin:
        return _aligned(left, right)
    readings = _syllable_readings(right)
    scores = [_aligned(x, y) for x in _syllable_readings(left) for y in readings]
    found = [score for score in scores if score is not None]
    return max(found) if found else None


_remembered_alignment = functools.lru_cache(maxsize=NAME_CACHE_SIZE)(_given_alignment)


def _syllable_readings(tokens: list[_GivenToken]) -> list[list[_GivenToken]]:
    """The token list with each two-syllable pinyin word read as its syllables.

    Args:
        tokens: a given name's tokens.

    Returns:
        Every reading (one for each combination of the words' pinyin splits,
        at most 4); ``[tokens]`` when no word splits.
    """
    options = [
        [[token]]
        # A full word, or one printed with a period ("Junxian.").
        if token.kind == "initial" or not pinyin_syllables(token.text)
        else [
            [_GivenToken(syllable, "full") for syllable in split]
            for split in pinyin_syllables(token.text)
        ]
        for token in tokens
    ]
    # Lazily: a hostile given name of many two-way words would otherwise build
    # 2^words readings before keeping four.
    return [
        [token for part in combination for token in part]
        for combination in itertools.islice(itertools.product(*options), 4)
    ]


# Words of a given name aligned at most: the alignment tries every placement of
# the shorter name's words among the longer's (binomially many), and no real
# given name has more ("Angel Tsai Min", "José María de la Cruz" have 3 to 5).
MAX_GIVEN_WORDS = 8


def _aligned(left: list[_GivenToken], right: list[_GivenToken]) -> float | None:
    """Score the best in-order alignment of two token lists (None: incompatible).

    Only the first :data:`MAX_GIVEN_WORDS` tokens of each side count.
    """
    left, right = left[:MAX_GIVEN_WORDS], right[:MAX_GIVEN_WORDS]
    short, long_ = sorted((left, right), key=len)
    first = _token_score(short[0], long_[0])
    if not first:
        return None
    best: float | None = None
    for positions in itertools.combinations(range(1, len(long_)), len(short) - 1):
        pairs = zip(short[1:], positions, strict=True)
        scores = [_token_score(token, long_[at]) for token, at in pairs]
        if all(scores):
            total = first + sum(scores)
            best = total if best is None else max(best, total)
    if best is None:
        return None
    return round(0.35 + 0.65 * best / len(long_), 6)
