"""Parsing a printed author name into :class:`PersonName`: the byline's noise
removed, titles and degrees dropped, CJK, comma and Western orders read.
"""

from __future__ import annotations

from dataclasses import dataclass

from anyascii import anyascii

from curation.names.tables import (
    _ACRONYM_RE,
    _CHINESE_COMPOUND_SURNAMES,
    _COLLAB_STRONG_RE,
    _COLLAB_WEAK_RE,
    _CONNECTORS,
    _DEGREES,
    _EAST_ASIAN_SURNAMES,
    _GENERATIONAL,
    _KOREAN_COMPOUND_SURNAMES,
    _ORDERS,
    _PARTICLES,
    _TITLES,
    _VIETNAMESE_SURNAMES,
)
from curation.names.text import (
    _BRACKETED_RE,
    _CJK_DOT_RE,
    _CJK_RE,
    _DIGIT_WORD_RE,
    _ET_AL_RE,
    _FOOTNOTE_RE,
    _GLUED_PERIOD_RE,
    _HAN_RUN_RE,
    _HANGUL_RE,
    _KANA_RE,
    _LATIN_RE,
    _LEADING_AND_RE,
    _SPACE_RE,
    _UNCLOSED_RE,
    fold,
    latex_to_unicode,
    remembered,
)
from curation.names.tokens import _VOWELS, _given_tokens


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
