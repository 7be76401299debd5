"""Parse arXiv OAI-PMH records in the ``arXivRaw`` format (no ORM).

``arXivRaw`` is arXiv's internal metadata, as the ``.abs`` files hold it: the
byline is one free-text ``<authors>`` string (split by the ``.abs`` reader,
:func:`harvest.sources.arxiv_abs.split_abs_authors`), and the version history
comes as ``<version version="vN">`` elements with the submission time and size.
:func:`harvest.sources.arxiv_oai.parse_oai_record` hands such records here.

Source: arXiv OAI-PMH ``metadataPrefix=arXivRaw``, schema
``http://arxiv.org/OAI/arXivRaw.xsd``: ``arXivRaw/(id|submitter|version/(date|size|
source_type)|title|authors|categories|comments|proxy|report-no|msc-class|acm-class|
journal-ref|doi|license|abstract)``.
"""

from __future__ import annotations

import re
from datetime import date

from lxml import etree

from harvest.records import PaperRecord, RawItem, RecordError, VersionRecord
from harvest.sources.arxiv_abs import (
    SOURCE,
    byline_incomplete,
    clean_abstract,
    first_doi,
    is_withdrawn,
    normalise_space,
    split_abs_authors,
    split_arxiv_id,
    version_record,
)
from harvest.sources.safe_xml import element_text as _text

_VERSION_RE = re.compile(r"v(\d{1,4})", re.IGNORECASE | re.ASCII)


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname


def _child(element: etree._Element, name: str) -> etree._Element | None:
    for child in element:
        if isinstance(child.tag, str) and _local(child) == name:
            return child
    return None


def is_arxiv_raw(element: etree._Element | None) -> bool:
    """Whether a ``<metadata>`` child is an ``<arXivRaw>`` record."""
    return element is not None and _local(element) == "arXivRaw"


def id_and_title(metadata: etree._Element, where: str) -> tuple[str, str]:
    """The arXiv id (no version) and the title of an ``<arXiv>`` or
    ``<arXivRaw>`` metadata element (both print ``<id>`` and ``<title>``).

    Raises:
        RecordError: starting with ``where``: no ``<id>``, an unreadable one, or
            no ``<title>``.
    """
    raw_id = _text(_child(metadata, "id"))
    if not raw_id:
        raise RecordError(f"{where}: no <id>")
    arxiv_id, _ = split_arxiv_id(raw_id, where)
    title = normalise_space(_text(_child(metadata, "title")))
    if not title:
        raise RecordError(f"{where}: no <title>")
    return arxiv_id, title


def parse_arxiv_raw(
    metadata: etree._Element, *, item: RawItem, datestamp: date | None
) -> PaperRecord:
    """One ``<arXivRaw>`` element as a PaperRecord.

    Versions are the ``<version>`` elements (``version="v2"``, ``<date>Tue, 24 Jul
    2007 20:10:27 GMT</date>``, ``<size>424kb</size>``), oldest first;
    ``published`` is v1's date and ``updated`` the latest's, as for ``.abs``
    files. The byline is read as the ``.abs`` ``Authors:`` line is: ``and``
    before the last name, parenthesised affiliations (commas and "and"
    inside them), numbered affiliations, a person "for the X Collaboration"
    (a person and a collaboration), and ``et al.`` (no author; the record is
    marked ``authors_incomplete``).

    Args:
        metadata: the ``<arXivRaw>`` element.
        item: the record's RawItem (its locator names errors).
        datestamp: the OAI header's datestamp.

    Returns:
        The PaperRecord; ``external_id`` is ``<id>v<latest>``.

    Raises:
        RecordError: starting with the locator: no ``<id>`` or an unreadable
            one, no ``<title>``, no ``<version>``, a version without a number
            or with an unreadable date.
    """
    where = item.locator
    arxiv_id, title = id_and_title(metadata, where)
    versions = _versions(metadata, where)
    latest = versions[-1]
    authors_line = _text(_child(metadata, "authors"))
    return PaperRecord(
        source=SOURCE,
        external_id=f"{arxiv_id}v{latest.version}",
        title=title,
        authors=split_abs_authors(authors_line),
        authors_incomplete=byline_incomplete(authors_line),
        arxiv_id=arxiv_id,
        version=latest.version,
        versions=versions,
        published=versions[0].submitted.date() if versions[0].submitted else None,
        updated=latest.submitted.date() if latest.submitted else None,
        datestamp=datestamp,
        **text_fields(metadata),
    )


def text_fields(metadata: etree._Element) -> dict:
    """The fields the ``<arXiv>`` and ``<arXivRaw>`` formats print alike: DOI,
    abstract, categories, journal reference, comments, report number, licence,
    and whether the comments or abstract withdraw the paper."""
    comments = normalise_space(_text(_child(metadata, "comments")))
    abstract = clean_abstract(_text(_child(metadata, "abstract")))
    return {
        "doi": first_doi(_text(_child(metadata, "doi"))),
        "abstract": abstract,
        "categories": _text(_child(metadata, "categories")).split(),
        "journal_ref": normalise_space(_text(_child(metadata, "journal-ref"))),
        "comments": comments,
        "report_no": normalise_space(_text(_child(metadata, "report-no"))),
        "license": normalise_space(_text(_child(metadata, "license"))),
        "withdrawn": is_withdrawn(comments, abstract),
    }


def _versions(metadata: etree._Element, where: str) -> list[VersionRecord]:
    versions: dict[int, VersionRecord] = {}
    for element in metadata:
        if not isinstance(element.tag, str) or _local(element) != "version":
            continue
        match = _VERSION_RE.fullmatch((element.get("version") or "").strip())
        if not match:
            raise RecordError(
                f"{where}: a <version> without a readable number "
                f"({element.get('version')!r})"
            )
        number = int(match.group(1))
        size = _text(_child(element, "size"))
        text = _text(_child(element, "date")) + (f" ({size})" if size else "")
        versions.setdefault(number, version_record(number, text, where))
    if not versions:
        raise RecordError(f"{where}: no <version>")
    return [versions[n] for n in sorted(versions)]
