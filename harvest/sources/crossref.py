"""Crossref REST API ``/works``: works into PaperRecords, cursor paging (no ORM).

A ``/works`` response is cut into one :class:`RawItem` per work
(:func:`split_works_page`); :func:`parse_crossref_work` turns one into a
:class:`PaperRecord`; :func:`crossref_pages` walks a filtered list with deep-paging
cursors; :func:`crossref_work` looks one DOI up.

Rules, each from the Crossref REST API documentation (api.crossref.org/swagger-ui,
"Deep paging with cursors", "Etiquette") or seen in the recorded responses:

* ``cursor=*`` starts deep paging; each answer's ``next-cursor`` asks for the next
  page, and the value often stays the same from page to page. The list ends with
  an empty ``items`` page, not with a short one.
* An author with ``family`` is a person; one with only ``name`` is an organisation
  (not a person), kept as a non-person byline slot.
* ``ORCID`` arrives as ``https://orcid.org/...``, ``http://orcid.org/...`` or bare;
  all are one iD (checksum verified; a wrong one is dropped).
* ``title`` and ``abstract`` carry JATS (and some HTML) markup: it is removed
  with a space at every block boundary (paragraphs, titles, sections) and none
  inside inline markup (``H<sub>2</sub>O`` stays ``H2O``). A leading
  ``<jats:title>Abstract</jats:title>`` is dropped.
* ``issued.date-parts`` is ``[[year]]``, ``[[year, month]]`` or
  ``[[year, month, day]]``; the precision is kept (``published_precision``).
* A DOI under arXiv's prefix ``10.48550/arXiv.<id>`` names the arXiv paper.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from urllib.parse import quote

from lxml import etree
from lxml import html as lxml_html

from curation.names import is_collaboration, parse_name
from harvest.records import (
    AuthorRecord,
    PaperRecord,
    RawItem,
    RecordError,
)
from harvest.sources.json_answers import (
    json_answer,
    json_payload,
    json_record,
    saved_answer_items,
    text_of,
)
from harvest.sources.polite_http import (
    ListGuard,
    PoliteClient,
    SourceRefused,
)
from harvest.sources.repeated_authors import (
    POSSIBLE_REPEATED_AUTHOR,
    collapse_repeated,
)
from wovepaper.identifiers import (
    arxiv_id_normalise,
    doi_normalise,
    doi_valid,
    orcid_normalise,
)

SOURCE = "crossref"
# arXiv's DOIs (DataCite prefix 10.48550, since 2022). Source: arXiv blog, "new
# arXiv articles are now automatically assigned DOIs".
_ARXIV_DOI_RE = re.compile(r"^10\.48550/arxiv\.(.+?)(?:v\d+)?$", re.IGNORECASE)
# Inline JATS / HTML / MathML elements: no word boundary at their edges.
_INLINE = frozenset(
    {
        "italic",
        "bold",
        "sub",
        "sup",
        "sc",
        "underline",
        "monospace",
        "roman",
        "sans-serif",
        "overline",
        "strike",
        "inline-formula",
        "tex-math",
        "named-content",
        "styled-content",
        "xref",
        "ext-link",
        "uri",
        "email",
        "i",
        "b",
        "em",
        "strong",
        "span",
        "a",
        "u",
        "tt",
        "small",
        "font",
    }
)
# Elements whose boundary is a paragraph break.
_PARAGRAPH = frozenset({"p", "sec", "title", "list-item", "div", "br", "abstract"})
_ABSTRACT_HEADINGS = frozenset({"abstract", "summary"})
# Longest marked-up text parsed (characters); lxml stops at 10 MB text nodes.
_MARKUP_MAX = 1_000_000


def markup_to_text(text: str) -> str:
    """Plain text of a Crossref title or abstract carrying JATS or HTML markup.

    Args:
        text: e.g. ``"<jats:title>Abstract</jats:title><jats:p>H<jats:sub>2
            </jats:sub>O is <jats:italic>wet</jats:italic>.</jats:p>"``.

    Returns:
        Paragraphs separated by ``"\\n"``, spaces collapsed inside each, entities
        decoded, a leading "Abstract"/"Summary" heading dropped
        (``"H2O is wet."``); "" for empty input.
    """
    if ("<" not in text and "&" not in text) or len(text) > _MARKUP_MAX:
        # Past the parser's bound the tags are left in: the record's length
        # check then refuses it by name, rather than an empty text passing.
        return " ".join(text.split())
    try:
        root = lxml_html.fragment_fromstring(text, create_parent="div")
    except (etree.ParserError, ValueError):
        return " ".join(text.split())
    if len(root) and not (root.text or "").strip() and _is_heading(root[0]):
        heading = root[0]
        root.text = (root.text or "") + (heading.tail or "")
        root.remove(heading)
    parts: list[str] = [root.text or ""]

    def walk(element: etree._Element) -> None:
        if not isinstance(element.tag, str):  # a comment or processing instruction
            parts.append(element.tail or "")
            return
        local = element.tag.rsplit(":", 1)[-1].lower()
        inline = local in _INLINE or element.tag.lower().startswith("mml:")
        boundary = "\n" if local in _PARAGRAPH else ("" if inline else " ")
        parts.append(boundary + (element.text or ""))
        for child in element:
            walk(child)
        parts.append(boundary + (element.tail or ""))

    for child in root:
        walk(child)
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


def _is_heading(element: etree._Element) -> bool:
    """A ``<title>`` that only says "Abstract" or "Summary"."""
    if not isinstance(element.tag, str):
        return False
    local = element.tag.rsplit(":", 1)[-1].lower()
    text = "".join(element.itertext()).strip().lower()
    return local == "title" and text in _ABSTRACT_HEADINGS


def arxiv_id_of_doi(doi: str) -> str:
    """The arXiv id in one of arXiv's DOIs (``10.48550/arXiv.2401.14040``), or ""
    (another DOI, or one whose id is no arXiv id, as ``10.48550/arXiv.../x``)."""
    match = _ARXIV_DOI_RE.match(doi)
    if not match:
        return ""
    try:
        return arxiv_id_normalise(match.group(1))
    except ValueError:
        return ""


@dataclass(frozen=True)
class WorksPage:
    """One ``/works`` answer.

    Attributes:
        url: the URL asked, for locators and messages.
        items: the works, as JSON objects, in the answer's order.
        next_cursor: ``message.next-cursor`` ("" when absent).
        total_results: ``message.total-results``, or None.
    """

    url: str
    items: list[dict]
    next_cursor: str
    total_results: int | None


def works_page_read(body: str, url: str) -> WorksPage:
    """Read a ``/works`` (work-list) or ``/works/{doi}`` (work) answer.

    Args:
        body: the response text.
        url: where it came from.

    Returns:
        The page; a single work is a page of one.

    Raises:
        UnusableBody: the body is not whole JSON (cut short in transit).
        SourceRefused: valid JSON that is not a Crossref work or work list (an
            error message such as ``cursor-invalid``).
    """
    data = json_answer(body, url)
    if not isinstance(data, dict):
        raise SourceRefused(f"{url}: answer is not a JSON object")
    message = data.get("message")
    kind = data.get("message-type")
    if kind == "work" and isinstance(message, dict):
        return WorksPage(url, [message], "", 1)
    if kind != "work-list" or not isinstance(message, dict):
        raise SourceRefused(
            f"{url}: not a work list (status {data.get('status')!r}, "
            f"message-type {kind!r}): {json.dumps(message)[:300]}"
        )
    items = message.get("items")
    if not isinstance(items, list):
        raise SourceRefused(f"{url}: work list without items")
    total = message.get("total-results")
    return WorksPage(
        url,
        items,
        str(message.get("next-cursor") or ""),
        total if isinstance(total, int) else None,
    )


def split_works_page(page: WorksPage) -> Iterator[RawItem]:
    """One RawItem per work of a page.

    Returns:
        RawItems whose payload is the work as canonical JSON (sorted keys), external
        id ``doi:<doi>`` (or the item locator when the DOI is missing), locator
        ``<url>#item-N`` (N 0-based).
    """
    for index, work in enumerate(page.items):
        locator = f"{page.url}#item-{index}"
        doi = work.get("DOI") if isinstance(work, dict) else None
        yield RawItem(
            external_id=f"doi:{doi_normalise(doi)}"
            if isinstance(doi, str)
            else locator,
            payload=json_payload(work),
            locator=locator,
        )


def read_crossref_file(path: Path, root: Path | None = None) -> Iterator[RawItem]:
    """Cut a saved ``/works`` answer (``.json``) into one RawItem per work.

    Args:
        path: a work-list or single-work answer as Crossref sent it.
        root: folder the locators are relative to; None keeps ``path``.

    Returns:
        An iterator of RawItems (see :func:`split_works_page`).

    Raises:
        RecordError: (while iterating) the file is not JSON.
        NotARecordFile: JSON that holds no works (an error body, a funder list).
    """
    yield from saved_answer_items(path, root, works_page_read, split_works_page)


def parse_crossref_work(item: RawItem) -> PaperRecord:
    """Parse one Crossref work into a PaperRecord.

    Args:
        item: a RawItem whose payload is one work object.

    Returns:
        The record: ``source="crossref"``, ``external_id`` the DOI, ``doi``,
        ``arxiv_id`` for arXiv's own DOIs, title and abstract as plain text,
        byline in order (a person the publisher deposited more than once is
        one slot; two same-name entries that could be two people are kept and
        flagged: :func:`harvest.sources.repeated_authors.collapse_repeated`),
        ``published`` with its precision, ``datestamp`` the
        last deposit, journal reference, licence and citation count.

    Raises:
        RecordError: the payload is not a JSON object, has no DOI or no title.

    Source: Crossref REST API work object: ``DOI``, ``title[]``, ``abstract``,
    ``author[].{given,family,name,suffix,ORCID,affiliation[].name}``,
    ``issued.date-parts``, ``deposited.date-time``, ``container-title[]``,
    ``volume``, ``issue``, ``page``, ``license[].URL``,
    ``is-referenced-by-count``.
    """
    where = item.locator
    work = json_record(item, "work")
    doi = work.get("DOI")
    if not isinstance(doi, str) or not doi.strip():
        raise RecordError(f"{where}: work without a DOI")
    doi = doi_normalise(doi)
    if not doi_valid(doi):
        raise RecordError(f"{item.locator}: {doi[:80]!r} is not a DOI")
    where = f"doi:{doi}"
    titles = _strings(work.get("title"))
    title = markup_to_text(titles[0]) if titles else ""
    if not title:
        raise RecordError(f"{where}: work without a title")
    published, precision = _date_parts(work.get("issued"), where)
    count = work.get("is-referenced-by-count")
    authors, repeated = collapse_repeated(
        [a for a in (_author(a, where) for a in _list(work.get("author"))) if a]
    )
    return PaperRecord(
        source=SOURCE,
        external_id=doi,
        title=title.replace("\n", " "),
        authors=authors,
        review_flags=(POSSIBLE_REPEATED_AUTHOR,) if repeated else (),
        arxiv_id=arxiv_id_of_doi(doi),
        doi=doi,
        abstract=markup_to_text(
            work["abstract"] if isinstance(work.get("abstract"), str) else ""
        ),
        published=published,
        published_precision=precision or "day",
        datestamp=_date_time(work.get("deposited")),
        journal_ref=_journal_ref(work, published),
        license=_license(work.get("license")),
        cited_by_count=count if isinstance(count, int) and count >= 0 else None,
    )


def crossref_work(
    client: PoliteClient, base_url: str, doi: str
) -> list[RawItem] | None:
    """Look one work up by its DOI (``GET /works/{doi}``).

    Args:
        client: Crossref's polite client.
        base_url: ``https://api.crossref.org/works``.
        doi: a normalised DOI (:func:`doi_normalise`), ``10.1371/journal.pone.0033693``.

    Returns:
        The work as one RawItem (:func:`split_works_page`); None when Crossref
        does not know the DOI (it answers HTTP 404 ``Resource not found.``).
        An answer that is not that DOI's work (HTML, JSON that is not a work,
        a work list, another DOI's work) or a request Crossref calls bad
        (HTTP 400, with its message) is one RawItem that carries the problem
        (``doi:<doi>``, the body as payload): its record fails naming the DOI,
        and the lookups of the other DOIs go on.

    Raises:
        SourceRefused: another refusal (401, 403: no DOI would fare better).
        SourceUnavailable: see :meth:`PoliteClient.fetch`.

    Source: Crossref REST API, ``/works/{doi}`` ("Returns metadata for the
    specified Crossref DOI"); the DOI goes in the path percent-encoded, its
    ``/`` kept.
    """
    doi = doi_normalise(doi)
    url = f"{base_url.rstrip('/')}/{quote(doi, safe='/')}"

    def read(response) -> list[RawItem] | None:
        if response.status_code == 404:
            return None
        where = f"doi:{doi}"
        if response.status_code == 400:
            said = " ".join(response.text.split())[:300]
            return [_unusable(where, response.text, f"Crossref refused it: {said}")]
        try:
            page = works_page_read(response.text, str(response.url))
        except SourceRefused as exc:
            return [_unusable(where, response.text, str(exc))]
        items = list(split_works_page(page))
        if [i.external_id for i in items] != [where]:
            answered = [i.external_id.removeprefix("doi:") for i in items]
            shown = ", ".join(answered[:3]) + (" ..." if len(answered) > 3 else "")
            problem = f"asked for {doi}, Crossref answered {shown or 'no work'}"
            return [_unusable(where, response.text, problem)]
        return items

    return client.fetch(url, None, read=read, accept=frozenset({400, 404}))


def _unusable(where: str, body: str, problem: str) -> RawItem:
    """The RawItem of an answer that is not the work asked for: kept with its
    body, its parse failing with ``problem``."""
    return RawItem(
        external_id=where,
        payload=body[:100_000],
        locator=where,
        problem=f"{where}: {problem}",
    )


def crossref_pages(
    client: PoliteClient,
    base_url: str,
    *,
    filters: Mapping[str, str],
    cursor: str = "*",
    rows: int = 1000,
) -> Iterator[WorksPage]:
    """Walk a filtered ``/works`` list with deep-paging cursors.

    Args:
        client: Crossref's polite client.
        base_url: ``https://api.crossref.org/works``.
        filters: Crossref filters, e.g. ``{"from-index-date": "2026-11-01",
            "until-index-date": "2026-11-07"}``.
        cursor: ``"*"`` to start, or a ``next-cursor`` to continue from.
        rows: works per page (at most 1,000).

    Returns:
        An iterator of pages; it ends after the first empty page (a short page is
        not the end: Crossref may return fewer rows than asked mid-list).

    Raises:
        SourceRefused: an error answer (an expired or invalid cursor, a bad filter).
        SourceUnavailable: see :meth:`PoliteClient.get`.
    """
    filter_text = ",".join(f"{k}:{v}" for k, v in filters.items())
    guard = ListGuard(rows)
    while True:
        params = {"cursor": cursor, "rows": str(rows)}
        if filter_text:
            params["filter"] = filter_text
        page = client.fetch(
            base_url,
            params,
            read=lambda response: works_page_read(response.text, str(response.url)),
        )
        yield page
        if not page.items or not page.next_cursor:
            return
        guard.walked(page.url, len(page.items), page.total_results)
        cursor = page.next_cursor


# Private helpers.


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _raw_text(value: object) -> str:
    """A JSON string as given (markup and line breaks kept); "" otherwise."""
    return value if isinstance(value, str) else ""


def _strings(value: object) -> list[str]:
    return [v for v in _list(value) if isinstance(v, str) and v.strip()]


def _author(author: object, where: str) -> AuthorRecord | None:
    """One byline slot; None for an entry with no name at all (Crossref deposits
    such empty entries, e.g. 10.31390/gradschool_theses.6125: nothing to show or
    match, so the slot is left out rather than the work refused)."""
    if not isinstance(author, dict):
        raise RecordError(f"{where}: an author is not a JSON object")
    affiliations = tuple(
        " ".join(a["name"].split())
        for a in _list(author.get("affiliation"))
        if isinstance(a, dict) and isinstance(a.get("name"), str) and a["name"].strip()
    )
    given = text_of(author.get("given"))
    family = text_of(author.get("family"))
    suffix = text_of(author.get("suffix"))
    orcid = ""
    if isinstance(author.get("ORCID"), str):
        try:
            orcid = orcid_normalise(author["ORCID"])
        except ValueError:
            orcid = ""
    if not family and not given:
        name = text_of(author.get("name"))
        if not name:
            return None
        # Crossref: an author with only "name" is an organisation.
        return AuthorRecord(
            raw_name=name, affiliations=affiliations, is_collaboration=True
        )
    if not family:
        # A mononym deposited as "given" only.
        given, family = "", given
    raw = " ".join(p for p in (given, family) if p)
    if suffix:
        raw = f"{raw}, {suffix}"
    if is_collaboration(family) and not given:
        return AuthorRecord(
            raw_name=raw, affiliations=affiliations, is_collaboration=True
        )
    if not given and " " in family:
        parsed = parse_name(family)
        given, family = parsed.given, parsed.family or family
    return AuthorRecord(
        raw_name=raw,
        given_name=given,
        family_name=family,
        suffix=suffix,
        affiliations=affiliations,
        orcid=orcid,
    )


def _date_parts(value: object, where: str) -> tuple[date | None, str]:
    """``(date, precision)`` of ``{"date-parts": [[y, m, d]]}``, or ``(None, "")``."""
    parts = value.get("date-parts") if isinstance(value, dict) else None
    first = parts[0] if isinstance(parts, list) and parts else None
    if not isinstance(first, list) or not first or first[0] is None:
        return None, ""
    numbers = [n for n in first[:3] if isinstance(n, int)]
    if len(numbers) != len(first[:3]):
        raise RecordError(f"{where}: issued date-parts {first!r} are not numbers")
    precision = ("year", "month", "day")[len(numbers) - 1]
    try:
        return date(*(numbers + [1, 1][: 3 - len(numbers)])), precision
    except ValueError as exc:
        raise RecordError(
            f"{where}: issued date {first!r} is not a date: {exc}"
        ) from exc


def _date_time(value: object) -> date | None:
    text = value.get("date-time") if isinstance(value, dict) else None
    if not isinstance(text, str):
        return None
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def _journal_ref(work: dict, published: date | None) -> str:
    container = _strings(work.get("container-title"))
    if not container:
        return ""
    ref = markup_to_text(container[0])
    volume, issue, page = (text_of(work.get(k)) for k in ("volume", "issue", "page"))
    if volume:
        ref += f" {volume}"
        if issue:
            ref += f"({issue})"
    if page:
        ref += f", {page}"
    if published:
        ref += f" ({published.year})"
    return ref


def _license(value: object) -> str:
    for entry in _list(value):
        if isinstance(entry, dict) and isinstance(entry.get("URL"), str):
            return entry["URL"]
    return ""
