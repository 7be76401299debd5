"""Identifiers: arXiv ids, DOIs, ORCID iDs, ROR ids, OpenAlex and Semantic Scholar
work and author ids, arXiv categories: one validator per kind, whichever source
or user brought the value.

Each ``*_normalise`` takes what a curator, a user or a source typed (a bare id or a
resolver URL) and returns the canonical bare form, or raises ``ValueError`` whose
message names the value and what is wrong with it.
"""

from __future__ import annotations

import re

# ASCII digits only ([0-9], not \d, which matches any Unicode digit: full-width
# "０" would pass and make a look-alike of another researcher's iD). A scheme
# needs its resolver host.
ORCID_RE = re.compile(
    r"^(?:(?:https?://)?(?:www\.)?orcid\.org/)?"
    r"([0-9]{4})-?([0-9]{4})-?([0-9]{4})-?([0-9]{3}[0-9X])$",
    re.IGNORECASE | re.ASCII,
)
OPENALEX_AUTHOR_RE = re.compile(
    r"^(?:(?:https?://)?(?:openalex\.org/|api\.openalex\.org/authors/))?"
    r"(A[0-9]{4,12})$",
    re.IGNORECASE | re.ASCII,
)
# ROR ids: "0", six characters of Crockford base32 (no i, l, o, u), two check
# digits. Source: ROR docs, "ROR identifier pattern".
ROR_ID_RE = re.compile(r"0[a-hj-km-np-tv-z0-9]{6}[0-9]{2}", re.ASCII)
# arXiv category names (``hep-th``, ``cs.LG``, ``cond-mat.str-el``), at most 40
# characters (Paper.primary_category).
ARXIV_CATEGORY = re.compile(r"[A-Za-z][A-Za-z.\-]{0,39}", re.ASCII)
S2_AUTHOR_RE = re.compile(
    r"^(?:(?:https?://)?www\.semanticscholar\.org/author/(?:[^/]+/)?)?([0-9]{1,12})$",
    re.ASCII,
)


# Source: arXiv identifier scheme (https://info.arxiv.org/help/arxiv_identifier.html):
# YYMM.NNNN(N) since 2007, archive[.SC]/YYMMNNN before; archive names are short
# ("hep-th", "q-alg", "cond-mat"), so their length is bounded, as is the version.
# ASCII digits only ("٠٧٠٤.٠٠٠٧" is no arXiv id); the number has 4 digits to
# 1412 and 5 from 1501 (arxiv_id_split).
ARXIV_ID_RE = re.compile(
    r"(?P<id>\d{4}\.\d{4,5}|[a-z]{1,10}(?:-[a-z]{1,10})?(?:\.[A-Za-z]{2})?/\d{7})"
    r"(?:v(?P<version>[1-9]\d{0,3}))?",
    re.ASCII,
)
_ARXIV_PREFIX_RE = re.compile(r"^arxiv:\s*", re.IGNORECASE)
# A DOI: "10.", a registrant code of digits (dots allowed), "/", a suffix without
# whitespace. Source: DOI Handbook 2.2 (syntax); Crossref's advice that nearly all
# DOIs match 10.\d{4,9}/\S+. A ".." path segment is refused: no DOI holds one,
# and a resolver link must not climb out of its path.
_DOI_RE = re.compile(r"^10\.[0-9]{4,9}(?:\.[0-9]+)*/\S+$")
_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", re.IGNORECASE)
# The longest DOI stored (Paper.doi); no registered DOI comes near it.
DOI_MAX_CHARS = 255
# Source: OpenAlex docs, "Work object" (``id``: https://openalex.org/W...).
OPENALEX_WORK_RE = re.compile(
    r"^(?:(?:https?://)?(?:openalex\.org/|api\.openalex\.org/works/))?(W[0-9]{4,12})$",
    re.IGNORECASE | re.ASCII,
)
# Source: Semantic Scholar Graph API, ``paper.paperId`` (40 hexadecimal digits).
S2_PAPER_RE = re.compile(r"^[0-9a-f]{40}$", re.IGNORECASE | re.ASCII)


def arxiv_id_split(value: str) -> tuple[str, int | None]:
    """Split ``"hep-th/9709111v3"`` into ``("hep-th/9709111", 3)``.

    Args:
        value: an arXiv id, new style (``0704.0001``) or old
            (``hep-th/9901001``), with an optional ``vN``.

    Returns:
        The id without version, and the version or None when there is none.

    Raises:
        ValueError: not an arXiv id: ASCII digits, and 4 after the dot to
            1412, 5 from 1501 (the scheme above); the message quotes it.
    """
    match = ARXIV_ID_RE.fullmatch(value.strip()) if isinstance(value, str) else None
    if not match:
        raise ValueError(f"{str(value)[:80]!r} is not an arXiv id")
    new_style = re.fullmatch(r"(\d{4})\.(\d+)", match.group("id"), re.ASCII)
    if new_style and (len(new_style.group(2)) == 5) != (new_style.group(1) >= "1501"):
        raise ValueError(
            f"{value[:80]!r} is not an arXiv id (4 digits after the dot to 1412, "
            "5 from 1501)"
        )
    version = match.group("version")
    return match.group("id"), int(version) if version else None


def arxiv_id_normalise(value: str) -> str:
    """``2201.05500`` from ``arXiv:2201.05500v2`` or a bare id, version dropped.

    Raises:
        ValueError: not an arXiv id (:func:`arxiv_id_split`).
    """
    text = _ARXIV_PREFIX_RE.sub("", value.strip()) if isinstance(value, str) else value
    return arxiv_id_split(text)[0]


def doi_normalise(value: str) -> str:
    """A DOI as stored: no resolver prefix, lower case (DOIs are case-insensitive).

    Source: DOI Handbook 2.4 ("case-insensitive"); Crossref ``message.DOI``.
    """
    return _DOI_PREFIX_RE.sub("", value.strip()).lower()


def doi_valid(doi: str) -> bool:
    """Whether a normalised DOI (:func:`doi_normalise`) has a DOI's shape.

    ASCII digits in the prefix (a full-width "１２３４" is a look-alike), at most
    :data:`DOI_MAX_CHARS` characters, only printable characters (a zero-width
    space is none), and no ``.`` or ``..`` path segment: no DOI holds one, and
    a URL resolver would fold it away and ask for another DOI. Characters a
    URL gives meaning to (``%``, ``\\``, ``?``, ``#``) are kept: a link
    percent-encodes them.
    """
    return (
        len(doi) <= DOI_MAX_CHARS
        and bool(_DOI_RE.match(doi))
        and doi.isprintable()  # no zero-width or other format characters
        and not {".", ".."} & set(doi.split("/"))
    )


def doi_check(value: str) -> str:
    """The stored form of a DOI (:func:`doi_normalise`), checked (:func:`doi_valid`).

    Raises:
        ValueError: not a DOI; the message quotes it.
    """
    doi = doi_normalise(value)
    if not doi_valid(doi):
        raise ValueError(f"{value[:80]!r} is not a DOI (10.NNNN/...)")
    return doi


def openalex_work_normalise(value: str) -> str:
    """``W2741809807`` from a bare OpenAlex work id or its URL.

    Raises:
        ValueError: not an OpenAlex work id.
    """
    match = OPENALEX_WORK_RE.match(value.strip())
    if not match:
        raise ValueError(f"{value[:60]!r} is not an OpenAlex work id (W123...)")
    return match.group(1).upper()


def s2_paper_normalise(value: str) -> str:
    """A Semantic Scholar paperId (40 hexadecimal digits, lower case).

    Raises:
        ValueError: not a paperId.
    """
    if not S2_PAPER_RE.match(value.strip()):
        raise ValueError(f"{value[:60]!r} is not a Semantic Scholar paperId")
    return value.strip().lower()


def orcid_checksum(base_digits: str) -> str:
    """The ORCID check character of the first 15 digits.

    Source: ISO 7064 MOD 11-2 as ORCID documents it ("Structure of the ORCID
    Identifier", support.orcid.org/hc/en-us/articles/360006897674).

    Args:
        base_digits: the 15 digits before the check character.

    Returns:
        "0"-"9" or "X".
    """
    total = 0
    for digit in base_digits:
        total = (total + int(digit)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


def orcid_normalise(value: str) -> str:
    """``0000-0002-1825-0097`` from a bare iD or an orcid.org URL, checksum verified.

    Args:
        value: e.g. ``https://orcid.org/0000-0002-1825-0097``,
            ``0000000218250097`` or ``0000-0002-1825-009x``.

    Returns:
        The hyphenated iD with an upper-case ``X`` check character.

    Raises:
        ValueError: not an ORCID iD, or its check character is wrong.
    """
    match = ORCID_RE.match(value.strip())
    if not match:
        raise ValueError(f"{value[:60]!r} is not an ORCID iD (0000-0000-0000-0000)")
    digits = "".join(match.groups()).upper()
    if orcid_checksum(digits[:15]) != digits[15]:
        raise ValueError(f"ORCID iD {value[:60]!r} has a wrong check digit")
    return "-".join(digits[i : i + 4] for i in range(0, 16, 4))


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
_ROR_URL_RE = re.compile(
    r"^(?:(?:https?://)?(?:www\.)?ror\.org/)?(0[a-hj-km-np-tv-z0-9]{6}[0-9]{2})$",
    re.IGNORECASE | re.ASCII,
)


def ror_normalise(value: str) -> str:
    """``05dxps055`` from a bare ROR id or its ``https://ror.org/`` URL, checked.

    Source: ROR docs, "ROR identifier pattern": a leading 0, six characters of
    Crockford base32 and two check digits, ISO/IEC 7064 MOD 97-10 over the number
    the first seven characters encode (98 - n * 100 mod 97).

    Raises:
        ValueError: not a ROR id, or its check digits are wrong.
    """
    match = _ROR_URL_RE.match(value.strip()) if isinstance(value, str) else None
    if not match:
        raise ValueError(f"{str(value)[:60]!r} is not a ROR id (https://ror.org/0...)")
    rid = match.group(1).lower()
    number = 0
    for character in rid[:7]:
        number = number * 32 + _CROCKFORD.index(character)
    if f"{98 - (number * 100) % 97:02d}" != rid[7:]:
        raise ValueError(f"ROR id {rid!r} has wrong check digits")
    return rid


def openalex_author_normalise(value: str) -> str:
    """``A5023888391`` from a bare OpenAlex author id or its URL.

    Source: OpenAlex docs, "Author object": ``id`` is ``https://openalex.org/A...``.

    Raises:
        ValueError: not an OpenAlex author id.
    """
    match = OPENALEX_AUTHOR_RE.match(value.strip())
    if not match:
        raise ValueError(f"{value[:60]!r} is not an OpenAlex author id (A123...)")
    return match.group(1).upper()


def s2_author_normalise(value: str) -> str:
    """The numeric Semantic Scholar author id from a bare id or an author page URL.

    Source: Semantic Scholar Graph API, ``author.authorId`` (a decimal string).

    Raises:
        ValueError: not a Semantic Scholar author id.
    """
    match = S2_AUTHOR_RE.match(value.strip())
    if not match:
        raise ValueError(f"{value[:60]!r} is not a Semantic Scholar author id")
    return match.group(1)


NORMALISERS = {
    "orcid": orcid_normalise,
    "openalex_author_id": openalex_author_normalise,
    "s2_author_id": s2_author_normalise,
}
