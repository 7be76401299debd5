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


# What a new raw record's row holds (its id comes from the sequence).
_RAW_FIELDS = [f for f in RawRecord._meta.concrete_fields if f.attname != "id"]


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

    Returns:
        ``{(external_id, digest): RawRecord}`` for the keys found.
    """
    return {
        (r.external_id, r.content_hash): r
        for r in RawRecord.objects.filter(
            source=source,
            external_id__in={k.external_id for k in keys},
            content_hash__in={k.digest for k in keys},
        )
    }


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
    new: dict[tuple[str, str], RawRecord] = {}
    for index, k in enumerate(keys):
        pair = (k.external_id, k.digest)
        if pair not in found and pair not in new:
            status, error = (
                outcome(index) if outcome else (RawRecord.Status.PENDING, "")
            )
            new[pair] = RawRecord(
                source=source,
                external_id=k.external_id,
                content_hash=k.digest,
                payload=k.payload,
                locator=k.locator,
                first_run=run,
                last_run=run,
                status=status,
                error=error,
            )
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                rows = list(new.values())
                ids = rows_copy(
                    RawRecord,
                    [
                        {f.attname: getattr(r, f.attname) for f in _RAW_FIELDS}
                        for r in rows
                    ],
                )
                for row, pk in zip(rows, ids, strict=True):
                    row.pk = pk
                    row._state.adding, row._state.db = False, connection.alias
            else:
                RawRecord.objects.bulk_create(list(new.values()))
    except IntegrityError:
        return [raw_record_store(run=run, source=source, item=item) for item in items]
    if old:
        RawRecord.objects.filter(pk__in=old).update(last_run=run)
    stored = {**found, **new}
    return [stored[(k.external_id, k.digest)] for k in keys]
