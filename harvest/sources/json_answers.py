"""What the JSON sources (Crossref, OpenAlex, Semantic Scholar, ROR) share (no ORM).

Reading one answer, live or saved: a saved answer is read exactly as the live
harvest reads a page, so a snapshot on disk and a live run store the same raw
records. Reading one stored record, and one text value of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from harvest.records import NotARecordFile, RawItem, RecordError, file_locator
from harvest.sources.polite_http import SourceRefused, UnusableBody

Page = TypeVar("Page")


def saved_answer_items(
    path: Path,
    root: Path | None,
    read_page: Callable[[str, str], Page],
    split_page: Callable[[Page], Iterator[RawItem]],
) -> Iterator[RawItem]:
    """Cut one saved answer into RawItems.

    Args:
        path: the ``.json`` file.
        root: folder the locators are relative to; None keeps ``path``.
        read_page: the source's page reader, ``(body, locator) -> page``.
        split_page: the source's page splitter, ``page -> RawItems``.

    Returns:
        The page's RawItems, in order.

    Raises:
        RecordError: (while iterating) the file is not whole JSON.
        NotARecordFile: JSON that holds no works (an error answer, an author, a
            funder list): the caller skips the file.
    """
    locator = file_locator(path, root)
    try:
        page = read_page(path.read_text(errors="surrogateescape"), locator)
    except UnusableBody as exc:
        raise RecordError(f"{locator}: not JSON: {exc}") from exc
    except SourceRefused as exc:
        raise NotARecordFile(str(exc)) from exc
    yield from split_page(page)


def json_payload(value: object) -> str:
    """How one JSON record is kept as a raw record's payload: keys sorted and
    non-ASCII text as is, so the same record always has the same text and the
    same content hash whichever answer or file it came from."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def json_answer(body: str, url: str) -> object:
    """Parse one live answer of a JSON API.

    Args:
        body: the response text.
        url: where it came from, for messages.

    Returns:
        The parsed JSON value.

    Raises:
        SourceRefused: the body is HTML or XML (a proxy's error page): asking
            again would get the same.
        UnusableBody: the body is not whole JSON (cut short): asked again.
    """
    if body.lstrip()[:1] == "<":
        raise SourceRefused(f"{url}: not a JSON answer: {body[:200]!r}")
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise UnusableBody(f"{url}: not whole JSON ({exc})") from exc


def json_record(item: RawItem, kind: str) -> dict:
    """The JSON object a stored raw record holds.

    Args:
        item: the raw record.
        kind: what it should be, for messages (``"work"``, ``"paper"``).

    Raises:
        RecordError: the payload is not JSON, or not a JSON object.
    """
    try:
        value = json.loads(item.payload)
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"{item.locator}: not JSON: {exc}") from exc
    if not isinstance(value, dict):
        article = "an" if kind[:1] in "aeiou" else "a"
        raise RecordError(f"{item.locator}: {article} {kind} must be a JSON object")
    return value


def text_of(value: object) -> str:
    """A JSON string with its whitespace collapsed; "" for anything else."""
    return " ".join(value.split()) if isinstance(value, str) else ""


def texts_of(value: object, *, leave_out: str = "", most: int = 100) -> tuple[str, ...]:
    """The distinct non-empty strings of a JSON list, in order, at most ``most``
    (a profile with a million aliases keeps the first hundred); ``leave_out``
    (the display name) is not repeated. Anything but a list gives ``()``: a
    string is not a list of its characters."""
    if not isinstance(value, list):
        return ()
    seen = {leave_out} if leave_out else set()
    out = []
    for entry in value:
        text = text_of(entry)
        if text and text not in seen:
            seen.add(text)
            out.append(text)
            if len(out) == most:
                break
    return tuple(out)


def count_of(value: object) -> int | None:
    """A JSON count (a non-negative integer that fits a 32-bit column), else None
    (``true``, ``-1``, ``1e30`` and ``"12"`` are not counts)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
        return value
    return None
