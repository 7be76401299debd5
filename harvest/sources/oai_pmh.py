"""The OAI-PMH protocol: list requests and resumptionToken paging (no ORM).

:func:`oai_pages` asks a repository for ``ListRecords`` (or ``ListIdentifiers``) and
follows its resumptionTokens, one :class:`OaiPage` at a time, so the caller can store
each page and the token that comes after it together (a killed harvest resumes from
the token). Record parsing is the format's business
(:mod:`harvest.sources.arxiv_oai`).

Rules, from the OAI-PMH 2.0 specification
(http://www.openarchives.org/OAI/openarchivesprotocol.html):

* section 3.5: a list ends with an empty ``<resumptionToken/>`` (which may still
  carry ``completeListSize`` and ``cursor``) or with no resumptionToken at all;
* section 3.6: ``<error code="noRecordsMatch">`` is an empty list, not a failure;
  ``badResumptionToken`` means the token expired or is unknown
  (:class:`OaiBadToken`); every other error code is a refused request;
* a repository that hands back a token it gave before would loop for ever:
  :class:`OaiLoop` stops the list instead.

A body without its closing ``</OAI-PMH>`` was cut short in transit and is fetched
again (:class:`~harvest.sources.polite_http.UnusableBody`); a complete body that is
not well-formed (one record with a forbidden character) is kept, its token read from
the text, so one bad record never stops paging.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from harvest.records import RecordError
from harvest.sources.polite_http import (
    PoliteClient,
    SourceError,
    SourceRefused,
    UnusableBody,
)
from harvest.sources.safe_xml import MalformedXML, element_text, parse_xml

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
_END_RE = re.compile(r"</(?:\w+:)?OAI-PMH>\s*$")
_TOKEN_RE = re.compile(
    r"<(?:\w+:)?resumptionToken\b([^>]*?)(?:/>|>([^<]*)</(?:\w+:)?resumptionToken>)"
)
_SIZE_RE = re.compile(r"""completeListSize\s*=\s*["'](\d+)["']""")
_ERROR_RE = re.compile(
    r"""<(?:\w+:)?error\b[^>]*code\s*=\s*["']([^"']+)["'][^>]*>([^<]*)"""
)


class OaiBadToken(SourceError):
    """The repository no longer knows the resumptionToken (``badResumptionToken``)."""


class OaiLoop(SourceError):
    """The repository handed back a resumptionToken it gave before in this list."""


@dataclass(frozen=True)
class OaiPage:
    """One response of a list request.

    Attributes:
        url: the URL asked (with its query), for locators and messages.
        body: the response text, as received.
        token: the resumptionToken to ask for next; "" when the list is complete.
        complete_list_size: the list's size as the repository announced it, or None.
        empty: the repository said ``noRecordsMatch``.
    """

    url: str
    body: str
    token: str
    complete_list_size: int | None
    empty: bool = False


def oai_page_read(body: str, url: str) -> OaiPage:
    """Read the paging facts of one OAI-PMH response.

    Args:
        body: the response text.
        url: the URL it answered.

    Returns:
        The page: its token ("" at the end of the list), announced size, and
        whether it is an empty (``noRecordsMatch``) answer.

    Raises:
        UnusableBody: the body lacks its closing ``</OAI-PMH>`` (cut short).
        OaiBadToken: error ``badResumptionToken``.
        SourceRefused: any other OAI error (``badArgument``,
            ``cannotDisseminateFormat``, ``noSetHierarchy`` ...), with its text;
            or a body that declares XML entities or holds invalid Unicode (see
            :mod:`harvest.sources.safe_xml`).
    """
    if "OAI-PMH" not in body[:4096]:
        # Not cut short: another page altogether (an HTML error page, a proxy's).
        raise SourceRefused(f"{url}: not an OAI-PMH answer: {body[:200]!r}")
    if not _END_RE.search(body):
        raise UnusableBody(f"{url}: response cut short (no closing </OAI-PMH>)")
    try:
        root = parse_xml(body, url)
    except MalformedXML:
        root = None
    except RecordError as exc:
        raise SourceRefused(str(exc)) from exc
    if root is None:
        error = _ERROR_RE.search(body)
        code, text = (error.group(1), error.group(2)) if error else ("", "")
        token_match = _TOKEN_RE.search(body)
        token = (token_match.group(2) or "").strip() if token_match else ""
        size_match = _SIZE_RE.search(token_match.group(1)) if token_match else None
        size = size_match.group(1) if size_match else ""
    else:
        error = root.find(f"{{{OAI_NS}}}error")
        code = error.get("code", "") if error is not None else ""
        text = element_text(error)
        element = next(root.iter(f"{{{OAI_NS}}}resumptionToken"), None)
        token = element_text(element)
        size = element.get("completeListSize", "") if element is not None else ""
    if code == "noRecordsMatch":
        return OaiPage(url, body, "", 0, empty=True)
    if code == "badResumptionToken":
        raise OaiBadToken(f"{url}: badResumptionToken: {text.strip()}")
    if code:
        raise SourceRefused(f"{url}: OAI-PMH error {code}: {text.strip()}")
    return OaiPage(url, body, token, int(size) if size.strip().isdigit() else None)


def oai_pages(
    client: PoliteClient,
    base_url: str,
    *,
    verb: str = "ListRecords",
    metadata_prefix: str = "arXiv",
    from_date: str = "",
    until_date: str = "",
    set_spec: str = "",
    token: str = "",
) -> Iterator[OaiPage]:
    """Ask for a list and follow its resumptionTokens, one page at a time.

    Args:
        client: the source's polite client (rate limit, retries).
        base_url: the repository's base URL (``https://export.arxiv.org/oai2``).
        verb: ``"ListRecords"`` or ``"ListIdentifiers"``.
        metadata_prefix: ``"arXiv"``, ``"oai_dc"`` ...
        from_date, until_date: ISO dates (``"2015-01-01"``), inclusive; "" for open.
        set_spec: a set (``"cs"``, ``"physics:hep-th"``); "" for all.
        token: a resumptionToken to continue a list from (the other arguments are
            then not sent, as the protocol requires).

    Returns:
        An iterator of pages in the repository's order; it ends after the page
        whose token is empty.

    Raises:
        OaiLoop: a token came back that this list had already followed.
        OaiBadToken, SourceRefused, SourceUnavailable: see :func:`oai_page_read`
            and :meth:`PoliteClient.get`.
    """
    seen: set[str] = set()
    while True:
        if token:
            params = {"verb": verb, "resumptionToken": token}
        else:
            params = {"verb": verb, "metadataPrefix": metadata_prefix}
            params |= {"from": from_date} if from_date else {}
            params |= {"until": until_date} if until_date else {}
            params |= {"set": set_spec} if set_spec else {}
        page = client.fetch(
            base_url,
            params,
            read=lambda response: oai_page_read(response.text, str(response.url)),
        )
        yield page
        if not page.token:
            return
        seen.add(token)
        if page.token in seen:
            raise OaiLoop(
                f"{page.url}: resumptionToken {page.token!r} was handed out before "
                "in this list; stopped instead of looping"
            )
        token = page.token
