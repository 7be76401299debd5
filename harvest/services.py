"""Harvest writes: runs, raw records and the idempotent upsert into the core models.

Every raw record is stored (:class:`~harvest.models.RawRecord`) before it is parsed;
a record that fails to parse or to upsert is marked failed with its error and the run
goes on. Upserting the same record twice changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, DataError, IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from curation import names
from harvest import selectors
from harvest.models import HarvestRun, RawRecord
from harvest.records import (
    AuthorRecord,
    InstitutionRecord,
    NotARecordFile,
    PaperRecord,
    RawItem,
    RecordError,
    clean_record,
    clean_text,
    file_locator,
)
from harvest.sources.polite_http import PoliteClient
from harvest.sources.saved_answers import saved_answer_items
from wovepaper.models import Authorship, Institution, Paper
from wovepaper.search import search_vectors_refresh
from wovepaper.text import slug_for

logger = logging.getLogger(__name__)

# Where a file's name decides how it is read. Source: arXiv's .abs files
# (arxiv-browse), OAI-PMH XML responses, arXiv API Atom feeds, and recorded HTTP
# exchanges of both (JSON).
ARXIV_SUFFIXES = (".abs", ".xml", ".json")
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
# Paper.latest_version is a PositiveSmallIntegerField (PostgreSQL smallint).
_MAX_VERSION = 32767
# Longest title and abstract a record may carry (characters). arXiv takes at most
# 1,920 characters of abstract (arXiv help, "Submission metadata"); Crossref's JATS
# abstracts run longer but not near this. A record past it is junk or hostile (a
# 10 MB abstract would be stored, rendered and indexed), so it is refused by name.
MAX_TITLE_CHARS = 5_000
MAX_ABSTRACT_CHARS = 100_000
# Which source's text a paper shows (title, abstract, categories, dates, byline): the
# highest ranked that has described it. arXiv's metadata is what the authors wrote and
# keep up to date, version by version; Crossref's is the publisher's deposit of the
# version of record; OpenAlex's and Semantic Scholar's are derived from both, with
# their own name and affiliation parsing. A lower-ranked source never replaces that
# text: it fills what the paper lacks (DOI, OpenAlex and S2 ids, journal reference,
# licence, publication date) and adds its evidence (ORCID, affiliations, OpenAlex and
# S2 author ids, ROR institutions) to the byline slots it aligns with. Citation
# counts: the highest any source reports (each source misses some citations).
SOURCE_PRECEDENCE = {"arxiv": 20, "crossref": 10, "openalex": 5, "semanticscholar": 3}
# Shifted positions while a byline is rewritten, so (paper, position) stays unique.
_POSITION_SHIFT = 100_000


NO_WORK_ID = "no arXiv id, DOI, OpenAlex id or Semantic Scholar id"


def _has_work_id(record: PaperRecord) -> bool:
    return bool(record.arxiv_id or record.doi or record.openalex_id or record.s2_id)


@dataclass(frozen=True)
class UpsertResult:
    """What an upsert did: ``outcome`` is ``created``, ``updated`` or ``unchanged``."""

    paper: Paper
    outcome: str


def content_hash(payload: str) -> str:
    """SHA-256 hex digest of a payload's UTF-8 bytes (64 characters)."""
    return hashlib.sha256(payload.encode("utf-8", errors="surrogatepass")).hexdigest()


def harvest_run_start(*, source: str, params: dict) -> HarvestRun:
    """Open a HarvestRun.

    Args:
        source: source name, e.g. ``"arxiv"``.
        params: what was asked (paths, dates), JSON-serialisable.

    Returns:
        The new run, status ``running``.
    """
    return HarvestRun.objects.create(source=source, params=params)


def harvest_run_finish(*, run: HarvestRun, error: str = "") -> HarvestRun:
    """Close a run as finished (failed when ``error`` is given); save its counts."""
    run.status = HarvestRun.Status.FAILED if error else HarvestRun.Status.FINISHED
    run.error = error
    run.finished_at = timezone.now()
    run.save()
    return run


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


def _freshness(
    updated: date | None,
    published: date | None,
    version: int,
    datestamp: date | None,
    digest: str,
) -> tuple:
    """Order of two descriptions of one paper: the greater one's text is shown.

    Latest-version date, then version number, then the source datestamp, then the
    payload hash: the last tie-breaker makes two differing records of equal
    standing (INSPIRE's edited copies of one arXiv record) settle on the same winner
    whatever order they arrive in, so harvesting twice changes nothing.
    """
    return (updated or published or date.min, version, datestamp or date.min, digest)


def _merge_versions(old: list[dict], record: PaperRecord) -> list[dict]:
    by_number = {v["version"]: v for v in old}
    for v in record.versions:
        by_number.setdefault(
            v.version,
            {
                "version": v.version,
                "submitted": v.submitted.isoformat() if v.submitted else None,
                "size": v.size,
            },
        )
    return [by_number[n] for n in sorted(by_number)]


def _paper_fields(record: PaperRecord) -> dict:
    return {
        "title": record.title,
        "abstract": record.abstract,
        "updated": record.updated or record.published,
        "latest_version": record.version,
        "categories": list(record.categories),
        "primary_category": record.primary_category,
        "journal_ref": record.journal_ref,
        "comments": record.comments,
        "report_no": record.report_no,
        "license": record.license,
        "withdrawn": record.withdrawn,
        "source_datestamp": record.datestamp,
    }


def _check_limits(record: PaperRecord) -> None:
    """Refuse a record whose values cannot be stored, naming the field.

    Raises:
        RecordError: an identifier, category or licence is longer than its
            ``Paper`` column, the title or abstract is longer than
            :data:`MAX_TITLE_CHARS` / :data:`MAX_ABSTRACT_CHARS`, or a version
            number is out of range. (Authorship
            name fields are cut to their column instead: a long name is still a
            name.)
    """
    limits = {f.name: f.max_length for f in Paper._meta.fields if f.max_length}
    values = {
        "arxiv_id": record.arxiv_id,
        "doi": record.doi,
        "primary_category": record.primary_category,
        "license": record.license,
    }
    values.update({f"categories[{i}]": c for i, c in enumerate(record.categories)})
    for name, value in values.items():
        limit = limits.get(name.split("[")[0], limits["primary_category"])
        if len(value) > limit:
            raise RecordError(
                f"{record.external_id}: {name} is {len(value)} characters long, "
                f"at most {limit} fit"
            )
    for name, value, limit in (
        ("title", record.title, MAX_TITLE_CHARS),
        ("abstract", record.abstract, MAX_ABSTRACT_CHARS),
    ):
        if len(value) > limit:
            raise RecordError(
                f"{record.external_id}: {name} is {len(value):,} characters long, "
                f"at most {limit:,} are taken"
            )
    for number in [record.version, *(v.version for v in record.versions)]:
        if not 1 <= number <= _MAX_VERSION:
            raise RecordError(
                f"{record.external_id}: version {number} is out of range "
                f"1..{_MAX_VERSION}"
            )


def _find_paper(record: PaperRecord) -> Paper | None:
    """The paper a record describes: by arXiv id, else by DOI.

    A record with an arXiv id finds by DOI only a paper with no other arXiv id:
    two arXiv records that print one DOI (an erratum, a mistake) stay two papers.
    A record without one (Crossref) finds the paper holding its DOI.
    """
    if record.arxiv_id:
        paper = Paper.objects.filter(arxiv_id=record.arxiv_id).first()
        if paper:
            return paper
    for name in ("openalex_id", "s2_id"):
        value = getattr(record, name)
        paper = Paper.objects.filter(**{name: value}).first() if value else None
        if paper:
            return paper
    if record.doi:
        papers = Paper.objects.filter(doi=record.doi)
        if record.arxiv_id:
            papers = papers.filter(
                Q(arxiv_id__isnull=True) | Q(arxiv_id=record.arxiv_id)
            )
        return papers.first()
    return None


def _doi_free(doi: str, paper_id: int | None) -> bool:
    return bool(doi) and not Paper.objects.filter(doi=doi).exclude(pk=paper_id).exists()


@transaction.atomic
def paper_upsert(*, record: PaperRecord, record_hash: str = "") -> UpsertResult:
    """Create or update the Paper (and its byline) one parsed record describes.

    Idempotent: the same record twice gives ``unchanged`` the second time. A record of
    an older version than the one stored only adds that version's entry to
    ``versions`` (and an earlier ``published`` date); it never overwrites newer text.
    A deleted record hides the paper. A DOI already held by another paper is not
    taken twice (logged; the arXiv id still unifies the record).

    Args:
        record: the parsed record; needs an arXiv id, DOI, OpenAlex or S2 id.
        record_hash: SHA-256 of the raw payload, the last tie-breaker between two
            records of the same version and dates (see :func:`_freshness`).

    Returns:
        UpsertResult with the paper and ``"created"``, ``"updated"`` or ``"unchanged"``.

    Raises:
        RecordError: the record has no arXiv id, DOI, OpenAlex id or S2 id, or a
            deleted record names a paper we never had.
    """
    if not _has_work_id(record):
        raise RecordError(f"{record.external_id}: {NO_WORK_ID}")
    record = clean_record(record)
    _check_limits(record)
    paper = _find_paper(record)
    if record.deleted:
        if paper is None:
            raise RecordError(
                f"{record.external_id}: deleted record of an unknown paper"
            )
        if paper.hidden:
            return UpsertResult(paper, "unchanged")
        paper.hidden = True
        paper.save(update_fields=["hidden", "modified"])
        return UpsertResult(paper, "updated")

    if paper is None:
        paper = Paper(
            arxiv_id=record.arxiv_id or None,
            published=record.published,
            published_precision=record.published_precision,
            versions=_merge_versions([], record),
            source_hash=record_hash,
            text_source=record.source,
            cited_by_count=record.cited_by_count,
            **_paper_fields(record),
        )
        _take_source_ids(paper, record)
        if _doi_free(record.doi, None):
            paper.doi = record.doi
        elif record.doi:
            logger.warning(
                "%s: DOI %s already on another paper",
                record.external_id,
                record.doi,
                extra={"record": record.external_id, "doi": record.doi},
            )
        paper.save()
        _byline_sync(paper=paper, authors=record.authors)
        _institutions_link(paper=paper, authors=record.authors)
        search_vectors_refresh(paper_ids=[paper.pk])
        return UpsertResult(paper, "created")

    before = _snapshot(paper)
    _take_citations(paper, record)
    _take_source_ids(paper, record)
    rank = SOURCE_PRECEDENCE.get(record.source, 0)
    shown = SOURCE_PRECEDENCE.get(paper.text_source, 0)
    if rank < shown:
        return _paper_enrich(paper=paper, record=record, before=before)
    paper.versions = _merge_versions(paper.versions, record)
    if record.published and (not paper.published or record.published < paper.published):
        paper.published = record.published
        paper.published_precision = record.published_precision
    newer = rank > shown or _freshness(
        record.updated,
        record.published,
        record.version,
        record.datestamp,
        record_hash,
    ) >= _freshness(
        paper.updated,
        paper.published,
        paper.latest_version,
        paper.source_datestamp,
        paper.source_hash,
    )
    if newer:
        for name, value in _paper_fields(record).items():
            # What a record lacks among the fields other sources fill stays, so
            # the order of arrival and re-harvests end in the same paper.
            if not (name in _FILLED and not value):
                setattr(paper, name, value)
        paper.source_hash = record_hash
        paper.text_source = record.source
        if paper.hidden:
            paper.hidden = False
        if record.doi and not paper.doi and _doi_free(record.doi, paper.pk):
            paper.doi = record.doi
    if record.arxiv_id and not paper.arxiv_id:
        # Found by DOI (a record from another source came first): take the id.
        paper.arxiv_id = record.arxiv_id
    byline_changed = False
    if newer:
        # What other sources added to the slots (ORCID iDs, OpenAlex author ids,
        # affiliations, institutions) stays with the slots this record keeps.
        authors = _with_evidence(record.authors, _byline_evidence(paper))
        byline_changed = _byline_sync(paper=paper, authors=authors)
        byline_changed = _institutions_link(paper=paper, authors=authors) or (
            byline_changed
        )
    if _snapshot(paper) == before and not byline_changed:
        return UpsertResult(paper, "unchanged")
    paper.save()
    search_vectors_refresh(paper_ids=[paper.pk])
    return UpsertResult(paper, "updated")


# What a lower-ranked source may fill on a paper (see _paper_enrich).
_FILLED = ("journal_ref", "license")


def _byline_evidence(paper: Paper) -> list[AuthorRecord]:
    """The paper's stored byline as records, with each slot's evidence."""
    return [
        AuthorRecord(
            raw_name=a.raw_name,
            given_name=a.given_name,
            family_name=a.family_name,
            affiliations=tuple(a.affiliations),
            orcid=a.orcid,
            is_collaboration=a.is_collaboration,
            openalex_author_id=a.openalex_author_id,
            s2_author_id=a.s2_author_id,
            institutions=tuple(
                InstitutionRecord(
                    ror_id=i.ror_id,
                    name=i.name,
                    country_code=i.country_code,
                    types=tuple(i.types),
                )
                for i in a.institutions.all()
                if i.ror_id
            ),
        )
        for a in paper.authorships.order_by("position").prefetch_related("institutions")
    ]


def _with_evidence(
    authors: list[AuthorRecord], previous: list[AuthorRecord]
) -> list[AuthorRecord]:
    """A new byline whose slots keep the evidence of the stored slots they align
    with (:func:`_aligned_slot`) where the new record has none of that kind.

    Args:
        authors: the byline of the record being applied, in order.
        previous: the stored byline (:func:`_byline_evidence`), in order.

    Returns:
        ``authors`` with ORCID iDs, OpenAlex author ids, affiliations and
        institutions filled from the aligned stored slots.
    """
    pool = [(position, a) for position, a in enumerate(previous, start=1)]
    out = []
    for index, author in enumerate(authors):
        found = None if author.is_collaboration else _aligned_slot(pool, index, author)
        if found is None:
            out.append(author)
            continue
        pool.remove(found)
        old = found[1]
        out.append(
            replace(
                author,
                orcid=author.orcid or old.orcid,
                openalex_author_id=author.openalex_author_id or old.openalex_author_id,
                s2_author_id=author.s2_author_id or old.s2_author_id,
                affiliations=author.affiliations or old.affiliations,
                institutions=author.institutions or old.institutions,
            )
        )
    return out


def _take_source_ids(paper: Paper, record: PaperRecord) -> None:
    """Give the paper the record's OpenAlex and S2 ids it lacks (when free)."""
    for name in ("openalex_id", "s2_id"):
        value = getattr(record, name)
        if (
            value
            and not getattr(paper, name)
            and not Paper.objects.filter(**{name: value}).exclude(pk=paper.pk).exists()
        ):
            setattr(paper, name, value)


def _institution_rows(records: Iterable[InstitutionRecord]) -> list[Institution]:
    """The Institution of each record, created by ROR id when new (name, country,
    types as the source gave them; ROR records refine them later)."""
    rows = []
    for record in records:
        row, _ = Institution.objects.get_or_create(
            ror_id=record.ror_id,
            defaults={
                "name": clean_text(record.name)[:500],
                "country_code": record.country_code,
                "types": list(record.types),
            },
        )
        rows.append(row)
    return rows


def _institutions_link(*, paper: Paper, authors: list[AuthorRecord]) -> bool:
    """Tie each slot to the institutions its record names (added, never removed).

    Returns:
        Whether any link was added.
    """
    if not any(a.institutions for a in authors):
        return False
    slots = {a.position: a for a in paper.authorships.all()}
    added = False
    for position, author in enumerate(authors, start=1):
        slot = slots.get(position)
        if slot is not None and author.institutions:
            added = _slot_institutions_add(slot, author.institutions) or added
    return added


def _slot_institutions_add(
    slot: Authorship, institutions: tuple[InstitutionRecord, ...]
) -> bool:
    have = set(slot.institutions.values_list("ror_id", flat=True))
    new = [i for i in institutions if i.ror_id not in have]
    if new:
        slot.institutions.add(*_institution_rows(new))
    return bool(new)


def _take_citations(paper: Paper, record: PaperRecord) -> None:
    if record.cited_by_count is not None and (
        paper.cited_by_count is None or record.cited_by_count > paper.cited_by_count
    ):
        paper.cited_by_count = record.cited_by_count


def _paper_enrich(*, paper: Paper, record: PaperRecord, before: dict) -> UpsertResult:
    """Add what a lower-ranked source knows to a paper another source shows.

    Fills the DOI (when no other paper holds it), journal reference, licence and
    publication date when the paper has none, and adds ORCID iDs and affiliations
    to the byline slots the record's authors align with
    (:func:`_byline_enrich`). Never changes the title, abstract or byline slots.

    Returns:
        ``"updated"`` when anything was added, else ``"unchanged"``.
    """
    if record.doi and not paper.doi and _doi_free(record.doi, paper.pk):
        paper.doi = record.doi
    for name in _FILLED:
        if getattr(record, name) and not getattr(paper, name):
            setattr(paper, name, getattr(record, name))
    if record.published and not paper.published:
        paper.published = record.published
        paper.published_precision = record.published_precision
    enriched = _byline_enrich(paper=paper, authors=record.authors)
    if _snapshot(paper) == before and not enriched:
        return UpsertResult(paper, "unchanged")
    paper.save()
    return UpsertResult(paper, "updated")


def _aligned_slot(slots: list[tuple[int, Any]], index: int, author: AuthorRecord):
    """The person slot of ``slots`` that printed ``author`` (``index``: 0-based).

    Args:
        slots: ``(position, slot)`` pairs, 1-based positions; a slot is an
            Authorship or an AuthorRecord (``family_name``, ``given_name``,
            ``is_collaboration``).
        index: the author's 0-based place in its own byline.
        author: the record's author.

    Returns:
        The fitting ``(position, slot)`` pair, or None.


    Same family-name core (particles aside: ``"Der Velde"`` is ``"van der
    Velde"``) and compatible given names; of several, the one nearest the
    author's position. None when no slot fits: the record's byline differs (a
    collaboration list, an author the other source lacks) and nothing is forced.
    """
    core = names.family_core(author.family_name)
    if not core:
        return None
    fitting = [
        (position, s)
        for position, s in slots
        if not s.is_collaboration
        and names.family_core(s.family_name) == core
        and names.given_names_compatible(s.given_name, author.given_name)
    ]
    return min(fitting, key=lambda pair: abs(pair[0] - 1 - index), default=None)


def _byline_enrich(*, paper: Paper, authors: list[AuthorRecord]) -> bool:
    """Add a lower-ranked source's ORCID iDs and affiliations to aligned slots.

    A slot keeps what it has: an ORCID already there is not replaced (a
    conflict is for a curator, see :func:`curation.selectors.orcid_conflicts`),
    nor are affiliations. No slot is added, moved or removed.

    Returns:
        Whether any slot changed.
    """
    slots = [(a.position, a) for a in paper.authorships.order_by("position")]
    changed = False
    for index, author in enumerate(authors):
        if author.is_collaboration:
            continue
        found = _aligned_slot(slots, index, author)
        if found is None:
            continue
        slots.remove(found)
        slot = found[1]
        fields = []
        if author.orcid and not slot.orcid:
            slot.orcid = author.orcid
            fields.append("orcid")
        if author.affiliations and not slot.affiliations:
            slot.affiliations = list(author.affiliations)
            fields.append("affiliations")
        for name in ("openalex_author_id", "s2_author_id"):
            if getattr(author, name) and not getattr(slot, name):
                setattr(slot, name, getattr(author, name))
                fields.append(name)
        if fields:
            slot.save(update_fields=[*fields, "modified"])
            changed = True
        if author.institutions:
            changed = _slot_institutions_add(slot, author.institutions) or changed
    return changed


def _snapshot(paper: Paper) -> dict:
    return {
        f.attname: getattr(paper, f.attname)
        for f in Paper._meta.concrete_fields
        if f.attname not in {"modified", "created"}
    }


def _authorship_fields(author: AuthorRecord) -> dict:
    if author.is_collaboration:
        given, family, suffix = "", author.raw_name, ""
        name_key = block_key = ""
    else:
        given, family, suffix = author.given_name, author.family_name, author.suffix
        name_key = names.name_key(given, family)
        block_key = names.block_key(given, family)
    return {
        "raw_name": author.raw_name[:500],
        "given_name": given[:300],
        "family_name": family[:300],
        "suffix": suffix[:40],
        "name_key": name_key[:300],
        "block_key": block_key[:200],
        "is_collaboration": author.is_collaboration,
        "orcid": author.orcid,
        "openalex_author_id": author.openalex_author_id,
        "s2_author_id": author.s2_author_id,
        "affiliations": list(author.affiliations),
    }


def _byline_sync(*, paper: Paper, authors: list[AuthorRecord]) -> bool:
    """Make the paper's authorships match a byline; return whether anything changed.

    An authorship already assigned to a researcher keeps its row (and so its curated
    assignment) when the same name appears at another position; slots are otherwise
    matched by position. Rows whose person left the byline are deleted.
    """
    existing = list(paper.authorships.all())
    wanted = [_authorship_fields(a) for a in authors]
    current = [
        {k: getattr(a, k) for k in wanted[0]} if wanted else {}
        for a in sorted(existing, key=lambda a: a.position)
    ]
    if [a.position for a in sorted(existing, key=lambda a: a.position)] == list(
        range(1, len(wanted) + 1)
    ) and current == wanted:
        return False

    pool = {a.pk: a for a in existing}
    chosen: dict[int, Authorship] = {}
    for pos, fields in enumerate(wanted, start=1):
        for a in pool.values():
            if (
                a.researcher_id
                and fields["name_key"]
                and a.name_key == fields["name_key"]
            ):
                chosen[pos] = pool.pop(a.pk)
                break
    for pos in range(1, len(wanted) + 1):
        if pos in chosen:
            continue
        same_pos = next(
            (a for a in pool.values() if a.position == pos and not a.researcher_id),
            None,
        )
        if same_pos is not None:
            chosen[pos] = pool.pop(same_pos.pk)
    if pool:
        Authorship.objects.filter(pk__in=list(pool)).delete()
    if existing:
        paper.authorships.filter(pk__in=[a.pk for a in chosen.values()]).update(
            position=F("position") + _POSITION_SHIFT
        )
    Authorship.objects.bulk_create(
        Authorship(paper=paper, position=pos, **fields)
        for pos, fields in enumerate(wanted, start=1)
        if pos not in chosen
    )
    for pos, fields in enumerate(wanted, start=1):
        row = chosen.get(pos)
        if row is None:
            continue
        row.position = pos
        for name, value in fields.items():
            setattr(row, name, value)
        row.save()
    return True


RawSplitter = Callable[[Path, Path | None], Iterator[RawItem]]
RecordParser = Callable[[RawItem], PaperRecord]


@dataclass(frozen=True)
class FileReader:
    """How one kind of file is cut into raw records and how each is parsed."""

    split: RawSplitter
    parse: RecordParser


def arxiv_reader_for(path: Path) -> FileReader:
    """The reader for an arXiv file by its suffix.

    Args:
        path: an ``.abs`` file, an OAI-PMH ``.xml`` response, a recorded OAI-PMH
            exchange ``.json``, or an arXiv API Atom feed (``.xml``, or a recorded
            ``.json`` response).

    Returns:
        FileReader with the split and parse functions.

    Raises:
        RecordError: the suffix is not one we read.
    """
    from harvest.sources import arxiv_abs, arxiv_atom, arxiv_oai

    if path.suffix in {".xml", ".json"} and arxiv_atom.is_atom_file(path):
        return FileReader(
            split=arxiv_atom.read_atom_file, parse=arxiv_atom.parse_atom_entry
        )
    if path.suffix == ".abs":
        return FileReader(
            split=lambda p, root: iter([arxiv_abs.read_abs_file(p, root)]),
            parse=arxiv_abs.parse_abs,
        )
    if path.suffix in {".xml", ".json"}:
        return FileReader(
            split=arxiv_oai.read_oai_file, parse=arxiv_oai.parse_oai_record
        )
    raise RecordError(
        f"{path}: not an arXiv .abs file, OAI-PMH or Atom .xml, or recorded .json"
    )


def arxiv_files(root: Path) -> list[Path]:
    """Every arXiv file under ``root`` (or ``root`` itself), sorted, oldest id first.

    Args:
        root: a folder (searched recursively) or a single file.

    Returns:
        Sorted paths with a suffix in :data:`ARXIV_SUFFIXES`; ``.abs`` version files
        under ``orig/`` come before the current ones so versions arrive in order.
    """
    if root.is_file():
        return [root]
    return sorted(
        (p for p in root.rglob("*") if p.is_file() and p.suffix in ARXIV_SUFFIXES),
        key=lambda p: (p.suffix != ".abs", "orig" not in p.parts, str(p)),
    )


def _file_items(
    path: Path, root: Path | None, reader: FileReader, run: HarvestRun
) -> Iterable[RawItem]:
    try:
        yield from reader.split(path, root)
    except NotARecordFile as exc:
        logger.info("skipped %s", exc)
        run.files_skipped = [
            *run.files_skipped,
            {"file": file_locator(path, root), "reason": str(exc)},
        ]
    except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
        if isinstance(exc, DatabaseError):
            raise
        if not isinstance(exc, RecordError):
            exc = RecordError(
                f"{file_locator(path, root)}: unreadable file "
                f"({type(exc).__name__}: {str(exc)[:200]})"
            )
        text = path.read_bytes().decode("utf-8", errors="replace")
        yield RawItem(
            external_id=f"file:{file_locator(path, root)}",
            payload=text,
            locator=file_locator(path, root),
            problem=str(exc),
        )


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


def raw_records_store(
    *, run: HarvestRun, source: str, items: list[RawItem]
) -> list[RawRecord]:
    """Keep a batch of raw records before parsing (:func:`raw_record_store` in bulk).

    One query finds the payloads stored before, one inserts the new ones, one moves
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
            RawRecord.objects.bulk_create(list(new.values()))
    except IntegrityError:
        return [raw_record_store(run=run, source=source, item=k[3]) for k in keyed]
    if old:
        RawRecord.objects.filter(pk__in=old).update(last_run=run)
    found.update(new)
    return [found[(k[0], k[1])] for k in keyed]


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

    A record is fresh when no stored paper holds its arXiv id, DOI or OpenAlex id
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


def _papers_bulk_create(records: list[tuple[RawItem, RawRecord, PaperRecord]]) -> None:
    """Create the papers and bylines of fresh records: three queries for all.

    Raises:
        IntegrityError, DataError: a row the database refuses (the caller then
            upserts the records one by one).
    """
    papers = [
        Paper(
            arxiv_id=record.arxiv_id or None,
            doi=record.doi or None,
            openalex_id=record.openalex_id or None,
            s2_id=record.s2_id or None,
            published=record.published,
            published_precision=record.published_precision,
            versions=_merge_versions([], record),
            source_hash=raw.content_hash,
            text_source=record.source,
            cited_by_count=record.cited_by_count,
            slug=slug_for(record.title, fallback="paper"),
            **_paper_fields(record),
        )
        for _, raw, record in records
    ]
    Paper.objects.bulk_create(papers)
    Authorship.objects.bulk_create(
        Authorship(paper=paper, position=position, **_authorship_fields(author))
        for paper, (_, _, record) in zip(papers, records, strict=True)
        for position, author in enumerate(record.authors, start=1)
    )
    for paper, (_, _, record) in zip(papers, records, strict=True):
        _institutions_link(paper=paper, authors=record.authors)
    search_vectors_refresh(paper_ids=[p.pk for p in papers])


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
        except (IntegrityError, DataError):
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
        _mark(raw)
        counter = f"papers_{result.outcome}"
        setattr(run, counter, getattr(run, counter) + 1)


def crossref_files(root: Path) -> list[Path]:
    """Every ``.json`` file under ``root`` (or ``root`` itself), sorted: the saved
    answers of the JSON sources (Crossref, OpenAlex)."""
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*.json") if p.is_file())


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
    """The reader of a saved OpenAlex answer (``.json``: a list page, one work, or
    an array of works, such as the 2022 snapshot extract).

    Raises:
        RecordError: the file is not ``.json``.
    """
    from harvest.sources import openalex

    if path.suffix != ".json":
        raise RecordError(f"{path}: not a saved OpenAlex answer (.json)")
    return FileReader(
        split=openalex.read_openalex_file, parse=openalex.parse_openalex_work
    )


# How each source's files are found and read.
@dataclass(frozen=True)
class FileSource:
    """How a source's files are found, read and written.

    Attributes:
        find: ``root -> files`` in harvest order.
        reader_for: ``file -> FileReader`` (raises RecordError for a file it
            cannot read).
        write: writes a batch of raw records (:func:`harvest_batch` for papers,
            :func:`institutions_batch` for ROR).
    """

    find: Callable[[Path], list[Path]]
    reader_for: Callable[[Path], FileReader]
    write: Callable[..., None]


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


def institution_upsert(*, record) -> str:
    """Create or update the Institution of one ROR record (ROR is authoritative).

    Args:
        record: a :class:`harvest.sources.ror.OrganisationRecord`.

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
    if all(getattr(row, k) == v for k, v in fields.items()):
        return "unchanged"
    for key, value in fields.items():
        setattr(row, key, value)
    row.save()
    return "updated"


def institutions_batch(
    *,
    run: HarvestRun,
    source: str,
    items: list[RawItem],
    parse: RecordParser,
    reparse: bool = False,
) -> None:
    """Store, parse and upsert a batch of ROR records into Institutions.

    The run's ``papers_*`` counters count institutions for a ROR run. A failure
    costs its record only (marked and counted).
    """
    raws = raw_records_store(run=run, source=source, items=items)
    run.records_seen += len(items)
    for item, raw in zip(items, raws, strict=True):
        if raw.status == RawRecord.Status.PARSED and not reparse:
            run.papers_unchanged += 1
            continue
        try:
            with transaction.atomic():
                outcome = institution_upsert(record=_parsed(item, parse))
        except (RecordError, IntegrityError, DataError) as exc:
            _record_failed(run, source, item, raw, exc)
            continue
        _mark(raw)
        counter = f"papers_{outcome}"
        setattr(run, counter, getattr(run, counter) + 1)


def s2_reader_for(path: Path) -> FileReader:
    """The reader of a saved Semantic Scholar answer (``.json``: a paper, a batch
    answer with nulls, or a list of papers).

    Raises:
        RecordError: the file is not ``.json``.
    """
    from harvest.sources import semanticscholar as s2

    if path.suffix != ".json":
        raise RecordError(f"{path}: not a saved Semantic Scholar answer (.json)")
    return FileReader(
        split=lambda p, root: saved_answer_items(
            p, root, s2.s2_page_read, s2.split_s2_page
        ),
        parse=s2.parse_s2_paper,
    )


# How each source's files are found, read and written.
FILE_SOURCES: dict[str, FileSource] = {
    "arxiv": FileSource(arxiv_files, arxiv_reader_for, harvest_batch),
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

    The cursor is the number of files completed, saved with the counts after every
    file, so a run killed mid-way resumes at the first unfinished file (records of a
    file half-done are upserted again, which is idempotent).

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
    """
    root = root.resolve()
    kind = FILE_SOURCES[source]
    files = kind.find(root)
    base = locator_base(root)
    if run is None and task_id:
        run = selectors.run_of_task(source=source, task_id=task_id)
        if run is not None and run.status == HarvestRun.Status.FINISHED:
            return run
    if run is None:
        params = {"root": str(root), "files": len(files)}
        run = harvest_run_start(
            source=source, params={**params, "task": task_id} if task_id else params
        )
    start = int(run.cursor or 0)
    # Files are read into batches of about BATCH_RECORDS records sharing a parser;
    # each batch, the run's counts and the cursor (files done) commit together, so
    # a killed run resumes at the first file of the batch that did not land.
    batch: list[RawItem] = []
    batch_parse: RecordParser | None = None
    done, files_in_batch = start, 0

    def flush() -> None:
        nonlocal batch, batch_parse, files_in_batch
        with transaction.atomic():
            if batch:
                kind.write(
                    run=run,
                    source=source,
                    items=batch,
                    parse=batch_parse,
                    reparse=reparse,
                )
            run.cursor = str(done)
            run.save()
        if progress:
            progress(files_in_batch)
        batch, batch_parse, files_in_batch = [], None, 0

    for index, path in enumerate(files[start:], start=start):
        name = file_locator(path, base)
        try:
            reader = kind.reader_for(path)
        except RecordError as exc:
            logger.warning("%s", exc, extra={"harvest_run": run.pk, "file": str(path)})
            reason = f"{name}: {str(exc).removeprefix(f'{path}: ')}"
            run.files_skipped = [*run.files_skipped, {"file": name, "reason": reason}]
            done, files_in_batch = index + 1, files_in_batch + 1
            continue
        skipped_before = len(run.files_skipped)
        items = list(_file_items(path, base, reader, run))
        if not items and len(run.files_skipped) == skipped_before:
            run.files_skipped = [
                *run.files_skipped,
                {"file": name, "reason": f"{name}: no records in it"},
            ]
        if batch and reader.parse is not batch_parse:
            flush()
        batch += items
        batch_parse = reader.parse
        done, files_in_batch = index + 1, files_in_batch + 1
        if len(batch) >= BATCH_RECORDS:
            flush()
    if files_in_batch:
        flush()
    return harvest_run_finish(run=run)


def oai_windows(from_date: date, until_date: date, days: int) -> list[list[str]]:
    """Cut a date range into windows of ``days`` days, newest first.

    Args:
        from_date, until_date: the range, both days included (OAI-PMH ``from`` and
            ``until`` are inclusive at day granularity).
        days: window length in days (>= 1).

    Returns:
        ``[[from, until], ...]`` as ISO dates, the window holding ``until_date``
        first; the oldest window may be shorter. Empty when ``from_date`` is after
        ``until_date``.
    """
    windows = []
    end = until_date
    while end >= from_date:
        start = max(from_date, end - timedelta(days=days - 1))
        windows.append([start.isoformat(), end.isoformat()])
        end = start - timedelta(days=1)
    return windows


@dataclass(frozen=True)
class LivePage:
    """One page of a live list, as the windowed walk stores it.

    Attributes:
        items: the page's raw records.
        next: where the next page of the window is asked from (an OAI-PMH
            resumptionToken, a Crossref cursor); "" when the window is complete.
    """

    items: list[RawItem]
    next: str


# fetch(start, end, position): the pages of one window from a position ("" for its
# first page), as an iterator of LivePage.
PageFetcher = Callable[[str, str, str], Iterator[LivePage]]


def _client(
    client: PoliteClient | None, source: str
) -> AbstractContextManager[PoliteClient]:
    """The caller's client (left open), or a new one for ``source`` (closed after)."""
    return nullcontext(client) if client is not None else PoliteClient(source)


def _window_cursor(run: HarvestRun) -> tuple[int, str]:
    if not run.cursor:
        return 0, ""
    state = json.loads(run.cursor)
    return int(state["window"]), str(state.get("position", ""))


def _live_run(
    *, source: str, params: dict, run: HarvestRun | None, task_id: str
) -> HarvestRun:
    """The run to carry on: ``run``, the task's own run, or a new one."""
    if run is None and task_id:
        run = selectors.run_of_task(source=source, task_id=task_id)
    if run is None:
        return harvest_run_start(
            source=source, params={**params, "task": task_id} if task_id else params
        )
    if run.status == HarvestRun.Status.FAILED:
        run.status = HarvestRun.Status.RUNNING
        run.error = ""
        run.finished_at = None
        run.save(update_fields=["status", "error", "finished_at"])
    return run


def _walk_windows(
    *,
    run: HarvestRun,
    parse: RecordParser,
    fetch: PageFetcher,
    restartable: type[Exception] | tuple[type[Exception], ...],
    progress: Callable[[int], None] | None,
) -> HarvestRun:
    """Harvest every window of a live run, newest first, page by page.

    Each page's records, the run's counts and the cursor (``{"window": i,
    "position": p}``: the next page to ask for) commit in one transaction, so a run
    killed at any moment resumes at the first page whose records did not all land,
    losing and duplicating nothing. A position the source no longer knows
    (``restartable`` raised while resuming from it) restarts that window from its
    first page: stored payloads are not parsed again, so this costs requests only.

    Returns:
        The run, finished; or failed with the reason when the source stays
        unavailable past its retry budget or refuses the request
        (:class:`~harvest.sources.polite_http.SourceError`). The cursor is kept.
    """
    from harvest.sources.polite_http import SourceError

    windows = run.params["windows"]
    window, position = _window_cursor(run)
    try:
        while window < len(windows):
            start, end = windows[window]
            try:
                for page in fetch(start, end, position):
                    with transaction.atomic():
                        harvest_batch(
                            run=run, source=run.source, items=page.items, parse=parse
                        )
                        run.params["pages"] = run.params.get("pages", 0) + 1
                        done = not page.next
                        run.cursor = json.dumps(
                            {"window": window + done, "position": page.next}
                        )
                        run.save()
                    if progress:
                        progress(len(page.items))
            except restartable as exc:
                if not position:
                    raise
                logger.warning(
                    "%s; window %s..%s starts again",
                    exc,
                    start,
                    end,
                    extra={"harvest_run": run.pk},
                )
                position = ""
                continue
            window, position = _window_cursor(run)
    except SourceError as exc:
        logger.error(
            "harvest run %s failed: %s", run.pk, exc, extra={"harvest_run": run.pk}
        )
        return harvest_run_finish(run=run, error=str(exc))
    return harvest_run_finish(run=run)


def _range_params(
    *, source: str, mode: str, from_date: date | None, until_date: date | None, **same
) -> dict:
    """A live run's parameters: its list, dates and windows (newest first).

    With no ``from_date`` the run continues from the ``until`` day of the last
    finished run of the same list, or reaches back
    :data:`settings.HARVEST_FIRST_DAYS` days.
    """
    until_date = until_date or timezone.now().date()
    if from_date is None:
        from_date = selectors.live_next_from(
            source=source, mode=mode, **same
        ) or until_date - timedelta(days=settings.HARVEST_FIRST_DAYS)
    return {
        "mode": mode,
        **same,
        "from": from_date.isoformat(),
        "until": until_date.isoformat(),
        "windows": oai_windows(from_date, until_date, settings.HARVEST_WINDOW_DAYS),
        "pages": 0,
    }


def harvest_arxiv_oai(
    *,
    from_date: date | None = None,
    until_date: date | None = None,
    set_spec: str = "",
    metadata_prefix: str = "arXiv",
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Harvest arXiv's OAI-PMH ``ListRecords``: incremental, newest first, resumable.

    The range is cut into windows of :data:`settings.HARVEST_WINDOW_DAYS` days,
    harvested newest window first, each along its resumptionTokens, each page
    committed with the token that follows it (:func:`_walk_windows`). An expired
    token on resuming (``badResumptionToken``) restarts that window. A source
    unavailable past the retry budget, a refused request or a token that loops
    ends the run ``failed`` with the reason; resuming it (``run=``) carries on.

    Args:
        from_date: first datestamp day asked; None continues from the ``until``
            day of the last finished run with the same URL, format and set (that
            day is asked again: ``from`` is inclusive), or
            :data:`settings.HARVEST_FIRST_DAYS` days before ``until_date``.
        until_date: last datestamp day asked; None for today (UTC).
        set_spec: an OAI set (``"cs"``, ``"physics:hep-th"``), "" for all.
        metadata_prefix: ``"arXiv"`` or ``"oai_dc"``.
        base_url: the OAI-PMH endpoint; "" for ``settings.ARXIV_OAI_URL``.
        run: a run to resume (its own parameters are used; the others are ignored).
        task_id: the Celery task doing this harvest ("" outside Celery); a task
            redelivered after its worker died resumes its run (or, if that run
            finished before the ack was lost, returns it unchanged).
        client: the HTTP client; None for a :class:`PoliteClient` with arXiv's
            politeness (one request every 3 s).
        progress: called with the number of records of each page.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: OAI-PMH 2.0 sections 3.5 (flow control) and 4.5 (ListRecords); arXiv
    OAI-PMH (``https://export.arxiv.org/oai2``): the datestamp is the record's last
    metadata change, not its publication date.
    """
    from harvest.sources import arxiv_oai
    from harvest.sources.oai_pmh import OaiBadToken, oai_pages

    params = (
        run.params
        if run
        else _range_params(
            source="arxiv",
            mode="oai",
            from_date=from_date,
            until_date=until_date,
            base_url=base_url or settings.ARXIV_OAI_URL,
            metadata_prefix=metadata_prefix,
            set=set_spec,
        )
    )
    run = _live_run(source="arxiv", params=params, run=run, task_id=task_id)
    if run.status == HarvestRun.Status.FINISHED:
        return run
    p = run.params

    def fetch(start: str, end: str, token: str) -> Iterator[LivePage]:
        for page in oai_pages(
            http,
            p["base_url"],
            metadata_prefix=p["metadata_prefix"],
            from_date=start,
            until_date=end,
            set_spec=p["set"],
            token=token,
        ):
            yield LivePage(
                list(arxiv_oai.split_oai_xml(page.body, page.url)), page.token
            )

    with _client(client, "arxiv") as http:
        return _walk_windows(
            run=run,
            parse=arxiv_oai.parse_oai_record,
            fetch=fetch,
            restartable=OaiBadToken,
            progress=progress,
        )


def harvest_crossref(
    *,
    from_date: date | None = None,
    until_date: date | None = None,
    extra_filter: str = "",
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Harvest Crossref ``/works`` indexed between two days: newest first, resumable.

    Works are asked by ``from-index-date``/``until-index-date`` (the day Crossref
    last indexed the work, so an updated deposit comes again), one window of
    :data:`settings.HARVEST_WINDOW_DAYS` days at a time, newest first, each walked
    with deep-paging cursors (``cursor=*``, 1,000 rows) until an empty page; each
    page commits with the cursor that follows it (:func:`_walk_windows`). Crossref
    cursors expire after five idle minutes, so resuming a run from a refused cursor
    restarts that window.

    Args:
        from_date: first index day; None continues from the ``until`` day of the
            last finished Crossref run, or :data:`settings.HARVEST_FIRST_DAYS`
            days before ``until_date``.
        until_date: last index day; None for today (UTC).
        extra_filter: more Crossref filters, ``"type:journal-article,prefix:10.1103"``
            (a different filter is a different list for incremental runs).
        base_url: ``/works`` endpoint; "" for ``settings.CROSSREF_WORKS_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for Crossref's politeness (polite pool with
            ``HARVEST_CONTACT_EMAIL``).
        progress: called with the number of works of each page.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: Crossref REST API documentation, "Deep paging with cursors" and the
    ``from-index-date``/``until-index-date`` filters.
    """
    from harvest.sources import crossref

    def pages(http: PoliteClient, url: str, start: str, end: str, cursor: str, more):
        return crossref.crossref_pages(
            http,
            url,
            filters={"from-index-date": start, "until-index-date": end, **more},
            cursor=cursor or "*",
        )

    return _harvest_works_by_date(
        source="crossref",
        default_url=settings.CROSSREF_WORKS_URL,
        pages=pages,
        split=crossref.split_works_page,
        parse=crossref.parse_crossref_work,
        from_date=from_date,
        until_date=until_date,
        extra_filter=extra_filter,
        base_url=base_url,
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
    )


def filters_parse(text: str) -> dict[str, str]:
    """``"type:journal-article,prefix:10.1103"`` as ``{"type": "journal-article",
    "prefix": "10.1103"}`` (Crossref and OpenAlex filter syntax).

    Raises:
        ValueError: a part without ``name:value``.
    """
    out = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition(":")
        if not (sep and name.strip() and value.strip()):
            raise ValueError(f"filter {part!r} is not name:value")
        out[name.strip()] = value.strip()
    return out


def _harvest_works_by_date(
    *,
    source: str,
    default_url: str,
    pages: Callable[..., Iterator[Any]],
    split: Callable[[Any], Iterator[RawItem]],
    parse: RecordParser,
    from_date: date | None,
    until_date: date | None,
    extra_filter: str,
    base_url: str,
    run: HarvestRun | None,
    task_id: str,
    client: PoliteClient | None,
    progress: Callable[[int], None] | None,
) -> HarvestRun:
    """A live harvest of a JSON ``/works`` API walked by date windows and cursors.

    ``pages(http, url, start, end, cursor, more)`` walks one window from a cursor
    ("" for the first page) with the extra filters ``more`` (``{"type":
    "journal-article"}``, from ``extra_filter``); each page's ``next_cursor`` is
    saved with its records. A
    cursor the source refuses on resuming restarts its window (cursors expire).

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.
    """
    from harvest.sources.polite_http import SourceRefused

    params = (
        run.params
        if run
        else _range_params(
            source=source,
            mode=source,
            from_date=from_date,
            until_date=until_date,
            base_url=base_url or default_url,
            filter=extra_filter,
        )
    )
    run = _live_run(source=source, params=params, run=run, task_id=task_id)
    more = filters_parse(run.params.get("filter", ""))
    if run.status == HarvestRun.Status.FINISHED:
        return run

    def fetch(start: str, end: str, cursor: str) -> Iterator[LivePage]:
        for page in pages(http, run.params["base_url"], start, end, cursor, more):
            items = list(split(page))
            yield LivePage(items, page.next_cursor if items else "")

    with _client(client, source) as http:
        return _walk_windows(
            run=run,
            parse=parse,
            fetch=fetch,
            restartable=SourceRefused,
            progress=progress,
        )


class HarvestRunRefused(Exception):
    """A resume or re-run asked of a run in the wrong state; the message says why."""


RUN_NOT_FAILED = "run #{run} is {status}: only a failed run can be resumed"
RUN_STILL_RUNNING = "run #{run} is still running: re-run it once it has ended"
RUN_UNKNOWN_KIND = "run #{run} has no parameters to harvest again"


def _run_task(run: HarvestRun, *, resume: bool):
    """The task signature that harvests ``run`` again (resuming it, or afresh)."""
    from harvest.tasks import (
        harvest_arxiv_ids_task,
        harvest_arxiv_oai_task,
        harvest_crossref_task,
        harvest_files_task,
        harvest_openalex_task,
        harvest_s2_backfill_task,
    )

    p = run.params
    if p.get("mode") == "arxiv-api":
        if resume:
            return harvest_arxiv_ids_task.s(run_id=run.pk)
        return harvest_arxiv_ids_task.s(ids=p["ids"], base_url=p["base_url"])
    if p.get("mode") == "s2-backfill":
        if resume:
            return harvest_s2_backfill_task.s(run_id=run.pk)
        return harvest_s2_backfill_task.s(limit=p["limit"], base_url=p["base_url"])
    live = {
        "oai": harvest_arxiv_oai_task,
        "crossref": harvest_crossref_task,
        "openalex": harvest_openalex_task,
    }
    if p.get("mode") in live:
        task = live[p["mode"]]
        if resume:
            return task.s(run_id=run.pk)
        asked = {"from_date": p["from"], "until_date": p["until"]}
        asked["base_url"] = p["base_url"]
        if p.get("filter"):
            asked["extra_filter"] = p["filter"]
        if p["mode"] == "oai":
            asked |= {"set_spec": p["set"], "metadata_prefix": p["metadata_prefix"]}
        return task.s(**asked)
    if "root" in p:
        return harvest_files_task.s(
            source=run.source, root=p["root"], run_id=run.pk if resume else None
        )
    raise HarvestRunRefused(RUN_UNKNOWN_KIND.format(run=run.pk))


@transaction.atomic
def harvest_run_resume(*, run: HarvestRun) -> HarvestRun:
    """Queue a failed run to carry on from its cursor.

    The status moves ``failed`` -> ``running`` by compare-and-swap, so two operators
    clicking at once queue it once.

    Args:
        run: a failed run (files or OAI-PMH).

    Returns:
        The run, now ``running``; its task is queued when the transaction commits.

    Raises:
        HarvestRunRefused: the run is not failed, or holds no parameters to resume.
    """
    signature = _run_task(run, resume=True)
    changed = HarvestRun.objects.filter(
        pk=run.pk, status=HarvestRun.Status.FAILED
    ).update(status=HarvestRun.Status.RUNNING, error="", finished_at=None)
    if not changed:
        run.refresh_from_db()
        raise HarvestRunRefused(RUN_NOT_FAILED.format(run=run.pk, status=run.status))
    transaction.on_commit(signature.delay)
    run.refresh_from_db()
    return run


def harvest_run_repeat(*, run: HarvestRun) -> None:
    """Queue a new run asking what ``run`` asked (same folder, or same dates and set).

    Args:
        run: a finished or failed run.

    Raises:
        HarvestRunRefused: the run is still running, or holds no parameters.
    """
    if run.status == HarvestRun.Status.RUNNING:
        raise HarvestRunRefused(RUN_STILL_RUNNING.format(run=run.pk))
    _run_task(run, resume=False).delay()


def harvest_openalex(
    *,
    from_date: date | None = None,
    until_date: date | None = None,
    extra_filter: str = "",
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Harvest OpenAlex works updated between two days: newest first, resumable.

    Works are asked with ``from_updated_date``/``to_updated_date`` (with an API
    key, ``OPENALEX_API_KEY``), a window of :data:`settings.HARVEST_WINDOW_DAYS`
    days at a time, newest first, each walked with cursors (200 works a page);
    works whose authorships OpenAlex truncated are fetched whole. Each page
    commits with the cursor after it (:func:`_walk_windows`); a refused cursor on
    resuming restarts its window.

    Args:
        from_date: first update day; None continues from the last finished
            OpenAlex run's ``until``, or :data:`settings.HARVEST_FIRST_DAYS` back.
        until_date: last update day; None for today (UTC).
        extra_filter: more OpenAlex filters, ``"type:article,language:en"``.
        base_url: ``/works`` endpoint; "" for ``settings.OPENALEX_WORKS_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for OpenAlex's politeness.
        progress: called with the number of works of each page.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: OpenAlex docs, "Paging" (cursor) and "Filter works"
    (``from_updated_date``, ``to_updated_date``).
    """
    from harvest.sources import openalex

    def pages(http: PoliteClient, url: str, start: str, end: str, cursor: str, more):
        return openalex.openalex_pages(
            http,
            url,
            filters={"from_updated_date": start, "to_updated_date": end, **more},
            cursor=cursor or "*",
            api_key=settings.OPENALEX_API_KEY,
        )

    return _harvest_works_by_date(
        source="openalex",
        default_url=settings.OPENALEX_WORKS_URL,
        pages=pages,
        split=openalex.split_works_page,
        parse=openalex.parse_openalex_work,
        from_date=from_date,
        until_date=until_date,
        extra_filter=extra_filter,
        base_url=base_url,
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
    )


def harvest_s2_backfill(
    *,
    limit: int | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Look up in Semantic Scholar the papers that have no S2 id yet, newest first.

    Papers with an arXiv id or a DOI and no ``s2_id`` are asked 500 at a time
    (``POST /paper/batch`` with ``ARXIV:<id>`` or ``DOI:<doi>``); each answer is
    stored and upserted like any record (S2 ranks last: it fills the S2 paper id,
    S2 author ids on aligned slots, citation counts). Unknown ids answer ``null``
    and are passed over. The cursor is the lowest paper id handled, committed with
    each batch, so a killed run resumes below it.

    Args:
        limit: most papers to look up; None for all.
        base_url: Graph API root; "" for ``settings.S2_API_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for S2's politeness (``S2_API_KEY`` sent as
            ``x-api-key``).
        progress: called with the number of papers asked in each batch.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: Semantic Scholar Graph API, "Get details for multiple papers at once"
    (``/paper/batch``: at most 500 ids, ``null`` for an unknown one).
    """
    from harvest.sources import semanticscholar as s2
    from harvest.sources.polite_http import SourceError

    params = (
        run.params
        if run
        else {
            "mode": "s2-backfill",
            "base_url": base_url or settings.S2_API_URL,
            "limit": limit,
        }
    )
    run = _live_run(source="semanticscholar", params=params, run=run, task_id=task_id)
    if run.status == HarvestRun.Status.FINISHED:
        return run
    key = {"x-api-key": settings.S2_API_KEY} if settings.S2_API_KEY else None
    asked = run.params.get("asked", 0)
    own = client is None
    http = client or PoliteClient("semanticscholar", headers=key)
    try:
        while run.params["limit"] is None or asked < run.params["limit"]:
            wanted = Paper.objects.filter(s2_id__isnull=True).filter(
                Q(arxiv_id__isnull=False) | Q(doi__isnull=False)
            )
            if run.cursor:
                wanted = wanted.filter(pk__lt=int(run.cursor))
            room = s2.BATCH_MAX
            if run.params["limit"] is not None:
                room = min(room, run.params["limit"] - asked)
            papers = list(
                wanted.order_by("-pk").values_list("pk", "arxiv_id", "doi")[:room]
            )
            if not papers:
                break
            ids = [f"ARXIV:{a}" if a else f"DOI:{d}" for _, a, d in papers]
            page = s2.s2_papers_batch(http, run.params["base_url"], ids)
            with transaction.atomic():
                harvest_batch(
                    run=run,
                    source="semanticscholar",
                    items=list(s2.split_s2_page(page)),
                    parse=s2.parse_s2_paper,
                )
                asked += len(papers)
                run.params["asked"] = asked
                run.cursor = str(min(pk for pk, _, _ in papers))
                run.save()
            if progress:
                progress(len(papers))
    except SourceError as exc:
        logger.error(
            "harvest run %s failed: %s", run.pk, exc, extra={"harvest_run": run.pk}
        )
        return harvest_run_finish(run=run, error=str(exc))
    finally:
        if own:
            http.close()
    return harvest_run_finish(run=run)


def harvest_arxiv_ids(
    *,
    ids: list[str] | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Fetch some arXiv papers by id from the arXiv API (to backfill or refresh them).

    The ids are asked 100 a page (``id_list``, paged by ``start``); each page's
    entries and the next ``start`` commit together, so a killed run resumes at the
    next page. An id the API does not know is absent from the answer (counted in
    ``params["missing"]``); a malformed id is an API error (HTTP 400) and the run
    fails naming it.

    Args:
        ids: arXiv ids, new or old style, with or without version.
        base_url: the API; "" for ``settings.ARXIV_API_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for arXiv's politeness.
        progress: called with the number of entries of each page.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: arXiv API user manual (``/api/query?id_list=...&start=&max_results=``).
    """
    from harvest.sources import arxiv_atom
    from harvest.sources.polite_http import SourceError

    params = (
        run.params
        if run
        else {
            "mode": "arxiv-api",
            "base_url": base_url or settings.ARXIV_API_URL,
            "ids": list(ids or []),
            "pages": 0,
        }
    )
    run = _live_run(source="arxiv", params=params, run=run, task_id=task_id)
    if run.status == HarvestRun.Status.FINISHED:
        return run
    p = run.params
    try:
        with _client(client, "arxiv") as http:
            for page in arxiv_api_pages_of(http, p, int(run.cursor or 0)):
                with transaction.atomic():
                    harvest_batch(
                        run=run,
                        source="arxiv",
                        items=page.items,
                        parse=arxiv_atom.parse_atom_entry,
                    )
                    p["pages"] = p.get("pages", 0) + 1
                    p["missing"] = max(0, len(p["ids"]) - page.total)
                    run.cursor = str(page.start + len(page.items))
                    run.save()
                if progress:
                    progress(len(page.items))
    except SourceError as exc:
        logger.error(
            "harvest run %s failed: %s", run.pk, exc, extra={"harvest_run": run.pk}
        )
        return harvest_run_finish(run=run, error=str(exc))
    return harvest_run_finish(run=run)


def arxiv_api_pages_of(http: PoliteClient, params: dict, start: int):
    """The arXiv API pages of a run's id list, from ``start``."""
    from harvest.sources.arxiv_atom import arxiv_api_pages

    if not params["ids"]:
        return iter(())
    return arxiv_api_pages(http, params["base_url"], id_list=params["ids"], start=start)
