"""Parse arXiv OAI-PMH records in Dublin Core (``metadataPrefix=oai_dc``) (no ORM).

:func:`harvest.sources.arxiv_oai.parse_oai_record` cuts and safely parses the
``<record>`` and hands its ``<metadata>/<oai_dc:dc>`` element here; the header
(identifier, datestamp, ``status="deleted"``) is read there for both formats.

How arXiv fills Dublin Core (seen in the real ``ListRecords`` page
``oai_dc/atomiklabs_listrecords_oai_dc_cs_2024-01-25.xml`` and in arXiv's own
responses): ``dc:creator`` is ``"keyname, forenames"`` (or the keyname alone);
``dc:description`` holds the abstract and, in a second element, ``"Comment: ..."``;
``dc:date`` gives one date per version, oldest first; ``dc:identifier`` holds the
abstract page ``http://arxiv.org/abs/<id>``, then the journal reference as printed
and ``doi:<doi>`` when the paper has them; ``dc:rights`` the licence URL.

Categories are left empty. ``dc:subject`` holds subject names such as ``"Computer
Science - Information Theory"``, not category codes; mapping them back needs
arXiv's whole taxonomy with its aliases (``"Mathematics - Information Theory"`` is
``math.IT``, an alias of ``cs.IT``), and the primary category is not marked, so
the "primary first" order of :attr:`PaperRecord.categories` could not be honoured.
The header ``setSpec`` (``cs``) is an OAI set, not a category, and is not kept.

Source: arXiv OAI-PMH ``http://export.arxiv.org/oai2``, ``metadataPrefix=oai_dc``
(``OAI-PMH/ListRecords/record/metadata/oai_dc:dc``).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time

from lxml import etree

from curation.names import is_collaboration, latex_to_unicode, parse_name
from harvest.records import (
    AuthorRecord,
    PaperRecord,
    RawItem,
    RecordError,
    VersionRecord,
)
from harvest.sources.arxiv_abs import (
    ABS_URL_RE,
    OAI_ID_PREFIX,
    SOURCE,
    clean_abstract,
    collaboration_author,
    first_doi,
    is_withdrawn,
    normalise_space,
    person_author,
    split_arxiv_id,
    split_for_collaboration,
)

OAI_DC_NS = "http://www.openarchives.org/OAI/2.0/oai_dc/"
DC_NS = "http://purl.org/dc/elements/1.1/"

_DOI_RE = re.compile(r"^(?:doi:|https?://(?:dx\.)?doi\.org/|10\.)", re.I)
_URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_COMMENT_RE = re.compile(r"^\s*Comments?:\s*", re.I)


def is_oai_dc(element: etree._Element | None) -> bool:
    """True when ``element`` is an ``<oai_dc:dc>`` container.

    Args:
        element: the child of ``<metadata>``, or None.

    Returns:
        True for the local name ``dc`` in the ``oai_dc`` namespace.
    """
    if element is None or not isinstance(element.tag, str):
        return False
    name = etree.QName(element)
    return name.localname == "dc" and name.namespace == OAI_DC_NS


def parse_oai_dc(
    dc: etree._Element, *, item: RawItem, identifier: str, datestamp: date | None
) -> PaperRecord:
    """Turn one ``<oai_dc:dc>`` element of an arXiv record into a PaperRecord.

    Rules:
        - ``arxiv_id`` from the header identifier ``oai:arXiv.org:<id>``, else from
          the ``dc:identifier`` ``http://arxiv.org/abs/<id>``; a version suffix is
          dropped.
        - ``title``: ``dc:title``, whitespace collapsed, LaTeX kept (as in the
          ``arXiv`` format).
        - ``authors``: one slot per ``dc:creator``, in order. ``"Last, First"`` is
          split by :func:`curation.names.parse_name`; ``raw_name`` is ``"First
          Last"`` in Unicode. A creator that :func:`is_collaboration` accepts is a
          collaboration slot (``"Collaborations, BICEP2"`` is read back as
          ``"BICEP2 Collaborations"``); ``"First Last for the X Collaboration"``
          gives a person slot and a collaboration slot after it. A collaboration
          named twice keeps its first slot. Dublin Core carries no affiliations.
        - ``abstract``: the first ``dc:description`` that does not start with
          ``Comment:``; ``comments``: the first one that does, without the prefix.
        - ``versions``: one per ``dc:date``, numbered 1..n in document order, each
          at midnight UTC (Dublin Core gives no time); ``version`` = n;
          ``published`` = the first date, ``updated`` = the last. No date gives no
          versions, version 1 and no dates.
        - ``doi``: the first ``dc:identifier`` that is a DOI (``doi:``, a doi.org
          URL or a bare ``10.``), lower-cased, without prefix. ``journal_ref``: the
          first ``dc:identifier`` that is neither a URL nor a DOI.
        - ``license``: ``dc:rights``; ``categories``: empty (see module docstring).

    Args:
        dc: the ``<oai_dc:dc>`` element (see :func:`is_oai_dc`).
        item: the raw record; its ``locator`` starts every error message and its
            ``external_id`` is kept.
        identifier: the header identifier, ``"oai:arXiv.org:<id>"``, or "".
        datestamp: the header datestamp (the time arXiv last changed the record),
            or None.

    Returns:
        The PaperRecord, ``source="arxiv"``, ``categories=[]``.

    Raises:
        RecordError: the message starts with ``item.locator``: no arXiv id in the
            header or ``dc:identifier``, an unreadable id, header and
            ``dc:identifier`` naming different ids, no ``dc:title``, a bad
            ``dc:date``.

    Source: arXiv OAI-PMH ``record/header/identifier`` and
    ``record/metadata/oai_dc:dc/dc:(title|creator|description|date|identifier|
    rights)``.
    """
    where = item.locator
    identifiers = [normalise_space(text) for text in _texts(dc, "identifier")]
    arxiv_id = _arxiv_id(identifier, identifiers, where)
    title = normalise_space(" ".join(_texts(dc, "title")[:1]))
    if not title:
        raise RecordError(f"{where}: no <dc:title>")

    abstract = comments = ""
    for text in _texts(dc, "description"):
        if _COMMENT_RE.match(text):
            comments = comments or normalise_space(_COMMENT_RE.sub("", text))
        elif not abstract:
            abstract = clean_abstract(text)

    dates = [_date(text, where) for text in _texts(dc, "date")]
    versions = [
        VersionRecord(number, datetime.combine(day, time(0), tzinfo=UTC))
        for number, day in enumerate(dates, start=1)
    ]
    doi = next((first_doi(text) for text in identifiers if _DOI_RE.match(text)), "")
    journal_ref = next(
        (
            text
            for text in identifiers
            if text and not _URL_RE.match(text) and not _DOI_RE.match(text)
        ),
        "",
    )
    return PaperRecord(
        source=SOURCE,
        external_id=item.external_id,
        title=title,
        authors=_authors(_texts(dc, "creator")),
        arxiv_id=arxiv_id,
        doi=doi,
        version=max(len(versions), 1),
        versions=versions,
        abstract=abstract,
        published=dates[0] if dates else None,
        updated=dates[-1] if dates else None,
        datestamp=datestamp,
        categories=[],
        journal_ref=journal_ref,
        comments=comments,
        license=normalise_space(" ".join(_texts(dc, "rights")[:1])),
        withdrawn=is_withdrawn(comments, abstract),
    )


def _texts(dc: etree._Element, name: str) -> list[str]:
    """The text of every ``dc:<name>`` child, in document order (may be "")."""
    return [
        "".join(child.itertext()) for child in dc.iterchildren(f"{{{DC_NS}}}{name}")
    ]


def _arxiv_id(identifier: str, identifiers: list[str], where: str) -> str:
    """The arXiv id (no version) from the header, else from the abstract URL."""
    from_header = ""
    if identifier.startswith(OAI_ID_PREFIX):
        from_header, _ = split_arxiv_id(identifier.removeprefix(OAI_ID_PREFIX), where)
    from_url = ""
    for text in identifiers:
        if match := ABS_URL_RE.match(text):
            from_url, _ = split_arxiv_id(match.group(1), where)
            break
    if from_header and from_url and from_header != from_url:
        raise RecordError(
            f"{where}: header id {from_header!r} differs from dc:identifier "
            f"id {from_url!r}"
        )
    arxiv_id = from_header or from_url
    if not arxiv_id:
        raise RecordError(f"{where}: no arXiv id in header or <dc:identifier>")
    return arxiv_id


def _date(text: str, where: str) -> date:
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError as exc:
        raise RecordError(f"{where}: bad <dc:date> {text!r}") from exc


def _authors(creators: list[str]) -> list[AuthorRecord]:
    """Byline slots from ``dc:creator`` texts, in order (rules in parse_oai_dc)."""
    slots: list[AuthorRecord] = []
    seen: set[str] = set()

    def add_collaboration(name: str) -> None:
        record = collaboration_author(name)
        if record.raw_name and record.raw_name.casefold() not in seen:
            seen.add(record.raw_name.casefold())
            slots.append(record)

    for creator in creators:
        text = normalise_space(creator)
        if not re.search(r"\w", text):
            continue
        if not is_collaboration(text):
            slots.append(_person(text))
            continue
        # arXiv prints "keyname, forenames": "Collaboration, for the DES".
        keyname, comma, forenames = text.partition(",")
        name = normalise_space(f"{forenames} {keyname}") if comma else text
        person, collaboration = split_for_collaboration(name)
        if person:
            slots.append(person_author(person))
        add_collaboration(collaboration)
    return slots


def _person(text: str) -> AuthorRecord:
    """A person from ``"Last, First"`` (or ``"First Last"``), raw_name First Last."""
    if "," not in text:
        return person_author(text)
    parsed = parse_name(text)
    if not parsed.family:
        return person_author(text.replace(",", " "))
    raw_name = " ".join(p for p in (parsed.given, parsed.family, parsed.suffix) if p)
    return AuthorRecord(
        raw_name=latex_to_unicode(raw_name),
        given_name=parsed.given,
        family_name=parsed.family,
        suffix=parsed.suffix,
    )
