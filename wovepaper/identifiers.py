"""Identifiers: ORCID iD, OpenAlex and Semantic Scholar author ids, ROR ids, arXiv
categories.

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
