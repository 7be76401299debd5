"""OpenAlex works: parse into PaperRecords, page with cursors (no ORM).

Both schemas in the recorded data parse: the current one (2024-: ``authorships[]``
with ``raw_author_name``, ``raw_affiliation_strings``, ``institutions[].ror``,
``primary_location.source``) and the 2022 legacy one (``host_venue``, a single
``raw_affiliation_string``, no ``raw_author_name``).

Rules, from the OpenAlex documentation (docs.openalex.org: "Work object",
"Authorship object", "Paging", "Authentication") or seen in the recorded data:

* ids are URLs (``https://openalex.org/W2741809807``); the bare id is stored.
* ``abstract_inverted_index`` maps each word to its positions; the abstract is
  rebuilt word by word.
* ``is_authors_truncated`` means the list holds only the first 100 authorships: the
  live harvest fetches the single work to get all of them; a saved list with a
  truncated work refuses that work by name (its byline would be wrong). Older
  list responses and snapshots cut at 100 *without* the flag: a work with exactly
  100 authorships and no flag is treated the same (:func:`may_be_cut`): the live
  harvest fetches it whole and takes that answer as it is; a saved file of one
  is refused by name (a file does not say whether it held a list or a single
  work).
* ``publication_date`` gives the day; without it ``publication_year`` the year.
* An author's name is ``raw_author_name`` (as printed) where given, else
  ``author.display_name``.
* Cursor paging: ``cursor=*``, then ``meta.next_cursor`` until it is null; the API
  key (``OPENALEX_API_KEY``) goes in the ``api_key`` parameter.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from curation.names import is_collaboration, parse_name
from harvest.records import (
    AuthorProfileRecord,
    AuthorRecord,
    InstitutionRecord,
    NotARecordFile,
    PaperRecord,
    RawItem,
    RecordError,
    file_locator,
)
from harvest.sources.crossref import arxiv_id_of_doi
from harvest.sources.json_answers import (
    count_of,
    json_answer,
    json_payload,
    json_record,
    saved_answer_items,
    text_of,
    texts_of,
)
from harvest.sources.polite_http import (
    ListGuard,
    PoliteClient,
    SourceError,
    SourceRefused,
)
from harvest.sources.repeated_authors import (
    POSSIBLE_REPEATED_AUTHOR,
    collapse_repeated,
)
from harvest.sources.ror import ror_id_of
from wovepaper.identifiers import doi_normalise, doi_valid, orcid_normalise

SOURCE = "openalex"
# OpenAlex ids: a letter and ASCII digits (the author ids' length as
# wovepaper.identifiers.OPENALEX_AUTHOR_RE, what --ids accepts).
_WORK_ID_RE = re.compile(
    r"^(?:https?://openalex\.org/)?(W[0-9]{2,15})$", re.IGNORECASE | re.ASCII
)
_AUTHOR_ID_RE = re.compile(
    r"^(?:https?://openalex\.org/)?(A[0-9]{4,12})$", re.IGNORECASE | re.ASCII
)
# An arXiv landing page among a work's locations (new- and old-style ids).
_ARXIV_URL_RE = re.compile(
    r"arxiv\.org/(?:abs|pdf)/((?:\d{4}\.\d{4,5})|(?:[a-z\-]+(?:\.[A-Z]{2})?/\d{7}))",
    re.IGNORECASE,
)


logger = logging.getLogger(__name__)

# Where OpenAlex cuts a listed work's authorships (docs: "Work object",
# is_authors_truncated: "the first 100 authorships").
CUT_AT = 100


def work_id(value: object) -> str:
    """``W2741809807`` from an OpenAlex work id or URL; "" when it is not one."""
    match = _WORK_ID_RE.match(value.strip()) if isinstance(value, str) else None
    return match.group(1).upper() if match else ""


def rebuild_abstract(index: object) -> str:
    """The abstract from ``abstract_inverted_index`` (``{word: [positions]}``).

    Returns:
        The words in position order joined by spaces; "" for null or a malformed
        index.
    """
    if not isinstance(index, dict):
        return ""
    placed: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list):
            return ""
        for position in positions:
            if isinstance(position, int) and 0 <= position < 1_000_000:
                placed[position] = word
    return " ".join(placed[p] for p in sorted(placed))


@dataclass(frozen=True)
class WorksPage:
    """One ``/works`` answer: its works, and the next page's cursor ("" at the end)."""

    url: str
    items: list
    next_cursor: str
    total_results: int | None = None


def works_page_read(body: str, url: str) -> WorksPage:
    """Read a ``/works`` list answer, a single work, or a JSON array of works.

    Raises:
        UnusableBody: the body is not whole JSON (cut short in transit).
        SourceRefused: JSON that holds no works (an error answer).
    """
    data = json_answer(body, url)
    if isinstance(data, list):
        return WorksPage(url, data, "")
    if not isinstance(data, dict):
        raise SourceRefused(f"{url}: answer is not a JSON object")
    if work_id(data.get("id")):
        return WorksPage(url, [data], "")
    results = data.get("results")
    if not isinstance(results, list):
        message = data.get("message") or data.get("error") or str(data)[:300]
        raise SourceRefused(f"{url}: not a list of works: {message}")
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    count = meta.get("count")
    return WorksPage(
        url,
        results,
        str(meta.get("next_cursor") or ""),
        count if isinstance(count, int) else None,
    )


def split_works_page(page: WorksPage) -> Iterator[RawItem]:
    """One RawItem per work: payload the work as canonical JSON, id ``W...``."""
    for index, work in enumerate(page.items):
        locator = f"{page.url}#work-{index}"
        wid = work_id(work.get("id")) if isinstance(work, dict) else ""
        yield RawItem(
            external_id=wid or locator,
            payload=json_payload(work),
            locator=locator,
        )


def read_openalex_file(path: Path, root: Path | None = None) -> Iterator[RawItem]:
    """Cut a saved OpenAlex answer (``.json``: a list page, one work, or an array of
    works) into one RawItem per work.

    Raises:
        RecordError: (while iterating) the file is not JSON.
        NotARecordFile: JSON holding no works (an author, an institution ...).
    """
    yield from saved_answer_items(path, root, works_page_read, split_works_page)


def parse_openalex_work(item: RawItem) -> PaperRecord:
    """Parse one OpenAlex work (current or 2022 schema) into a PaperRecord.

    Returns:
        ``source="openalex"``, ``external_id`` and ``openalex_id`` the bare ``W``
        id, DOI, arXiv id (arXiv's DOI, or an arxiv.org location), title, rebuilt
        abstract, byline with ORCID iDs, OpenAlex author ids, raw affiliations and
        ROR institutions, publication date with its precision, ``datestamp`` the
        work's ``updated_date``, journal reference and citation count.

    Raises:
        RecordError: not a JSON object, no work id, no title, a truncated
            authorship list (``is_authors_truncated``), or an authorship that is
            not an object.

    Source: OpenAlex Work object ``id``, ``doi``, ``display_name``,
    ``publication_date``, ``publication_year``, ``authorships[]``,
    ``primary_location.source.display_name`` (2022: ``host_venue.display_name``),
    ``locations[].landing_page_url``, ``biblio``, ``cited_by_count``,
    ``updated_date``, ``is_authors_truncated``.
    """
    work = json_record(item, "work")
    wid = work_id(work.get("id"))
    if not wid:
        raise RecordError(f"{item.locator}: work without an OpenAlex id")
    if work.get("is_authors_truncated"):
        raise RecordError(
            f"{wid}: authorships truncated by OpenAlex; the single work "
            f"(/works/{wid}) holds them all"
        )
    if may_be_cut(work):
        raise RecordError(
            f"{wid}: exactly {CUT_AT} authorships and no is_authors_truncated "
            f"flag: older OpenAlex lists cut bylines there; the single work "
            f"(/works/{wid}) is fetched whole by the live harvest"
        )
    title = text_of(work.get("display_name")) or text_of(work.get("title"))
    if not title:
        raise RecordError(f"{wid}: work without a title")
    doi = doi_normalise(work["doi"]) if isinstance(work.get("doi"), str) else ""
    doi = doi if doi_valid(doi) else ""
    authorships = work.get("authorships")
    published, precision = _published(work)
    count = work.get("cited_by_count")
    authors, repeated = collapse_repeated(
        [_author(a, wid) for a in authorships if a is not None]
        if isinstance(authorships, list)
        else []
    )
    return PaperRecord(
        source=SOURCE,
        external_id=wid,
        openalex_id=wid,
        title=title,
        authors=authors,
        review_flags=(POSSIBLE_REPEATED_AUTHOR,) if repeated else (),
        arxiv_id=arxiv_id_of_doi(doi) or _arxiv_location(work),
        doi=doi,
        abstract=rebuild_abstract(work.get("abstract_inverted_index")),
        published=published,
        published_precision=precision,
        datestamp=_day(work.get("updated_date")),
        journal_ref=_journal_ref(work),
        cited_by_count=count if isinstance(count, int) and count >= 0 else None,
    )


def openalex_pages(
    client: PoliteClient,
    base_url: str,
    *,
    filters: Mapping[str, str],
    cursor: str = "*",
    api_key: str = "",
    per_page: int = 200,
) -> Iterator[WorksPage]:
    """Walk a filtered ``/works`` list with cursors; works whose authorships were
    truncated are fetched whole (``/works/{id}``) and put in their place.

    Args:
        client: OpenAlex's polite client.
        base_url: ``https://api.openalex.org/works``.
        filters: e.g. ``{"from_updated_date": "2026-11-01"}``.
        cursor: ``"*"`` or a ``next_cursor`` to continue from.
        api_key: OpenAlex API key ("" for none).
        per_page: works per page (at most 200).

    Returns:
        Pages in order; the last one has no ``next_cursor``.

    Raises:
        SourceRefused, SourceUnavailable: see :meth:`PoliteClient.fetch`.
    """
    key = {"api_key": api_key} if api_key else {}
    guard = ListGuard(per_page)
    while True:
        params = {
            "filter": ",".join(f"{k}:{v}" for k, v in filters.items()),
            "cursor": cursor,
            "per-page": str(per_page),
            **key,
        }
        page = client.fetch(
            base_url,
            params,
            read=lambda response: works_page_read(response.text, str(response.url)),
        )
        whole = [
            _whole_work(client, base_url, work, key)
            if isinstance(work, dict)
            and (work.get("is_authors_truncated") or may_be_cut(work))
            else work
            for work in page.items
        ]
        yield WorksPage(page.url, whole, page.next_cursor, page.total_results)
        if not page.items or not page.next_cursor:
            return
        guard.walked(page.url, len(page.items), page.total_results)
        cursor = page.next_cursor


# Private helpers.


def may_be_cut(work: dict) -> bool:
    """Whether a listed work's byline may have been cut at :data:`CUT_AT`
    without saying so: exactly that many authorships and no
    ``is_authors_truncated`` key (a key saying False is believed)."""
    authorships = work.get("authorships")
    return (
        isinstance(authorships, list)
        and len(authorships) == CUT_AT
        and "is_authors_truncated" not in work
    )


def _whole_work(
    client: PoliteClient, base_url: str, work: dict, key: dict[str, str]
) -> dict:
    """The single work ``/works/{id}`` in place of a listed one whose byline was
    or may have been cut; the listed one (refused by name when parsed) when the
    fetch fails or another work comes back, so the stored byline stays as it
    was."""
    wid = work_id(work.get("id"))
    try:
        single = client.fetch(
            f"{base_url.rstrip('/')}/{wid}",
            key,
            read=lambda response: works_page_read(response.text, str(response.url)),
        )
    except SourceError as exc:
        logger.warning("%s: fetching the whole work failed: %s", wid, exc)
        return work
    whole = single.items[0] if single.items else None
    if not isinstance(whole, dict) or work_id(whole.get("id")) != wid:
        # Another work came back: keep the truncated one, refused by name later.
        return work
    # The single work holds every authorship (OpenAlex "Work object"); an old
    # answer without the flag says so no more than a list did.
    return {"is_authors_truncated": False, **whole}


def _day(value: object) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def _published(work: dict) -> tuple[date | None, str]:
    day = _day(work.get("publication_date"))
    if day:
        return day, "day"
    year = work.get("publication_year")
    if isinstance(year, int) and 1 <= year <= 9999:
        return date(year, 1, 1), "year"
    return None, "day"


def _arxiv_location(work: dict) -> str:
    locations = work.get("locations")
    for location in locations if isinstance(locations, list) else []:
        url = location.get("landing_page_url") if isinstance(location, dict) else None
        match = _ARXIV_URL_RE.search(url) if isinstance(url, str) else None
        if match:
            return match.group(1)
    return ""


def _journal_ref(work: dict) -> str:
    location = work.get("primary_location")
    source = location.get("source") if isinstance(location, dict) else None
    if not isinstance(source, dict):
        source = work.get("host_venue")  # the 2022 schema
    name = text_of(source.get("display_name")) if isinstance(source, dict) else ""
    if not name:
        return ""
    biblio = work.get("biblio") if isinstance(work.get("biblio"), dict) else {}
    volume, issue = text_of(biblio.get("volume")), text_of(biblio.get("issue"))
    first, last = text_of(biblio.get("first_page")), text_of(biblio.get("last_page"))
    ref = name + (f" {volume}" if volume else "") + (f"({issue})" if issue else "")
    if first:
        ref += f", {first}" + (f"-{last}" if last and last != first else "")
    year = work.get("publication_year")
    return ref + (f" ({year})" if isinstance(year, int) else "")


def _institution(entry: object) -> InstitutionRecord | None:
    if not isinstance(entry, dict):
        return None
    ror = ror_id_of(entry.get("ror"))
    name = text_of(entry.get("display_name"))
    if not (ror and name):
        return None
    country = text_of(entry.get("country_code")).upper()
    kind = text_of(entry.get("type"))
    return InstitutionRecord(
        ror_id=ror,
        name=name,
        country_code=country if len(country) == 2 else "",
        types=(kind,) if kind else (),
    )


def _author(authorship: object, wid: str) -> AuthorRecord:
    if not isinstance(authorship, dict):
        raise RecordError(f"{wid}: an authorship is not a JSON object")
    author = (
        authorship.get("author") if isinstance(authorship.get("author"), dict) else {}
    )
    raw = text_of(authorship.get("raw_author_name")) or text_of(
        author.get("display_name")
    )
    if not raw:
        raise RecordError(f"{wid}: an authorship has no name")
    strings = authorship.get("raw_affiliation_strings")
    if isinstance(strings, list):
        affiliations = tuple(text_of(s) for s in strings if text_of(s))
    else:  # the 2022 schema: one string
        one = text_of(authorship.get("raw_affiliation_string"))
        affiliations = (one,) if one else ()
    institutions = tuple(
        i
        for i in (_institution(e) for e in authorship.get("institutions") or [])
        if i is not None
    )
    aid = author.get("id")
    match = _AUTHOR_ID_RE.match(aid.strip()) if isinstance(aid, str) else None
    orcid = ""
    if isinstance(author.get("orcid"), str):
        try:
            orcid = orcid_normalise(author["orcid"])
        except ValueError:
            orcid = ""
    if is_collaboration(raw):
        return AuthorRecord(
            raw_name=raw,
            affiliations=affiliations,
            is_collaboration=True,
            institutions=institutions,
        )
    name = parse_name(raw)
    return AuthorRecord(
        raw_name=raw,
        given_name=name.given,
        family_name=name.family or raw,
        suffix=name.suffix,
        affiliations=affiliations,
        orcid=orcid,
        openalex_author_id=match.group(1).upper() if match else "",
        institutions=institutions,
    )


_INSTITUTION_ID_RE = re.compile(
    r"^(?:https?://openalex\.org/)?(I[0-9]{2,15})$", re.IGNORECASE | re.ASCII
)


def is_institution(value: object) -> bool:
    """Whether a JSON value is an OpenAlex institution object (``id`` ``I...``)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and bool(_INSTITUTION_ID_RE.match(value["id"].strip()))
    )


def _read_entities(
    path: Path,
    root: Path | None,
    *,
    kind: str,
    is_kind: Callable[[object], bool],
    id_of: Callable[[object], str],
) -> Iterator[RawItem]:
    """Cut a saved OpenAlex answer about ``kind`` entities (one, a ``results``
    list, or an array) into one RawItem per entity, keyed by its id.

    Raises:
        RecordError: (while iterating) the file is not JSON.
        NotARecordFile: no such entity in it.
    """
    locator = file_locator(path, root)
    try:
        data = json.loads(path.read_text(errors="surrogateescape"))
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"{locator}: not JSON: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]
    entries = data if isinstance(data, list) else [data]
    if not any(is_kind(e) for e in entries):
        raise NotARecordFile(f"{locator}: no OpenAlex {kind} in it")
    for index, entry in enumerate(entries):
        item_locator = f"{locator}#{kind}-{index}"
        eid = id_of(entry.get("id")) if isinstance(entry, dict) else ""
        yield RawItem(
            external_id=eid or item_locator,
            payload=json_payload(entry),
            locator=item_locator,
        )


def _institution_id(value: object) -> str:
    return value.rsplit("/", 1)[-1] if isinstance(value, str) else ""


def read_openalex_institutions(
    path: Path, root: Path | None = None
) -> Iterator[RawItem]:
    """Cut a saved OpenAlex institution answer into one RawItem per institution
    (:func:`_read_entities`)."""
    return _read_entities(
        path, root, kind="institution", is_kind=is_institution, id_of=_institution_id
    )


def parse_openalex_institution(item: RawItem):
    """Parse one OpenAlex institution into an organisation record keyed by ROR id.

    Returns:
        A :class:`harvest.sources.ror.OrganisationRecord`: the ROR id, display
        name, alternative names and acronyms as aliases, country, type, and the
        associated institutions that have ROR ids as relationships.

    Raises:
        RecordError: not an institution object, or one without a valid ROR id
            (an institution is stored by its ROR id).

    Source: OpenAlex Institution object ``id``, ``ror``, ``display_name``,
    ``display_name_alternatives``, ``display_name_acronyms``, ``country_code``,
    ``type``, ``associated_institutions[].{ror, display_name, relationship}``.
    """
    from harvest.sources.ror import OrganisationRecord

    entry = json_record(item, "institution")
    if not is_institution(entry):
        raise RecordError(f"{item.locator}: not an OpenAlex institution")
    ror = ror_id_of(entry.get("ror"))
    if not ror:
        raise RecordError(f"{item.external_id}: institution without a valid ROR id")
    name = text_of(entry.get("display_name"))
    if not name:
        raise RecordError(f"{item.external_id}: institution without a name")
    aliases = []
    for key in ("display_name_alternatives", "display_name_acronyms"):
        for alias in entry.get(key) or []:
            alias = text_of(alias)
            if alias and alias != name and alias not in aliases:
                aliases.append(alias)
    country = text_of(entry.get("country_code")).upper()
    kind = text_of(entry.get("type"))
    return OrganisationRecord(
        ror_id=ror,
        name=name,
        aliases=tuple(aliases),
        country_code=country if len(country) == 2 else "",
        types=(kind,) if kind else (),
        relationships=tuple(
            {
                "type": text_of(a.get("relationship")).lower(),
                "ror_id": ror_id_of(a.get("ror")),
                "label": text_of(a.get("display_name")),
            }
            for a in entry.get("associated_institutions") or []
            if isinstance(a, dict) and ror_id_of(a.get("ror"))
        ),
    )


def is_author(value: object) -> bool:
    """Whether a JSON value is an OpenAlex author object (``id`` ``A...``)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and bool(_AUTHOR_ID_RE.match(value["id"].strip()))
    )


def author_id(value: object) -> str:
    """``A5023888391`` from an OpenAlex author id or URL; "" when it is none."""
    match = _AUTHOR_ID_RE.match(value.strip()) if isinstance(value, str) else None
    return match.group(1).upper() if match else ""


def read_openalex_authors(path: Path, root: Path | None = None) -> Iterator[RawItem]:
    """Cut a saved OpenAlex author answer into one RawItem per author, keyed by
    its id (:func:`_read_entities`)."""
    return _read_entities(path, root, kind="author", is_kind=is_author, id_of=author_id)


def parse_openalex_author(item: RawItem) -> AuthorProfileRecord:
    """Parse one OpenAlex author into an author profile record.

    ``item.external_id`` is the id that was asked for: when the answer carries
    another id, OpenAlex merged the asked profile into that one (its API answers
    a merged id with the survivor) and ``merged_into`` names it. A profile named
    "Deleted Author" with no works is OpenAlex's tombstone of a removed profile.

    Returns:
        The record: display name, alternative names as aliases, ORCID, the ROR
        ids of its last known institutions then of its other affiliations (both
        schemas: ``last_known_institutions`` list, 2022's single
        ``last_known_institution``), works count.

    Raises:
        RecordError: not an author object.

    Source: OpenAlex docs, "Author object" (``id``, ``orcid``, ``display_name``,
    ``display_name_alternatives``, ``last_known_institutions``, ``affiliations``,
    ``works_count``); "Merged entities" (a merged id redirects to the survivor).
    """
    entry = json_record(item, "author")
    answered = author_id(entry.get("id"))
    if not answered:
        raise RecordError(f"{item.locator}: not an OpenAlex author")
    asked = author_id(item.external_id) or answered
    name = text_of(entry.get("display_name"))
    if not name:
        raise RecordError(f"{item.external_id}: author without a name")
    works = count_of(entry.get("works_count"))
    aliases = texts_of(entry.get("display_name_alternatives"), leave_out=name)
    orcid = ""
    if isinstance(entry.get("orcid"), str):
        try:
            orcid = orcid_normalise(entry["orcid"])
        except ValueError:
            orcid = ""
    last = entry.get("last_known_institutions")
    if not isinstance(last, list):
        last = [entry.get("last_known_institution")]
    affiliations = entry.get("affiliations")
    places = [*last] + [
        a.get("institution")
        for a in (affiliations if isinstance(affiliations, list) else [])
        if isinstance(a, dict)
    ]
    ror_ids = dict.fromkeys(  # in order, once each, at most 100
        r for r in (ror_id_of(p.get("ror")) for p in places if isinstance(p, dict)) if r
    )
    return AuthorProfileRecord(
        source=SOURCE,
        external_id=asked,
        name=name,
        aliases=aliases,
        orcid=orcid,
        ror_ids=tuple(ror_ids)[:100],
        works_count=works,
        merged_into=answered if answered != asked else "",
        deleted=name == "Deleted Author" and not works and answered == asked,
    )
