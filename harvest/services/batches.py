"""Batches of raw records stored, parsed and written (papers in bulk; ROR)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError, DataError, IntegrityError, connection, transaction

from harvest.models import HarvestRun, RawRecord
from harvest.records import (
    PaperRecord,
    RawItem,
    RecordError,
    clean_record,
    clean_text,
)
from harvest.services.copy_rows import papers_copy
from harvest.services.raw import RecordParser, _mark, raw_records_store
from harvest.services.upsert import (
    NO_WORK_ID,
    _authorship_fields,
    _check_limits,
    _has_work_id,
    _institutions_link,
    _merge_versions,
    _paper_fields,
    paper_upsert,
)
from wovepaper.models import Authorship, Institution, Paper
from wovepaper.search import search_vectors_refresh
from wovepaper.text import slug_for

logger = logging.getLogger(__name__)


def _parsed(item: RawItem, parse: RecordParser) -> PaperRecord:
    """Parse one item; a parser bug is a RecordError naming it, not a crash."""
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


def _record_failed(
    run: HarvestRun, source: str, item: RawItem, raw: RawRecord, exc: Exception
) -> None:
    message = str(exc) if item.locator in str(exc) else f"{item.locator}: {exc}"
    logger.warning(
        "harvest %s record failed: %s",
        source,
        message,
        extra={
            "harvest_run": run.pk,
            "source": source,
            "record": item.locator,
            "raw_record": raw.pk,
        },
    )
    _mark(raw, error=message)
    run.records_failed += 1


def _fresh(records: list[tuple[RawItem, RawRecord, PaperRecord]]) -> tuple[list, list]:
    """Split parsed records into those that make new papers and the rest.

    A record is fresh when no stored paper holds its arXiv id, DOI, OpenAlex or S2 id
    and no earlier record of the batch names the same work (the later ones are
    upserted one by one after the batch's papers exist, so they find them).
    """
    ids = {
        "arxiv_id": {r.arxiv_id for _, _, r in records if r.arxiv_id},
        "doi": {r.doi for _, _, r in records if r.doi},
        "openalex_id": {r.openalex_id for _, _, r in records if r.openalex_id},
        "s2_id": {r.s2_id for _, _, r in records if r.s2_id},
    }
    taken = {
        name: set(
            Paper.objects.filter(**{f"{name}__in": values}).values_list(name, flat=True)
        )
        if values
        else set()
        for name, values in ids.items()
    }
    fresh, rest = [], []
    for entry in records:
        record = entry[2]
        keys = {name: getattr(record, name) for name in taken if getattr(record, name)}
        if record.deleted or any(v in taken[n] for n, v in keys.items()):
            rest.append(entry)
            continue
        for name, value in keys.items():
            taken[name].add(value)
        fresh.append(entry)
    return fresh, rest


def _paper_values(raw: RawRecord, record: PaperRecord) -> dict:
    """A fresh paper's field values (attribute names), as its first upsert sets."""
    return {
        "arxiv_id": record.arxiv_id or None,
        "doi": record.doi or None,
        "openalex_id": record.openalex_id or None,
        "s2_id": record.s2_id or None,
        "published": record.published,
        "published_precision": record.published_precision,
        "versions": _merge_versions([], record),
        "source_hash": raw.content_hash,
        "text_source": record.source,
        "cited_by_count": record.cited_by_count,
        "slug": slug_for(record.title, fallback="paper"),
        **_paper_fields(record),
    }


def _papers_bulk_create(records: list[tuple[RawItem, RawRecord, PaperRecord]]) -> None:
    """Create the papers and bylines of fresh records in a few statements.

    On PostgreSQL with ``COPY`` (:func:`harvest.services.copy_rows.papers_copy`:
    five statements, search vectors computed as the papers go in); elsewhere
    (SQLite, the embedded demo) with ``bulk_create`` and a vector refresh.

    Raises:
        IntegrityError, DataError: a row the database refuses (the caller then
            upserts the records one by one).
    """
    values = [
        (
            _paper_values(raw, record),
            [
                {"position": position, **_authorship_fields(author)}
                for position, author in enumerate(record.authors, start=1)
            ],
        )
        for _, raw, record in records
    ]
    if connection.vendor == "postgresql":
        ids = papers_copy(values)
        papers = [Paper(pk=pk) for pk in ids]
    else:
        papers = [Paper(**paper) for paper, _ in values]
        Paper.objects.bulk_create(papers)
        Authorship.objects.bulk_create(
            Authorship(paper=paper, **slot)
            for paper, (_, slots) in zip(papers, values, strict=True)
            for slot in slots
        )
        search_vectors_refresh(paper_ids=[p.pk for p in papers])
    for paper, (_, _, record) in zip(papers, records, strict=True):
        _institutions_link(paper=paper, authors=record.authors)


def harvest_batch(
    *,
    run: HarvestRun,
    source: str,
    items: list[RawItem],
    parse: RecordParser,
    reparse: bool = False,
) -> None:
    """Store, parse and upsert a batch of raw records, as :func:`harvest_record`
    does one by one, with new papers written in bulk.

    Records of works not stored yet become papers with a few queries for the
    whole batch; the others (updates, deletions, works named twice in the batch)
    go through :func:`paper_upsert` one by one. A failure costs its record only: it
    is marked with its error and counted. Call inside a transaction (the caller
    commits the batch with the run's cursor).

    Args:
        run: the current run; its counters are incremented (not saved).
        source: source name.
        items: the raw records, in source order.
        parse: the parser for these records.
        reparse: parse and upsert even payloads parsed before.

    Raises:
        DatabaseError: other than integrity and data errors (a lost connection):
            transient, the run resumes from its cursor.
    """
    raws = raw_records_store(run=run, source=source, items=items)
    run.records_seen += len(items)
    parsed = []
    seen_raw: set[int] = set()
    for item, raw in zip(items, raws, strict=True):
        if (
            raw.status == RawRecord.Status.PARSED and not reparse
        ) or raw.pk in seen_raw:
            run.papers_unchanged += 1
            continue
        seen_raw.add(raw.pk)
        try:
            record = clean_record(_parsed(item, parse))
            if not _has_work_id(record):
                raise RecordError(f"{record.external_id}: {NO_WORK_ID}")
            _check_limits(record)
        except RecordError as exc:
            _record_failed(run, source, item, raw, exc)
            continue
        parsed.append((item, raw, record))
    fresh, rest = _fresh(parsed)
    if fresh:
        try:
            with transaction.atomic():
                _papers_bulk_create(fresh)
        except DatabaseError as exc:
            if not isinstance(exc, IntegrityError | DataError):
                raise  # a lost connection: transient, the run resumes
            rest = fresh + rest
        except (ValueError, OverflowError):  # a value a database driver refused
            rest = fresh + rest
        else:
            RawRecord.objects.filter(pk__in=[raw.pk for _, raw, _ in fresh]).update(
                status=RawRecord.Status.PARSED, error=""
            )
            run.papers_created += len(fresh)
    order = {id(entry): index for index, entry in enumerate(parsed)}
    for item, raw, record in sorted(rest, key=lambda entry: order[id(entry)]):
        try:
            with transaction.atomic():
                result = paper_upsert(record=record, record_hash=raw.content_hash)
        except (RecordError, IntegrityError, DataError) as exc:
            _record_failed(run, source, item, raw, exc)
            continue
        except (ValueError, OverflowError) as exc:
            # A value the database driver refused (an integer past 64 bits): the
            # record is named and refused, the batch goes on.
            _record_failed(
                run, source, item, raw, RecordError(f"{type(exc).__name__}: {exc}")
            )
            continue
        _mark(raw)
        counter = f"papers_{result.outcome}"
        setattr(run, counter, getattr(run, counter) + 1)


def institution_upsert(*, record, fill_only: bool = False) -> str:
    """Create or update the Institution of one organisation record.

    Args:
        record: a :class:`harvest.sources.ror.OrganisationRecord`.
        fill_only: the record is not ROR's own (OpenAlex's institution): it
            creates a missing institution and fills empty fields, never replacing
            what is there. ROR's records (``False``) are authoritative.

    Returns:
        ``"created"``, ``"updated"`` or ``"unchanged"``.
    """
    fields = {
        "name": clean_text(record.name)[:500],
        "aliases": [clean_text(a) for a in record.aliases],
        "country_code": record.country_code,
        "types": list(record.types),
        "relationships": [dict(r) for r in record.relationships],
        "status": record.status[:16],
    }
    row = Institution.objects.filter(ror_id=record.ror_id).first()
    if row is None:
        Institution.objects.create(ror_id=record.ror_id, **fields)
        return "created"
    if fill_only:
        fields = {k: v for k, v in fields.items() if v and not getattr(row, k)}
    if all(getattr(row, k) == v for k, v in fields.items()):
        return "unchanged"
    for key, value in fields.items():
        setattr(row, key, value)
    row.save()
    return "updated"


def entities_batch(
    *,
    run: HarvestRun,
    source: str,
    items: list[RawItem],
    parse: Callable[[RawItem], object],
    upsert: Callable[[object, RawRecord], str],
    reparse: bool = False,
) -> None:
    """Store, parse and upsert a batch of records that are not papers
    (organisations, author profiles), one at a time.

    The run's ``papers_*`` counters count these entities. A failure costs its
    record only (marked and counted). Call inside a transaction.

    Args:
        parse: raw record to parsed record.
        upsert: ``(parsed record, raw record) -> "created" | "updated" |
            "unchanged"``.
    """
    raws = raw_records_store(run=run, source=source, items=items)
    run.records_seen += len(items)
    for item, raw in zip(items, raws, strict=True):
        if raw.status == RawRecord.Status.PARSED and not reparse:
            run.papers_unchanged += 1
            continue
        try:
            with transaction.atomic():
                outcome = upsert(_parsed(item, parse), raw)
        except (RecordError, IntegrityError, DataError) as exc:
            _record_failed(run, source, item, raw, exc)
            continue
        _mark(raw)
        counter = f"papers_{outcome}"
        setattr(run, counter, getattr(run, counter) + 1)


def institutions_batch(
    *,
    run: HarvestRun,
    source: str,
    items: list[RawItem],
    parse: RecordParser,
    reparse: bool = False,
    fill_only: bool = False,
) -> None:
    """Store, parse and upsert a batch of ROR records into Institutions
    (:func:`entities_batch`). ``fill_only``: see :func:`institution_upsert`."""
    entities_batch(
        run=run,
        source=source,
        items=items,
        parse=parse,
        upsert=lambda record, raw: institution_upsert(
            record=record, fill_only=fill_only
        ),
        reparse=reparse,
    )
