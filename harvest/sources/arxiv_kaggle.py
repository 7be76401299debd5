"""Parse arXiv's metadata snapshot in JSON lines (the Kaggle dataset) into
:class:`PaperRecord` (no ORM).

The snapshot that arXiv publishes on Kaggle ("arXiv Dataset",
``arxiv-metadata-oai-snapshot.json``) is one JSON object a line, one line a
paper, built from the same metadata as the ``.abs`` files::

    {"id": "0704.0001", "submitter": "Pavel Nadolsky",
     "authors": "C. Bal\\'azs, E. L. Berger, P. M. Nadolsky, C.-P. Yuan",
     "title": "Calculation of prompt diphoton production ...",
     "comments": "37 pages, 15 figures; published version",
     "journal-ref": "Phys.Rev.D76:013009,2007", "doi": "10.1103/PhysRevD.76.013009",
     "report-no": "ANL-HEP-PR-07-12", "categories": "hep-ph", "license": null,
     "abstract": "  A fully differential calculation ...",
     "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}, ...],
     "update_date": "2008-11-13",
     "authors_parsed": [["Balázs", "C.", ""], ...]}

``authors`` is the ``.abs`` ``Authors:`` value, so it is split by the same rules
(:func:`harvest.sources.arxiv_abs.split_abs_authors`), and one paper read from
the snapshot and from its ``.abs`` file is the same record (``authors_parsed``,
arXiv's own split, is not read: its names and ours would then differ by
source). ``update_date`` is the record's datestamp.

A harvest reads a file whole before it writes it (in batches; a killed
harvest resumes after the last batch written), so the 4.5 GB snapshot is
harvested split into pieces (``split -l 20000``), each a file of its own, and
memory is one piece's. A file over :data:`MAX_FILE_BYTES` or
:data:`MAX_FILE_LINES` lines is refused, saying so.

Source: Kaggle "arXiv Dataset" (Cornell University), its data card's field
list; arXiv's ``.abs`` format for the fields' meaning.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path

from harvest.records import (
    PaperRecord,
    RawItem,
    RecordError,
    VersionRecord,
    decode_utf8,
    file_locator,
)
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
from wovepaper.identifiers import ARXIV_CATEGORY

# The members that make a JSON object a snapshot line (every line has them).
KAGGLE_KEYS = frozenset({"id", "authors", "title", "versions"})
# A file of snapshot lines is read whole (its raw records are held until the
# last batch of it is written), so memory grows with the file. Measured with
# lines built from the real .abs files (1,450 bytes a line, re-keyed ids and
# DOIs) into PostgreSQL, peak RSS of `harvest arxiv --file`: 20,255 lines
# (29 MB) 195 MB, 45,554 lines (63 MB) 243 MB; written as one batch a file,
# as before harvest.services.files cut files into batches, 20,255 lines took
# 578 MB and 14.2 s against 10.7 s. The whole snapshot (several GB) is split.
MAX_FILE_BYTES = 64 * 1024 * 1024
# Lines a file may hold: each costs its raw record in memory whatever its
# length (about 265 bytes for a line of "1", hostile trial), so a 64 MB file
# of short lines would hold tens of millions. 100,000 real lines are about
# 145 MB, over MAX_FILE_BYTES already.
MAX_FILE_LINES = 100_000
# How many of a file's first non-blank lines are looked at to tell a
# snapshot: a piece cut by size (split -b) starts with the end of a line.
_LINES_LOOKED_AT = 8
# A version tag, ASCII digits ("v²" and "v١" are none).
_VERSION_RE = re.compile(r"v([1-9][0-9]{0,3})", re.ASCII)
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
# How much of a file's first line is read to tell a snapshot (lines are a few
# kB; the longest abstracts and bylines stay far below this).
_FIRST_LINE_BYTES = 1024 * 1024


_SPLIT_IT = (
    "split it first (split -l 20000 --additional-suffix=.json FILE piece-) and "
    "harvest the folder of its pieces"
)


def too_big(path: Path) -> str:
    """Why a file of snapshot lines cannot be read whole, or "".

    Returns:
        "" for a file of at most :data:`MAX_FILE_BYTES` and
        :data:`MAX_FILE_LINES` lines (counted by reading it in 1 MB blocks);
        else the reason, saying how to split it.
    """
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        return (
            f"{size:,} bytes of arXiv snapshot lines, over the "
            f"{MAX_FILE_BYTES // 2**20} MB a file is read in; {_SPLIT_IT}"
        )
    lines = 0
    with path.open("rb") as handle:
        while block := handle.read(2**20):
            lines += block.count(b"\n")
    if lines > MAX_FILE_LINES:
        return (
            f"{lines:,} lines of arXiv snapshot lines, over the "
            f"{MAX_FILE_LINES:,} a file is read in; {_SPLIT_IT}"
        )
    return ""


def leading_objects(path: Path, lines: int = _LINES_LOOKED_AT) -> list[object]:
    """The JSON values of the first ``lines`` non-blank lines of ``path`` (None
    for a line that is not JSON), read no further than a line's worth at a
    time: a line longer than 1 MB, or blank lines past the first MB, end the
    look (a minified answer of one long line is not read whole to learn it is
    not a snapshot). A byte-order mark before the first is passed over.

    Returns:
        The values, in file order; empty when the file cannot be read.
    """
    out: list[object] = []
    try:
        with path.open("rb") as handle:
            while len(out) < lines:
                raw = handle.readline(_FIRST_LINE_BYTES + 1)
                if not raw or len(raw) > _FIRST_LINE_BYTES:
                    break
                if not raw.strip():
                    if handle.tell() > _FIRST_LINE_BYTES and not out:
                        break
                    continue
                try:
                    out.append(json.loads(raw.removeprefix(codecs.BOM_UTF8)))
                except (ValueError, RecursionError):
                    out.append(None)
    except OSError:
        return []
    return out


def first_line_object(path: Path) -> object:
    """The JSON value of the first non-blank line of ``path``, or None (see
    :func:`leading_objects`)."""
    found = leading_objects(path, 1)
    return found[0] if found else None


def is_kaggle_file(path: Path) -> bool:
    """Whether ``path`` is arXiv's metadata snapshot in JSON lines (or a piece of
    it): one of its first :data:`_LINES_LOOKED_AT` non-blank lines is an
    object with :data:`KAGGLE_KEYS` (a broken first line, or a piece cut by
    size starting mid-line, costs that line, not the piece).

    A recorded OAI-PMH exchange or Atom cassette (``.json``) is one JSON value
    over many lines, or one line without those keys, so it is read as before.
    """
    return any(
        isinstance(value, dict) and KAGGLE_KEYS <= value.keys()
        for value in leading_objects(path)
    )


def read_kaggle_file(path: Path, root: Path | None = None) -> Iterator[RawItem]:
    """Cut a file of snapshot lines into one RawItem a line.

    Args:
        path: the file (``arxiv-metadata-oai-snapshot.json`` or a piece of it).
        root: the folder locators are relative to, or None.

    Returns:
        An iterator of RawItems in file order; blank lines are passed over.
        Each locator is ``<file>#line-N`` (N from 1) and its external id the
        versioned arXiv id when the line names one (``0704.0001v2``), else
        the locator. A line that is not UTF-8 carries the problem, its text
        decoded with replacement characters, so its parse fails naming it.

    Raises:
        OSError: the file cannot be read.
    """
    locator = file_locator(path, root)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            where = f"{locator}#line-{number}"
            if number == 1:
                raw = raw.removeprefix(codecs.BOM_UTF8)
            text, problem = decode_utf8(raw)
            yield RawItem(
                external_id=(not problem and _external_id(text)) or where,
                payload=text.rstrip("\r\n"),
                locator=where,
                problem=problem,
            )


def _external_id(text: str) -> str:
    """The versioned arXiv id a line names (``0704.0001v2``: its id and highest
    version; without a readable version, the id alone), or "" when the line
    names no readable arXiv id (the locator then names the record)."""
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        return ""
    raw = record.get("id") if isinstance(record, dict) else None
    if not isinstance(raw, str):
        return ""
    try:
        arxiv_id, _ = split_arxiv_id(raw.strip(), "")
    except RecordError:
        return ""
    versions = record.get("versions")
    numbers = [
        int(match.group(1))
        for entry in (versions if isinstance(versions, list) else [])
        if isinstance(entry, dict)
        and isinstance(entry.get("version"), str)
        and (match := _VERSION_RE.fullmatch(entry["version"]))
    ]
    return f"{arxiv_id}v{max(numbers)}" if numbers else arxiv_id


def _text(record: dict, key: str, where: str) -> str:
    """Member ``key`` as text: "" when missing or null; RecordError for any
    other kind of value."""
    value = record.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RecordError(
            f"{where}: '{key}' is {type(value).__name__}, not a string or null"
        )
    return value


def parse_kaggle_record(item: RawItem) -> PaperRecord:
    """Parse one snapshot line.

    Args:
        item: as made by :func:`read_kaggle_file`; ``item.payload`` is the line.

    Returns:
        The PaperRecord, as :func:`harvest.sources.arxiv_abs.parse_abs` gives
        for the paper's ``.abs`` file: ``versions`` oldest first with aware
        UTC times, ``version`` the latest, ``published`` the date of v1,
        ``updated`` of the latest, ``datestamp`` the ``update_date``.

    Raises:
        RecordError: starting with ``item.locator``: the line is not UTF-8,
            not JSON or not an object; ``id`` is missing or not an arXiv id;
            ``title`` is empty; ``versions`` is missing, empty, lists a
            version twice or holds an entry without a ``vN`` version and a
            readable ``created`` date; a text member is neither a string nor
            null; ``categories`` is empty or names no arXiv category;
            ``update_date`` is not ``YYYY-MM-DD``.
    """
    where = item.locator
    if item.problem:
        raise RecordError(f"{where}: {item.problem}")
    try:
        record = json.loads(item.payload)
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"{where}: not a JSON line ({str(exc)[:200]})") from exc
    if not isinstance(record, dict):
        raise RecordError(f"{where}: a JSON {type(record).__name__}, not an object")
    raw_id = _text(record, "id", where).strip()
    if not raw_id:
        raise RecordError(f"{where}: no 'id'")
    arxiv_id, _ = split_arxiv_id(raw_id, where)
    title = normalise_space(_text(record, "title", where))
    if not title:
        raise RecordError(f"{where}: no title")
    versions = _versions(record.get("versions"), where)
    categories = _categories(_text(record, "categories", where), where)
    comments = normalise_space(_text(record, "comments", where))
    abstract = clean_abstract(_text(record, "abstract", where))
    latest = versions[-1]
    return PaperRecord(
        source=SOURCE,
        external_id=f"{arxiv_id}v{latest.version}",
        title=title,
        authors=split_abs_authors(_text(record, "authors", where)),
        authors_incomplete=byline_incomplete(_text(record, "authors", where)),
        arxiv_id=arxiv_id,
        doi=first_doi(_text(record, "doi", where)),
        version=latest.version,
        versions=versions,
        abstract=abstract,
        published=versions[0].submitted.date(),
        updated=latest.submitted.date(),
        datestamp=_update_date(_text(record, "update_date", where), where),
        categories=categories,
        journal_ref=normalise_space(_text(record, "journal-ref", where)),
        comments=comments,
        report_no=normalise_space(_text(record, "report-no", where)),
        license=normalise_space(_text(record, "license", where)),
        withdrawn=is_withdrawn(comments, abstract),
    )


def _categories(text: str, where: str) -> list[str]:
    """The space-separated categories, primary first, each once.

    Raises:
        RecordError: none, or one that is no arXiv category name
            (:data:`wovepaper.identifiers.ARXIV_CATEGORY`).
    """
    out: list[str] = []
    for name in text.split():
        if not ARXIV_CATEGORY.fullmatch(name):
            raise RecordError(f"{where}: {name[:50]!r} is no arXiv category")
        if name not in out:
            out.append(name)
    if not out:
        raise RecordError(f"{where}: no categories")
    return out


def _versions(value: object, where: str) -> list[VersionRecord]:
    """``versions`` as VersionRecords, oldest first.

    Raises:
        RecordError: not a list, empty, an entry without a ``vN`` version
            (ASCII digits, N from 1) or a readable ``created``, or one
            version listed twice.
    """
    if not isinstance(value, list) or not value:
        raise RecordError(f"{where}: no 'versions' list")
    out: dict[int, VersionRecord] = {}
    for entry in value:
        tag = entry.get("version") if isinstance(entry, dict) else None
        created = entry.get("created") if isinstance(entry, dict) else None
        match = _VERSION_RE.fullmatch(tag) if isinstance(tag, str) else None
        if not match:
            raise RecordError(f"{where}: a version is not 'vN': {str(entry)[:100]}")
        if not isinstance(created, str):
            raise RecordError(f"{where}: version {tag} has no 'created' date")
        number = int(match.group(1))
        if number in out:
            raise RecordError(f"{where}: version {tag} is listed twice")
        out[number] = version_record(number, created, where)
    return [out[n] for n in sorted(out)]


def _update_date(text: str, where: str) -> date | None:
    """``update_date`` (``"2008-11-13"``) as a date; None when empty."""
    if not text.strip():
        return None
    if not _DATE_RE.fullmatch(text.strip()):
        raise RecordError(
            f"{where}: update_date {text.strip()[:40]!r} is not YYYY-MM-DD"
        )
    try:
        return date.fromisoformat(text.strip())
    except ValueError as exc:
        raise RecordError(
            f"{where}: update_date {text.strip()[:40]!r} is not YYYY-MM-DD"
        ) from exc
