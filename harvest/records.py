"""The common record shape every source parser produces (no ORM here).

A parser turns one raw record (one ``.abs`` file, one OAI-PMH ``<record>``) into a
:class:`PaperRecord`; :mod:`harvest.services` upserts it into the core models.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field, fields, is_dataclass, replace
from datetime import date, datetime
from pathlib import Path

from wovepaper import identifiers
from wovepaper.xmlchars import NONCHARACTERS

logger = logging.getLogger(__name__)


class RecordError(ValueError):
    """One raw record cannot be parsed; the message names the record and the problem."""


class NotARecordFile(RecordError):
    """A file holds no records of the kind asked for (e.g. a JSON map of notes).

    Such a file is skipped and listed on the run; it is not a rejected record.
    """


@dataclass(frozen=True)
class InstitutionRecord:
    """An institution a source ties a byline slot to.

    Attributes:
        ror_id: bare ROR id (``05dxps055``).
        name: the source's display name.
        country_code: ISO 3166-1 alpha-2 or "".
        types: ROR / OpenAlex types (``("education",)``).
    """

    ror_id: str
    name: str
    country_code: str = ""
    types: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuthorProfileRecord:
    """An author profile as a source keeps it (an OpenAlex or S2 author).

    Evidence about the people behind byline slots carrying ``external_id``: the
    ORCID the source links to the profile, the names it has seen, its
    institutions. A source's own disambiguation made the profile, so it is
    evidence, not a curated researcher.

    Attributes:
        source: ``"openalex"`` or ``"semanticscholar"``.
        external_id: the id asked for (``A5023888391``, ``"2262347"``).
        name: the display name ("" for a tombstone).
        aliases: other names the source has seen, without ``name``.
        orcid: bare ORCID iD or "".
        ror_ids: ROR ids of the profile's institutions, most recent first.
        affiliations: affiliation strings (Semantic Scholar gives no ROR ids).
        works_count: papers the source attributes to it, or None.
        merged_into: the id the source now answers for ``external_id`` (OpenAlex
            merged the two profiles), or "".
        deleted: the source no longer has the profile (OpenAlex's "Deleted
            Author", Semantic Scholar's ``null``).
    """

    source: str
    external_id: str
    name: str = ""
    aliases: tuple[str, ...] = ()
    orcid: str = ""
    ror_ids: tuple[str, ...] = ()
    affiliations: tuple[str, ...] = ()
    works_count: int | None = None
    merged_into: str = ""
    deleted: bool = False


@dataclass(frozen=True)
class AuthorRecord:
    """One byline slot as a source printed it.

    Attributes:
        raw_name: the name as printed, LaTeX already turned into Unicode
            (``"Balázs, C."`` or ``"C. Balázs"``); for a collaboration its name.
        given_name: given names / initials as printed (``"C."``), "" if none.
        family_name: family name with its particles (``"van der Velde"``).
        suffix: ``"Jr."``, ``"III"`` ... or "".
        affiliations: raw affiliation strings, in source order.
        orcid: bare ORCID iD ``0000-0002-1825-0097`` or "".
        is_collaboration: a collaboration or consortium, not a person.
        openalex_author_id: OpenAlex author id (``A5023888391``) or "".
        institutions: institutions the source ties the slot to (with ROR ids).
        s2_author_id: Semantic Scholar author id (``"2262347"``) or "".
    """

    raw_name: str
    given_name: str = ""
    family_name: str = ""
    suffix: str = ""
    affiliations: tuple[str, ...] = ()
    orcid: str = ""
    is_collaboration: bool = False
    openalex_author_id: str = ""
    institutions: tuple[InstitutionRecord, ...] = ()
    s2_author_id: str = ""


@dataclass(frozen=True)
class VersionRecord:
    """One arXiv version: number (1-based), submission time (aware UTC), size text."""

    version: int
    submitted: datetime | None
    size: str = ""


@dataclass
class PaperRecord:
    """One work as one source described it.

    Attributes:
        source: ``"arxiv"``.
        external_id: the source's id of the record, e.g. ``"hep-th/9901001v3"``.
        arxiv_id: arXiv id without version (``"0704.0001"``, ``"hep-th/9901001"``).
        version: the version this record describes (1-based), the latest it knows.
        versions: every version the record lists, oldest first.
        published: date of version 1; updated: date of the latest version.
        datestamp: the source's own update time of the record (OAI-PMH datestamp).
        categories: arXiv categories, primary first.
        deleted: the source says the record is deleted (OAI ``status="deleted"``).
        withdrawn: the latest version withdraws the paper.
        published_precision: how much of ``published`` the source gave: ``"day"``,
            ``"month"`` or ``"year"`` (Crossref ``[[2019]]`` is 2019-01-01, "year").
        cited_by_count: citations the source counts (Crossref
            ``is-referenced-by-count``, OpenAlex ``cited_by_count``), or None.
        openalex_id: the OpenAlex work id (``W2741809807``) or "".
        s2_id: the Semantic Scholar paperId (40 hex characters) or "".
        authors_incomplete: the source says its byline lists only some of the
            authors (arXiv's "et al.", "and others", "additional authors not
            shown").
        review_flags: what a curator should look at in this record, e.g.
            ``"possible repeated author"``
            (:mod:`harvest.sources.repeated_authors`).
    """

    source: str
    external_id: str
    title: str
    authors: list[AuthorRecord] = field(default_factory=list)
    arxiv_id: str = ""
    doi: str = ""
    version: int = 1
    versions: list[VersionRecord] = field(default_factory=list)
    abstract: str = ""
    published: date | None = None
    updated: date | None = None
    datestamp: date | None = None
    categories: list[str] = field(default_factory=list)
    journal_ref: str = ""
    comments: str = ""
    report_no: str = ""
    license: str = ""
    deleted: bool = False
    withdrawn: bool = False
    published_precision: str = "day"
    cited_by_count: int | None = None
    openalex_id: str = ""
    s2_id: str = ""
    authors_incomplete: bool = False
    review_flags: tuple[str, ...] = ()

    @property
    def primary_category(self) -> str:
        """The first category, or "" when there is none."""
        return self.categories[0] if self.categories else ""


@dataclass(frozen=True)
class RawItem:
    """One raw record cut out of a file, before parsing.

    Attributes:
        external_id: the record's id if it could be read, else a locator such as
            ``"file:arxiv/abs_files/ftp/.../0509037.abs"`` or ``"<file>#record-3"``.
        payload: the raw text of the record exactly as read (for RawRecord).
        locator: where it came from (file path, and record index inside the file).
        problem: a defect found while reading (e.g. ``"invalid UTF-8 at byte
            offset 731"``); "" when none. A parser raises RecordError for it.
    """

    external_id: str
    payload: str
    locator: str
    problem: str = ""


def decode_utf8(data: bytes) -> tuple[str, str]:
    """Text of ``data`` read as UTF-8, and what was wrong with it.

    Returns:
        ``(text, "")``, or for bytes that are not UTF-8 the text with
        replacement characters and ``"invalid UTF-8 at byte offset N"`` (the
        first bad byte), so the raw text is kept and its parse fails naming it.
    """
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        return (
            data.decode("utf-8", errors="replace"),
            f"invalid UTF-8 at byte offset {exc.start}",
        )


def unreadable_item(path: Path, root: Path | None, exc: Exception) -> RawItem:
    """The RawItem of a file that could not be read or cut into records: kept
    with what text could be read (undecodable bytes replaced; none when the
    file cannot be opened) and the problem, so its parse fails naming it.

    Args:
        path: the file.
        root: the folder its locator is relative to, or None.
        exc: what went wrong; a RecordError's message is kept as it is, any
            other error becomes ``"<locator>: unreadable file (<type>: <message>)"``
            (the message cut to 200 characters).
    """
    locator = file_locator(path, root)
    problem = (
        str(exc)
        if isinstance(exc, RecordError)
        else f"{locator}: unreadable file ({type(exc).__name__}: {str(exc)[:200]})"
    )
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:  # unreadable (permissions, vanished): kept without text
        text = ""
    return RawItem(
        external_id=f"file:{locator}", payload=text, locator=locator, problem=problem
    )


def file_locator(path: Path, root: Path | None) -> str:
    """Name a file for errors and RawRecords: relative to ``root`` when inside it.

    Args:
        path: the file.
        root: the folder locators are relative to, or None.

    Returns:
        A POSIX path such as ``"arxiv/abs_files/ftp/math-ph/papers/0509/0509037.abs"``;
        ``str(path)`` when ``root`` is None or does not contain ``path``.
    """
    name = path.as_posix()
    if root is not None:
        # Path.relative_to's own test, on the parts: 1.1 us a file against its
        # 7.1 us (Python 3.11); a harvest names every file it reads.
        parts, base = path.parts, root.parts
        if parts[: len(base)] == base and (base or not path.anchor):
            name = "/".join(parts[len(base) :]) or "."
    # A file name that is not UTF-8 arrives with surrogate escapes; name it readably.
    return clean_text(name)


# C0 control characters other than tab, newline and carriage return, and DEL: never
# part of metadata text, refused by PostgreSQL (NUL) or harmful on a terminal (ESC);
# and Unicode's noncharacters, which XML cannot carry (wovepaper.xmlchars).
_CONTROL_RE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f{NONCHARACTERS}]")
# Lone UTF-16 surrogates: valid in a Python str (from JSON "\ud800" or a file name
# decoded with surrogateescape), not encodable as UTF-8.
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
_UNCLEAN_RE = re.compile(
    f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff{NONCHARACTERS}]"
)


def _unclean(text: str) -> bool:
    """Whether :func:`clean_text` would change the text (one scan and the
    quick NFC check, usually)."""
    return bool(_UNCLEAN_RE.search(text)) or not unicodedata.is_normalized("NFC", text)


def clean_text(text: str) -> str:
    """Make source text safe to store and show, in one Unicode form.

    Sources send both Unicode forms: OpenAlex's ``raw_author_name`` may hold
    "Kostic" followed by U+0301 (NFD) where arXiv's LaTeX gives "Kostić" (NFC).
    Every text field of a record goes through here at the record boundary, so
    name keys, search and display agree whatever form a source sent.

    Args:
        text: any string from a source (title, name, payload, file name).

    Returns:
        The text with control characters and Unicode's noncharacters (U+FFFE,
        U+FFFF and the rest: :data:`wovepaper.xmlchars.NONCHARACTERS`, which
        XML cannot carry) removed, lone surrogates replaced by
        U+FFFD (so it encodes as UTF-8 and PostgreSQL accepts it), in Unicode
        normalisation form C (Unicode Standard Annex #15; the W3C's
        "Character Model for the World Wide Web: String Matching" asks for NFC).
    """
    if not _unclean(text):
        return text  # the usual case
    text = _SURROGATE_RE.sub("\ufffd", _CONTROL_RE.sub("", text))
    return unicodedata.normalize("NFC", text)


# The fields of each record class that hold text (str, or tuples and lists of str).
_TEXT_FIELDS: dict[type, tuple[str, ...]] = {}


def _cleaned_fields(item) -> dict:
    """The text fields of a record whose value :func:`clean_text` changes, with
    their cleaned values (usually none: one regex scan and one NFC quick check
    a string). Lists of
    records inside (versions, institutions) are cleaned the same way."""
    names = _TEXT_FIELDS.get(type(item))
    if names is None:
        names = _TEXT_FIELDS[type(item)] = tuple(
            f.name for f in fields(item) if f.name != "authors"
        )
    out = {}
    for name in names:
        value = getattr(item, name)
        if isinstance(value, str):
            if _unclean(value):
                out[name] = clean_text(value)
        elif isinstance(value, tuple | list) and value:
            if all(isinstance(v, str) for v in value):
                if any(_unclean(v) for v in value):
                    out[name] = type(value)(clean_text(v) for v in value)
            elif all(is_dataclass(v) for v in value):  # versions, institutions
                inner = [_cleaned_fields(v) for v in value]
                if any(inner):
                    out[name] = type(value)(
                        replace(v, **c) if c else v
                        for v, c in zip(value, inner, strict=True)
                    )
    return out


def clean_record(record: PaperRecord) -> PaperRecord:
    """Apply :func:`clean_text` to every string of a record and of its authors,
    then :func:`identifiers_checked`.

    Args:
        record: a parsed record.

    Returns:
        A copy whose strings (and tuples and lists of strings) are cleaned and
        whose identifiers are each a valid one of its kind, or "".
    """
    authors = []
    for author in record.authors:
        changes = _cleaned_fields(author)
        authors.append(replace(author, **changes) if changes else author)
    changes = _cleaned_fields(record)
    return identifiers_checked(replace(record, authors=authors, **changes))


# The flag (PaperRecord.review_flags, Paper.review_flags) of a record that came
# with an identifier no validator accepts.
REFUSED_IDENTIFIER = "refused identifier"
# What checks each identifier of a paper record, by field.
_PAPER_IDENTIFIERS = {
    "arxiv_id": identifiers.arxiv_id_normalise,
    "doi": identifiers.doi_check,
    "openalex_id": identifiers.openalex_work_normalise,
    "s2_id": identifiers.s2_paper_normalise,
}
_AUTHOR_IDENTIFIERS = {
    "orcid": identifiers.orcid_normalise,
    "openalex_author_id": identifiers.openalex_author_normalise,
    "s2_author_id": identifiers.s2_author_normalise,
}


def identifiers_checked(record: PaperRecord) -> PaperRecord:
    """Every identifier of a record through the one validator of its kind.

    Whichever source brought it: an arXiv id from Semantic Scholar's
    ``externalIds.ArXiv`` or from a Crossref ``10.48550/arXiv.…`` DOI is checked
    as an arXiv record's own is (a hostile trial stored ``../../admin/auth/user``,
    and the paper's URL then climbed out of ``/papers/``; issue 48). A value
    that passes is stored in its canonical form (an ORCID URL becomes the bare
    iD); one that does not is dropped, logged as a warning naming the record,
    the field and the value, and the record is flagged
    :data:`REFUSED_IDENTIFIER` for a curator. The rest of the record stands.

    Args:
        record: a parsed record (text already cleaned).

    Returns:
        The record, or a copy with the identifiers put right.
    """
    problems: list[str] = []
    changes = _checked(record, _PAPER_IDENTIFIERS, problems)
    authors, touched = [], False
    for author in record.authors:
        fixed = _checked(author, _AUTHOR_IDENTIFIERS, problems)
        kept = tuple(i for i in author.institutions if _ror_ok(i.ror_id, problems))
        if kept != author.institutions:
            fixed["institutions"] = kept
        touched = touched or bool(fixed)
        authors.append(replace(author, **fixed) if fixed else author)
    if not (problems or changes or touched):
        return record
    for problem in problems:
        logger.warning("%s:%s: %s", record.source, record.external_id, problem)
    flags = record.review_flags
    if problems and REFUSED_IDENTIFIER not in flags:
        flags = (*flags, REFUSED_IDENTIFIER)
    return replace(record, authors=authors, review_flags=flags, **changes)


def _checked(item, validators: dict, problems: list[str]) -> dict[str, str]:
    """The fields of ``item`` whose value a validator changes or refuses, with
    the value to store ("" for a refused one); each refusal added to
    ``problems``."""
    out = {}
    for name, validate in validators.items():
        value = getattr(item, name)
        if not value:
            continue
        try:
            checked = validate(value)
        except ValueError as exc:
            problems.append(f"{name} refused: {exc}")
            checked = ""
        if checked != value:
            out[name] = checked
    return out


def _ror_ok(ror_id: str, problems: list[str]) -> bool:
    try:
        identifiers.ror_normalise(ror_id)
    except ValueError as exc:
        problems.append(f"institution ror_id refused: {exc}")
        return False
    return True
