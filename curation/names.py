"""Name normalisation for author matching: pure functions, no ORM.

Every rule below is documented where it is applied, with its source. The general
sources are:

- arXiv bylines as printed in ``.abs`` files (``Authors:`` lines, BibTeX-style LaTeX
  accents, glued initials such as ``D.Peressounko``), arXiv OAI-PMH
  ``arXiv/authors/author/keyname`` and ``forenames``.
- INSPIRE author names (``"Wang, Zheng"``, ``"Wang, W.F."``: family, comma, given), as
  in the beard ``wang_signatures.json`` sample, ``author_name``.
- The BibTeX name grammar (Patashnik, *BibTeXing*, 1988, section 4: "First von Last",
  "von Last, First", "von Last, Jr, First").
- The Chicago Manual of Style, 17th ed., chapter 8 "Names and Terms" (particles,
  Spanish two-part surnames, Chinese, Japanese, Korean and Vietnamese name order)
  and chapter 6 (commas with Jr., Sr., III).

The outputs are used in three ways: :class:`PersonName` (what the byline said, cleaned),
:func:`name_key` (a precise key stored on every authorship) and :func:`block_key` /
:func:`block_key_variants` (a coarse key that decides which pairs are ever compared,
so it errs on the side of recall).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from anyascii import anyascii
from nameparser.config import CONSTANTS as NAMEPARSER_CONSTANTS
from nicknames import NickNamer
from pylatexenc.latex2text import LatexNodes2Text
from rapidfuzz.distance import JaroWinkler

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

# Chinese compound (two-character) surnames still in use, from the compound entries
# of the "Hundred Family Surnames" (百家姓).
_CHINESE_COMPOUND_SURNAMES = frozenset(
    {
        "欧阳", "歐陽", "司马", "司馬", "诸葛", "諸葛", "上官", "东方", "東方",
        "皇甫", "尉迟", "尉遲", "公孙", "公孫", "慕容", "长孙", "長孫", "夏侯",
        "令狐", "宇文", "司徒", "澹台", "轩辕", "軒轅", "端木", "呼延", "南宫",
        "南宮", "西门", "西門", "独孤", "獨孤", "申屠", "闻人", "聞人",
    }
)  # fmt: skip
# Korean two-syllable surnames (the common ones; Statistics Korea census lists).
_KOREAN_COMPOUND_SURNAMES = frozenset(
    {"남궁", "황보", "제갈", "선우", "독고", "사공", "서문", "동방"}
)

# Frequent East Asian family names in romanisation (folded), compiled by hand from
# national frequency lists: Chinese pinyin (about the top 100), Wade-Giles and
# Cantonese spellings, Korean (common spellings), Japanese (about the top 50) and
# Vietnamese. Used only to propose a swapped block variant and to read a two-letter
# all-caps word ("LI", "WU") as a family name.
_CHINESE_SURNAMES = frozenset(
    """
    wang li zhang liu chen yang huang zhao wu zhou xu sun ma zhu hu guo he lin gao
    luo zheng liang xie song tang han feng deng cao peng zeng xiao tian dong pan
    yuan cai jiang yu du ye cheng wei su lu ding ren shen yao jin fan fang shi tan
    liao zou xiong qiu qin jia xue yan hou lei long duan hao kong shao mao chang wan
    gu lai wen qian dai niu mo hong bai meng kang yin xia qi fu zhong cui tao ji
    chan wong cheung leung lee ng chow tsai hsu chiang kuo hwang chu lau yeung
    chiu hsieh tseng chung kwok tsang lam yip fung ho tse mak lui kwan
    """.split()
)
_EAST_ASIAN_SURNAMES = _CHINESE_SURNAMES | frozenset(
    """
    kim park choi jung jeong kang cho yoon yun jang lim shin oh seo kwon ahn yoo
    moon bae baek nam noh ha jeon ko kwak hyun
    sato suzuki takahashi tanaka watanabe ito yamamoto nakamura kobayashi kato
    yoshida yamada sasaki yamaguchi matsumoto inoue kimura hayashi shimizu
    yamazaki mori abe ikeda hashimoto yamashita ishikawa nakajima maeda fujita
    ogawa goto okada hasegawa murakami kondo ishii saito sakamoto endo aoki fujii
    nishimura fukuda ota miura takeuchi nakano okamoto matsuda harada nakagawa
    nguyen tran pham hoang huynh phan vu vo dang bui ngo duong truong dinh
    """.split()
)
# Vietnamese family names before which "Van" is a middle name (văn), not a Dutch
# particle ("Anh Van Nguyen"): the most frequent Vietnamese family names.
_VIETNAMESE_SURNAMES = frozenset(
    """
    nguyen tran le pham hoang huynh phan vu vo dang bui do ho ngo duong ly truong
    dinh mai trinh lam luong ha cao ta doan chu quach thai
    """.split()
)

# Connectors inside a two-part surname ("Ortega y Gasset", "Puig i Cadafalch",
# "Sousa e Silva"): kept with the family name only when written in lower case.
_CONNECTORS = frozenset({"y", "i", "e"})

# Titles dropped from the front of a name. Our own short academic list: nameparser's
# 812 titles include "King", "Wing", "General" and "Count", which are given names.
_TITLES = frozenset(
    """
    dr prof professor mr mrs ms mx miss sir dame rev revd hon pd privdoz
    """.split()
)
# Generational suffixes (Chicago ch. 6 and 8). "V" and "I" are left out (they are
# initials far more often), and so are "Junior"/"Senior" (also surnames).
_GENERATIONAL = frozenset({"jr", "sr", "jnr", "snr", "ii", "iii", "iv"})
# Post-nominal degrees, recognised only as a whole comma part written with a
# lower-case letter ("PhD", "Ph.D.", "M.Sc.") or as "FRS", so that INSPIRE initials
# such as "Wang, J.D." or "Smith, M.D." are never taken for degrees.
_DEGREES = frozenset(
    "phd dphil dsc scd msc bsc mphil mba mdphd pharmd esq frs frse fras".split()
)
# Religious-order post-nominals printed after a name ("Guolei Sun SJ" in arXiv's
# own 2108.10257 test byline): Society of Jesus, Dominicans, Benedictines,
# Franciscans. Dropped when they trail a name of two or more words.
_ORDERS = frozenset({"sj", "op", "osb", "ofm"})

# Collaboration bylines: source: arXiv Authors lines ("LHCb collaboration: R. Aaij",
# "the PHOBOS Collaboration", "LIGO Scientific Collaboration and Virgo
# Collaboration") and the INSPIRE collaboration field.
_COLLAB_STRONG_RE = re.compile(
    r"\b(?:collaborations?|kollaboration|consortium|consortia)\b|\bcollab\.",
    re.IGNORECASE,
)
_COLLAB_WEAK_RE = re.compile(
    r"\b(?:team|group|working group|task force|network|survey)\s*$", re.IGNORECASE
)
_ACRONYM_RE = re.compile(r"\b(?:[A-Z]{2,}\w*|[A-Z]+\d+\w*)\b")


@dataclass(frozen=True)
class PersonName:
    """A parsed personal name.

    Attributes:
        given: given names or initials, Unicode NFC, space-separated tokens as
            printed (``"Jean-Pierre"``, ``"J.-P."``, ``"J. P."``); "" for a mononym.
        family: family name with its particles (``"van der Velde"``,
            ``"García Márquez"``, ``"王"``); "" only for an empty input.
        suffix: generational suffix as printed (``"Jr."``, ``"III"``) or "".
    """

    given: str
    family: str
    suffix: str = ""


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


# Particles that belong to the family name ("First von Last": BibTeX; Chicago ch. 8),
# compared folded: "van", "de", "von", "da", "dos", "du", "ter", "ten", "le", "di",
# "del", "della" and their compounds ("van der", "de la"), extended with nameparser's
# prefix vocabulary (``"mac"`` for "Saunders Mac Lane", ``"san"``, ``"st"``, ...) less
# its one-letter apostrophe forms (which would swallow initials such as "D.") and a
# few words more common as given names in bylines.
_PARTICLES = frozenset(
    """
    van von vom der den des de del della delle dello degli dei di da das dos do du
    la las los le ter ten te zu zum zur af av al el bin ibn
    """.split()
) | frozenset(
    word
    for word in (fold(p).replace(" ", "") for p in NAMEPARSER_CONSTANTS.prefixes)
    if len(word) >= 2 and word not in {"bar", "bat", "bon", "vel", "ua", "heer"}
)


@remembered
def is_collaboration(raw: str) -> bool:
    """Tell whether a byline entry names a collaboration rather than a person.

    Conservative by design, since a false positive removes a person from matching.

    Rules:
        - True when the words "collaboration(s)", "consortium", "consortia",
          "kollaboration" or the abbreviation "collab." occur as whole words
          (``"ATLAS Collaboration"``, ``"The CMS and LHCb Collaborations"``,
          ``"Event Horizon Telescope Consortium"``).
        - "team", "group", "working group", "task force", "network" or "survey"
          count only as the last word of an entry of at least three words that
          starts with "the" or holds an acronym (``"the Suzaku Eta Carinae team"``,
          ``"HPQCD Working Group"``). So ``"Ann Group"`` is a person and
          ``"Particle Data Group"`` is (conservatively) not recognised.
        - Word boundaries throughout: ``"Grouper"`` or ``"Teamson"`` never match.
        - Bracketed text is ignored unless it is all there is: ``"Jason Glyndwr
          Ulery (for the STAR Collaboration)"`` is a person writing for one.

    Source: arXiv ``.abs`` ``Authors:`` lines (``"LHCb collaboration: R. Aaij"``,
    ``"B.Alver, et al, the PHOBOS Collaboration"``, ``"Kenji Hamaguchi, the Suzaku
    Eta Carinae team"``).

    Args:
        raw: one byline entry as printed, LaTeX allowed.

    Returns:
        True for a collaboration, consortium or (as above) team; False otherwise.
    """
    text = latex_to_unicode(raw)
    unbracketed = _remove_brackets(text)
    if any(ch.isalpha() for ch in unbracketed):
        text = unbracketed
    if _COLLAB_STRONG_RE.search(text):
        return True
    if not _COLLAB_WEAK_RE.search(text):
        return False
    words = text.split()
    if len(words) < 3:
        return False
    return words[0].lower() == "the" or bool(_ACRONYM_RE.search(" ".join(words[:-1])))


@remembered
def parse_name(raw: str) -> PersonName:
    """Parse a printed personal name into given, family and suffix.

    Rules, in order:
        1. LaTeX is decoded (latex_to_unicode); bracketed affiliations
           (``"(LAGA)"``, ``"[1]"``), footnote symbols, "et al." and a leading
           "and" are removed.
        2. Native CJK script (no Latin letters) is split by _parse_cjk: family
           first. A name mixing Latin and CJK keeps the Latin form only.
        3. A period glued to a letter separates tokens (``"D.Peressounko"`` ->
           given ``"D."``, family ``"Peressounko"``; ``"J.P. Serre"`` -> given
           ``"J. P."``), as printed on arXiv.
        4. With a comma, the BibTeX forms apply: ``"Last, First"``,
           ``"Last, First, Jr."``, ``"Last, Jr., First"``; ``"First Last, Jr."``
           when the part after the comma is only a generational suffix, and
           ``"First Last, PhD"`` when it is only a degree (dropped). A comma
           form keeps the family part whole: ``"García Márquez, José"`` has family
           ``"García Márquez"``. Lower-case particles trailing the given part
           move to the family (``"Beethoven, Ludwig van"``).
        5. Without a comma, the printed Western order is trusted (see
           _parse_western): the last word is the family name with its particles.
           ``"Wang Xiaoming"`` and ``"Xiaoming Wang"`` cannot be told apart, so
           the first gives family ``"Xiaoming"``; block_key_variants adds the
           swapped key so that both meet in a block. Likewise ``"José García
           Márquez"`` gives family ``"Márquez"`` (variants bridge to the comma
           form). An all-caps family name set against mixed-case given names
           overrides the order (``"WANG Xiaoming"``, ``"José GARCÍA MÁRQUEZ"``).
        6. Titles (Dr, Prof., Professor, Mr, ...) are dropped; generational
           suffixes (Jr., Sr., II, III, IV) go to ``suffix`` and never take the
           family name's place.

    Source: BibTeX name grammar (Patashnik 1988, section 4); Chicago Manual of
    Style ch. 8; arXiv ``.abs`` ``Authors:`` lines; INSPIRE ``author_name``.
    nameparser 2.6 supplies the particle vocabulary; its own split is not used
    because it reads ``"D.Peressounko"`` as one first name, ``"Madonna"`` as a
    first name and its 812 titles ("King", "Wing", "General") as titles.

    Args:
        raw: one author as printed, e.g. ``"Jean-Pierre Serre"``,
            ``"Wang, Zheng"``, ``"Martin N\\"ollenburg"``, ``"王小明"``.

    Returns:
        The parsed name; ``PersonName("", "")`` when nothing name-like is left.
    """
    text = _strip_byline_noise(latex_to_unicode(raw))
    if not text:
        return PersonName(given="", family="")
    if _CJK_RE.search(text):
        if not _LATIN_RE.search(text):
            return _parse_cjk(text)
        text = _SPACE_RE.sub(" ", _CJK_RE.sub(" ", text)).strip()
    text = _GLUED_PERIOD_RE.sub(". ", text)
    parts = [p.strip() for p in text.split(",")]
    parts = [p for p in parts if p]
    if not parts:
        return PersonName(given="", family="")
    if len(parts) == 1:
        return _parse_western(parts[0].split())
    return _parse_comma(parts)


@remembered
def initials(given: str) -> str:
    """Reduce given names to their folded initials.

    Rules: a given name splits into words on spaces, hyphens and periods; each word
    contributes its first folded letter (``"Jean-Pierre"``, ``"J.-P."``,
    ``"J. P."``, ``"J.P."`` -> ``"jp"``; ``"Yu. V."`` -> ``"yv"``). An all-caps
    word of two or three letters without a vowel is a run of initials printed
    without periods (``"JP"`` -> ``"jp"``, as in PubMed/INSPIRE exports).
    Hyphenated Chinese given names count per syllable (``"Xin-Nian"`` -> ``"xn"``,
    ``"Xinnian"`` -> ``"x"``), as printed.

    Source: INSPIRE author-name initials (``"Wang, W.F."``); arXiv bylines.

    Args:
        given: given names as printed (Unicode; LaTeX already decoded).

    Returns:
        Lower-case ASCII initials in order, no separators; "" for an empty given.
    """
    return "".join(token.text[0] for token in _given_tokens(given) if token.text)


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


# --- internals ------------------------------------------------------------------


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


def _family_core(family: str) -> str:
    """Fold a family name, drop leading particles and join the words.

    Args:
        family: family name as printed.

    Returns:
        e.g. ``"velde"`` for ``"van der Velde"``, ``"cerdaduran"`` for
        ``"Cerdá-Durán"``.
    """
    return "".join(_strip_particles(fold(family).split()))


def _remove_brackets(text: str) -> str:
    """Remove balanced ``(...)`` and ``[...]`` groups, innermost first.

    Args:
        text: decoded text.

    Returns:
        The text with each group replaced by a space.
    """
    previous = None
    while previous != text:
        previous, text = text, _BRACKETED_RE.sub(" ", text)
    return text


def _strip_byline_noise(text: str) -> str:
    """Remove affiliation brackets, footnote marks, "et al." and a leading "and".

    An unclosed bracket drops the rest of the entry and words made only of digits
    (footnote numbers) are removed.

    Source: arXiv ``.abs`` ``Authors:`` lines (``"Michael Kuhlen (1)"``,
    ``"Leonid A. Mirny (1"`` cut by a list split, ``"A. Abulencia et al. (CDF
    Collaboration)"``, ``"and Tsvi Piran"``).

    Args:
        text: one decoded byline entry.

    Returns:
        The entry without the noise, whitespace collapsed, stray edge punctuation
        removed.
    """
    text = _UNCLOSED_RE.sub(" ", _remove_brackets(text)).replace(")", " ")
    text = _FOOTNOTE_RE.sub(" ", _ET_AL_RE.sub(" ", text.replace("]", " ")))
    text = _DIGIT_WORD_RE.sub(" ", text)
    text = _SPACE_RE.sub(" ", text).strip(" ,;:()[]")
    return _LEADING_AND_RE.sub("", text).strip(" ,;:")


def _parse_cjk(text: str) -> PersonName:
    """Split a name written in Chinese, Japanese or Korean script.

    Rules:
        - Native order is family first (Chicago ch. 8). With a space (or
          ideographic space) the first word is the family name (``"山田 太郎"``,
          ``"김 민수"``).
        - With a middle dot (``"约翰·史密斯"``, ``"ジョン・スミス"``) the name is a
          transliterated Western name: the last part is the family name.
        - Hangul without space: the first syllable, or a two-syllable compound
          surname (남궁, 황보, ...), is the family name (``"김민수"`` -> 김).
        - Han characters followed by kana: the leading Han run is the (Japanese)
          family name (``"田中さくら"`` -> 田中).
        - Han only, without space: a listed compound surname (欧阳, 司马, ...) takes
          two characters; otherwise a name of two or three characters has a
          one-character family name (Chinese: ``"王小明"`` -> 王, 小明) and a
          longer one a two-character family name (Japanese: ``"山田太郎"`` -> 山田).
          A three-character Japanese name (``"山田晃"``) is mis-split: a known
          limitation.

    Args:
        text: decoded name in CJK script with no Latin letters.

    Returns:
        The parsed name; a single character or kana-only name is a family name.
    """
    if _CJK_DOT_RE.search(text):
        pieces = [p.strip() for p in _CJK_DOT_RE.split(text) if p.strip()]
        return PersonName(given="".join(pieces[:-1]), family=pieces[-1])
    words = text.split()
    if len(words) >= 2:
        return PersonName(given="".join(words[1:]), family=words[0])
    name = words[0]
    if len(name) == 1:
        return PersonName(given="", family=name)
    if _HANGUL_RE.search(name):
        size = 2 if len(name) >= 3 and name[:2] in _KOREAN_COMPOUND_SURNAMES else 1
        return PersonName(given=name[size:], family=name[:size])
    han = _HAN_RUN_RE.match(name)
    if _KANA_RE.search(name):
        if han and han.end() < len(name):
            return PersonName(given=name[han.end() :], family=han.group())
        return PersonName(given="", family=name)
    if len(name) >= 3 and name[:2] in _CHINESE_COMPOUND_SURNAMES:
        size = 2
    else:
        size = 1 if len(name) <= 3 else 2
    return PersonName(given=name[size:], family=name[:size])


def _bare(token: str) -> str:
    """Fold a token and drop everything but letters and digits.

    Args:
        token: one printed word.

    Returns:
        e.g. ``"jr"`` for ``"Jr."``, ``"privdoz"`` for ``"Priv.-Doz."``.
    """
    return "".join(fold(token).split())


def _is_generational(part: str) -> bool:
    """Tell whether a word or comma part is a generational suffix (Jr., III)."""
    words = part.split()
    return len(words) == 1 and _bare(words[0]) in _GENERATIONAL


def _is_degree(part: str) -> bool:
    """Tell whether a comma part is only post-nominal degrees (PhD, M.Sc.).

    Args:
        part: one comma-separated part of a name.

    Returns:
        True when every word is in _DEGREES and the part has a lower-case letter
        (so INSPIRE initials such as ``"J.D."`` are not degrees), or is ``"FRS"``.
    """
    words = part.split()
    if not words:
        return False
    if _bare(part) not in _DEGREES and not all(_bare(w) in _DEGREES for w in words):
        return False
    return any(ch.islower() for ch in part) or _bare(part) == "frs"


def _drop_titles(words: list[str]) -> list[str]:
    """Drop leading titles while at least one other word remains.

    Args:
        words: printed words in order.

    Returns:
        The words without leading titles (``["Prof.", "Dr.", "Hans", "Berg"]`` ->
        ``["Hans", "Berg"]``).
    """
    index = 0
    while index < len(words) - 1 and _bare(words[index]) in _TITLES:
        index += 1
    return words[index:]


def _is_initial_word(word: str) -> bool:
    """Tell whether a printed word is an initial or abbreviation, not a full name.

    Args:
        word: one printed word, e.g. ``"J."``, ``"J.-P."``, ``"Yu."``, ``"JP"``.

    Returns:
        True for a single letter (with or without period), a word ending in a
        period, or an all-caps two- or three-letter run without a vowel.
    """
    tokens = _given_tokens(word)
    return bool(tokens) and all(t.kind != "full" for t in tokens)


def _is_caps_word(word: str) -> bool:
    """Tell whether a word is an all-caps full name word (``"WANG"``, ``"LI"``).

    Args:
        word: one printed word.

    Returns:
        True for an upper-case word of three or more letters with a vowel, or a
        two-letter one that is a listed East Asian family name (``"LI"``, ``"WU"``).
    """
    letters = [ch for ch in word if ch.isalpha()]
    if len(letters) < 2 or not all(ch.isupper() for ch in letters):
        return False
    if _is_initial_word(word):
        return False
    folded = _bare(word)
    if len(letters) == 2:
        return folded in _EAST_ASIAN_SURNAMES
    return bool(set(anyascii("".join(letters))) & _VOWELS)


def _is_particle(word: str, following: str, preceding: str) -> bool:
    """Tell whether a word is a family-name particle before ``following``.

    "Van" next to a Vietnamese family name is the middle name Văn, not a Dutch
    particle: after it in Vietnamese order (``"Nguyen Van Khue"``) or before it in
    Western order (``"Anh Van Nguyen"``). Source: Vietnamese naming order
    (family, middle, given), often reversed in Western bylines with the middle
    name kept in place; arXiv ``.abs`` ``Authors:`` ``"Nguyen Van Khue"``.

    Args:
        word: the candidate particle as printed.
        following: the next word as printed.
        preceding: the word before, or "" when ``word`` is the first.

    Returns:
        True when ``word`` belongs to the family name.
    """
    folded = _bare(word)
    if folded not in _PARTICLES:
        return False
    return not (
        folded == "van"
        and (
            _bare(following) in _VIETNAMESE_SURNAMES
            or _bare(preceding) in _VIETNAMESE_SURNAMES
        )
    )


def _parse_western(words: list[str], suffix: str = "") -> PersonName:
    """Parse words printed in Western order: given names, then family name.

    Rules:
        - Titles dropped; trailing post-nominals (``"PhD"``, ``"SJ"``) dropped
          when two words remain; a trailing generational suffix is taken off only
          if a word remains before it (``"John Smith III"``,
          ``"James M. Valles Jr"``).
        - One word is a mononym: the family name (``"Madonna"``).
        - An all-caps run at either end set against mixed-case words is the family
          name (``"WANG Xiaoming"``, ``"José GARCÍA MÁRQUEZ"``).
        - Trailing initials after a full word mean family-first order
          (``"Serre J. P."``, ``"Smith JP"``).
        - Otherwise the last word is the family name; particles before it join it
          (``"Luc Van Gool"``, ``"Maria de la Cruz"``) as do lower-case connectors
          (``"José Ortega y Gasset"``), but one given word always remains, so
          ``"Van Nguyen"``, ``"Di Wu"`` and ``"Le Zhang"`` keep "Van", "Di", "Le" as
          given names. A name that starts with a lower-case particle and has only
          particles before its last word is all family (``"van Beethoven"``).

    Args:
        words: printed words in order, no commas.
        suffix: a suffix already found (from a comma part), kept unless a trailing
            one is found here.

    Returns:
        The parsed name.
    """
    words = _drop_titles(words)
    while len(words) >= 3 and (_bare(words[-1]) in _ORDERS or _is_degree(words[-1])):
        words = words[:-1]
    if len(words) >= 2 and _is_generational(words[-1]):
        suffix = words[-1]
        words = words[:-1]
    if not words:
        return PersonName(given="", family="", suffix=suffix)
    if len(words) == 1:
        return PersonName(given="", family=words[0], suffix=suffix)

    caps = [_is_caps_word(w) for w in words]
    mixed = [any(ch.islower() for ch in w) for w in words]
    if any(caps) and any(mixed):
        start = caps.index(True)
        end = len(caps) - caps[::-1].index(True)
        run_ok = all(caps[start:end])
        if run_ok and start == 0 and end < len(words):
            return _name(words[end:], words[:end], suffix)
        if run_ok and end == len(words) and start > 0:
            return _name(words[:start], words[start:], suffix)

    if _is_initial_word(words[-1]) and not _is_initial_word(words[0]):
        split = len(words)
        while split > 1 and _is_initial_word(words[split - 1]):
            split -= 1
        return _name(words[split:], words[:split], suffix)

    start = len(words) - 1
    while start >= 1:
        before = words[start - 1]
        if start >= 2 and before in _CONNECTORS:
            start -= 2
        elif _is_particle(
            before, words[start], words[start - 2] if start >= 2 else ""
        ) and (start >= 2 or before[:1].islower()):
            start -= 1
        else:
            break
    return _name(words[:start], words[start:], suffix)


def _name(given: list[str], family: list[str], suffix: str) -> PersonName:
    """Build a PersonName from word lists.

    Args:
        given: given-name words in printed order.
        family: family-name words in printed order.
        suffix: generational suffix or "".

    Returns:
        The PersonName with words joined by single spaces.
    """
    return PersonName(given=" ".join(given), family=" ".join(family), suffix=suffix)


def _parse_comma(parts: list[str]) -> PersonName:
    """Parse a name with commas (BibTeX "von Last, First" family).

    Args:
        parts: the non-empty comma-separated parts, at least two.

    Returns:
        The parsed name (rules in parse_name, step 4).
    """
    head, rest = parts[0], parts[1:]
    if all(_is_generational(p) or _is_degree(p) for p in rest):
        suffix = next((p for p in rest if _is_generational(p)), "")
        return _parse_western(head.split(), suffix=suffix)
    suffix = ""
    if _is_generational(rest[0]) and len(rest) >= 2:
        suffix, given_part, extra = rest[0], rest[1], rest[2:]
    else:
        given_part, extra = rest[0], rest[1:]
    for part in extra:
        if _is_generational(part) and not suffix:
            suffix = part
    family = _drop_titles(head.split())
    if len(family) >= 2 and _is_generational(family[-1]) and not suffix:
        suffix = family.pop()
    given = _drop_titles(given_part.split())
    moved: list[str] = []
    while len(given) >= 2 and given[-1] in _PARTICLES:
        moved.insert(0, given.pop())
    return _name(given, moved + family, suffix)
