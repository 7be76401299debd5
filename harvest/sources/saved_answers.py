"""Saved answers of the live JSON APIs (Crossref, OpenAlex) read as files (no ORM).

A saved answer is read exactly as the live harvest reads a page, so a snapshot on
disk and a live run store the same raw records.
"""

from __future__ import annotations

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
