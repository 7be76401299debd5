"""Batches of raw records stored, parsed and written (papers in bulk; ROR)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError, DataError, IntegrityError, connection, transaction

from harvest.models import HarvestRun, RawRecord
from harvest.records import RawItem, RecordError, clean_text
from harvest.services.json_rows import papers_insert
from harvest.services.prepare import WORK_IDS, Ready, parsed, ready_record
from harvest.services.raw import (
    RawKey,
    RecordParser,
    _mark,
    raw_key,
    raw_records_found,
    raw_records_store,
)
from harvest.services.upsert import _institutions_link, paper_upsert
from wovepaper.models import Authorship, Institution, Paper
from wovepaper.search import search_vectors_refresh

logger = logging.getLogger(__name__)

_PARSED = RawRecord.Status.PARSED


def _failure(item: RawItem, exc: Exception | str) -> str:
    """What a raw record's error says: the problem, naming the record's place."""
    return str(exc) if item.locator in str(exc) else f"{item.locator}: {exc}"


def _bulk_refused(run: HarvestRun, papers: int, exc: Exception) -> None:
    """Say that a batch's bulk insert was refused and its papers go one by one
    (each bad record then fails alone): a refusal of every batch, such as a
    column the bulk writers leave NULL, shows in the log, not only as a run
    four times slower."""
    logger.warning(
        "harvest run %s: the bulk insert of %d new papers was refused (%s); "
        "writing them one by one",
        run.pk,
        papers,
        str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__,
        extra={"harvest_run": run.pk},
    )


def _record_failed(
    run: HarvestRun, source: str, item: RawItem, raw: RawRecord, exc: Exception
) -> None:
    message = _failure(item, exc)
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


def _work_ids_taken(ids: dict[str, set[str]]) -> dict[str, set[str]]:
    """Which of ``ids`` (``{"arxiv_id": {...}, "doi": {...}, ...}``) stored
    papers hold, by identifier: one query on PostgreSQL, the values as arrays
    (an ``IN`` list of a batch's ids costs the harvest's process more to write
    out than the server takes to answer), one a kind elsewhere."""
    wanted = {name: sorted(values) for name, values in ids.items() if values}
    if not wanted:
        return {name: set() for name in ids}
    if connection.vendor != "postgresql":
        return {
            name: set(
                Paper.objects.filter(**{f"{name}__in": values}).values_list(
                    name, flat=True
                )
            )
            for name, values in ids.items()
        }
    names = list(wanted)
    where = " OR ".join(f"{name} = ANY(%s::text[])" for name in names)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(names)} FROM {Paper._meta.db_table} "  # noqa: S608
            f"WHERE {where}",
            [wanted[name] for name in names],
        )
        rows = cursor.fetchall()
    taken = {name: set() for name in ids}
    for row in rows:
        for name, value in zip(names, row, strict=True):
            if value in ids[name]:
                taken[name].add(value)
    return taken


def _fresh(records: list[tuple[RawItem, RawRecord, Ready]]) -> tuple[list, list]:
    """Split parsed records into those that make new papers and the rest.

    A record is fresh when no stored paper holds its arXiv id, DOI, OpenAlex or S2 id
    and no earlier record of the batch names the same work (the later ones are
    upserted one by one after the batch's papers exist, so they find them).
    """
    ids = {
        name: {ready.work_ids[name] for _, _, ready in records} - {""}
        for name in WORK_IDS
    }
    taken = _work_ids_taken(ids)
    fresh, rest = [], []
    for entry in records:
        ready = entry[2]
        keys = {name: value for name, value in ready.work_ids.items() if value}
        if ready.deleted or any(v in taken[n] for n, v in keys.items()):
            rest.append(entry)
            continue
        for name, value in keys.items():
            taken[name].add(value)
        fresh.append(entry)
    return fresh, rest


def _papers_bulk_create(records: list[tuple[RawItem, RawRecord, Ready]]) -> None:
    """Create the papers and bylines of fresh records in a few statements.

    On PostgreSQL the papers as one JSON document and their bylines as one
    ``COPY`` (:func:`harvest.services.json_rows.papers_insert`: three
    statements, search vectors computed as the papers go in); elsewhere
    (SQLite, the embedded demo) with ``bulk_create`` and a vector refresh.

    Raises:
        IntegrityError, DataError: a row the database refuses (the caller then
            upserts the records one by one).
    """
    if connection.vendor == "postgresql":
        ids = papers_insert(
            [ready.doc for _, _, ready in records],
            [ready.byline for _, _, ready in records],
        )
    else:
        values = [ready.rows for _, _, ready in records]
        papers = [Paper(**paper) for paper, _ in values]
        Paper.objects.bulk_create(papers)
        Authorship.objects.bulk_create(
            Authorship(paper=paper, **slot)
            for paper, (_, slots) in zip(papers, values, strict=True)
            for slot in slots
        )
        ids = [p.pk for p in papers]
        search_vectors_refresh(paper_ids=ids)
    for pk, (_, _, ready) in zip(ids, records, strict=True):
        if ready.linked:
            _institutions_link(paper=Paper(pk=pk), authors=ready.record.authors)


def harvest_batch(
    *,
    run: HarvestRun,
    source: str,
    items: list[RawItem],
    parse: RecordParser,
    reparse: bool = False,
    prepared: list[tuple[RawKey, Ready]] | None = None,
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
        prepared: each item's raw key and parse, made ahead by a
            :class:`~harvest.services.prepare.PreparePool`, in the items' order;
            None to parse here (only the records not parsed before).

    Raises:
        ValueError: ``prepared`` does not have one entry per item (a bug).
        DatabaseError: other than integrity and data errors (a lost connection):
            transient, the run resumes from its cursor.
    """
    if prepared is not None and len(prepared) != len(items):
        raise ValueError(f"{len(prepared)} prepared records for {len(items)} items")
    keys = (
        [raw_key(item) for item in items]
        if prepared is None
        else [key for key, _ in prepared]
    )
    found = raw_records_found(source=source, keys=keys)
    run.records_seen += len(items)
    # Parsed before the raw records are written, so a new one is stored with its
    # outcome (the same transaction holds both).
    parses: dict[int, Ready] = {}
    seen: set[tuple[str, str]] = set()
    for index, (item, key) in enumerate(zip(items, keys, strict=True)):
        pair = (key.external_id, key.digest)
        before = found.get(pair)
        parsed_before = before is not None and before.status == _PARSED
        if (parsed_before and not reparse) or pair in seen:
            run.papers_unchanged += 1
            continue
        seen.add(pair)
        parses[index] = (
            ready_record(item, parse, key.digest)
            if prepared is None
            else prepared[index][1]
        )

    def outcome(index: int) -> tuple[str, str]:
        ready = parses[index]
        if ready.error:
            return RawRecord.Status.FAILED, _failure(items[index], ready.error)
        return RawRecord.Status.PARSED, ""

    raws = raw_records_store(
        run=run, source=source, items=items, keys=keys, found=found, outcome=outcome
    )
    readies = []
    for index, ready in parses.items():
        item, raw = items[index], raws[index]
        if ready.error:
            _record_failed(run, source, item, raw, RecordError(ready.error))
            continue
        readies.append((item, raw, ready))
    fresh, rest = _fresh(readies)
    if fresh:
        try:
            with transaction.atomic():
                _papers_bulk_create(fresh)
        except DatabaseError as exc:
            if not isinstance(exc, IntegrityError | DataError):
                raise  # a lost connection: transient, the run resumes
            _bulk_refused(run, len(fresh), exc)
            rest = fresh + rest
        except (ValueError, OverflowError) as exc:  # a value a driver refused
            _bulk_refused(run, len(fresh), exc)
            rest = fresh + rest
        else:
            # Written only for raw records stored before and parsed again.
            unmarked = [
                raw for _, raw, _ in fresh if raw.status != _PARSED or raw.error
            ]
            if unmarked:
                RawRecord.objects.filter(pk__in=[raw.pk for raw in unmarked]).update(
                    status=_PARSED, error=""
                )
            run.papers_created += len(fresh)
    order = {id(entry): index for index, entry in enumerate(readies)}
    for item, raw, ready in sorted(rest, key=lambda entry: order[id(entry)]):
        try:
            with transaction.atomic():
                result = paper_upsert(record=ready.record, record_hash=raw.content_hash)
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
                outcome = upsert(parsed(item, parse), raw)
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
