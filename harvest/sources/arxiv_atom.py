"""Parse arXiv API Atom responses (``export.arxiv.org/api/query``) (no ORM).

A response is an Atom ``<feed>`` with OpenSearch counts and one ``<entry>`` per
paper. :func:`read_atom_file` cuts a response into one :class:`RawItem` per entry,
reading ``.xml`` feeds and the arxiv.py cassettes (``.json``: one object
``{"url", "status_code", "body"}`` whose body is the feed);
:func:`parse_atom_entry` turns one into a :class:`PaperRecord`.
:func:`is_atom_file` tells the harvest which files to hand here.

An API error comes back as a feed with one entry whose ``<id>`` is
``https://arxiv.org/api/errors#...`` and whose ``<summary>`` says what went wrong
(``incorrect id format for abc``), with HTTP status 400; such a feed raises
:class:`RecordError`. A query matching nothing is a feed with
``<opensearch:totalResults>0`` and no entries; it yields nothing.

XML is parsed with lxml without entity resolution, network access, DTD loading or
huge-tree support, and a document that declares entities (billion laughs, XXE) is
refused outright.

Quirks of the real responses: the cassette bodies hold the UTF-8 bytes decoded as
Latin-1 (``Dirk WÃ¼bben``); a body that round-trips that way is re-read as UTF-8
(``Dirk Wübben``). The 2016 layout puts the OpenSearch elements before the entries
and declares the ``arxiv`` namespace on each element; elements are looked up by
namespace, so both layouts read alike.

Source: arXiv API ``http://export.arxiv.org/api/query`` (``feed/entry``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

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
    ABS_URL_RE,
    SOURCE,
    clean_abstract,
    clean_affiliation,
    collaboration_author,
    first_doi,
    is_collaboration_note,
    is_withdrawn,
    normalise_space,
    person_author,
    split_arxiv_id,
)
from harvest.sources.polite_http import PoliteClient, SourceRefused, UnusableBody
from harvest.sources.safe_xml import (
    MalformedXML,
    parse_xml,
    root_tag,
    salvage_items,
)
from harvest.sources.safe_xml import element_text as _text

ATOM_NS = "http://www.w3.org/2005/Atom"
ARXIV_NS = "http://arxiv.org/schemas/atom"
CASSETTE_KEYS = frozenset({"url", "status_code", "body"})
API_URL_MARK = "arxiv.org/api/"

_ATOM = f"{{{ATOM_NS}}}"
_ARXIV = f"{{{ARXIV_NS}}}"
# The end tag of an Atom document, with or without a namespace prefix
# (``</feed>`` as arXiv writes it, ``</ns0:feed>`` as ElementTree writes it
# back): XML Namespaces 1.0, section 4.
_FEED_END_RE = re.compile(r"</(?:[A-Za-z_][\w.-]*:)?feed\s*>")
_ERROR_URL_RE = re.compile(r"^https?://(?:export\.)?arxiv\.org/api/errors", re.I)
_FOR_THE_RE = re.compile(r"^(?:for|on\s+behalf\s+of)\s", re.IGNORECASE)


def is_atom_file(path: Path) -> bool:
    """Tell cheaply whether a file is an arXiv API Atom response.

    Args:
        path: any harvested file.

    Returns:
        True for an ``.xml`` file whose root element is an Atom ``<feed>``
        (:func:`~harvest.sources.safe_xml.root_tag`: with or without a
        namespace prefix, after comments of any length, in any encoding the
        file declares), and for a ``.json`` file holding one object with the
        keys ``url`` (naming ``arxiv.org/api/``), ``status_code`` and
        ``body``; False for anything else, including files that cannot be
        read or decoded.
    """
    suffix = path.suffix.lower()
    try:
        if suffix == ".xml":
            return root_tag(path) == f"{_ATOM}feed"
        if suffix == ".json":
            data = path.read_bytes()
            # Most JSON files never name arXiv; skip decoding those.
            if b"arxiv.org" not in data:
                return False
            return _is_cassette(json.loads(data))
    except (OSError, ValueError, RecursionError):
        return False
    return False


def read_atom_file(path: Path, root: Path | None = None) -> Iterator[RawItem]:
    """Cut an arXiv API response file into one RawItem per ``<entry>``.

    Args:
        path: an ``.xml`` Atom feed, or an arxiv.py cassette (``.json``: one object
            ``{"url", "status_code", "body"}`` whose body is the feed).
        root: folder the locators are relative to (usually ``WOVEPAPER_DATA_DIR``);
            None keeps ``path`` as given.

    Returns:
        An iterator of RawItems in feed order (see :func:`split_atom_feed`);
        locators are ``<file>#entry-N`` (N 0-based). A feed without entries
        (``totalResults`` 0) yields none.

    Raises:
        RecordError: (while iterating) the file is not valid JSON or XML, declares
            entities, or is an API error (HTTP status other than 200, or an error
            entry); the message names the locator and the error text, or lxml's
            line and column.
        NotARecordFile: valid JSON that is not a cassette of an arXiv API call
            (such as arxiv-browse's ``reasons.json``), or well-formed XML whose
            root is not an Atom ``<feed>``; the caller skips the file.
        OSError: the file cannot be read.
    """
    locator = file_locator(path, root)
    data = path.read_bytes()
    if path.suffix.lower() != ".json":
        yield from split_atom_feed(data, locator)
        return
    try:
        cassette = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError(f"{locator}: not a JSON cassette: {exc}") from exc
    except RecursionError as exc:
        raise RecordError(f"{locator}: not a JSON cassette: nested too deeply") from exc
    if not _is_cassette(cassette):
        raise NotARecordFile(
            f"{locator}: not a recorded arXiv API response "
            "(an object with url, status_code and body)"
        )
    yield from split_atom_feed(
        _body_bytes(cassette["body"]), locator, status=cassette["status_code"]
    )


def _fragment_id(fragment: str) -> str | None:
    match = re.search(r"<(?:[A-Za-z_][\w.-]*:)?id>\s*([^<]*?)\s*</", fragment)
    found = ABS_URL_RE.match(match.group(1)) if match else None
    return found.group("id") if found else None


def split_atom_feed(
    body: str | bytes, locator: str, *, status: int = 200
) -> Iterator[RawItem]:
    """Cut one Atom feed into one RawItem per ``<entry>``.

    Args:
        body: the response body (``bytes`` are decoded as the XML declaration says).
        locator: where the body came from, for locators and error messages.
        status: the HTTP status the body came with; 200 for a plain ``.xml`` file.

    Returns:
        An iterator of RawItems: payload is the serialized ``<entry>`` element,
        external_id the arXiv id with its version from ``<id>``
        (``http://arxiv.org/abs/1605.08386v1`` -> ``"1605.08386v1"``), or the item
        locator when ``<id>`` is not an abstract URL; locator ``<locator>#entry-N``.

    Raises:
        RecordError: (while iterating, before the first item) malformed XML with
            lxml's line and column; a document that declares entities; an API
            error: an HTTP status other than 200, or an entry whose ``<id>`` is
            ``http(s)://arxiv.org/api/errors...`` (message: the locator, the status
            and the entry's ``<summary>``).
        NotARecordFile: the root element is not an Atom ``<feed>`` (and the
            status is 200).

    Source: arXiv API ``feed/entry/id`` and ``feed/entry/summary`` (errors).
    """
    try:
        feed = parse_xml(body, locator)
    except MalformedXML as exc:
        if status != 200:
            raise
        yield from salvage_items(
            body, locator, exc, tag="entry", external_id=_fragment_id
        )
        return
    if feed.tag != f"{_ATOM}feed":
        if status != 200:
            raise RecordError(f"{locator}: arXiv API error (HTTP {status})")
        raise NotARecordFile(f"{locator}: not an Atom <feed> (root is {feed.tag!r})")
    entries = feed.findall(f"{_ATOM}entry")
    for index, entry in enumerate(entries):
        if _ERROR_URL_RE.match(_text(entry.find(f"{_ATOM}id"))):
            status_note = f" (HTTP {status})" if status != 200 else ""
            message = normalise_space(_text(entry.find(f"{_ATOM}summary")))
            raise RecordError(
                f"{locator}#entry-{index}: arXiv API error{status_note}: "
                f"{message or 'no error text'}"
            )
    if status != 200:
        raise RecordError(f"{locator}: arXiv API error (HTTP {status})")
    for index, entry in enumerate(entries):
        item_locator = f"{locator}#entry-{index}"
        match = ABS_URL_RE.match(_text(entry.find(f"{_ATOM}id")))
        yield RawItem(
            external_id=match.group("id") if match else item_locator,
            payload=etree.tostring(entry, encoding="unicode"),
            locator=item_locator,
        )


@dataclass(frozen=True)
class AtomPage:
    """One arXiv API answer: its entries as raw records, the query's
    ``opensearch:totalResults`` and the ``start`` it was asked from."""

    url: str
    items: list[RawItem]
    total: int
    start: int


_TOTAL_RE = re.compile(r"<(?:\w+:)?totalResults[^>]*>\s*(\d+)\s*<")


def atom_page_read(body: str, url: str, status: int, start: int) -> AtomPage:
    """Read one live arXiv API answer.

    Raises:
        UnusableBody: the feed is cut short (no closing ``</feed>``), or a page
            is empty although ``start`` is below ``totalResults`` (the API
            sometimes answers so under load: asking again gets the entries).
        SourceRefused: an API error (HTTP 400 and an error entry: its summary is
            the message), or an answer that is not a feed.

    Source: arXiv API user manual, "Paging" and "Errors".
    """
    if not _FEED_END_RE.search(body[-4096:]):
        raise UnusableBody(f"{url}: feed cut short (no closing </feed>)")
    try:
        items = list(split_atom_feed(body, url, status=status))
    except RecordError as exc:
        raise SourceRefused(str(exc)) from exc
    match = _TOTAL_RE.search(body)
    total = int(match.group(1)) if match else len(items)
    if not items and start < total:
        raise UnusableBody(
            f"{url}: empty page at start={start} before totalResults={total}"
        )
    return AtomPage(url, items, total, start)


def _live_page(response, *, start: int) -> AtomPage:
    return atom_page_read(response.text, str(response.url), response.status_code, start)


def arxiv_api_pages(
    client: PoliteClient,
    base_url: str,
    *,
    id_list: list[str] | tuple[str, ...] = (),
    search_query: str = "",
    start: int = 0,
    max_results: int = 100,
) -> Iterator[AtomPage]:
    """Page through an arXiv API query by ``start``/``max_results``.

    Args:
        client: arXiv's polite client (one request every 3 s).
        base_url: ``https://export.arxiv.org/api/query``.
        id_list: arXiv ids, with or without version.
        search_query: an API query (``au:del_maestro``), "" with ``id_list``.
        start: the first result to ask for (resume from a run's cursor).
        max_results: entries a page.

    Returns:
        Pages in order, until ``totalResults`` is reached or a page is empty.

    Raises:
        SourceRefused, SourceUnavailable: see :func:`atom_page_read` and
            :meth:`PoliteClient.fetch`.
    """
    while True:
        params = {
            "search_query": search_query,
            "id_list": ",".join(id_list),
            "start": str(start),
            "max_results": str(max_results),
        }
        page = client.fetch(
            base_url,
            params,
            read=partial(_live_page, start=start),
            accept=frozenset({400}),
        )
        yield page
        start += len(page.items)
        if not page.items or start >= page.total:
            return


def parse_atom_entry(item: RawItem) -> PaperRecord:
    """Parse one arXiv API ``<entry>``.

    An entry describes one version N of a paper (the latest, unless the query
    named a version) and knows only two times: ``<published>``, when v1 was
    submitted, and ``<updated>``, when version N was. So ``versions`` holds
    ``VersionRecord(1, published)`` and, when N > 1, ``VersionRecord(N,
    updated)``; ``version`` is N; ``published`` and ``updated`` are their UTC
    dates (``updated`` falls back to ``published``).

    Authors are ``<name>`` printed ``"First Last"`` (LaTeX turned into Unicode,
    given and family from :func:`harvest.sources.arxiv_abs.person_author`) with
    their ``<arxiv:affiliation>`` strings in order. A name that
    :func:`curation.names.is_collaboration` accepts, or that starts with ``for`` /
    ``on behalf of``, is a collaboration slot; an affiliation naming a
    collaboration (``for the CMS Collaboration``) is not kept as an affiliation
    but becomes a collaboration slot after that person. A collaboration named
    twice keeps its first slot.

    Categories are ``<arxiv:primary_category>`` first, then the ``<category>``
    terms in order, without duplicates. The abstract is the ``<summary>`` unwrapped
    as in :func:`harvest.sources.arxiv_abs.clean_abstract` (the 2016 layout keeps
    arXiv's line breaks; the current one sends one line).

    Args:
        item: as made by :func:`split_atom_feed`.

    Returns:
        The PaperRecord, ``external_id`` the versioned id from ``<id>``.

    Raises:
        RecordError: the message starts with ``item.locator``: unparsable XML, not
            an ``<entry>``, no ``<id>``, an ``<id>`` that is not an arXiv abstract
            URL or holds an unreadable id, no ``<title>``, a bad ``<published>``
            or ``<updated>`` time.

    Source: arXiv API ``feed/entry/(id|title|summary|published|updated|
    author/(name|arxiv:affiliation)|arxiv:primary_category/@term|category/@term|
    arxiv:doi|arxiv:journal_ref|arxiv:comment)``.
    """
    where = item.locator
    if item.problem:
        raise RecordError(f"{where}: {item.problem}")
    entry = parse_xml(item.payload, where)
    if entry.tag != f"{_ATOM}entry":
        raise RecordError(f"{where}: not an Atom <entry> (root is {entry.tag!r})")
    raw_id = _text(entry.find(f"{_ATOM}id"))
    if not raw_id:
        raise RecordError(f"{where}: no <id>")
    match = ABS_URL_RE.match(raw_id)
    if not match:
        raise RecordError(f"{where}: <id> is not an arXiv abstract URL: {raw_id!r}")
    versioned_id = match.group("id")
    arxiv_id, number = split_arxiv_id(versioned_id, where)
    version = number or 1
    title = normalise_space(_text(entry.find(f"{_ATOM}title")))
    if not title:
        raise RecordError(f"{where}: no <title>")

    published_at = _time(entry, "published", where)
    updated_at = _time(entry, "updated", where)
    versions: list[VersionRecord] = []
    if published_at is not None:
        versions.append(VersionRecord(1, published_at))
    if version > 1:
        versions.append(VersionRecord(version, updated_at))
    published = published_at.date() if published_at else None
    updated = updated_at.date() if updated_at else published

    abstract = clean_abstract(_text(entry.find(f"{_ATOM}summary")))
    comments = normalise_space(_text(entry.find(f"{_ARXIV}comment")))
    dois = " ".join(_text(element) for element in entry.iter(f"{_ARXIV}doi"))
    return PaperRecord(
        source=SOURCE,
        external_id=versioned_id,
        title=title,
        authors=_authors(entry),
        arxiv_id=arxiv_id,
        doi=first_doi(dois),
        version=version,
        versions=versions,
        abstract=abstract,
        published=published,
        updated=updated,
        categories=_categories(entry),
        journal_ref=normalise_space(_text(entry.find(f"{_ARXIV}journal_ref"))),
        comments=comments,
        withdrawn=is_withdrawn(comments, abstract),
    )


def _is_cassette(value: object) -> bool:
    """An arxiv.py cassette: ``{"url": <arXiv API URL>, "status_code": int,
    "body": str}`` (other keys allowed)."""
    if not isinstance(value, dict) or not CASSETTE_KEYS <= value.keys():
        return False
    url, status, body = value["url"], value["status_code"], value["body"]
    return (
        isinstance(url, str)
        and API_URL_MARK in url
        and isinstance(status, int)
        and not isinstance(status, bool)
        and isinstance(body, str)
    )


def _body_bytes(body: str) -> bytes:
    """The bytes of a cassette body, undoing a UTF-8 body stored as Latin-1 text.

    A body whose characters all fit in Latin-1 and whose Latin-1 bytes are valid
    UTF-8 was UTF-8 read as Latin-1 (every non-ASCII character in the recorded
    cassettes is such a pair, ``Ã¼`` for ``ü``); anything else is taken as text.
    """
    try:
        raw = body.encode("latin-1")
        raw.decode("utf-8")
    except UnicodeError:
        # A lone surrogate ("\ud800" in the JSON) cannot be encoded; the XML
        # parser then names the bad character's line and column.
        return body.encode("utf-8", errors="replace")
    return raw


def _time(entry: etree._Element, name: str, where: str) -> datetime | None:
    """``<published>`` / ``<updated>`` as an aware UTC datetime, None if absent."""
    text = _text(entry.find(f"{_ATOM}{name}"))
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise RecordError(f"{where}: bad <{name}> time {text!r}") from exc
    if moment.tzinfo is None:
        # Atom requires an offset; arXiv's times are UTC.
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _categories(entry: etree._Element) -> list[str]:
    """Primary category first, then the other ``<category>`` terms in order."""
    terms = [
        element.get("term", "").strip()
        for element in (
            *entry.iter(f"{_ARXIV}primary_category"),
            *entry.iter(f"{_ATOM}category"),
        )
    ]
    return list(dict.fromkeys(term for term in terms if term))


def _authors(entry: etree._Element) -> list[AuthorRecord]:
    """Byline slots from ``<author>`` elements, in order (rules in
    parse_atom_entry)."""
    slots: list[AuthorRecord] = []
    seen: set[str] = set()

    def add_collaboration(name: str, affiliations: tuple[str, ...] = ()) -> None:
        record = collaboration_author(name, affiliations)
        if record.raw_name and record.raw_name.casefold() not in seen:
            seen.add(record.raw_name.casefold())
            slots.append(record)

    for author in entry.findall(f"{_ATOM}author"):
        name = normalise_space(_text(author.find(f"{_ATOM}name")))
        if not re.search(r"\w", name):
            continue
        affiliations: list[str] = []
        notes: list[str] = []
        for element in author.findall(f"{_ARXIV}affiliation"):
            value = normalise_space(_text(element))
            if is_collaboration_note(value):
                notes.append(value)
            elif cleaned := clean_affiliation(value):
                affiliations.append(cleaned)
        if _FOR_THE_RE.match(name) or is_collaboration(latex_to_unicode(name)):
            add_collaboration(name, tuple(affiliations))
        else:
            slots.append(person_author(name, tuple(affiliations)))
        for note in notes:
            add_collaboration(note)
    return slots
