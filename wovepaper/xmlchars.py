"""Characters that XML 1.0 cannot carry, and Unicode's noncharacters.

XML 1.0 (Fifth Edition), production [2] Char, allows ``#x9 | #xA | #xD |
[#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]``
(https://www.w3.org/TR/xml/#charsets): the C0 controls other than tab, line
feed and carriage return, the surrogates, U+FFFE and U+FFFF are out. Unicode's
66 noncharacters (U+FDD0 to U+FDEF, and the last two code points of each of
the 17 planes; The Unicode Standard, section 23.7) are "not for open
interchange" and are discouraged by XML 1.0's note on Char too. A title holding
U+FFFF made a whole RSS feed invalid for strict readers (issue 48).

Harvested text loses them once, at the record boundary
(:func:`harvest.records.clean_text`), and every XML writer removes them again
(:func:`xml_safe`), for text that came another way (an admin edit).
"""

from __future__ import annotations

import re

# The noncharacters as a regex character class body.
NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}"
    for plane in range(17)
)
# C0 controls XML 1.0 refuses (tab, line feed and carriage return stay).
XML_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f"
_NOT_XML = re.compile(f"[{XML_CONTROLS}\ud800-\udfff{NONCHARACTERS}]")


def xml_safe(text: str, replacement: str = " ") -> str:
    """``text`` with every character XML 1.0 cannot carry, and every
    noncharacter, replaced by ``replacement`` (a space, so words around a
    stray form feed stay apart)."""
    return _NOT_XML.sub(replacement, text)
