"""Safe XML parsing for every XML source (OAI-PMH, Atom): no entities, no network.

lxml is run with ``resolve_entities=False, no_network=True, load_dtd=False,
huge_tree=False`` and any DTD that declares entities is refused outright, which
shuts out billion-laughs expansion and external-entity (XXE) reads. Source: the
defusedxml threat list (https://github.com/tiran/defusedxml#attack-vectors) and
lxml's FAQ on parser options.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

from lxml import etree

from harvest.records import RawItem, RecordError

_XML_DECLARATION_RE = re.compile(r"^\s*<\?xml[^>]*\?>")
_ENTITY_DECL_RE = re.compile(rb"<!ENTITY", re.IGNORECASE)
# How far into a document the DTD check looks before parsing (bytes); a DOCTYPE
# after that would come after the root element, which XML does not allow.
_HEAD = 65536


class MalformedXML(RecordError):
    """The document is not well-formed XML (truncated, bad character, bad nesting).

    Attributes:
        line: 1-based line of the first error, as lxml reports it.
        column: 1-based column on that line (1 when unknown).
    """

    def __init__(self, message: str, line: int, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def parse_xml(text: str | bytes, where: str) -> etree._Element:
    """Parse one XML document safely.

    Args:
        text: the document; a ``str`` has its XML declaration removed (lxml refuses
            a str that declares an encoding) and is parsed as UTF-8.
        where: the locator named in errors (file, record).

    Returns:
        The root element.

    Raises:
        RecordError: the document declares entities in a DTD ("refused XML with a
            DTD declaring entities"), is malformed or truncated ("malformed XML
            at line L, column C: ...", a :class:`MalformedXML`), or holds a lone
            surrogate; each message starts with ``where``.
    """
    if isinstance(text, str):
        text = _XML_DECLARATION_RE.sub("", text, count=1)
        try:
            text = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise RecordError(
                f"{where}: invalid Unicode at character {exc.start} "
                "(a lone surrogate, e.g. a bad \\u escape in JSON)"
            ) from exc
    head = text[:_HEAD]
    if b"<!DOCTYPE" in head.upper() and _ENTITY_DECL_RE.search(head):
        raise RecordError(f"{where}: refused XML with a DTD declaring entities")
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False
    )
    try:
        root = etree.fromstring(text, parser)
    except etree.XMLSyntaxError as exc:
        line, column = exc.position
        raise MalformedXML(
            f"{where}: malformed XML at line {line}, column {column}: {exc.msg}",
            line,
            column or 1,
        ) from exc
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise RecordError(f"{where}: refused XML with a DTD declaring entities")
    return root


def element_text(element: etree._Element | None) -> str:
    """All text inside an element, stripped; "" for a missing element."""
    if element is None:
        return ""
    return "".join(element.itertext()).strip()


def root_tag(path: Path) -> str:
    """The root element of an XML file, read no further than its start tag.

    Comments, processing instructions and a DOCTYPE before it are passed
    over, whatever their length; the encoding is the one the file declares
    (or its byte-order mark); entities are not resolved, nothing is fetched.

    Args:
        path: any file.

    Returns:
        The root's tag in Clark notation (``"{http://www.w3.org/2005/Atom}feed"``
        for ``<feed xmlns=...>`` and ``<ns0:feed xmlns:ns0=...>`` alike,
        ``"feed"`` without a namespace), or ``""`` when the file cannot be
        read or is not XML up to its root's start tag.
    """
    try:
        with path.open("rb") as handle:
            for _, element in etree.iterparse(
                handle,
                events=("start",),
                resolve_entities=False,
                no_network=True,
                load_dtd=False,
                huge_tree=False,
            ):
                return element.tag if isinstance(element.tag, str) else ""
    except (OSError, etree.LxmlError, ValueError):
        return ""
    return ""


_XMLNS_RE = re.compile(r"""\sxmlns(?::[\w.-]+)?=(?:"[^"]*"|'[^']*')""")


_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
_DECLARED_ENCODING_RE = re.compile(
    rb"""^\s*<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z][\w.-]*)["']"""
)
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def decode_document(text: str | bytes) -> str:
    """An XML document's text, decoded as the document says.

    Args:
        text: the document; a ``str`` is returned as it is.

    Returns:
        The text decoded by its byte-order mark (UTF-8, UTF-16), else by the
        encoding its XML declaration names (``ISO-8859-1``), else as UTF-8
        (XML 1.0, section 4.3.3 and appendix F); bytes that do not decode are
        replaced (U+FFFD), and an encoding Python does not know reads as UTF-8.
    """
    if isinstance(text, str):
        return text
    for bom, codec in _BOMS:
        if text.startswith(bom):
            return text.decode(codec, errors="replace")
    declared = _DECLARED_ENCODING_RE.match(text[:200])
    codec = declared.group(1).decode("ascii") if declared else "utf-8"
    try:
        return text.decode(codec, errors="replace")
    except LookupError:
        return text.decode("utf-8", errors="replace")


def salvage_fragments(text: str | bytes, tag: str) -> list[tuple[str, int, int]]:
    """Cut the complete ``<tag>...</tag>`` elements out of a malformed document.

    Used when a multi-record page does not parse (one record carries a forbidden
    character, or the page is truncated): each whole record is then parsed on its
    own, so one bad record costs only itself. The namespace declarations of the
    document's root element are copied onto each fragment so it parses alone.

    Args:
        text: the document (bytes decoded by :func:`decode_document`).
        tag: the local name of the record element, without prefix (``"record"``,
            ``"entry"``; a prefixed ``<ns0:entry>`` is found too); elements of
            that name must not nest.

    Returns:
        ``[(fragment, start, end)]`` in document order: character offsets of the
        element in the (decoded) document; elements inside comments are none.
    """
    text = decode_document(text)
    # Comments (and what they quote: "<feed ...>", "<entry>...</entry>") are
    # blanked, same length, so offsets still point into the document.
    text = _COMMENT_RE.sub(lambda m: " " * len(m.group(0)), text)
    root_tag = re.search(r"<(?![?!])[^>]*>", text)
    declarations = _XMLNS_RE.findall(root_tag.group(0)) if root_tag else []
    # With or without a namespace prefix (<ns0:entry>...</ns0:entry>), the
    # same one on the end tag.
    pattern = re.compile(
        rf"<((?:[A-Za-z_][\w.-]*:)?){tag}(?:\s[^>]*)?>.*?</\1{tag}>", re.DOTALL
    )
    fragments = []
    for match in pattern.finditer(text):
        fragment = match.group(0)
        start_tag_end = fragment.index(">")
        own = fragment[:start_tag_end]
        extra = "".join(
            d for d in declarations if d.split("=", 1)[0].strip() not in own
        )
        fragment = fragment[:start_tag_end] + extra + fragment[start_tag_end:]
        fragments.append((fragment, match.start(), match.end()))
    return fragments


def salvage_items(
    text: str | bytes,
    locator: str,
    error: MalformedXML,
    *,
    tag: str,
    external_id: Callable[[str], str | None],
) -> Iterator[RawItem]:
    """RawItems for the whole records of a malformed page, and one for the fault.

    Args:
        text: the malformed document.
        locator: the document's locator.
        error: the parse error of the whole document (its line is used).
        tag: local name of the record element (``"record"``, ``"entry"``).
        external_id: reads a fragment's id (None when it has none).

    Returns:
        One RawItem per whole record (locator ``<locator>#<tag>-N``), each parsed
        later on its own; then, when the fault's line lies in none of them
        (truncation, damage between records), an item for the document whose
        ``problem`` is the error with how many records were read alone.
    """
    fragments = salvage_fragments(text, tag)
    decoded = decode_document(text)
    lines = decoded.split("\n")
    # The fault's character offset: a line-only test would take a one-line page
    # cut inside its last record for a fault within a whole record.
    fault = sum(len(line) + 1 for line in lines[: error.line - 1]) + error.column - 1
    covered = False
    for index, (fragment, first, last) in enumerate(fragments):
        item_locator = f"{locator}#{tag}-{index}"
        yield RawItem(
            external_id=external_id(fragment) or item_locator,
            payload=fragment,
            locator=item_locator,
        )
        covered = covered or first <= fault < last
    if not covered:
        yield RawItem(
            external_id=f"file:{locator}",
            payload=decoded,
            locator=locator,
            problem=(
                f"{error} ({len(fragments)} whole <{tag}> elements read one by one)"
            ),
        )
