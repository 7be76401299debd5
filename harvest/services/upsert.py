"""One record into Paper and Authorship, idempotently; the source precedence."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from rapidfuzz import fuzz

from curation import names
from curation.history import (
    event_undone,
    is_id,
    record_source_changes,
    record_source_hiding,
)
from curation.matching.features import given_form
from harvest.models import DepartedSlot
from harvest.records import (
    AuthorRecord,
    InstitutionRecord,
    PaperRecord,
    RecordError,
    clean_record,
    clean_text,
)
from wovepaper.cache import papers_changed, researchers_changed
from wovepaper.models import Authorship, Institution, Paper, Researcher
from wovepaper.search import search_vectors_refresh
from wovepaper.selectors import researcher_survivors
from wovepaper.stats import researcher_stats_queue

logger = logging.getLogger(__name__)

# Paper.latest_version is a PositiveSmallIntegerField (PostgreSQL smallint);
# cited_by_count a PositiveIntegerField (integer).
_MAX_VERSION = 32767
_MAX_COUNT = 2_147_483_647

# Longest title and abstract a record may carry (characters). arXiv takes at most
# 1,920 characters of abstract (arXiv help, "Submission metadata"); Crossref's JATS
# abstracts run longer but not near this. A record past it is junk or hostile (a
# 10 MB abstract would be stored, rendered and indexed), so it is refused by name.
MAX_TITLE_CHARS = 5_000
MAX_ABSTRACT_CHARS = 100_000

# Most authors a record may name. The longest real bylines are 5,154 (ATLAS and
# CMS, "Combined measurement of the Higgs boson mass", Phys. Rev. Lett. 114,
# 191803, 2015) and about 3,000 for a single LHC experiment; twice the record
# is room to grow. A record past it is junk or hostile: every name is a row,
# matched and scored, and the byline is rewritten on each new version.
MAX_AUTHORS = 10_000

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
        "authors_incomplete": record.authors_incomplete,
        "review_flags": list(record.review_flags),
    }


def _check_limits(record: PaperRecord) -> None:
    """Refuse a record whose values cannot be stored, naming the field.

    Raises:
        RecordError: an identifier, category or licence is longer than its
            ``Paper`` column, the title or abstract is longer than
            :data:`MAX_TITLE_CHARS` / :data:`MAX_ABSTRACT_CHARS`, the byline
            names more than :data:`MAX_AUTHORS` authors, a version
            number is out of range, or a citation count is past what the
            column holds. (Authorship
            name fields are cut to their column instead: a long name is still a
            name.)
    """
    if record.cited_by_count is not None and not (
        0 <= record.cited_by_count <= _MAX_COUNT
    ):
        raise RecordError(
            f"{record.external_id}: citation count {record.cited_by_count} is out "
            f"of range 0..{_MAX_COUNT:,}"
        )
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
    if len(record.authors) > MAX_AUTHORS:
        raise RecordError(
            f"{record.external_id}: the byline names {len(record.authors):,} "
            f"authors, at most {MAX_AUTHORS:,} are taken"
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


def paper_upsert(*, record: PaperRecord, record_hash: str = "") -> UpsertResult:
    """Create or update the Paper (and its byline) one parsed record describes.

    Idempotent: the same record twice gives ``unchanged`` the second time. A record of
    an older version than the one stored only adds that version's entry to
    ``versions`` (and an earlier ``published`` date); it never overwrites newer text.
    A deleted record hides the paper. A DOI already held by another paper is not
    taken twice (logged; the arXiv id still unifies the record). When a paper
    changes, the researchers it is applied to have their cached pages dropped
    once the transaction commits (:func:`wovepaper.cache.researchers_changed`):
    a page orders, filters and counts their papers from a cached summary.

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
    result = _paper_upsert(record=record, record_hash=record_hash)
    if result.outcome == "updated":
        # Researchers whose slots the byline sync removed are told there; the
        # lists of researchers found by name catch up as they expire.
        papers_changed([result.paper.pk], listed=False)
    return result


@transaction.atomic
def _paper_upsert(*, record: PaperRecord, record_hash: str = "") -> UpsertResult:
    """:func:`paper_upsert` without telling the researcher pages."""
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
            # Hidden already, by its source or a curator: who hid it stays.
            return UpsertResult(paper, "unchanged")
        paper.hidden = True
        paper.hidden_by = Paper.HiddenBy.SOURCE
        paper.save(update_fields=["hidden", "hidden_by", "modified"])
        record_source_hiding(
            record=_record_label(paper), researcher_ids=_holders(paper), hidden=True
        )
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
        _byline_sync(paper=paper, authors=record.authors, created=True)
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
        if paper.hidden and paper.hidden_by != Paper.HiddenBy.CURATOR:
            # Found again at the source that had deleted it; a paper a
            # curator hid stays hidden whatever its sources say.
            paper.hidden = False
            paper.hidden_by = ""
            record_source_hiding(
                record=_record_label(paper),
                researcher_ids=_holders(paper),
                hidden=False,
            )
        if record.doi and not paper.doi and _doi_free(record.doi, paper.pk):
            paper.doi = record.doi
    if record.arxiv_id and not paper.arxiv_id:
        # Found by DOI (a record from another source came first): take the id.
        paper.arxiv_id = record.arxiv_id
    byline_changed = False
    if newer:
        # What other sources added to the slots (ORCID iDs, OpenAlex author ids,
        # affiliations, institutions) stays with the rows this record keeps.
        byline_changed, authors = _byline_sync(paper=paper, authors=record.authors)
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


def _row_institutions(row: Authorship) -> tuple[InstitutionRecord, ...]:
    """A stored slot's institutions with a ROR id, as records."""
    return tuple(
        InstitutionRecord(
            ror_id=i.ror_id,
            name=i.name,
            country_code=i.country_code,
            types=tuple(i.types),
        )
        for i in row.institutions.all()
        if i.ror_id
    )


def _with_evidence(author: AuthorRecord, row: Authorship | None) -> AuthorRecord:
    """``author`` with the evidence of the stored row that takes its slot
    (:func:`_slots_matched`) where the record has none of that kind: ORCID
    iD, OpenAlex and Semantic Scholar author ids, affiliations, institutions.

    Args:
        author: one author of the record being applied.
        row: the row that follows that person, or None for a new slot.

    Returns:
        The author record, filled.
    """
    if row is None:
        return author
    return replace(
        author,
        orcid=author.orcid or row.orcid,
        openalex_author_id=author.openalex_author_id or row.openalex_author_id,
        s2_author_id=author.s2_author_id or row.s2_author_id,
        affiliations=author.affiliations or tuple(row.affiliations),
        institutions=author.institutions or _row_institutions(row),
    )


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


class _SlotIndex:
    """The person slots of a stored byline, to align another source's byline
    with them (:func:`_byline_enrich`).

    An author takes, of the slots still free with its family-name core
    (particles aside: ``"Der Velde"`` is ``"van der Velde"``), the first in
    byline order that prints the same given name, else the same given name
    folded (:func:`~curation.matching.features.given_form`: ``"Yi-Fan"`` and
    ``"Yifan"``, ``"José"`` and ``"Jose"``), else a compatible one: the order
    the byline sync pairs rows in (:func:`_slots_matched`), so two namesakes
    keep their own evidence when a source prints them in another order or
    with authors inserted before them. Slots are looked up by key and the
    compatible tier stops at the first fit, so aligning two 3,000-author
    bylines costs about 3,000 lookups, not nine million comparisons, even
    where 16 family names share the slots.

    Args:
        slots: ``(position, slot)`` pairs in byline order, 1-based positions; a
            slot is an Authorship (``family_name``, ``given_name``,
            ``is_collaboration``).
    """

    def __init__(self, slots: Iterable[tuple[int, Any]]) -> None:
        self._tiers: tuple[dict[tuple, list[tuple[int, Any]]], ...] = ({}, {}, {})
        self._taken: set[int] = set()
        for position, slot in slots:
            core = "" if slot.is_collaboration else names.family_core(slot.family_name)
            if core:
                for tier, key in zip(
                    self._tiers, self._keys(core, slot.given_name), strict=True
                ):
                    tier.setdefault(key, []).append((position, slot))

    @staticmethod
    def _keys(core: str, given: str) -> tuple[tuple, tuple, tuple]:
        return (core, given), (core, given_form(given)), (core,)

    def take(self, author: AuthorRecord) -> Any | None:
        """The slot that printed ``author``, taken out so no other author gets
        it; None when none fits (a collaboration, an author the stored byline
        lacks: nothing is forced)."""
        if author.is_collaboration:
            return None
        keys = self._keys(names.family_core(author.family_name), author.given_name)
        for n, (tier, key) in enumerate(zip(self._tiers, keys, strict=True)):
            for position, slot in tier.get(key, ()):
                if position in self._taken:
                    continue
                if n < 2 or names.given_names_compatible(
                    slot.given_name, author.given_name
                ):
                    self._taken.add(position)
                    return slot
        return None


def _byline_enrich(*, paper: Paper, authors: list[AuthorRecord]) -> bool:
    """Add a lower-ranked source's ORCID iDs and affiliations to aligned slots.

    A slot keeps what it has: an ORCID already there is not replaced (a
    conflict is for a curator, see :func:`curation.selectors.orcid_conflicts`),
    nor are affiliations. No slot is added, moved or removed.

    Returns:
        Whether any slot changed.
    """
    slots = _SlotIndex((a.position, a) for a in paper.authorships.order_by("position"))
    changed = False
    touched: set[int] = set()
    for author in authors:
        slot = slots.take(author)
        if slot is None:
            continue
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
            if slot.researcher_id:
                touched.add(slot.researcher_id)
        if author.institutions:
            changed = _slot_institutions_add(slot, author.institutions) or changed
    _researchers_evidence_changed(touched)
    return changed


def _researchers_evidence_changed(researcher_ids: Iterable[int]) -> None:
    """Bump the revision of researchers whose authorships a harvest changed.

    A re-harvest that deletes an assigned authorship (its name left the byline),
    or gives one another ORCID iD or affiliation, changes what the matcher knows
    of its researcher: the revision tells matching runs to read the profile
    again (curation.selectors.researcher_snapshot remembers profiles by it) and
    makes pending proposals computed on the old evidence stale (a later run
    proposes them again on the new). Their cached pages are dropped when the
    transaction commits.
    """
    ids = sorted(set(researcher_ids))
    if ids:
        Researcher.objects.filter(pk__in=ids).update(revision=F("revision") + 1)
        _name_variants_refresh(ids)
        # Their public pages count and list the paper from a cached summary;
        # the lists of researchers found by name catch up as they expire.
        transaction.on_commit(lambda: researchers_changed(ids, listed=False))
        researcher_stats_queue(ids)


def _name_variants_refresh(ids: list[int]) -> None:
    """Keep the researchers' name variants to what their authorships print.

    A variant no held authorship prints any more (its row was deleted or
    reprinted by a new version) is dropped, and a form a held row now prints
    is added, as a curator's move adds the forms it brings
    (:meth:`curation.changes.Change.move`). Variants are derived from the
    authorships held, so no curation event records this.
    """
    printed: dict[int, list[str]] = {pk: [] for pk in ids}
    for pk, raw in (
        Authorship.objects.filter(researcher_id__in=ids)
        .order_by("researcher_id", "pk")
        .values_list("researcher_id", "raw_name")
    ):
        printed[pk].append(raw)
    changed = []
    for researcher in Researcher.objects.filter(pk__in=ids).only("name_variants"):
        held = printed[researcher.pk]
        # A JSON list; a row edited by hand may hold anything (then rebuilt).
        stored = researcher.name_variants
        listed = stored if isinstance(stored, list) else []
        variants = [v for v in listed if isinstance(v, str) and v in held]
        variants = list(dict.fromkeys([*variants, *held]))
        if variants != researcher.name_variants:
            researcher.name_variants = variants
            changed.append(researcher)
    Researcher.objects.bulk_update(changed, ["name_variants"])


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


def _byline_sync(
    *, paper: Paper, authors: list[AuthorRecord], created: bool = False
) -> tuple[bool, list[AuthorRecord]]:
    """Make the paper's authorships match a byline.

    Each existing row follows the person printed in it (:func:`_slots_matched`),
    so a curated assignment, a curator's "not this person" and a pending
    proposal stay with their person when a new version reorders the byline or
    prints the name more fully ("Z. Quenwick" -> "Zorblat Q. Quenwick"); so
    does the evidence other sources gave the row, where the byline has none
    (:func:`_with_evidence`). Rows whose person left the byline are deleted.

    A curated row whose person left the byline is kept as a departed slot,
    whose curation comes back with the person (:func:`_departed_keep`,
    :func:`_departed_return`).

    Args:
        created: the paper was created by this upsert (no row, no departed
            slot: nothing to read).

    Returns:
        ``(whether anything changed, the byline's authors with the evidence of
        the rows that follow them)``.
    """
    existing = sorted(
        paper.authorships.prefetch_related("institutions"), key=lambda a: a.position
    )
    named = [_authorship_fields(a) for a in authors]
    in_place = [a.position for a in existing] == list(range(1, len(named) + 1)) and all(
        _printed_as(row, fields) for row, fields in zip(existing, named, strict=True)
    )
    if in_place:
        # Every person where they were, printed the same: the rows stay.
        chosen = {a.position: a for a in existing}
    else:
        constrained = (
            set(
                paper.authorships.filter(constraints__active=True).values_list(
                    "pk", flat=True
                )
            )
            if existing
            else set()
        )
        chosen = _slots_matched(
            existing, named, constrained, known=_researchers_known_as(existing, named)
        )
    authors = [
        _with_evidence(author, chosen.get(pos))
        for pos, author in enumerate(authors, start=1)
    ]
    wanted = [_authorship_fields(a) for a in authors]
    if in_place and all(
        {k: getattr(row, k) for k in fields} == fields
        for row, fields in zip(existing, wanted, strict=True)
    ):
        return False, authors
    kept = {a.pk for a in chosen.values()}
    gone = [a.pk for a in existing if a.pk not in kept]
    departed = []
    for a in existing:
        if a.pk not in kept and a.researcher_id:
            # A researcher loses a paper: say so, in the log and in its
            # curation history (record_source_changes, below).
            departed.append((a.pk, a.researcher_id, a.raw_name))
            logger.warning(
                "%s: %r (authorship %s of researcher %s) is not in the new byline; "
                "its slot is deleted",
                paper.arxiv_id or paper.doi or paper.pk,
                a.raw_name,
                a.pk,
                a.researcher_id,
                extra={"paper": paper.pk, "researcher": a.researcher_id},
            )
    returning = {} if created else _departed_return(paper, wanted, chosen)
    if gone:
        _departed_keep(paper, [a for a in existing if a.pk not in kept])
        Authorship.objects.filter(pk__in=gone).delete()
    if existing:
        paper.authorships.filter(pk__in=kept).update(
            position=F("position") + _POSITION_SHIFT
        )
    Authorship.objects.bulk_create(
        Authorship(paper=paper, position=pos, **fields)
        for pos, fields in enumerate(wanted, start=1)
        if pos not in chosen and pos not in returning
    )
    back, stayed_off = _departed_restore(paper, wanted, returning)
    if chosen:
        _rows_rewrite(chosen, wanted)
    record_source_changes(
        record=_record_label(paper),
        departed=departed,
        returned=back,
        stayed_off=stayed_off,
    )
    # The assigned rows were deleted, moved or rewritten: their researchers'
    # evidence may have changed; so did that of researchers a slot came back to.
    _researchers_evidence_changed(
        [a.researcher_id for a in existing if a.researcher_id]
        + [rid for _, rid, _ in back]
    )
    return True, authors


def _holders(paper: Paper) -> list[int]:
    """The researchers holding a slot of a paper (one query)."""
    return list(
        paper.authorships.exclude(researcher=None)
        .values_list("researcher_id", flat=True)
        .distinct()
    )


def _record_label(paper: Paper) -> str:
    """A paper as its sources name it: "arXiv:0704.0033", "doi:10.…",
    "OpenAlex W3173724963", or "paper 12" for none of them."""
    if paper.arxiv_id:
        return f"arXiv:{paper.arxiv_id}"
    if paper.doi:
        return f"doi:{paper.doi}"
    if paper.openalex_id:
        return f"OpenAlex {paper.openalex_id}"
    return f"paper {paper.pk}"


def _departed_keep(paper: Paper, rows: list[Authorship]) -> None:
    """Keep the curation of the slots about to be deleted (a researcher, or a
    curator's constraint) as :class:`~harvest.models.DepartedSlot` rows; a
    slot nobody curated is not kept."""
    from curation.models import Constraint

    held: dict[int, list[dict]] = {}
    for c in Constraint.objects.filter(authorship__in=[a.pk for a in rows]).values(
        "id",
        "authorship_id",
        "kind",
        "researcher_id",
        "other_researcher_id",
        "event_id",
        "active",
        "created",
    ):
        held.setdefault(c.pop("authorship_id"), []).append(
            {
                "id": c["id"],
                "kind": c["kind"],
                "researcher": c["researcher_id"],
                "other_researcher": c["other_researcher_id"],
                "event": c["event_id"],
                "active": c["active"],
                # Whether its event stood undone when the slot left: an undo
                # or redo while it is away reaches no row (_departed_restore).
                "undone": event_undone(event_id=c["event_id"]),
                "created": c["created"].isoformat(),
            }
        )
    DepartedSlot.objects.bulk_create(
        DepartedSlot(
            paper=paper,
            authorship_id=a.pk,
            position=a.position,
            raw_name=a.raw_name,
            given_name=a.given_name,
            family_name=a.family_name,
            name_key=a.name_key,
            researcher_id=a.researcher_id,
            constraints=held.get(a.pk, []),
        )
        for a in rows
        if a.name_key and (a.researcher_id or a.pk in held)
    )


def _departed_return(
    paper: Paper, wanted: list[dict], chosen: dict[int, Authorship]
) -> dict[int, DepartedSlot]:
    """The new slots (positions no row took) that print a person whose
    curated slot an earlier version deleted: the same block key, given names
    that can be one person's with the slot's and with the full names its
    researcher is known by; a slot prints the name that researcher is known
    by first (:func:`_fits_known`), then the departed slots by their old
    position, the new ones in byline order. One query when the byline has
    new slots, and one more when a departed slot is curated.

    Returns:
        ``{position: DepartedSlot}``.
    """
    free = [pos for pos in range(1, len(wanted) + 1) if pos not in chosen]
    if not free:
        return {}
    departed = list(paper.departed_slots.order_by("position", "pk"))
    if not departed:
        return {}
    known = _known_names(
        {
            d.researcher_id: names.fold(d.family_name)
            for d in departed
            if d.researcher_id
        }
    )
    found: dict[int, DepartedSlot] = {}
    for pos in free:
        fields = wanted[pos - 1]
        if not fields["name_key"]:
            continue
        pinyin = names.reads_as_pinyin(fields["family_name"])
        scored = [
            (fit, -n, d)
            for n, d in enumerate(departed)
            if names.block_key(d.given_name, d.family_name) == fields["block_key"]
            and (
                d.given_name == fields["given_name"]
                or names.given_names_compatible(
                    d.given_name, fields["given_name"], pinyin=pinyin
                )
            )
            for fit in [
                _fits_known(
                    [g for g in known.get(d.researcher_id, ()) if _first_name(g)],
                    fields["given_name"],
                    fields["family_name"],
                )
            ]
            if fit > 0
        ]
        if scored:
            slot = max(scored, key=lambda x: (x[0], x[1]))[2]
            found[pos] = slot
            departed.remove(slot)
    return found


def _readable_constraints(departed: DepartedSlot) -> list[dict]:
    """The constraints a departed slot holds, as :func:`_departed_keep` wrote
    them; an entry of another shape (a row edited by hand) is left out and
    logged, costing itself, not the harvest. ``created`` reads None when it
    is not an ISO 8601 time."""
    kinds = {"must_link", "cannot_link"}
    out = []
    entries = departed.constraints if isinstance(departed.constraints, list) else []
    for c in entries:
        if not (
            isinstance(c, dict)
            and all(is_id(c.get(k)) for k in ("id", "researcher", "event"))
            and (c.get("other_researcher") is None or is_id(c["other_researcher"]))
            and c.get("kind") in kinds
            and isinstance(c.get("active"), bool)
        ):
            logger.warning(
                "departed slot %s: constraint %r cannot be read; left out",
                departed.pk,
                c,
                extra={"paper": departed.paper_id},
            )
            continue
        try:
            created = dt.datetime.fromisoformat(c.get("created"))
        except (TypeError, ValueError):
            created = None
        out.append(
            {
                **{k: c[k] for k in ("id", "kind", "researcher", "event", "active")},
                "other_researcher": c.get("other_researcher"),
                "undone": c.get("undone") is True,
                "created": created,
            }
        )
    return out


def _departed_restore(
    paper: Paper, wanted: list[dict], returning: dict[int, DepartedSlot]
) -> list[int]:
    """Create the returning slots' rows with their curation back, then
    forget the departed slots: the row's own id (when free), so the events
    that moved it reach it; the researcher the slot had (its survivor when
    merged away since; none when retired, gone, or holding another slot of
    the paper by then); its constraint rows under their own ids and events
    (one whose researcher or event is gone, or whose id is taken, is not
    brought back; one whose event was undone or redone meanwhile follows
    the event's state now: :func:`curation.history.event_undone`). About
    four queries a slot, and one for each link of an undo chain.

    Returns:
        ``(back, stayed_off)``: ``[(authorship id, researcher id, printed
        name)]`` of the slots that came back to a researcher, and
        ``[(authorship id, researcher id, printed name, why)]`` of those whose
        researcher could not take them back (retired, or holding another slot
        of the paper by then).
    """
    from curation.models import Constraint, CurationEvent

    if not returning:
        return [], []
    held = {pos: _readable_constraints(d) for pos, d in returning.items()}
    named = [c for cs in held.values() for c in cs]
    ids = {d.researcher_id for d in returning.values() if d.researcher_id} | {
        c["researcher"] for c in named if c["kind"] == Constraint.Kind.MUST_LINK
    }
    survivors = researcher_survivors(ids)
    live = set(
        Researcher.objects.live()
        .filter(pk__in={survivors.get(pk, pk) for pk in ids})
        .values_list("pk", flat=True)
    )
    existing = set(
        Researcher.objects.filter(
            pk__in={
                pk for c in named for pk in (c["researcher"], c["other_researcher"])
            }
            - {None}
        ).values_list("pk", flat=True)
    )
    events = set(
        CurationEvent.objects.filter(pk__in={c["event"] for c in named}).values_list(
            "pk", flat=True
        )
    )
    taken = set(
        Constraint.objects.filter(pk__in={c["id"] for c in named}).values_list(
            "pk", flat=True
        )
    )
    holding = set(_holders(paper))
    taken_rows = set(
        Authorship.objects.filter(
            pk__in=[d.authorship_id for d in returning.values() if d.authorship_id]
        ).values_list("pk", flat=True)
    )
    back: list[tuple[int, int, str]] = []
    stayed_off: list[tuple[int, int, str, str]] = []
    for pos, departed in sorted(returning.items()):
        kept = [
            c
            for c in held[pos]
            if c["researcher"] in existing
            and (c["other_researcher"] is None or c["other_researcher"] in existing)
            and c["event"] in events
            and c["id"] not in taken
        ]
        for c in kept:
            # An undo or redo of its event while the slot was away reached no
            # row: its state follows the event's now.
            now = event_undone(event_id=c["event"])
            if now != c["undone"]:
                c["active"] = not now
        # The researcher its latest standing must-link names, which an undo
        # while away may have changed (a merge undone: back to the merged-away
        # researcher), else the one it had; either's survivor when merged.
        linked = sorted(
            (c["id"], c["researcher"])
            for c in kept
            if c["kind"] == Constraint.Kind.MUST_LINK and c["active"]
        )
        holder = None
        had = survivors.get(departed.researcher_id, departed.researcher_id)
        why = f"researcher {had} was retired meanwhile"
        for pk in [r for _, r in linked[-1:]] + [departed.researcher_id]:
            pk = survivors.get(pk, pk)
            if pk in live:
                holder = pk
                break
        if holder in holding:
            # A researcher holds one slot of a paper: it took another since.
            why = f"researcher {holder} holds another slot of the paper by now"
            holder = None
        holding.add(holder)
        # The row's own id when free (ids are never reused): the events that
        # moved it reach it again, and so does their undo.
        old = departed.authorship_id
        row = Authorship.objects.create(
            **({"id": old} if old and old not in taken_rows else {}),
            paper=paper,
            position=pos,
            researcher_id=holder,
            **wanted[pos - 1],
        )
        Constraint.objects.bulk_create(
            Constraint(
                id=c["id"],
                kind=c["kind"],
                researcher_id=c["researcher"],
                authorship=row,
                other_researcher_id=c["other_researcher"],
                event_id=c["event"],
                active=c["active"],
            )
            for c in kept
        )
        for c in kept:
            if c["created"] is not None:
                # auto_now_add stamped them now: they date from the decision.
                Constraint.objects.filter(pk=c["id"]).update(created=c["created"])
        if holder:
            back.append((row.pk, holder, row.raw_name))
        elif had:
            stayed_off.append((row.pk, had, row.raw_name, why))
        logger.info(
            "%s: %r is back in the byline at %s; its slot's curation returns "
            "(researcher %s, %d constraint(s))",
            paper.arxiv_id or paper.doi or paper.pk,
            wanted[pos - 1]["raw_name"],
            pos,
            holder,
            len(kept),
            extra={"paper": paper.pk, "researcher": holder},
        )
    DepartedSlot.objects.filter(pk__in=[d.pk for d in returning.values()]).delete()
    return back, stayed_off


def _printed_as(row: Authorship, fields: dict) -> bool:
    """Whether a stored row prints the name a new slot's fields print, and no
    other ORCID iD (two "J. Smith" printing their iDs in the other order are
    not in place)."""
    return all(
        getattr(row, k) == fields[k]
        for k in ("raw_name", "given_name", "family_name", "name_key")
    ) and not (row.orcid and fields["orcid"] and row.orcid != fields["orcid"])


def _namesake_keys(existing: list[Authorship], wanted: list[dict]) -> set[str]:
    """Block keys printed by two or more people of the paper, in the stored
    byline or the new one, and by at least one in each: where rows and slots
    cannot be paired by the key alone."""
    rows = Counter(a.block_key for a in existing if a.name_key and a.block_key)
    slots = Counter(f["block_key"] for f in wanted if f["name_key"] and f["block_key"])
    return {k for k in rows.keys() & slots.keys() if rows[k] > 1 or slots[k] > 1}


def _researchers_known_as(
    existing: list[Authorship], wanted: list[dict]
) -> dict[int, tuple[str, ...]]:
    """The given names the researchers holding rows are known by, where
    printed names alone may not pair the rows right: a row of a namesake
    block key (:func:`_namesake_keys`), and an assigned row whose given name
    no slot of its block key prints any more ("A. G. Hoekstra" of Alfons
    printed "Anna Hoekstra" next). Their display name and name variants under
    the row's family name. One query, and none on a byline whose assigned
    rows print their names as before.

    Returns:
        ``{researcher id: (given name, ...)}``.
    """
    keys = _namesake_keys(existing, wanted)
    printed = {(f["block_key"], f["given_name"]) for f in wanted if f["name_key"]}
    return _known_names(
        {
            row.researcher_id: names.fold(row.family_name)
            for row in existing
            if row.researcher_id
            and row.name_key
            and (
                row.block_key in keys or (row.block_key, row.given_name) not in printed
            )
        }
    )


def _known_names(family: dict[int, str]) -> dict[int, tuple[str, ...]]:
    """The given names researchers are known by (display name and name
    variants), read under one family name each (``{researcher id: folded
    family name}``). One query; none for no researcher.

    Returns:
        ``{researcher id: (given name, ...)}``.
    """
    if not family:
        return {}
    known: dict[int, tuple[str, ...]] = {}
    for pk, display, variants in Researcher.objects.filter(
        pk__in=list(family)
    ).values_list("pk", "display_name", "name_variants"):
        # name_variants is a JSON list; a row edited by hand may hold anything.
        listed = variants if isinstance(variants, list) else []
        printed = [display, *(v for v in listed if isinstance(v, str))]
        read = (names.parse_name(text) for text in printed if isinstance(text, str))
        known[pk] = tuple(
            dict.fromkeys(
                p.given for p in read if p.given and names.fold(p.family) == family[pk]
            )
        )
    return known


def _first_name(given: str) -> str:
    """The first word of a folded given name, or "" when it is an initial."""
    word = re.split(r"[\s.\-]+", names.fold(given).strip())[0] if given else ""
    return word if len(word) > 1 else ""


def _fits_known(known: list[str], given: str, family: str) -> int:
    """How a printed given name fits the full given names a researcher is
    known by: 3 printed alike (:func:`given_form`), 2 the same first word and
    one person's (:func:`curation.names.given_names_compatible`; not for a
    pinyin family name, whose syllables many people share), 1 nothing known,
    0 one person's with none of them ("Jane" for a researcher known as
    "John Smith")."""
    if not known:
        return 1
    if given_form(given) in {given_form(g) for g in known}:
        return 3
    pinyin = names.reads_as_pinyin(family)
    if not any(names.given_names_compatible(g, given, pinyin=pinyin) for g in known):
        return 0
    first = _first_name(given)
    if first and not pinyin and first in {_first_name(g) for g in known}:
        return 2
    return 1


def _may_be_known_as(known: list[str], given: str, family: str) -> bool:
    """Whether a printed given name can be one of the full given names a
    researcher is known by: one person's (:func:`_fits_known`), nothing known,
    or a first name written another way, respelled ("Yuri" for "Yury",
    "Jürgen" for "Juergen", "Aleksandr" for "Alexander": :func:`_respelled`)
    or shortened ("Alf" for "Alfons", "Chris" for "Christopher": one first
    name of three letters or more begins the other). Not for a family name
    read as pinyin, whose syllables differ by a letter between people
    ("Jian"/"Jiang")."""
    if _fits_known(known, given, family) > 0:
        return True
    if names.reads_as_pinyin(family):
        return False
    first = _first_name(given)
    for other in {_first_name(g) for g in known} - {""}:
        short, long = sorted((first, other), key=len)
        if len(short) >= 3 and long.startswith(short):
            return True
        if first and _respelled(other, first, family):
            return True
    return False


def _namesakes_told_apart(
    free: dict[int, Authorship],
    wanted: list[dict],
    chosen: dict[int, Authorship],
    known: dict[int, tuple[str, ...]],
) -> None:
    """Pass 0 of :func:`_slots_matched`: pair the rows and slots of namesake
    block keys (:func:`_namesake_keys`) that an iD or a known given name
    tells apart, taking them from ``free`` into ``chosen``.

    A row tells itself apart by its ORCID iD or the full given names its
    researcher is known by (``known``; the printed initials a move adds to
    the variants fit every namesake). In turn: rows and slots of one iD;
    then of one given name printed alike (:func:`given_form`); then of one
    first word, where the names can be one person's (never "Jean-Pierre"
    for "Jean-Paul"). Within a group a slot takes the row that printed its
    given name so, else the first in byline order (two profiles known as
    "Jane Smith" take the two "Jane Smith" slots);
    a row and a slot printing different iDs never pair. So "J. Smith,
    J. Smith" on Jane and John, printed "John Smith, Jane Smith", or
    "J. Smith, Jane Smith", or "John Smith" alone, follow their people;
    what nothing tells apart is left to the later passes. Lookups are by
    key, so a 3,000-author byline stays linear.
    """
    keys = _namesake_keys(list(free.values()), wanted)
    if not keys:
        return
    rows_of: list[tuple[Authorship, str, list[str]]] = []
    for row in sorted(free.values(), key=lambda r: r.position):
        if row.block_key in keys and row.name_key:
            full = [g for g in known.get(row.researcher_id, ()) if _first_name(g)]
            if row.orcid or full:
                rows_of.append((row, row.orcid, full))
    if not rows_of:
        return

    def no_other_id(row: Authorship, fields: dict) -> bool:
        return not (row.orcid and fields["orcid"] and row.orcid != fields["orcid"])

    def level(row_values, slot_value, fits) -> None:
        rows_by: dict[tuple, list[Authorship]] = {}
        for row, orcid, full in rows_of:
            for value in row_values(row, orcid, full):
                rows_by.setdefault((row.block_key, value), []).append(row)
        for pos, fields in enumerate(wanted, start=1):
            if pos in chosen or fields["block_key"] not in keys:
                continue
            value = slot_value(fields)
            if not value or not fields["name_key"]:
                continue
            group = [
                r
                for r in rows_by.get((fields["block_key"], value), ())
                if r.pk in free and fits(r, fields)
            ]
            # Among equals, the row that printed the name so ("Yifan" and
            # "Yi-Fan" fold alike), then byline order.
            row = next(
                (r for r in group if r.given_name == fields["given_name"]),
                group[0] if group else None,
            )
            if row is not None:
                chosen[pos] = row
                del free[row.pk]

    full_of = {row.pk: full for row, _, full in rows_of}
    level(
        lambda r, orcid, full: [orcid] if orcid else [],
        lambda f: f["orcid"],
        lambda r, f: True,
    )
    level(
        lambda r, orcid, full: {given_form(g) for g in full},
        lambda f: given_form(f["given_name"]),
        no_other_id,
    )
    level(
        lambda r, orcid, full: (
            set()
            if names.reads_as_pinyin(r.family_name)
            else {_first_name(g) for g in full}
        ),
        lambda f: (
            ""
            if names.reads_as_pinyin(f["family_name"])
            else _first_name(f["given_name"])
        ),
        lambda r, f: (
            no_other_id(r, f)
            and _fits_known(full_of[r.pk], f["given_name"], f["family_name"]) >= 2
        ),
    )


def _slots_matched(
    existing: list[Authorship],
    wanted: list[dict],
    constrained: set[int],
    *,
    known: dict[int, tuple[str, ...]] | None = None,
) -> dict[int, Authorship]:
    """Which existing row takes which slot (1-based position) of a new byline.

    In turn, each pass taking only rows and slots still free:
        0. namesakes told apart (:func:`_namesakes_told_apart`): where a
           byline prints two or more people of one block key, before or
           after, a row and a slot that an ORCID iD or the given name the
           row's researcher is known by pair surely;
        1. the same printed name (a collaboration: the same raw string);
        2. the same name key (family + initials);
        3. the same block key (family core + first initial): "Z." becomes
           "Zorblat Q.".
    Passes 2 and 3 also need given names that can be one person's
    (:func:`curation.names.given_names_compatible`: "Jian" and "Jie" Wang share
    the key "wang|j", not the person), and, for an assigned row, a given
    name that can be one of the full names its researcher is known by
    (``known``; :func:`_may_be_known_as`, respellings and short forms
    included): "A. G." fits "Anna" but its researcher, Alfons G. Hoekstra,
    does not; then
        4. a curated row (assigned, or named by a curator's constraint) left
           over keeps the slot at its own position if it has the same name
           key and its given name reads as respelled (:func:`_respelled`):
           "Aleksandr" -> "Alexander" at the same place in the byline is the
           same person far more often than another one.
    Within a key, rows and slots pair in byline order (two "J. Smith" keep
    their order when a name is inserted before them); with more rows than
    slots, assigned and constrained rows first. A row left over is deleted,
    its person left the byline, and a slot left over gets a new row: a row
    never passes to someone else, so neither do its researcher, its
    constraints or its pending proposals.
    Rows are looked up by key, so a 3,000-author byline costs linear time.

    Args:
        existing: the paper's authorship rows.
        wanted: the new byline's fields, by position - 1.
        constrained: ids of rows a curator's active constraint names.
        known: the given names researchers are known by
            (:func:`_researchers_known_as`); None knows none.

    Returns:
        ``{position: row}``.
    """
    chosen: dict[int, Authorship] = {}
    free = {a.pk: a for a in existing}
    known = known or {}

    def one_person(row: Authorship, fields: dict) -> bool:
        if row.given_name == fields["given_name"]:
            return True
        if not names.given_names_compatible(
            row.given_name,
            fields["given_name"],
            pinyin=names.reads_as_pinyin(fields["family_name"]),
        ):
            return False
        # An assigned row printing initials fits every given name of them;
        # its researcher's full names may not ("A. G." of Alfons Hoekstra
        # printed "Anna" next: the row departs, a new one takes Anna).
        full = [g for g in known.get(row.researcher_id, ()) if _first_name(g)]
        return _may_be_known_as(full, fields["given_name"], fields["family_name"])

    def printed(name_key: str, given: str, family: str, raw: str) -> tuple:
        return ("person", given, family) if name_key else ("group", raw)

    def follow(row_key, slot_key, check: bool) -> None:
        rows_by: dict = {}
        for row in sorted(free.values(), key=lambda r: r.position):
            key = row_key(row)
            if key:
                rows_by.setdefault(key, []).append(row)
        slots_by: dict = {}
        for pos, fields in enumerate(wanted, start=1):
            key = slot_key(fields) if pos not in chosen else None
            if key:
                slots_by.setdefault(key, []).append(pos)
        for key, positions in slots_by.items():
            rows = rows_by.get(key, [])
            if len(rows) > len(positions):
                # Fewer slots than rows: the curated rows stay, in byline order.
                keep = sorted(
                    rows,
                    key=lambda r: (
                        not (r.researcher_id or r.pk in constrained),
                        r.position,
                    ),
                )[: len(positions)]
                rows = sorted(keep, key=lambda r: r.position)
            for pos in positions:
                fields = wanted[pos - 1]
                row = next(
                    (
                        r
                        for r in rows
                        if r.pk in free and (not check or one_person(r, fields))
                    ),
                    None,
                )
                if row is not None:
                    chosen[pos] = row
                    del free[row.pk]

    _namesakes_told_apart(free, wanted, chosen, known)
    follow(
        lambda r: printed(r.name_key, r.given_name, r.family_name, r.raw_name),
        lambda f: printed(
            f["name_key"], f["given_name"], f["family_name"], f["raw_name"]
        ),
        check=False,
    )
    follow(lambda r: r.name_key, lambda f: f["name_key"], check=True)
    follow(
        lambda r: r.name_key and r.block_key,
        lambda f: f["name_key"] and f["block_key"],
        check=True,
    )
    # 4. A curated row (assigned, or named by a curator's constraint) still
    # free keeps the slot at its own position when that slot is free, has
    # the same name key and a given name respelled, not another one
    # (_respelled): "Aleksandr" -> "Alexander" Petrov, which the name rules
    # do not read as one person's. Deleting it took the paper off a locked
    # researcher (hostile trial).
    for row in sorted(free.values(), key=lambda r: r.position):
        fields = wanted[row.position - 1] if row.position <= len(wanted) else None
        if (
            (row.researcher_id or row.pk in constrained)
            and fields is not None
            and row.position not in chosen
            and row.name_key
            and row.name_key == fields["name_key"]
            and _respelled(row.given_name, fields["given_name"], fields["family_name"])
        ):
            chosen[row.position] = row
            del free[row.pk]
    return chosen


# The least similarity (rapidfuzz's normalised Indel ratio, 0 to 100) of two
# folded given names read as one respelled (:func:`_respelled`): transliteration
# variants reach it ("Aleksandr"/"Alexander" 77.8, "Yuri"/"Yury" 75.0,
# "Sergei"/"Sergey" 83.3), names apart do not ("Jane"/"John" 50.0, "Jian"/"Jie"
# 57.1).
RESPELLED_RATIO = 75.0


def _respelled(old: str, new: str, family: str) -> bool:
    """Whether a slot's given name, printed ``new`` by a later version, is
    ``old`` respelled rather than another person's. Never for a family name
    read as pinyin, whose given names are short syllables that differ by a
    letter between people ("Jian"/"Jiang" 88.9)."""
    if names.reads_as_pinyin(family):
        return False
    return fuzz.ratio(names.fold(old), names.fold(new)) >= RESPELLED_RATIO


def _rows_rewrite(chosen: dict[int, Authorship], wanted: list[dict]) -> None:
    """Give kept authorship rows their new position and fields, in one batch.

    One parameterised UPDATE run for all rows (psycopg pipelines it):
    Django's ``bulk_update`` builds a CASE per field and took 20 s for a
    3,000-author byline.
    """
    names = list(wanted[0])
    json_fields = {"affiliations"}
    cast = "::jsonb" if connection.vendor == "postgresql" else ""
    sets = ", ".join(
        f"{name} = %s{cast if name in json_fields else ''}" for name in names
    )
    # Table and column names are the model's own; every value is a parameter.
    sql = (
        f"UPDATE {Authorship._meta.db_table} SET position = %s, modified = %s, "  # noqa: S608
        f"{sets} WHERE id = %s"
    )
    now = timezone.now()
    params = [
        [
            pos,
            now,
            *(
                json.dumps(wanted[pos - 1][n])
                if n in json_fields
                else wanted[pos - 1][n]
                for n in names
            ),
            row.pk,
        ]
        for pos, row in chosen.items()
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)
