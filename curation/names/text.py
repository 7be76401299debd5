"""Text cleaning for names: LaTeX to Unicode, folding to ASCII, the patterns
bylines are cleaned with, and a bounded cache for pure name functions.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from anyascii import anyascii
from pylatexenc.latex2text import LatexNodes2Text

_LATEX = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)

# The pure string functions below (LaTeX decoding, folding, parsing, keys) remember
# this many recent answers each. A harvest asks about the same names again and
# again (the same authors across papers, and each name is folded several times for
# its keys), and a 500-record batch of arXiv bylines holds about 3,200 names; the
# caches hold a few thousand batches' worth of distinct names in a few MB each
# (bench/ingest.py measures the gain). Only short arguments are remembered, so
# a cache holds at most NAME_CACHE_SIZE x NAME_CACHE_CHARS characters whatever a
# hostile record carries.
NAME_CACHE_SIZE = 1 << 16
NAME_CACHE_CHARS = 300


def remembered(function):
    """``function`` (of strings, pure) with its answers for short strings kept in
    an LRU cache of :data:`NAME_CACHE_SIZE` entries; longer strings are computed
    every time. Also used by curation.matching.features for the name keys it
    takes of every given name in every pair it scores."""
    cached = functools.lru_cache(maxsize=NAME_CACHE_SIZE)(function)

    @functools.wraps(function)
    def answer(*args: str):
        if sum(map(len, args)) <= NAME_CACHE_CHARS:
            return cached(*args)
        return function(*args)

    answer.cache_info = cached.cache_info
    answer.cache_clear = cached.cache_clear
    return answer


_LATEX_TRIGGER_RE = re.compile(r"[\\{}~]")
_UNESCAPED_PERCENT_RE = re.compile(r"(?<!\\)%")
_ORPHAN_MARK_RE = re.compile(r"(^|\s)[\u0300-\u036f]+")
_SPACE_RE = re.compile(r"\s+")

# fold(): apostrophes join (O'Brien -> obrien), any other non-alphanumeric run is a
# word boundary (Jean-Pierre -> jean pierre).
_APOSTROPHE_RE = re.compile(r"['`\u00b4\u2018\u2019\u02bc\u02b9]")
_NON_ALNUM_RE = re.compile(r"[^a-z0-9]+")

# Bylines strip: affiliation markers "(LAGA)", "[1]", footnote symbols.
_BRACKETED_RE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_FOOTNOTE_RE = re.compile(r"[*\u2020\u2021\u00a7\u00b6]+")
_UNCLOSED_RE = re.compile(r"[(\[].*$")
_DIGIT_WORD_RE = re.compile(r"(?<!\S)\d+[.)]?(?!\S)")
_ET_AL_RE = re.compile(r"\bet\.?\s+al\b\.?", re.IGNORECASE)
_LEADING_AND_RE = re.compile(r"^(?:and|&)\s+", re.IGNORECASE)
# arXiv prints "D.Peressounko", "Yu.V.Ralchenko", "N.d'Ambrumenil": a period glued to
# a following letter separates two tokens. "J.-P." is left alone.
_GLUED_PERIOD_RE = re.compile(r"\.(?=[^\W\d_])")

_CJK_CHAR = (
    r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    r"\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
)
_CJK_RE = re.compile(f"[{_CJK_CHAR}]")
_HAN_RUN_RE = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_KANA_RE = re.compile(r"[\u3040-\u30ff]")
_HANGUL_RE = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_LATIN_RE = re.compile(r"[A-Za-z\u00c0-\u024f]")
_CJK_DOT_RE = re.compile(r"[\u00b7\u30fb\uff65]")


@remembered
def latex_to_unicode(text: str) -> str:
    """Turn LaTeX accents and commands into Unicode, NFC-normalised.

    Rules:
        - Only text containing ``\\``, ``{``, ``}`` or ``~`` goes through pylatexenc
          (``LatexNodes2Text``, math kept verbatim), so plain text, ``$`` and
          ``%`` in plain text are never touched. An unescaped ``%`` is escaped
          first, since LaTeX would drop the rest of the line as a comment.
        - Combining accents left without a base letter (``"\\'"`` alone) are
          removed; the result is NFC and whitespace (incl. ``~`` no-break space)
          is collapsed to single spaces.
        - Garbage never raises: if pylatexenc fails the input is returned
          normalised instead.

    Source: arXiv ``.abs`` ``Authors:`` lines (``Bal\\'azs``, ``N{\\"o}llenburg``,
    ``Macr\\`i``, ``Tyss{\\o}y``); pylatexenc 2.11 ``latex2text``.

    Args:
        text: e.g. ``"C. Bal\\'azs"`` or ``"M. N{\\"o}llenburg"``.

    Returns:
        ``"C. Balázs"``; "" for an empty or whitespace-only input.
    """
    if not text:
        return ""
    converted = text
    if _LATEX_TRIGGER_RE.search(text):
        try:
            converted = _LATEX.latex_to_text(_UNESCAPED_PERCENT_RE.sub(r"\\%", text))
        except Exception:  # pylatexenc is tolerant, but any failure keeps the input
            converted = text
    converted = unicodedata.normalize("NFC", converted)
    converted = _ORPHAN_MARK_RE.sub(r"\1", converted)
    return _SPACE_RE.sub(" ", converted).strip()


@remembered
def fold(text: str) -> str:
    """Fold to a lower-case ASCII matching key.

    Rules:
        - Transliterate with anyascii (``"Müller"`` -> ``"muller"``, no German
          ``ue`` expansion; ``"Łukasz"`` -> ``"lukasz"``; Chinese characters get
          Mandarin pinyin without tones, joined: ``"王小明"`` -> ``"wangxiaoming"``;
          Japanese kanji therefore get Mandarin readings and Hangul gets Revised
          Romanisation, ``"김"`` -> ``"gim"``: a known limitation).
        - Apostrophes of every kind are removed and join the word (``"O'Brien"`` ->
          ``"obrien"``, ``"d'Ambrumenil"`` -> ``"dambrumenil"``).
        - Every other run of non-alphanumerics (hyphens, periods, spaces) becomes one
          space (``"Jean-Pierre"`` -> ``"jean pierre"``), so hyphenated and spaced
          spellings fold alike. Callers that need no spaces remove them.

    Source: anyascii 0.3 tables; the apostrophe and hyphen rule is ours, chosen so
    that the spellings seen in arXiv bylines (``"N.d'Ambrumenil"``,
    ``"Cerd\\'a-Dur\\'an"``) and INSPIRE (``"Chun-Wang"``/``"Chun-wang"``) fold
    alike.

    Args:
        text: any Unicode text; LaTeX is not decoded here (see latex_to_unicode).

    Returns:
        Lower-case ASCII words ``[a-z0-9]+`` separated by single spaces; "" if
        nothing alphanumeric remains.
    """
    ascii_text = anyascii(unicodedata.normalize("NFC", text)).lower()
    ascii_text = _APOSTROPHE_RE.sub("", ascii_text)
    return _NON_ALNUM_RE.sub(" ", ascii_text).strip()
