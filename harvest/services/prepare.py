"""Raw records made ready to write off the database, in worker processes.

Before a paper record meets the database, its work is pure CPU: the raw record's
key and hash, parsing, cleaning, the limits check, and the field values of a new
paper and its byline. On a bulk harvest from files that is about half the time
(bench/ingest.py). :class:`PreparePool` does it in worker processes for the
batches after the one being written, so parsing and writing overlap, and both
cores work: the harvest's own process writes batch k while the workers prepare
k + 1 and k + 2.

The workers are forked from the harvest's process (nothing is imported again, so a
pool costs milliseconds) and never use the database: a forked child shares its
parent's connection socket, so :func:`_worker_start` makes any query from a
worker an error instead of a corrupted session, and has the kernel kill the
workers when the harvest's process dies. A worker that dies (killed, out of
memory) or a batch that cannot be sent costs nothing but time: the batch is
prepared in the harvest's own process, as without a pool.

What travels back is kept small (:class:`Ready`): the write needs the new
paper's row as JSON text, not the parsed record, so the record travels pickled
and is unpickled only when read.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import multiprocessing
import os
import pickle
import signal
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from django.conf import settings
from django.db import connection

from harvest.records import PaperRecord, RawItem, RecordError, clean_record
from harvest.services.byline_rows import byline_text
from harvest.services.json_rows import paper_doc
from harvest.services.raw import RawKey, RecordParser, raw_key
from harvest.services.upsert import (
    NO_WORK_ID,
    _authorship_fields,
    _check_limits,
    _has_work_id,
    _merge_versions,
    _paper_fields,
)
from wovepaper.text import slug_for

logger = logging.getLogger(__name__)

# The identifiers that make two records one work (harvest.services.upsert).
WORK_IDS = ("arxiv_id", "doi", "openalex_id", "s2_id")

# Records a worker prepares per task: small enough that two workers share a
# 500-record batch evenly, large enough that sending a task costs little.
CHUNK_RECORDS = 100


# What a Ready sends besides its record.
_SENT = ("error", "work_ids", "deleted", "linked", "doc", "byline", "rows")


class Ready:
    """One raw record parsed and checked, with what a new paper of it would hold.

    Made in a prepare worker, it travels to the writing process as little as the
    write needs: the new paper's row as JSON text, the work ids and two flags;
    the parsed record itself travels pickled and is unpickled only when read
    (an update, a deletion, a byline with institutions). Unpickling every
    record cost the writing process more than the JSON insert (bench/ingest.py).

    Attributes:
        error: why the record failed (a :class:`RecordError` message naming
            it); "" when it did not.
        work_ids: ``{"arxiv_id", "doi", "openalex_id", "s2_id"}`` of the
            record ("" when absent); empty when it failed.
        deleted: the source says the work is deleted.
        linked: some author names an institution.
        doc: the new paper as :func:`~harvest.services.json_rows.paper_doc`
            text (PostgreSQL); "" elsewhere or when it failed.
        byline: its byline slots as
            :func:`~harvest.services.byline_rows.byline_text` (PostgreSQL);
            "" elsewhere, when it failed, or for no slot.
        rows: ``(paper values, slot values)`` for ``bulk_create`` (SQLite);
            None on PostgreSQL or when it failed.
    """

    __slots__ = (
        "error",
        "work_ids",
        "deleted",
        "linked",
        "doc",
        "byline",
        "rows",
        "_record",
    )

    def __init__(
        self,
        record: PaperRecord | None = None,
        *,
        error: str = "",
        doc: str = "",
        byline: str = "",
        rows: tuple[dict, list[dict]] | None = None,
    ) -> None:
        self._record: PaperRecord | bytes | None = record
        self.error, self.doc, self.byline, self.rows = error, doc, byline, rows
        self.work_ids = (
            {name: getattr(record, name) for name in WORK_IDS} if record else {}
        )
        self.deleted = bool(record and record.deleted)
        self.linked = bool(record and any(a.institutions for a in record.authors))

    @property
    def record(self) -> PaperRecord | None:
        """The cleaned record; None when it failed."""
        if isinstance(self._record, bytes):
            self._record = pickle.loads(self._record)  # noqa: S301 - our own worker's
        return self._record

    def __getstate__(self) -> dict:
        record = self._record
        blob = record if isinstance(record, bytes | None) else pickle.dumps(record, -1)
        return {**{name: getattr(self, name) for name in _SENT}, "_record": blob}

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():
            setattr(self, name, value)


def parsed(item: RawItem, parse: RecordParser) -> PaperRecord:
    """Parse one item; a parser bug is a RecordError naming it, not a crash.

    Raises:
        RecordError: the item carries a reading problem, or the parser refused it
            or failed on it.
    """
    if item.problem:
        raise RecordError(item.problem)
    try:
        return parse(item)
    except RecordError:
        raise
    except Exception as exc:  # noqa: BLE001 - a parser bug costs one record only
        raise RecordError(
            f"unexpected parser error {type(exc).__name__}: {exc}"
        ) from exc


def paper_values(digest: str, record: PaperRecord) -> dict:
    """A fresh paper's field values (attribute names), as its first upsert sets.

    Args:
        digest: the content hash of the raw record it came from.
        record: the cleaned record.
    """
    return {
        "arxiv_id": record.arxiv_id or None,
        "doi": record.doi or None,
        "openalex_id": record.openalex_id or None,
        "s2_id": record.s2_id or None,
        "published": record.published,
        "published_precision": record.published_precision,
        "versions": _merge_versions([], record),
        "source_hash": digest,
        "text_source": record.source,
        "cited_by_count": record.cited_by_count,
        "slug": slug_for(record.title, fallback="paper"),
        **_paper_fields(record),
    }


def ready_record(item: RawItem, parse: RecordParser, digest: str) -> Ready:
    """Parse, clean and check one raw record and build its new paper's row.

    Never raises for a bad record: the failure is the returned ``error``.

    Args:
        item: the raw record.
        parse: its source's parser.
        digest: its content hash (:func:`~harvest.services.raw.content_hash`).
    """
    try:
        record = clean_record(parsed(item, parse))
        if not _has_work_id(record):
            raise RecordError(f"{record.external_id}: {NO_WORK_ID}")
        _check_limits(record)
    except RecordError as exc:
        return Ready(error=str(exc))
    values = paper_values(digest, record)
    slots = [
        {"position": position, **_authorship_fields(author)}
        for position, author in enumerate(record.authors, start=1)
    ]
    if connection.vendor != "postgresql":
        return Ready(record, rows=(values, slots))
    return Ready(record, doc=paper_doc(values, slots), byline=byline_text(slots))


def prepare_chunk(
    items: list[RawItem], parse: RecordParser
) -> list[tuple[RawKey, Ready]]:
    """Each item's raw key and :class:`Ready` (what a worker runs).

    Returns:
        One ``(RawKey, Ready)`` per item, in order.
    """
    prepared = []
    for item in items:
        key = raw_key(item)
        prepared.append((key, ready_record(item, parse, key.digest)))
    return prepared


# prctl(2): "PR_SET_PDEATHSIG (since Linux 2.1.57): Set the parent-death signal
# of the calling process" (linux/prctl.h: 1).
_PR_SET_PDEATHSIG = 1


def _worker_start(parent: int) -> None:
    """Set up a forked worker.

    - It dies with its parent: a harvest killed with SIGKILL leaves no workers
      behind (Linux's parent-death signal; elsewhere they end when they find
      their task queue closed).
    - Ctrl-C is its parent's to handle.
    - The database connections it inherited are refused: their sockets are the
      parent's, and a query from here would corrupt the parent's session.
    - What it inherited is frozen out of its garbage collector (``gc.freeze``,
      as the gc module's docs advise for a forked child): the collections
      then walk only what the worker makes, not the parent's whole heap. On
      the 2,264-record prepare of bench/ingest.py's corpus that is 10-15% of
      a worker's time.

    Args:
        parent: the harvest's process id (to notice it died before the
            parent-death signal was set).
    """
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: no parent-death signal
        pass
    if os.getppid() != parent:
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.freeze()
    from django.db import connections

    def refuse(*args, **kwargs):
        raise RuntimeError(
            "a harvest prepare worker must not use the database: "
            "its connection is its parent's"
        )

    for inherited in connections.all(initialized_only=True):
        inherited.execute_wrappers.append(refuse)


class PendingBatch:
    """A batch being prepared by a :class:`PreparePool`.

    Args:
        futures: one per chunk, in order; None when the pool could not take the
            batch (:meth:`result` is then None).
        size: how many items the batch holds.
    """

    def __init__(self, futures: list[Future] | None, size: int) -> None:
        self._futures = futures
        self._size = size

    def result(self) -> list[tuple[RawKey, Ready]] | None:
        """Wait for the batch (seconds: as long as its slowest chunk).

        Returns:
            One ``(RawKey, Ready)`` per item, in order; None when the workers
            failed (logged), so the caller prepares the batch itself.
        """
        if self._futures is None:
            return None
        try:
            prepared = [pair for f in self._futures for pair in f.result()]
        except Exception as exc:  # noqa: BLE001 - a dead worker costs time only
            logger.warning(
                "harvest prepare workers failed (%s: %s); preparing in process",
                type(exc).__name__,
                exc,
            )
            return None
        if len(prepared) != self._size:
            return None
        return prepared


class PreparePool:
    """Forked worker processes preparing batches while the harvest writes others.

    Use as a context manager; leaving it stops the workers. See the module
    docstring for why forking is safe here. Once a worker has died the pool is
    broken (``concurrent.futures`` says so) and takes no more batches: the
    harvest goes on preparing them itself.

    Args:
        workers: how many processes (at least 1).
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_worker_start,
            initargs=(os.getpid(),),
        )

    def submit(self, items: list[RawItem], parse: RecordParser) -> PendingBatch:
        """Start preparing ``items`` (in chunks of :data:`CHUNK_RECORDS`).

        Returns:
            The pending batch; its :meth:`PendingBatch.result` gives what
            :func:`prepare_chunk` gives for all of ``items``, or None.
        """
        try:
            futures = [
                self._executor.submit(
                    prepare_chunk, items[i : i + CHUNK_RECORDS], parse
                )
                for i in range(0, len(items), CHUNK_RECORDS)
            ]
        except BrokenProcessPool:
            return PendingBatch(None, len(items))
        return PendingBatch(futures, len(items))

    def close(self) -> None:
        """Stop the workers, dropping work not started."""
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> PreparePool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def prepare_workers() -> int:
    """How many prepare workers a harvest from files may start here.

    ``settings.HARVEST_PREPARE_WORKERS``, at most the number of CPUs (more
    workers than CPUs only add memory: each holds a batch, and the harvest one
    batch per worker ahead); unset, the number of CPUs. 0 when processes cannot
    be forked here: a daemonic process (a Celery prefork worker's child may not
    have children of its own) or a platform without ``fork``.
    """
    cpus = os.cpu_count() or 1
    wanted = getattr(settings, "HARVEST_PREPARE_WORKERS", None)
    if wanted is None:
        wanted = cpus
    if (
        wanted <= 0
        or multiprocessing.current_process().daemon
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        return 0
    return min(int(wanted), cpus)
