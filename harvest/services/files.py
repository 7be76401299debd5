"""Harvesting from files: found, read in batches, resumable file by file."""

from __future__ import annotations

import json
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes

from django.conf import settings
from django.db import DatabaseError, transaction

from harvest import selectors
from harvest.models import HarvestRun
from harvest.records import (
    NotARecordFile,
    RawItem,
    RecordError,
    file_locator,
    unreadable_item,
)
from harvest.services.batches import harvest_batch, institutions_batch
from harvest.services.prepare import PendingBatch, PreparePool, prepare_workers
from harvest.services.raw import FileReader, RecordParser
from harvest.services.runs import (
    harvest_run_finish,
    harvest_run_start,
    run_held,
)
from harvest.sources.json_answers import saved_answer_items

logger = logging.getLogger(__name__)


# Where a file's name decides how it is read. Source: arXiv's .abs files
# (arxiv-browse), OAI-PMH XML responses, arXiv API Atom feeds, and recorded HTTP
# exchanges of both (JSON).
ARXIV_SUFFIXES = (".abs", ".xml", ".json", ".jsonl")


def arxiv_reader_for(path: Path) -> FileReader:
    """The reader for an arXiv file by its suffix.

    Args:
        path: an ``.abs`` file, an OAI-PMH ``.xml`` response, a recorded OAI-PMH
            exchange ``.json``, an arXiv API Atom feed (``.xml``, or a recorded
            ``.json`` response), or arXiv's metadata snapshot in JSON lines
            (``.json`` or ``.jsonl``, whole up to
            :data:`~harvest.sources.arxiv_kaggle.MAX_FILE_BYTES` or in pieces).

    Returns:
        FileReader with the split and parse functions.

    Raises:
        RecordError: the suffix is not one we read, or the file is snapshot
            lines too big to read whole (the message says how to split it).
    """
    from harvest.sources import arxiv_abs, arxiv_atom, arxiv_kaggle, arxiv_oai

    if path.suffix in {".json", ".jsonl"} and arxiv_kaggle.is_kaggle_file(path):
        if problem := arxiv_kaggle.too_big(path):
            raise RecordError(f"{path}: {problem}")
        return FileReader(
            split=arxiv_kaggle.read_kaggle_file,
            parse=arxiv_kaggle.parse_kaggle_record,
        )
    if path.suffix == ".jsonl":
        raise RecordError(
            f"{path}: no arXiv snapshot line (an object with "
            f"{', '.join(sorted(arxiv_kaggle.KAGGLE_KEYS))}) among its first lines"
        )
    if path.suffix in {".json", ".xml"}:
        # The other readers read a file whole, and keep an unreadable one
        # whole as its raw record: a snapshot whose first lines are not
        # snapshot lines (or a compressed one) must not be read so.
        size = path.stat().st_size
        if size > arxiv_kaggle.MAX_FILE_BYTES:
            raise RecordError(
                f"{path}: {size:,} bytes, over the "
                f"{arxiv_kaggle.MAX_FILE_BYTES // 2**20} MB an arXiv response is "
                "read in, and no snapshot line among its first lines"
            )

    if path.suffix in {".xml", ".json"} and arxiv_atom.is_atom_file(path):
        return FileReader(
            split=arxiv_atom.read_atom_file, parse=arxiv_atom.parse_atom_entry
        )
    if path.suffix == ".abs":
        return FileReader(
            split=lambda p, root: iter([arxiv_abs.AbsFile(p, root)]),
            parse=arxiv_abs.parse_abs,
        )
    if path.suffix in {".xml", ".json"}:
        return FileReader(
            split=arxiv_oai.read_oai_file, parse=arxiv_oai.parse_oai_record
        )
    raise RecordError(
        f"{path}: not an arXiv .abs file, OAI-PMH or Atom .xml, recorded .json, "
        "or snapshot JSON lines"
    )


def files_under(
    root: Path,
    *,
    by_text: bool,
    unreadable: list[dict] | None = None,
    keep: Callable[[Path, str], bool] | None = None,
) -> Iterator[Path]:
    """Every file under ``root``, in the order of sorting all their paths, without
    holding them all (a snapshot of millions of files costs the largest folder's
    names, not the tree's).

    Each folder's entries are read and sorted one folder at a time, depth first.
    As ``Path.rglob`` (Python 3.11), links to folders are not followed (no link
    loop), links to files are; a folder that cannot be read is passed over, and
    named in ``unreadable`` when given.

    Args:
        root: a folder.
        by_text: sort as the paths' text sorts (``str(path)``: a folder "a"
            comes after a file "a-b", "/" sorting after "-"); False: as
            ``Path`` objects sort (part by part).
        unreadable: a list to append ``{"file": folder path, "reason": why}``
            to for each folder that could not be read.
        keep: ``(folder, file name) -> bool``, which files to give (default:
            all); asked before a file's ``Path`` is made, which on a walk of
            many files not wanted costs more than the walk itself.

    Returns:
        An iterator of the files' paths.
    """

    def walk(folder: Path) -> Iterator[Path]:
        try:
            with os.scandir(folder) as scan:
                entries = [
                    (e.name, e.is_dir(follow_symlinks=False), e.is_file()) for e in scan
                ]
        except OSError as exc:
            if unreadable is not None:
                problem = (
                    "not a regular file or folder"
                    if isinstance(exc, NotADirectoryError)
                    else f"folder not readable ({exc.strerror or type(exc).__name__})"
                )
                unreadable.append(
                    {"file": str(folder), "reason": f"{folder}: {problem}"}
                )
            return
        entries.sort(key=lambda e: e[0] + "/" if by_text and e[1] else e[0])
        for name, is_dir, is_file in entries:
            if is_dir:
                yield from walk(folder / name)
            elif is_file and (keep is None or keep(folder, name)):
                yield folder / name

    return walk(root)


def arxiv_order(path: Path) -> tuple:
    """The sort key of :func:`arxiv_files`'s order."""
    return (path.suffix != ".abs", "orig" not in path.parts, str(path))


def arxiv_files(root: Path) -> Iterator[Path]:
    """Every arXiv file under ``root`` (or ``root`` itself), oldest id first.

    Args:
        root: a folder (searched recursively) or a single file.

    Returns:
        An iterator, in a fixed order: ``.abs`` files before the others, and
        in each, files under an ``orig/`` folder (earlier versions) before the
        rest so versions arrive in order; then by path text. The folder is
        walked once per group (:func:`files_under`), so no list of every file is
        held.
    """
    if root.is_file():
        yield root
        return
    for is_abs in (True, False):
        for in_orig in (True, False):

            def keep(folder: Path, name: str, is_abs=is_abs, in_orig=in_orig) -> bool:
                suffix = os.path.splitext(name)[1]
                return (
                    suffix in ARXIV_SUFFIXES
                    and (suffix == ".abs") == is_abs
                    and ("orig" in folder.parts) == in_orig
                )

            yield from files_under(root, by_text=True, keep=keep)


def _file_items(
    path: Path, root: Path | None, reader: FileReader, skipped: list[dict]
) -> Iterable[RawItem]:
    try:
        yield from reader.split(path, root)
    except NotARecordFile as exc:
        logger.info("skipped %s", exc)
        skipped.append({"file": file_locator(path, root), "reason": str(exc)})
    except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
        if isinstance(exc, DatabaseError):
            raise
        yield unreadable_item(path, root, exc)


def locator_base(root: Path) -> Path | None:
    """The folder locators are relative to, so a file has one name whatever was asked.

    Files under ``WOVEPAPER_DATA_DIR`` are named from there
    (``arxiv/abs_files/ftp/.../0509037.abs``); files elsewhere by their absolute
    path, so harvesting a file alone or its folder names it the same.

    Args:
        root: the folder or file being harvested.

    Returns:
        ``WOVEPAPER_DATA_DIR`` (absolute), or None for absolute names.
    """
    data_dir = Path(settings.WOVEPAPER_DATA_DIR).resolve()
    return data_dir if root.resolve().is_relative_to(data_dir) else None


# Records a batch holds before it is written (one transaction, a handful of queries
# for all its new papers). bench/ingest.py: 500 is past the knee of papers/s.
BATCH_RECORDS = 500


def _is_json(path: Path) -> bool:
    return path.name.endswith(".json")


def crossref_files(root: Path) -> Iterator[Path]:
    """Every ``.json`` file under ``root`` (or ``root`` itself), in path order:
    the saved answers of the JSON sources (Crossref, OpenAlex, ROR, Semantic
    Scholar). An iterator (:func:`files_under`)."""
    if root.is_file():
        return iter([root])
    return (p for p in files_under(root, by_text=False) if _is_json(p))


def files_cursor(cursor: str) -> tuple[int, str]:
    """Read a file run's cursor: ``(files done, last file done)``.

    The cursor is ``"<files done> <last file's path relative to the root>"``,
    the path percent-encoded from its bytes (a file name that is not UTF-8
    cannot be stored as text, and must come back as the same name); a cursor of
    the count alone (runs before the path was kept) gives ``""``. Two more
    fields follow when a file was written in part (:func:`file_progress`).
    """
    parts = (cursor or "0").split(" ")
    last = parts[1] if len(parts) > 1 else ""
    return int(parts[0]), _path_of(last)


def file_progress(cursor: str) -> tuple[int, str]:
    """The part of a file a run wrote before it stopped: ``(records, file)``.

    A file of more than :data:`BATCH_RECORDS` records is written in batches;
    the cursor of one written before the file's last batch adds
    ``"<records written> <that file's path>"``, so a resumed run skips them
    (``(0, "")`` when no file was written in part).
    """
    parts = (cursor or "0").split(" ")
    if len(parts) < 4:
        return 0, ""
    return int(parts[2]), _path_of(parts[3])


def _path_of(quoted: str) -> str:
    return os.fsdecode(unquote_to_bytes(quoted)) if quoted else ""


def _cursor(done: int, last: str, within: int = 0, current: str = "") -> str:
    """The cursor :func:`files_cursor` and :func:`file_progress` read."""
    head = f"{done} {quote(os.fsencode(last))}" if last or within else str(done)
    if within:
        return f"{head} {within} {quote(os.fsencode(current))}"
    return head


def files_count(
    source: str, root: Path, *, unreadable: list[dict] | None = None
) -> int:
    """How many files a harvest of ``source`` under ``root`` reads (one walk,
    where :func:`arxiv_files` walks once per group); the folders it could not
    read are appended to ``unreadable`` when given (see :func:`files_under`)."""
    if root.is_file():
        return 1
    keeps = FILE_SOURCES[source].keeps
    return sum(
        1
        for path in files_under(root, by_text=False, unreadable=unreadable)
        if keeps(path)
    )


def crossref_reader_for(path: Path) -> FileReader:
    """The reader of a saved Crossref ``/works`` answer (any ``.json``).

    Raises:
        RecordError: the file is not ``.json``.
    """
    from harvest.sources import crossref

    if path.suffix != ".json":
        raise RecordError(f"{path}: not a saved Crossref answer (.json)")
    return FileReader(
        split=crossref.read_crossref_file, parse=crossref.parse_crossref_work
    )


def openalex_reader_for(path: Path) -> FileReader:
    """The reader of a saved OpenAlex answer (``.json``): works (a list page, one
    work, an array such as the 2022 snapshot extract) become papers; institutions
    make or fill Institutions by ROR id, never replacing what ROR gave; authors
    become author profiles (:class:`~harvest.models.SourceAuthor`).

    Raises:
        RecordError: the file is not ``.json``.
    """
    from harvest.services.authors import source_authors_batch
    from harvest.sources import openalex

    if path.suffix != ".json":
        raise RecordError(f"{path}: not a saved OpenAlex answer (.json)")
    first = _first_entry(path)
    if openalex.is_institution(first):
        return FileReader(
            split=openalex.read_openalex_institutions,
            parse=openalex.parse_openalex_institution,
            write=partial(institutions_batch, fill_only=True),
        )
    if openalex.is_author(first):
        return FileReader(
            split=openalex.read_openalex_authors,
            parse=openalex.parse_openalex_author,
            write=source_authors_batch,
        )
    return FileReader(
        split=openalex.read_openalex_file, parse=openalex.parse_openalex_work
    )


def _first_entry(path: Path) -> object:
    """The first entry of a saved JSON answer (its ``results``, its array, or
    itself), to tell what it holds; None when it is not JSON (the works reader
    then names the problem)."""
    try:
        data = json.loads(path.read_text(errors="surrogateescape"))
    except (ValueError, RecursionError, OSError):
        return None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        data = data["results"]
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        data = data["data"]
    if isinstance(data, list):
        return next((e for e in data if e is not None), None)
    return data


@dataclass
class _Batch:
    """Records read from files and not written yet.

    Attributes:
        items: the raw records.
        parse, write: how they are parsed and written (the reader's; None: the
            source's own writer).
        done: how many files are completed once the batch is written.
        last: the last of them, relative to the root (the run's cursor holds
            both).
        files: how many files it completes (for the progress bar).
        skipped: files skipped while reading it, added to the run when written.
        pending: its preparation by a :class:`PreparePool`, when one runs.
    """

    items: list[RawItem] = field(default_factory=list)
    parse: RecordParser | None = None
    write: Callable[..., None] | None = None
    done: int = 0
    files: int = 0
    skipped: list[dict] = field(default_factory=list)
    pending: PendingBatch | None = None
    last: str = ""
    within: int = 0
    current: str = ""


# How each source's files are found and read.
@dataclass(frozen=True)
class FileSource:
    """How a source's files are found, read and written.

    Attributes:
        find: ``root -> files`` in harvest order (an iterator: the same order
            each time, so a run's cursor, the files done, names where to resume).
        reader_for: ``file -> FileReader`` (raises RecordError for a file it
            cannot read).
        write: writes a batch of raw records (:func:`harvest_batch` for papers,
            :func:`institutions_batch` for ROR).
        order: ``path -> key`` whose sorting is ``find``'s order, so a run
            resumes after the last file it did even when files were added or
            removed meanwhile (default: as ``Path`` objects sort).
        keeps: whether ``find`` gives a file, in any order: counting needs one
            walk where ``find`` may take several (default: ``.json`` files).
    """

    find: Callable[[Path], Iterable[Path]]
    reader_for: Callable[[Path], FileReader]
    write: Callable[..., None]
    order: Callable[[Path], tuple] = lambda path: path.parts
    keeps: Callable[[Path], bool] = _is_json


def ror_reader_for(path: Path) -> FileReader:
    """The reader of a saved ROR file (``.json``: records, one record, or an
    API / Elasticsearch answer).

    Raises:
        RecordError: the file is not ``.json``.
    """
    from harvest.sources import ror

    if path.suffix != ".json":
        raise RecordError(f"{path}: not a saved ROR answer (.json)")
    return FileReader(split=ror.read_ror_file, parse=ror.parse_ror_record)


def s2_reader_for(path: Path) -> FileReader:
    """The reader of a saved Semantic Scholar answer (``.json``): papers (one, a
    batch answer with nulls, a list) become papers; authors (one, a batch, a
    ``data`` list) become author profiles.

    Raises:
        RecordError: the file is not ``.json``.
    """
    from harvest.services.authors import source_authors_batch
    from harvest.sources import semanticscholar as s2

    if path.suffix != ".json":
        raise RecordError(f"{path}: not a saved Semantic Scholar answer (.json)")
    first = _first_entry(path)
    if isinstance(first, dict) and first.get("authorId") and not first.get("paperId"):
        return FileReader(
            split=lambda p, root: saved_answer_items(
                p, root, s2.s2_authors_read, s2.split_s2_authors
            ),
            parse=s2.parse_s2_author,
            write=source_authors_batch,
        )
    return FileReader(
        split=lambda p, root: saved_answer_items(
            p, root, s2.s2_page_read, s2.split_s2_page
        ),
        parse=s2.parse_s2_paper,
    )


# How each source's files are found, read and written.
FILE_SOURCES: dict[str, FileSource] = {
    "arxiv": FileSource(
        arxiv_files,
        arxiv_reader_for,
        harvest_batch,
        arxiv_order,
        lambda path: path.suffix in ARXIV_SUFFIXES,
    ),
    "crossref": FileSource(crossref_files, crossref_reader_for, harvest_batch),
    "openalex": FileSource(crossref_files, openalex_reader_for, harvest_batch),
    "ror": FileSource(crossref_files, ror_reader_for, institutions_batch),
    "semanticscholar": FileSource(crossref_files, s2_reader_for, harvest_batch),
}


def harvest_arxiv_files(**kwargs) -> HarvestRun:
    """:func:`harvest_files` of arXiv files (``.abs``, OAI-PMH and Atom)."""
    return harvest_files(source="arxiv", **kwargs)


def harvest_files(
    *,
    source: str,
    root: Path,
    run: HarvestRun | None = None,
    progress: Callable[[int], None] | None = None,
    reparse: bool = False,
    task_id: str = "",
) -> HarvestRun:
    """Harvest every file of ``source`` under ``root``; resumable from the run's cursor.

    The cursor names the files completed (their number and the last one,
    :func:`files_cursor`) and the records written of a file written in part
    (:func:`file_progress`), saved with the counts after every batch, so a run
    killed mid-way resumes after the last record written, by the walk's order
    and the file's own.

    Args:
        source: a key of :data:`FILE_SOURCES` (``"arxiv"``, ``"crossref"``).
        root: folder or single file (see :func:`arxiv_files`, :func:`crossref_files`).
        run: a run to resume; when None, the run of ``task_id`` if there is one,
            else a new run.
        progress: called with 1 after each file (for a progress bar).
        reparse: parse again payloads parsed before (see :func:`harvest_record`).
        task_id: the Celery task doing this harvest ("" outside Celery). A task
            handed out again after its worker died carries the same id: it
            resumes the run the dead worker left (or, if that run finished before
            the ack was lost, returns it unchanged).

    Returns:
        The finished HarvestRun with its counts.

    Raises:
        HarvestRunRefused: another process is harvesting the run
            (:func:`~harvest.services.runs.run_held`).
        HarvestInterrupted: Ctrl-C; the run is closed as failed, to be resumed.
    """
    root = root.resolve()
    kind = FILE_SOURCES[source]
    base = locator_base(root)
    if run is None and task_id:
        run = selectors.run_of_task(source=source, task_id=task_id)
        if run is not None and run.status == HarvestRun.Status.FINISHED:
            return run
    if run is None:
        unreadable: list[dict] = []
        params = {
            "root": str(root),
            "files": files_count(source, root, unreadable=unreadable),
        }
        run = harvest_run_start(
            source=source, params={**params, "task": task_id} if task_id else params
        )
        if unreadable:  # reported with the run's skipped files
            run.files_skipped = unreadable
            run.save(update_fields=["files_skipped"])
    with run_held(run):
        return _harvest_run(kind, source, root, base, run, progress, reparse)


def _harvest_run(
    kind: FileSource,
    source: str,
    root: Path,
    base: Path | None,
    run: HarvestRun,
    progress: Callable[[int], None] | None,
    reparse: bool,
) -> HarvestRun:
    """The body of :func:`harvest_files`, once its run is known and held."""
    start, last_done = files_cursor(run.cursor)
    resumed, resumed_file = file_progress(run.cursor)
    after = kind.order(root / last_done) if last_done else None
    # Files are read into batches of about BATCH_RECORDS records sharing a parser;
    # each batch, the run's counts and the cursor (files done) commit together, so
    # a killed run resumes at the first file of the batch that did not land.
    # Papers batches are prepared by forked workers while earlier ones are written
    # (harvest.services.prepare), up to one batch per worker ahead; a harvest of
    # one batch prepares it itself.
    workers = prepare_workers()
    pool: PreparePool | None = None
    ahead: deque[_Batch] = deque()
    batch = _Batch(done=start, last=last_done)

    def write(ready: _Batch) -> None:
        with transaction.atomic():
            if ready.items:
                extra = {}
                if ready.pending is not None:
                    prepared = ready.pending.result()
                    if prepared is not None:
                        extra["prepared"] = prepared
                (ready.write or kind.write)(
                    run=run,
                    source=source,
                    items=ready.items,
                    parse=ready.parse,
                    reparse=reparse,
                    **extra,
                )
            run.files_skipped = [*run.files_skipped, *ready.skipped]
            run.cursor = _cursor(ready.done, ready.last, ready.within, ready.current)
            run.save()
        if progress:
            progress(ready.files)

    def close_batch(more: bool) -> None:
        nonlocal batch, pool
        papers = bool(batch.items) and (batch.write or kind.write) is harvest_batch
        # Workers only for a batch that more follow: a harvest of one batch, or
        # a last batch, starts none.
        if papers and workers and pool is None and more:
            pool = stack.enter_context(PreparePool(workers))
        if papers and pool is not None:
            batch.pending = pool.submit(batch.items, batch.parse)
        ahead.append(batch)
        batch = _Batch(done=batch.done, last=batch.last)
        while len(ahead) > (pool.workers if pool is not None else 0):
            write(ahead.popleft())

    with ExitStack() as stack:
        for index, path in enumerate(kind.find(root)):
            # A full batch closes once another file follows it: the first one
            # then goes to the workers too, and a harvest of one batch starts none.
            if len(batch.items) >= BATCH_RECORDS:
                close_batch(more=True)
            # Done before the run was stopped: every file up to the last one
            # done, by the order's key (files added or removed meanwhile move
            # no other file in or out), or by count for an older cursor.
            if (after is not None and kind.order(path) <= after) or (
                after is None and index < start
            ):
                batch.done = index + 1
                continue
            relative = path.relative_to(root).as_posix() if root != path else ""
            name = file_locator(path, base)
            try:
                reader = kind.reader_for(path)
            except RecordError as exc:
                logger.warning(
                    "%s", exc, extra={"harvest_run": run.pk, "file": str(path)}
                )
                reason = f"{name}: {str(exc).removeprefix(f'{path}: ')}"
                batch.skipped.append({"file": name, "reason": reason})
                batch.done, batch.last = index + 1, relative
                batch.files += 1
                continue
            skipped: list[dict] = []
            items = list(_file_items(path, base, reader, skipped))
            # Records of this file written before the run stopped.
            taken = resumed if relative == resumed_file and resumed else 0
            items = items[taken:]
            if not items and not skipped:
                reason = f"{name}: no records in it"
                skipped.append({"file": name, "reason": reason})
            same_reader = (reader.parse, reader.write) == (batch.parse, batch.write)
            if batch.items and not same_reader:
                close_batch(more=True)
            batch.skipped += skipped
            batch.parse, batch.write = reader.parse, reader.write
            # A file of many records (a snapshot piece of 20,000 lines) is
            # written in batches too: as one batch, a piece of 20,255 lines
            # took 14.2 s and 578 MB at peak, in batches 10.7 s and 195 MB.
            # The batches before its last leave the files done where they
            # were and say how many of the file's records they wrote
            # (file_progress), so a run killed among them resumes after those.
            while len(batch.items) + len(items) > BATCH_RECORDS:
                room = max(1, BATCH_RECORDS - len(batch.items))
                batch.items += items[:room]
                items = items[room:]
                taken += room
                batch.within, batch.current = taken, relative
                close_batch(more=True)
                batch.parse, batch.write = reader.parse, reader.write
            batch.items += items
            batch.done, batch.last = index + 1, relative
            batch.files += 1
        if batch.files:
            close_batch(more=False)
        while ahead:
            write(ahead.popleft())
    return harvest_run_finish(run=run)
