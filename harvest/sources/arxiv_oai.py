"""Parse arXiv OAI-PMH responses (``metadataPrefix=arXiv``) into PaperRecords (no ORM).

A response (GetRecord or ListRecords) is cut into one :class:`RawItem` per
``<record>`` by :func:`split_oai_xml`; :func:`parse_oai_record` turns one into a
:class:`PaperRecord`. :func:`read_oai_file` reads ``.xml`` responses and the nock
recordings (``.json``: an array of ``{status, path, response}``) of the same calls.

XML is parsed with lxml without entity resolution, network access, DTD loading or
huge-tree support, and a document that declares entities (billion laughs, XXE) is
refused outright.

Quirks of the real responses (INSPIRE's hepcrawl fixtures were lightly hand-edited):
elements are looked up by local name, because one record's ``<arXiv>`` element
carries no namespace declaration and so sits in the OAI namespace; a byline entry
such as ``<keyname>:</keyname>`` (arXiv's split of ``X Collaborations: A, B``) is
dropped.

Records in Dublin Core (``metadataPrefix=oai_dc``) are handed to
:func:`harvest.sources.arxiv_oai_dc.parse_oai_dc`.

Source: arXiv OAI-PMH ``http://export.arxiv.org/oai2``, ``metadataPrefix=arXiv``
(``OAI-PMH/(GetRecord|ListRecords)/record``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from lxml import etree

from curation.names import is_collaboration, latex_to_unicode
from harvest.records import (
    AuthorRecord,
    NotARecordFile,
    PaperRecord,
    RawItem,
    RecordError,
    VersionRecord,
    file_locator,
)
from harvest.sources.arxiv_abs import (
    OAI_ID_PREFIX,
    SOURCE,
    clean_affiliation,
    collaboration_author,
    is_collaboration_note,
    normalise_space,
    person_author,
    split_arxiv_id,
    split_for_collaboration,
)
from harvest.sources.arxiv_oai_dc import is_oai_dc, parse_oai_dc
from harvest.sources.arxiv_raw import (
    id_and_title,
    is_arxiv_raw,
    parse_arxiv_raw,
    text_fields,
)
from harvest.sources.safe_xml import (
    MalformedXML,
    parse_xml,
    salvage_items,
)
from harvest.sources.safe_xml import element_text as _text

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
ARXIV_NS = "http://arxiv.org/OAI/arXiv/"

_COLLAB_WORD_RE = re.compile(r"\b(?:collaborations?|consortium|consortia)\b", re.I)
_PLURAL_COLLAB_RE = re.compile(r"\b(?:collaborations|consortia)\s*$", re.IGNORECASE)
_COLLAB_KEYNAME_RE = re.compile(
    r"collaborations?|consortium|consortia|groups?|teams?", re.IGNORECASE
)


def read_oai_file(path: Path, root: Path | None = None) -> Iterator[RawItem]:
    """Cut an OAI-PMH response file into one RawItem per ``<record>``.

    Args:
        path: an ``.xml`` response, or a nock ``.json`` recording (an array of
            ``{status, path, response}``; only status 200 responses whose request
            asks for ``metadataPrefix=arXiv`` or names none are read, so the
            recorded ``503 Retry-After`` and other servers' formats are skipped).
        root: folder the locators are relative to (usually ``WOVEPAPER_DATA_DIR``);
            None keeps ``path`` as given.

    Returns:
        An iterator of RawItems in document order; locators are ``<file>#record-N``
        or ``<file>#response-M#record-N`` (N, M 0-based).

    Raises:
        RecordError: (while iterating) the file is not valid JSON or XML, or declares
            entities; the message names the locator (and line/column for XML).
        NotARecordFile: valid JSON that is not an array of recorded responses
            (such as arxiv-browse's ``reasons.json``); the caller skips the file.
        OSError: the file cannot be read.
    """
    locator = file_locator(path, root)
    data = path.read_bytes()
    if path.suffix.lower() != ".json":
        yield from split_oai_xml(data, locator)
        return
    try:
        entries = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError(f"{locator}: not a JSON nock recording: {exc}") from exc
    except RecursionError as exc:
        raise RecordError(
            f"{locator}: not a JSON nock recording: nested too deeply"
        ) from exc
    if not isinstance(entries, list):
        raise NotARecordFile(f"{locator}: not a JSON array of recorded responses")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("status") != 200:
            continue
        prefix = parse_qs(urlsplit(str(entry.get("path", ""))).query).get(
            "metadataPrefix", ["arXiv"]
        )
        body = entry.get("response")
        if prefix != ["arXiv"] or not isinstance(body, str):
            continue
        where = f"{locator}#response-{index}"
        try:
            yield from split_oai_xml(body, where)
        except RecordError as exc:
            # One refused response (entities declared, bad Unicode) costs only
            # itself: the file's other responses are read.
            yield RawItem(
                external_id=where, payload=body, locator=where, problem=str(exc)
            )


def split_oai_xml(text: str | bytes, locator: str) -> Iterator[RawItem]:
    """Cut one OAI-PMH response into one RawItem per ``<record>``.

    Args:
        text: the response body (a GetRecord or ListRecords document).
        locator: where the body came from, for locators and error messages.

    Returns:
        An iterator of RawItems: payload is the serialized ``<record>`` element,
        external_id ``oai:arXiv.org:<id>`` from the header (or the item locator
        when there is none), locator ``<locator>#record-N`` (N 0-based). A
        response without records (ListIdentifiers, an OAI ``<error>``) yields none.

        A malformed page yields its whole records one by one, then (if the fault
        lies outside them, e.g. truncation) an item that carries the problem; see
        :func:`harvest.sources.safe_xml.salvage_items`.

    Raises:
        RecordError: (while iterating) a document that declares entities, or a
            lone surrogate.

    Source: OAI-PMH ``record/header/identifier``.
    """
    try:
        root = parse_xml(text, locator)
    except MalformedXML as exc:
        yield from salvage_items(
            text, locator, exc, tag="record", external_id=_fragment_identifier
        )
        return
    for index, record in enumerate(root.iter(f"{{{OAI_NS}}}record", "record")):
        item_locator = f"{locator}#record-{index}"
        header = _child(record, "header")
        identifier = _text(_child(header, "identifier")) if header is not None else ""
        yield RawItem(
            external_id=identifier or item_locator,
            payload=etree.tostring(record, encoding="unicode"),
            locator=item_locator,
        )


_IDENTIFIER_RE = re.compile(r"<(?:\w+:)?identifier>\s*([^<]*?)\s*</")


def _fragment_identifier(fragment: str) -> str | None:
    match = _IDENTIFIER_RE.search(fragment)
    return match.group(1) if match else None


def parse_oai_record(item: RawItem) -> PaperRecord:
    """Parse one OAI-PMH ``<record>`` in the ``arXiv``, ``arXivRaw`` or ``oai_dc``
    format.

    A record whose metadata is ``<oai_dc:dc>`` is parsed by
    :func:`harvest.sources.arxiv_oai_dc.parse_oai_dc`, one whose metadata is
    ``<arXivRaw>`` by :func:`harvest.sources.arxiv_raw.parse_arxiv_raw` (rules
    there); the rest of this docstring is about the ``arXiv`` format.

    The format has no version history: ``versions`` holds v1 only (its time is
    ``created`` at midnight UTC), and ``version`` stays 1 even when ``updated``
    shows later versions exist, since their number is not given. ``published`` is
    ``created``; ``updated`` is ``updated`` or, when absent (one version),
    ``created``; ``datestamp`` is the header's datestamp, the time arXiv last
    changed the record, not a publication date.

    Authors: ``raw_name`` is ``"forenames keyname"`` in Unicode; given and family
    come from ``forenames`` and ``keyname`` as arXiv split them. An entry is a
    collaboration when its keyname (or forenames plus keyname) names one:
    ``Planck Collaboration``; ``BICEP2`` + ``Collaborations``; ``Hyper-K`` +
    ``collaborations``; ``for the DES`` + ``Collaboration`` (named "DES
    Collaboration"). A person named with a collaboration (``Teresa Maria Montaruli
    for the IceCube Collaboration``, ``Dipanwita Dutta for the CMS`` +
    ``Collaboration``, ``Sinya for JLQCD Collaboration``) gives a person slot and a
    collaboration slot after it; so does an affiliation ``on behalf of Planck
    Collaboration`` (not kept as an affiliation). A collaboration named twice keeps
    its first slot. A person without affiliations right before a plural
    ``Collaborations`` entry is taken as the first name of a joint collaboration
    (``Keck Array`` + ``BICEP2 Collaborations`` -> ``Keck Array and BICEP2
    Collaborations``), undoing arXiv's split on "and".

    Args:
        item: as made by :func:`split_oai_xml`.

    Returns:
        The PaperRecord; a header with ``status="deleted"`` gives ``deleted=True``,
        the arXiv id from the identifier and an empty title.

    Raises:
        RecordError: the message starts with ``item.locator``: unparsable XML, no
            header identifier (deleted record), no ``<metadata>/<arXiv>`` (nor
            ``<oai_dc:dc>``), no
            ``<id>``, an unreadable id, no ``<title>``, a bad ``created`` /
            ``updated`` / ``datestamp`` date.

    Source: arXiv OAI-PMH ``record/header/(identifier|datestamp|@status)`` and
    ``record/metadata/arXiv/(id|created|updated|authors/author/(keyname|forenames|
    suffix|affiliation)|title|categories|comments|report-no|journal-ref|doi|license|
    abstract)``.
    """
    where = item.locator
    if item.problem:
        raise RecordError(f"{where}: {item.problem}")
    record = parse_xml(item.payload, where)
    header = _child(record, "header")
    datestamp = _date(_text(_child(header, "datestamp")), "datestamp", where)
    if header is not None and header.get("status") == "deleted":
        identifier = _text(_child(header, "identifier"))
        if not identifier:
            raise RecordError(f"{where}: deleted record without an identifier")
        arxiv_id, _ = split_arxiv_id(identifier.removeprefix(OAI_ID_PREFIX), where)
        return PaperRecord(
            source=SOURCE,
            external_id=item.external_id,
            title="",
            arxiv_id=arxiv_id,
            datestamp=datestamp,
            deleted=True,
        )

    dublin_core = _child(_child(record, "metadata"), "dc")
    if dublin_core is not None and is_oai_dc(dublin_core):
        return parse_oai_dc(
            dublin_core,
            item=item,
            identifier=_text(_child(header, "identifier")),
            datestamp=datestamp,
        )
    raw = _child(_child(record, "metadata"), "arXivRaw")
    if is_arxiv_raw(raw):
        return parse_arxiv_raw(raw, item=item, datestamp=datestamp)
    metadata = _child(_child(record, "metadata"), "arXiv")
    if metadata is None:
        raise RecordError(
            f"{where}: no <metadata>/<arXiv> element (nor <arXivRaw>, <oai_dc:dc>)"
        )
    arxiv_id, title = id_and_title(metadata, where)
    created = _date(_text(_child(metadata, "created")), "created", where)
    updated = _date(_text(_child(metadata, "updated")), "updated", where)
    versions = (
        [VersionRecord(1, datetime.combine(created, time(0), tzinfo=UTC))]
        if created
        else []
    )
    return PaperRecord(
        source=SOURCE,
        external_id=item.external_id,
        title=title,
        authors=_authors(_child(metadata, "authors")),
        arxiv_id=arxiv_id,
        version=1,
        versions=versions,
        published=created,
        updated=updated or created,
        datestamp=datestamp,
        **text_fields(metadata),
    )


def _child(element: etree._Element | None, name: str) -> etree._Element | None:
    """First child with this local name, in any namespace (see module docstring)."""
    if element is None:
        return None
    for child in element:
        if isinstance(child.tag, str) and etree.QName(child).localname == name:
            return child
    return None


def _children(element: etree._Element | None, name: str) -> list[etree._Element]:
    if element is None:
        return []
    return [
        child
        for child in element
        if isinstance(child.tag, str) and etree.QName(child).localname == name
    ]


def _date(text: str, field: str, where: str) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text[:10])
    except ValueError as exc:
        raise RecordError(f"{where}: bad <{field}> date {text!r}") from exc


@dataclass
class _Entry:
    """One ``<author>`` element, before it becomes one or two byline slots."""

    full: str
    keyname: str
    forenames: str
    suffix: str
    affiliations: tuple[str, ...]
    notes: tuple[str, ...]
    joint: bool = False


def _authors(authors: etree._Element | None) -> list[AuthorRecord]:
    """Byline slots from ``<authors>``, in order (rules in parse_oai_record)."""
    entries: list[_Entry] = []
    for author in _children(authors, "author"):
        keyname = normalise_space(_text(_child(author, "keyname")))
        forenames = normalise_space(_text(_child(author, "forenames")))
        full = normalise_space(f"{forenames} {keyname}")
        if not re.search(r"\w", full):
            continue  # "<keyname>:</keyname>", a left-over separator
        affiliations: list[str] = []
        notes: list[str] = []
        for element in _children(author, "affiliation"):
            value = normalise_space(_text(element))
            if is_collaboration_note(value):
                notes.append(value)
            elif cleaned := clean_affiliation(value):
                affiliations.append(cleaned)
        entry = _Entry(
            full=full,
            keyname=keyname,
            forenames=forenames,
            suffix=normalise_space(_text(_child(author, "suffix"))),
            affiliations=tuple(affiliations),
            notes=tuple(notes),
        )
        previous = entries[-1] if entries else None
        if (
            previous is not None
            and _PLURAL_COLLAB_RE.search(full)
            and not previous.affiliations
            and not _names_collaboration(previous)
        ):
            # arXiv split "Keck Array and BICEP2 Collaborations" on "and".
            entries.pop()
            entry = replace(
                entry,
                full=f"{previous.full} and {full}",
                notes=previous.notes + entry.notes,
                joint=True,
            )
        entries.append(entry)

    slots: list[AuthorRecord] = []
    seen: set[str] = set()

    def add_collaboration(name: str, affiliations: tuple[str, ...] = ()) -> None:
        record = collaboration_author(name, affiliations)
        if record.raw_name and record.raw_name.casefold() not in seen:
            seen.add(record.raw_name.casefold())
            slots.append(record)

    for entry in entries:
        person, collaboration = split_for_collaboration(entry.full)
        if person:
            slots.append(person_author(person, entry.affiliations))
            add_collaboration(collaboration)
        elif entry.joint or _names_collaboration(entry):
            add_collaboration(entry.full, entry.affiliations)
        else:
            slots.append(_oai_person(entry))
        for note in entry.notes:
            add_collaboration(note)
    return slots


def _names_collaboration(entry: _Entry) -> bool:
    """``Planck Collaboration``; ``BICEP2`` + ``Collaborations``; ``The T2K Beam`` +
    ``Group``; a keyname alone that :func:`is_collaboration` accepts."""
    return bool(
        _COLLAB_WORD_RE.search(entry.keyname)
        or _COLLAB_KEYNAME_RE.fullmatch(entry.keyname)
        or (not entry.forenames and is_collaboration(latex_to_unicode(entry.keyname)))
    )


def _oai_person(entry: _Entry) -> AuthorRecord:
    """A person as arXiv split the name (keyname = family, forenames = given)."""
    if not entry.keyname:
        return person_author(entry.full, entry.affiliations)
    raw_name = latex_to_unicode(entry.full)
    if entry.suffix:
        raw_name = f"{raw_name} {entry.suffix}"
    return AuthorRecord(
        raw_name=raw_name,
        given_name=latex_to_unicode(entry.forenames),
        family_name=latex_to_unicode(entry.keyname),
        suffix=entry.suffix,
        affiliations=entry.affiliations,
    )
