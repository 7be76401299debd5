"""Raw records, every payload read kept as read (one row a payload), and how files
are read. A batch's new raw records are written in the transaction that writes
what their parse gave, carrying its outcome (parsed, or failed with the error)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.db import IntegrityError, connection, transaction

from harvest.models import HarvestRun, RawRecord
from harvest.records import (
    PaperRecord,
    RawItem,
    clean_text,
)
from harvest.services.copy_rows import rows_copy
from harvest.services.planner_stats import raw_records_stored

_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")


def content_hash(payload: str) -> str:
    """SHA-256 hex digest of a payload's UTF-8 bytes (64 characters)."""
    return hashlib.sha256(payload.encode("utf-8", errors="surrogatepass")).hexdigest()


def raw_record_store(*, run: HarvestRun, source: str, item: RawItem) -> RawRecord:
    """Keep one raw record before parsing; the same payload again reuses its row.

    Args:
        run: the run that fetched it.
        source: source name.
        item: the raw record (payload text, external id, locator).

    Returns:
        The RawRecord (status ``pending`` when new; unchanged status when reused).
    """
    key = raw_key(item)
    raw, created = RawRecord.objects.get_or_create(
        source=source,
        external_id=key.external_id,
        content_hash=key.digest,
        defaults={
            "payload": key.payload,
            "locator": key.locator,
            "first_run": run,
            "last_run": run,
        },
    )
    if not created:
        RawRecord.objects.filter(pk=raw.pk).update(last_run=run)
    return raw


def _mark(raw: RawRecord, *, error: str = "") -> None:
    """Record a raw record's outcome: ``failed`` with ``error``, else ``parsed``
    (no write when it is stored so already)."""
    status = RawRecord.Status.FAILED if error else RawRecord.Status.PARSED
    if (raw.status, raw.error) == (status, error):
        return
    RawRecord.objects.filter(pk=raw.pk).update(status=status, error=error)
    raw.status, raw.error = status, error


RawSplitter = Callable[[Path, Path | None], Iterator[RawItem]]

RecordParser = Callable[[RawItem], PaperRecord]


@dataclass(frozen=True)
class FileReader:
    """How one kind of file is cut into raw records, how each is parsed, and,
    when not the source's own (:class:`~harvest.services.files.FileSource`),
    how a batch of them is written."""

    split: RawSplitter
    parse: RecordParser
    write: Callable[..., None] | None = None


# A raw record's columns, in the order Model.from_db takes them.
_RAW_ATTNAMES = [f.attname for f in RawRecord._meta.concrete_fields]


def _raw_row(pk: int, values: dict) -> RawRecord:
    """The RawRecord of a row just inserted with ``COPY`` (``values`` by
    attribute name, as given to it), made as a query's rows are: positionally,
    which costs a third of keyword construction (10,000 rows a harvest of
    10,000 papers). ``fetched_at`` is not read back (None)."""
    return RawRecord.from_db(
        connection.alias,
        _RAW_ATTNAMES,
        [pk if name == "id" else values.get(name) for name in _RAW_ATTNAMES],
    )


@dataclass(frozen=True, slots=True)
class RawKey:
    """What identifies and is stored of one raw record, computed off the database.

    Attributes:
        external_id: the item's id, cleaned and cut to its column (500).
        digest: :func:`content_hash` of ``payload``.
        payload: the text as read, but for what PostgreSQL cannot store (NUL and
            lone surrogates become U+FFFD).
        locator: where it came from, cleaned and cut to its column (1,000).
    """

    external_id: str
    digest: str
    payload: str
    locator: str


def raw_key(item: RawItem) -> RawKey:
    """The :class:`RawKey` of a raw record (pure: runs in parse workers too)."""
    payload = _SURROGATE_RE.sub("\ufffd", item.payload.replace("\x00", "\ufffd"))
    return RawKey(
        external_id=clean_text(item.external_id)[:500],
        digest=content_hash(payload),
        payload=payload,
        locator=clean_text(item.locator)[:1000],
    )


def raw_records_found(
    *, source: str, keys: list[RawKey]
) -> dict[tuple[str, str], RawRecord]:
    """The raw records of ``keys`` stored before (one query).

    On PostgreSQL the keys travel as two arrays, exact pairs: an ``IN`` list
    of a batch's 1,000 values costs the harvest's process more to write out
    than the server takes to answer (bench/ingest.py).

    Returns:
        ``{(external_id, digest): RawRecord}`` for the keys found.
    """
    if connection.vendor == "postgresql":
        pairs = sorted({(k.external_id, k.digest) for k in keys})
        found = RawRecord.objects.raw(
            f"SELECT * FROM {RawRecord._meta.db_table} "  # noqa: S608 - no input
            "WHERE source = %s AND (external_id, content_hash) IN "
            "(SELECT * FROM unnest(%s::text[], %s::text[]))",
            [source, [p[0] for p in pairs], [p[1] for p in pairs]],
        )
    else:
        found = RawRecord.objects.filter(
            source=source,
            external_id__in={k.external_id for k in keys},
            content_hash__in={k.digest for k in keys},
        )
    return {(r.external_id, r.content_hash): r for r in found}


def raw_records_store(
    *,
    run: HarvestRun,
    source: str,
    items: list[RawItem],
    keys: list[RawKey] | None = None,
    found: dict[tuple[str, str], RawRecord] | None = None,
    outcome: Callable[[int], tuple[str, str]] | None = None,
) -> list[RawRecord]:
    """Keep a batch of raw records (:func:`raw_record_store` in bulk).

    One query finds the payloads stored before (unless ``found`` is given), one
    inserts the new ones (``COPY`` on PostgreSQL,
    :func:`~harvest.services.copy_rows.rows_copy`), one moves the old ones'
    ``last_run``. Two harvests inserting the same payload at once fall back to
    one row at a time (stored ``pending``).

    Args:
        run: the run that fetched them.
        source: source name.
        items: the raw records, in order.
        keys: their :func:`raw_key` when already computed (by parse workers),
            in the items' order; computed here when None.
        found: :func:`raw_records_found` of ``keys`` when the caller asked.
        outcome: ``item index -> (status, error)`` when the caller parsed the
            items already: a new row is stored with its parse's outcome, in the
            same transaction as what the parse gave, instead of ``pending`` and
            then updated (a second write of every row and its indexes). None:
            new rows are ``pending``.

    Returns:
        The RawRecord of each item, in the items' order (the same row for the same
        payload twice).
    """
    if keys is None:
        keys = [raw_key(item) for item in items]
    if found is None:
        found = raw_records_found(source=source, keys=keys)
    old = [r.pk for r in found.values()]
    new: dict[tuple[str, str], dict] = {}
    for index, k in enumerate(keys):
        pair = (k.external_id, k.digest)
        if pair not in found and pair not in new:
            status, error = (
                outcome(index) if outcome else (RawRecord.Status.PENDING, "")
            )
            new[pair] = {
                "source": source,
                "external_id": k.external_id,
                "locator": k.locator,
                "payload": k.payload,
                "content_hash": k.digest,
                "status": status,
                "error": error,
                "first_run_id": run.pk,
                "last_run_id": run.pk,
            }
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                ids = rows_copy(RawRecord, list(new.values()))
                made = [
                    _raw_row(pk, values)
                    for pk, values in zip(ids, new.values(), strict=True)
                ]
            else:
                made = RawRecord.objects.bulk_create(
                    RawRecord(**values) for values in new.values()
                )
    except IntegrityError:
        return [raw_record_store(run=run, source=source, item=item) for item in items]
    raw_records_stored(rows=len(made))
    if old:
        RawRecord.objects.filter(pk__in=old).update(last_run=run)
    stored = {**found, **dict(zip(new, made, strict=True))}
    return [stored[(k.external_id, k.digest)] for k in keys]
