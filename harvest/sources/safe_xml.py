"""Safe XML parsing for every XML source (OAI-PMH, Atom): no entities, no network.

lxml is run with ``resolve_entities=False, no_network=True, load_dtd=False,
huge_tree=False`` and any DTD that declares entities is refused outright, which
shuts out billion-laughs expansion and external-entity (XXE) reads. Source: the
defusedxml threat list (https://github.com/tiran/defusedxml#attack-vectors) and
lxml's FAQ on parser options.
"""

from __future__ import annotations

import re

from lxml import etree

from harvest.records import RecordError

_XML_DECLARATION_RE = re.compile(r"^\s*<\?xml[^>]*\?>")
_ENTITY_DECL_RE = re.compile(rb"<!ENTITY", re.IGNORECASE)
# How far into a document the DTD check looks before parsing (bytes); a DOCTYPE
# after that would come after the root element, which XML does not allow.
_HEAD = 65536


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
            DTD declaring entities"), or is malformed or truncated ("malformed XML
            at line L, column C: ..."); both messages start with ``where``.
    """
    if isinstance(text, str):
        text = _XML_DECLARATION_RE.sub("", text, count=1).encode("utf-8")
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
        raise RecordError(
            f"{where}: malformed XML at line {line}, column {column}: {exc.msg}"
        ) from exc
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise RecordError(f"{where}: refused XML with a DTD declaring entities")
    return root
