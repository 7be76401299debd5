"""Name normalisation for matching: pure functions, no ORM.

(First version; see tests/curation/test_names.py for the rules and their sources.)
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from anyascii import anyascii
from nameparser import HumanName
from pylatexenc.latex2text import LatexNodes2Text

_LATEX = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)
_COLLAB_RE = re.compile(
    r"\b(collaborations?|consortium|consortia|team|group|collaborative|project)\b", re.I
)


@dataclass(frozen=True)
class PersonName:
    """A parsed personal name.

    Attributes:
        given: given names or initials as printed, Unicode NFC (``"Jean-Pierre"``).
        family: family name with its particles (``"van der Velde"``).
        suffix: generational suffix (``"Jr."``, ``"III"``) or "".
    """

    given: str
    family: str
    suffix: str = ""


def latex_to_unicode(text: str) -> str:
    """Turn LaTeX accents and commands into Unicode, NFC-normalised.

    Args:
        text: e.g. ``"C. Bal\\'azs"`` or ``"M. N{\\"o}llenburg"``.

    Returns:
        ``"C. Balázs"``; text without a backslash or brace is returned NFC-normalised.
    """
    if "\\" in text or "{" in text:
        text = _LATEX.latex_to_text(text)
    return unicodedata.normalize("NFC", re.sub(r"\s+", " ", text).strip())


def fold(text: str) -> str:
    """Fold to a lower-case ASCII key: ``"Balázs"`` -> ``"balazs"``."""
    return re.sub(r"[^a-z0-9 ]+", "", anyascii(text).lower()).strip()


def is_collaboration(raw: str) -> bool:
    """True when the byline entry names a collaboration or consortium, not a person."""
    return bool(_COLLAB_RE.search(raw))


def parse_name(raw: str) -> PersonName:
    """Parse ``"First Last"`` or ``"Last, First"`` (LaTeX allowed) into a PersonName."""
    text = latex_to_unicode(raw)
    name = HumanName(text)
    family = name.last
    given = " ".join(p for p in (name.first, name.middle) if p)
    return PersonName(given=given, family=family, suffix=name.suffix)


def block_key(given: str, family: str) -> str:
    """Folded family name (no spaces) and first given initial: ``"velde j"``."""
    fam = fold(family).replace(" ", "")
    first = fold(given)[:1]
    return f"{fam} {first}".strip()


def name_key(given: str, family: str) -> str:
    """Folded ``"family|initials"`` key: ``("Jean-Pierre", "Serre")`` -> ``"serre|jp"``."""
    initials = "".join(w[0] for w in re.split(r"[\s.\-]+", fold(given)) if w)
    return f"{fold(family).replace(' ', '')}|{initials}"
