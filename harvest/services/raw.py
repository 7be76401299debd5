"""Raw records, kept before parsing (one row a payload), and how files are read."""

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
    # Kept as read, except what PostgreSQL cannot store: NUL and lone surrogates.
    payload = _SURROGATE_RE.sub("\ufffd", item.payload.replace("\x00", "\ufffd"))
    digest = content_hash(payload)
    raw, created = RawRecord.objects.get_or_create(
        source=source,
        external_id=clean_text(item.external_id)[:500],
        content_hash=digest,
        defaults={
            "payload": payload,
            "locator": clean_text(item.locator)[:1000],
            "first_run": run,
            "last_run": run,
        },
    )
    if not created:
        RawRecord.objects.filter(pk=raw.pk).update(last_run=run)
    return raw


def _mark(raw: RawRecord, *, error: str = "") -> None:
    status = RawRecord.Status.FAILED if error else RawRecord.Status.PARSED
    RawRecord.objects.filter(pk=raw.pk).update(status=status, error=error)


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


def raw_records_store(
    *, run: HarvestRun, source: str, items: list[RawItem]
) -> list[RawRecord]:
    """Keep a batch of raw records before parsing (:func:`raw_record_store` in bulk).

    One query finds the payloads stored before, one inserts the new ones (``COPY``
    on PostgreSQL, :func:`~harvest.services.copy_rows.rows_copy`), one moves
    the old ones' ``last_run``. Two harvests inserting the same payload at once
    fall back to one row at a time.

    Args:
        run: the run that fetched them.
        source: source name.
        items: the raw records, in order.

    Returns:
        The RawRecord of each item, in the items' order (the same row for the same
        payload twice).
    """
    keyed = []
    for item in items:
        payload = _SURROGATE_RE.sub("\ufffd", item.payload.replace("\x00", "\ufffd"))
        external_id = clean_text(item.external_id)[:500]
        keyed.append((external_id, content_hash(payload), payload, item))
    found = {
        (r.external_id, r.content_hash): r
        for r in RawRecord.objects.filter(
            source=source,
            external_id__in={k[0] for k in keyed},
            content_hash__in={k[1] for k in keyed},
        )
    }
    old = [r.pk for r in found.values()]
    new: dict[tuple[str, str], RawRecord] = {}
    for external_id, digest, payload, item in keyed:
        key = (external_id, digest)
        if key not in found and key not in new:
            new[key] = RawRecord(
                source=source,
                external_id=external_id,
                content_hash=digest,
                payload=payload,
                locator=clean_text(item.locator)[:1000],
                first_run=run,
                last_run=run,
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
        return [raw_record_store(run=run, source=source, item=k[3]) for k in keyed]
    if old:
        RawRecord.objects.filter(pk__in=old).update(last_run=run)
    found.update(new)
    return [found[(k[0], k[1])] for k in keyed]
