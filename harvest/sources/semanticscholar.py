"""Semantic Scholar Graph API papers: parse into PaperRecords, batch lookups (no ORM).

Answers read: a single paper, a batch answer (a JSON array with ``null`` where an
id is unknown), a list (``{"data": [...]}`` of search, bulk search and author
papers) and a bulk-search page with its continuation ``token``.

Rules, from the Semantic Scholar Academic Graph API documentation
(api.semanticscholar.org/api-docs/graph) or seen in the recorded answers:

* ``POST /paper/batch`` takes up to 500 ids (``DOI:...``, ``ARXIV:...``,
  ``CorpusId:...`` or a paperId) and answers one entry per id, ``null`` when
  unknown.
* ``/paper/search/bulk`` pages with ``token`` until it is absent.
* The API key goes in the ``x-api-key`` header (``S2_API_KEY``); without one the
  shared pool answers 429 without ``Retry-After`` under load: the polite client
  backs off exponentially.
* ``externalIds`` holds ``DOI`` and ``ArXiv``; ``authors[].authorId`` is the S2
  author id; ``publicationDate`` the day, else ``year``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date

from curation.names import is_collaboration, parse_name
from harvest.records import (
    AuthorProfileRecord,
    AuthorRecord,
    PaperRecord,
    RawItem,
    RecordError,
)
from harvest.sources.json_answers import (
    count_of,
    json_answer,
    json_payload,
    json_record,
    text_of,
    texts_of,
)
from harvest.sources.polite_http import PoliteClient, SourceRefused
from wovepaper.identifiers import doi_normalise, doi_valid, orcid_normalise

SOURCE = "semanticscholar"
# The fields a harvest asks for (Graph API "fields" parameter).
PAPER_FIELDS = (
    "paperId,externalIds,title,abstract,year,publicationDate,venue,journal,"
    "citationCount,authors"
)
BATCH_MAX = 500


@dataclass(frozen=True)
class S2Page:
    """One answer: its papers (``None`` for an unknown id of a batch) and the
    bulk-search continuation token ("" at the end)."""

    url: str
    items: list
    token: str


def s2_page_read(body: str, url: str) -> S2Page:
    """Read a Graph API answer holding papers.

    Raises:
        UnusableBody: not whole JSON (cut short).
        SourceRefused: an error answer (``{"error": ...}`` or ``{"message": ...}``).
    """
    data = json_answer(body, url)
    if isinstance(data, list) and _holds_papers(data):
        return S2Page(url, data, "")
    if not isinstance(data, dict):
        raise SourceRefused(f"{url}: no papers in the answer")
    if isinstance(data.get("data"), list) and (
        _holds_papers(data["data"]) or not data["data"]
    ):
        return S2Page(url, data["data"], str(data.get("token") or ""))
    if data.get("paperId"):
        return S2Page(url, [data], "")
    problem = data.get("error") or data.get("message") or str(data)[:200]
    raise SourceRefused(f"{url}: no papers: {problem}")


def split_s2_page(page: S2Page) -> Iterator[RawItem]:
    """One RawItem per paper; the ``null`` entries of a batch are left out."""
    return _split(page, "paper", "paperId")


def split_s2_batch(page: S2Page, ids: list[str]) -> Iterator[RawItem]:
    """One RawItem per paper of a batch answer, each placed by the id asked for
    it (locator ``<batch URL without its query>#<id>``, also the external id
    of an entry that holds no paperId), the ``null`` entries left out.

    Args:
        page: a ``/paper/batch`` answer, one entry per id.
        ids: the ids asked, in order.
    """
    batch = page.url.split("?", 1)[0]
    for asked, entry in zip(ids, page.items, strict=True):
        if entry is None:
            continue
        locator = f"{batch}#{asked}"
        eid = entry.get("paperId") if isinstance(entry, dict) else None
        yield RawItem(
            external_id=eid if isinstance(eid, str) and eid else locator,
            payload=json_payload(entry),
            locator=locator,
        )


def _split(page: S2Page, kind: str, id_key: str) -> Iterator[RawItem]:
    for index, entry in enumerate(page.items):
        if entry is None:
            continue
        locator = f"{page.url}#{kind}-{index}"
        eid = entry.get(id_key) if isinstance(entry, dict) else None
        yield RawItem(
            external_id=eid if isinstance(eid, str) and eid else locator,
            payload=json_payload(entry),
            locator=locator,
        )


def parse_s2_paper(item: RawItem) -> PaperRecord:
    """Parse one Graph API paper into a PaperRecord.

    Returns:
        ``source="semanticscholar"``, ``s2_id`` the paperId, DOI and arXiv id from
        ``externalIds``, title, abstract, byline with S2 author ids, publication
        date (day, else year), venue as journal reference, citation count.

    Raises:
        RecordError: not a JSON object, no paperId, or no title.

    Source: Graph API paper ``paperId``, ``externalIds.DOI``,
    ``externalIds.ArXiv``, ``title``, ``abstract``, ``publicationDate``, ``year``,
    ``venue``, ``journal.name``, ``citationCount``, ``authors[].{authorId, name}``.
    """
    paper = json_record(item, "paper")
    pid = paper.get("paperId")
    if not isinstance(pid, str) or not pid.strip():
        raise RecordError(f"{item.locator}: paper without a paperId")
    title = text_of(paper.get("title"))
    if not title:
        raise RecordError(f"s2:{pid}: paper without a title")
    ids = paper.get("externalIds") if isinstance(paper.get("externalIds"), dict) else {}
    doi = doi_normalise(ids["DOI"]) if isinstance(ids.get("DOI"), str) else ""
    doi = doi if doi_valid(doi) else ""
    arxiv = text_of(ids.get("ArXiv")) if isinstance(ids.get("ArXiv"), str) else ""
    published, precision = _published(paper)
    count = paper.get("citationCount")
    authors = paper.get("authors") if isinstance(paper.get("authors"), list) else []
    return PaperRecord(
        source=SOURCE,
        external_id=pid,
        s2_id=pid,
        title=title,
        authors=[a for a in (_author(x) for x in authors) if a is not None],
        arxiv_id=arxiv,
        doi=doi,
        abstract=text_of(paper.get("abstract")),
        published=published,
        published_precision=precision,
        journal_ref=_journal(paper),
        cited_by_count=count if isinstance(count, int) and count >= 0 else None,
    )


# Paper id forms the Graph API takes, by their prefix as typed in any case, with
# the spelling the API documents. Source: Semantic Scholar Academic Graph API,
# "Details about a paper" (``paper_id``: a paperId, ``CorpusId:``, ``DOI:``,
# ``ARXIV:``, ``MAG:``, ``ACL:``, ``PMID:``, ``PMCID:``, ``URL:``).
_PAPER_ID_PREFIXES = {
    p.casefold(): p
    for p in ("CorpusId", "DOI", "ARXIV", "MAG", "ACL", "PMID", "PMCID", "URL")
}
_SHA_RE = re.compile(r"^[0-9a-f]{40}$", re.ASCII)
_PAPER_PAGE_RE = re.compile(
    r"^https?://(?:www\.)?semanticscholar\.org/paper/(?:[^/]+/)?([0-9a-f]{40})/?$",
    re.IGNORECASE | re.ASCII,
)
_ARXIV_ID_RE = re.compile(
    r"^(?:arxiv:)?(\d{4}\.\d{4,5}|[a-z][a-z.\-]*(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?$",
    re.IGNORECASE | re.ASCII,
)
_DIGITS_RE = re.compile(r"^[0-9]{1,12}$", re.ASCII)
# What each of the other prefixed forms holds (the Graph API docs' examples:
# ``CorpusId:215416146``, ``MAG:112218234``, ``ACL:W12-3903``,
# ``PMID:19872477``, ``PMCID:2323736``, ``URL:https://arxiv.org/abs/2106.15928v1``),
# and what the refusal says.
_PAPER_ID_FORMS = {
    "CorpusId": (_DIGITS_RE, "a CorpusId is a number"),
    "MAG": (_DIGITS_RE, "a MAG id is a number"),
    "PMID": (_DIGITS_RE, "a PMID is a number"),
    "PMCID": (
        re.compile(r"^(?:PMC)?[0-9]{1,12}$", re.ASCII | re.IGNORECASE),
        "a PMCID is a number (PMC and digits)",
    ),
    "ACL": (
        re.compile(r"^[A-Za-z0-9][A-Za-z0-9.\-]{0,40}$", re.ASCII),
        "an ACL Anthology id is letters, digits, '.' and '-' (W12-3903)",
    ),
    "URL": (
        re.compile(r"^https?://[^\s]{1,2000}$", re.IGNORECASE),
        "a URL id is an http(s) address",
    ),
}


def s2_paper_id_normalise(value: str) -> str:
    """A paper id as the Graph API takes it, from what a user typed.

    ``"CorpusId:211530585"`` (any case of the prefix), a paperId or a paper
    page URL (the 40-hex paperId), ``"DOI:10.1/x"`` or a bare DOI or resolver
    URL (``DOI:`` and the DOI lower-cased), ``"ARXIV:2201.05500"`` or a bare
    arXiv id, new or old style (``ARXIV:`` and the id without version); the
    other prefixes (``MAG:``, ``ACL:``, ``PMID:``, ``PMCID:``, ``URL:``) are
    kept as given with the prefix spelled as the API spells it.

    Raises:
        ValueError: none of these forms (the message names the value).
    """
    text = value.strip()
    page = _PAPER_PAGE_RE.match(text)
    if page:
        return page.group(1).lower()
    if _SHA_RE.match(text.lower()):
        return text.lower()
    prefix, sep, rest = text.partition(":")
    known = _PAPER_ID_PREFIXES.get(prefix.casefold()) if sep else None
    if known and rest.strip():
        rest = rest.strip()
        if known == "DOI":
            return _doi_id(rest, value)
        if known == "ARXIV":
            return _arxiv_id(rest, value)
        form = _PAPER_ID_FORMS.get(known)
        if form is not None and not form[0].match(rest):
            raise ValueError(f"{value[:80]!r}: {form[1]}")
        return f"{known}:{rest}"
    if doi_valid(doi_normalise(text)):
        return _doi_id(text, value)
    if _ARXIV_ID_RE.match(text):
        return _arxiv_id(text, value)
    raise ValueError(
        f"{value[:80]!r} is not a Semantic Scholar paper id (a paperId, "
        "CorpusId:N, DOI:..., ARXIV:..., a DOI or an arXiv id)"
    )


def _doi_id(text: str, value: str) -> str:
    doi = doi_normalise(text)
    if not doi_valid(doi):
        raise ValueError(f"{value[:80]!r}: {doi[:80]!r} is not a DOI")
    return f"DOI:{doi}"


def _arxiv_id(text: str, value: str) -> str:
    match = _ARXIV_ID_RE.match(text)
    if not match:
        raise ValueError(f"{value[:80]!r}: {text[:80]!r} is not an arXiv id")
    return f"ARXIV:{match.group(1)}"


def s2_papers_batch(
    client: PoliteClient, base_url: str, ids: list[str], *, api_key: str = ""
) -> S2Page:
    """Look up to :data:`BATCH_MAX` papers at once (``POST /paper/batch``).

    Args:
        client: Semantic Scholar's polite client.
        base_url: ``https://api.semanticscholar.org/graph/v1``.
        ids: ``["DOI:10.1/x", "ARXIV:2401.00001", ...]``.
        api_key: sent as ``x-api-key`` when given.

    Returns:
        The answer: one entry per id, in order, ``None`` where unknown.

    Raises:
        ValueError: more than :data:`BATCH_MAX` ids.
        SourceRefused: an answer whose length is not the number of ids; see also
            :meth:`PoliteClient.fetch`.
        SourceUnavailable: see :meth:`PoliteClient.fetch`.
    """
    return _batch(client, base_url, "paper", PAPER_FIELDS, s2_page_read, ids, BATCH_MAX)


def s2_bulk_pages(
    client: PoliteClient, base_url: str, *, query: str, params: Mapping[str, str]
) -> Iterator[S2Page]:
    """Walk ``/paper/search/bulk`` along its continuation tokens.

    Returns:
        Pages in order; the last one has no token.
    """
    token = ""
    while True:
        asked = {"query": query, "fields": PAPER_FIELDS, **params}
        if token:
            asked["token"] = token
        page = client.fetch(
            f"{base_url.rstrip('/')}/paper/search/bulk",
            asked,
            read=lambda response: s2_page_read(response.text, str(response.url)),
        )
        yield page
        if not page.token or not page.items:
            return
        token = page.token


# Papers asked a page of /author/{id}/papers (the Graph API allows up to 1,000; a
# page of 100 with their bylines is a few hundred kB).
AUTHOR_PAPERS_LIMIT = 100


def s2_author_papers_pages(
    client: PoliteClient, base_url: str, author_id: str, *, offset: int = 0
) -> Iterator[S2Page]:
    """Walk ``/author/{id}/papers`` by offset, from ``offset``.

    Returns:
        Pages in order; ``page.token`` is the next page's offset as text, ""
        on the last page (no ``next``, or a ``next`` that does not move on).

    Raises:
        SourceRefused: an answer that is not a page of papers; see also
            :meth:`PoliteClient.fetch`.

    Source: Semantic Scholar Graph API, "Details about an author's papers"
    (``offset``, ``limit``, ``next``).
    """
    url = f"{base_url.rstrip('/')}/author/{author_id}/papers"

    def read(response) -> S2Page:
        data = json_answer(response.text, str(response.url))
        if not (isinstance(data, dict) and isinstance(data.get("data"), list)):
            raise SourceRefused(f"{response.url}: not a page of an author's papers")
        after = data.get("next")
        moves_on = isinstance(after, int) and not isinstance(after, bool)
        moves_on = moves_on and after > offset and bool(data["data"])
        return S2Page(str(response.url), data["data"], str(after) if moves_on else "")

    while True:
        page = client.fetch(
            url,
            {
                "fields": PAPER_FIELDS,
                "offset": str(offset),
                "limit": str(AUTHOR_PAPERS_LIMIT),
            },
            read=read,
        )
        yield page
        if not page.token:
            return
        offset = int(page.token)


# Private helpers.


def _holds_papers(entries: list) -> bool:
    """Whether a list answer is one of papers (not of authors or citations): some
    entry is a paper, or every entry is a batch's ``null``."""
    return any(isinstance(e, dict) and "paperId" in e for e in entries) or (
        bool(entries) and all(e is None for e in entries)
    )


def _published(paper: dict) -> tuple[date | None, str]:
    text = paper.get("publicationDate")
    if isinstance(text, str):
        try:
            return date.fromisoformat(text[:10]), "day"
        except ValueError:
            pass
    year = paper.get("year")
    if isinstance(year, int) and 1 <= year <= 9999:
        return date(year, 1, 1), "year"
    return None, "day"


def _journal(paper: dict) -> str:
    journal = paper.get("journal") if isinstance(paper.get("journal"), dict) else {}
    name = text_of(journal.get("name")) or text_of(paper.get("venue"))
    if not name:
        return ""
    volume, pages = text_of(journal.get("volume")), text_of(journal.get("pages"))
    return name + (f" {volume}" if volume else "") + (f", {pages}" if pages else "")


def _author(author: object) -> AuthorRecord | None:
    if not isinstance(author, dict):
        return None
    name = text_of(author.get("name"))
    if not name:
        return None
    aid = author.get("authorId")
    s2 = aid if _is_s2_author_id(aid) else ""
    if is_collaboration(name):
        return AuthorRecord(raw_name=name, is_collaboration=True)
    parsed = parse_name(name)
    return AuthorRecord(
        raw_name=name,
        given_name=parsed.given,
        family_name=parsed.family or name,
        suffix=parsed.suffix,
        s2_author_id=s2,
    )


# A Semantic Scholar author id: ASCII digits, as many as
# wovepaper.identifiers.S2_AUTHOR_RE (what --ids accepts) allows.
_S2_AUTHOR_ID_RE = re.compile(r"[0-9]{1,12}", re.ASCII)


def _is_s2_author_id(value: object) -> bool:
    return isinstance(value, str) and bool(_S2_AUTHOR_ID_RE.fullmatch(value))


# Author lookups ask for these fields (Graph API "Details about an author").
AUTHOR_FIELDS = "authorId,externalIds,name,aliases,affiliations,paperCount,url"
AUTHOR_BATCH_MAX = 1000


def _holds_authors(entries: list) -> bool:
    return any(isinstance(e, dict) and e.get("authorId") for e in entries)


def s2_authors_read(body: str, url: str) -> S2Page:
    """Read a Graph API answer holding authors: one author, a batch (``null`` for
    an unknown id), or a ``{"data": [...]}`` list.

    Raises:
        UnusableBody: not whole JSON (cut short).
        SourceRefused: an error answer or one without authors.
    """
    data = json_answer(body, url)
    if isinstance(data, list) and (
        _holds_authors(data) or all(e is None for e in data)
    ):
        return S2Page(url, data, "")
    if isinstance(data, dict):
        if isinstance(data.get("data"), list) and _holds_authors(data["data"]):
            return S2Page(url, data["data"], str(data.get("token") or ""))
        if data.get("authorId"):
            return S2Page(url, [data], "")
        problem = data.get("error") or data.get("message") or str(data)[:200]
        raise SourceRefused(f"{url}: no authors: {problem}")
    raise SourceRefused(f"{url}: no authors in the answer")


def split_s2_authors(page: S2Page) -> Iterator[RawItem]:
    """One RawItem per author, keyed by its id; ``null`` entries are left out."""
    return _split(page, "author", "authorId")


def parse_s2_author(item: RawItem) -> AuthorProfileRecord:
    """Parse one Graph API author into an author profile record.

    Returns:
        The record: name, aliases, the ORCID from ``externalIds`` when valid,
        affiliation strings, paper count.

    Raises:
        RecordError: not an author object (no numeric ``authorId``).

    Source: Semantic Scholar Graph API, "Details about an author" (``authorId``,
    ``externalIds`` {``ORCID``, ``DBLP``}, ``name``, ``aliases``,
    ``affiliations``, ``paperCount``).
    """
    author = json_record(item, "author")
    aid = author.get("authorId")
    if not _is_s2_author_id(aid):
        raise RecordError(f"{item.locator}: not a Semantic Scholar author")
    name = text_of(author.get("name"))
    if not name:
        raise RecordError(f"{item.locator}: author {aid} without a name")
    aliases = texts_of(author.get("aliases"), leave_out=name)
    external = author.get("externalIds")
    orcid = ""
    if isinstance(external, dict) and isinstance(external.get("ORCID"), str):
        try:
            orcid = orcid_normalise(external["ORCID"])
        except ValueError:
            orcid = ""
    affiliations = texts_of(author.get("affiliations"))
    return AuthorProfileRecord(
        source=SOURCE,
        external_id=aid,
        name=name,
        aliases=aliases,
        orcid=orcid,
        affiliations=affiliations,
        works_count=count_of(author.get("paperCount")),
    )


def s2_authors_batch(
    client: PoliteClient, base_url: str, ids: list[str], *, api_key: str = ""
) -> S2Page:
    """Look up to :data:`AUTHOR_BATCH_MAX` authors at once (``POST /author/batch``).

    Returns:
        The answer: one entry per id, in order, ``None`` where unknown.

    Raises:
        ValueError: more than :data:`AUTHOR_BATCH_MAX` ids.
        SourceRefused: an answer whose length is not the number of ids; see also
            :meth:`PoliteClient.fetch`.
        SourceUnavailable: see :meth:`PoliteClient.fetch`.

    Source: Semantic Scholar Graph API, "Get details for multiple authors at once"
    (at most 1,000 ids).
    """
    return _batch(
        client,
        base_url,
        "author",
        AUTHOR_FIELDS,
        s2_authors_read,
        ids,
        AUTHOR_BATCH_MAX,
    )


def _batch(client, base_url, kind, fields, read, ids, most) -> S2Page:
    """``POST /<kind>/batch`` of ``ids``, its answer checked to hold one entry
    per id."""
    if len(ids) > most:
        raise ValueError(f"{len(ids)} ids: a batch takes at most {most}")
    page = client.fetch(
        f"{base_url.rstrip('/')}/{kind}/batch",
        {"fields": fields},
        read=lambda response: read(response.text, str(response.url)),
        json_body={"ids": ids},
    )
    if len(page.items) != len(ids):
        raise SourceRefused(
            f"{page.url}: {len(page.items)} entries answered for {len(ids)} ids"
        )
    return page
