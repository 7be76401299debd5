r"""Parse arXiv's own ``.abs`` metadata files into :class:`PaperRecord` (no ORM).

An ``.abs`` file is a header block and an abstract, each closed by a ``\\`` line::

    ------------------------------------------------------------------------------
    \\
    arXiv:hep-th/9709111
    From: <noname@example.org>
    Date: Tue, 16 Sep 1997 14:44:58 GMT   (11kb)
    Date (revised v2): Tue, 23 Sep 1997 17:34:41 GMT   (11kb)

    Title: On the effective interactions of a light gravitino with matter fermions
    Authors: Andrea Brignole (CERN-TH), Ferruccio Feruglio (Padua Univ.), Fabio
      Zwirner (INFN-Padua)
    Categories: hep-th hep-ph
    \\
      If the gravitino is light ...
    \\

Header lines that start with whitespace continue the previous field. Inside the
abstract a line that starts with whitespace opens a new paragraph, and a ``\\`` line
may be a LaTeX line break: the abstract runs from the second ``\\`` line to the
last one (as arxiv-browse reads it).

The helpers at the end (:func:`normalise_space`, :func:`clean_abstract`,
:func:`first_doi`, :func:`is_withdrawn`, :func:`person_author`,
:func:`collaboration_author`, :func:`split_arxiv_id`) are shared with
:mod:`harvest.sources.arxiv_oai`.

Source: arXiv ``.abs`` files (``ftp/<archive>/papers/<yymm>/<id>.abs`` for the
current version, ``orig/.../<id>v<N>.abs`` for older ones).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

from curation.names import is_collaboration, latex_to_unicode, parse_name
from harvest.records import (
    AuthorRecord,
    PaperRecord,
    RawItem,
    RecordError,
    VersionRecord,
    decode_utf8,
    file_locator,
    unreadable_item,
)
from wovepaper.identifiers import ARXIV_ID_RE, arxiv_id_split

SOURCE = "arxiv"
# arXiv's OAI-PMH identifiers: "oai:arXiv.org:<id>" (no version).
OAI_ID_PREFIX = "oai:arXiv.org:"
# An abstract page URL, as Atom <id> and oai_dc <dc:identifier> print it.
ABS_URL_RE = re.compile(r"^https?://(?:export\.)?arxiv\.org/abs/(?P<id>\S+)$", re.I)
# "Teresa Maria Montaruli for the IceCube Collaboration", "Sinya for JLQCD
# Collaboration": a person writing for a collaboration.
_FOR_RE = re.compile(r"\s+(?:for|on\s+behalf\s+of)\s+(?:the\s+)?", re.IGNORECASE)

_ID_LINE_RE = re.compile(r"^(?:arXiv|Paper):\s*(\S+)", re.MULTILINE)
_REVISED_RE = re.compile(r"^Date \(revised v(\d+)\):", re.MULTILINE)
_FIELD_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*(?: \(revised v\d+\))?):\s?(.*)$")
_SEPARATOR_LINE = "\\\\"
_DATE_RE = re.compile(
    r"^(?:[A-Z][a-z]{2},\s+)?(?P<day>\d{1,2})\s+(?P<month>[A-Z][a-z]{2})\s+"
    r"(?P<year>\d{4})\s+(?P<hour>\d{1,2}):(?P<minute>\d{2}):(?P<second>\d{2})\s+"
    r"(?:GMT|UTC)\s*(?:\((?P<size>[^,)]*)[^)]*\))?\s*$",
    re.ASCII,
)
_MONTHS = {
    name: number
    for number, name in enumerate(
        "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), start=1
    )
}
# Anchored at the start of the comments or the abstract, so that "v2: the claim
# of section 3 is withdrawn" does not mark the whole paper withdrawn.
_WITHDRAWN_RE = re.compile(
    r"^\W*(?:(?:this|the)\s+)?"
    r"(?:(?:paper|papers|article|manuscript|submission|preprint|version|work)\s+)?"
    r"(?:(?:has|have|is|was)\s+)?(?:been\s+)?withdrawn\b",
    re.IGNORECASE,
)

# Author lines.
_NUMBER_REFS_RE = re.compile(r"^\s*\d+(?:\s*(?:,|&|\band\b)\s*\d+)*\s*$")
_NUMBER_REFS_IN_LINE_RE = re.compile(r"\(\s*\d+(?:\s*(?:,|&|\band\b)\s*\d+)*\s*\)")
_MARKER_PAREN_START_RE = re.compile(r"\s*\(\s*\d+\s*\)")
_MARKER_PAREN_RE = re.compile(r"\(\s*(\d+)\s*\)\s*:?")
_MARKER_BARE_START_RE = re.compile(r"\s*\d+\s*(?:[-:)]\s*|\s+)(?=[^\d\s,;])")
_MARKER_BARE_RE = re.compile(r"(?:^|[;,])\s*(\d+)\s*(?:[-:)]\s*|\s+)(?=[^\d\s,;])")
# "et al." and "and others" end a list cut short; neither is a person.
_ET_AL_RE = re.compile(r"^(?:et\.?\s*al\.?|others)$", re.IGNORECASE)
# arXiv cuts long lists: "R. Aaij, ..., M. Zhou (750 additional authors not shown)".
_NOT_SHOWN_RE = re.compile(r"^\d+\s+additional\s+authors?\s+not\s+shown$", re.I)
# "et al" needs a dot or a space between its words: "Marco Etal" is a surname.
_TRAILING_ET_AL_RE = re.compile(r"[\s,]+et(?:\.\s*|\s+)al\.?$", re.IGNORECASE)
_SUFFIX_RE = re.compile(r"^(?:Jr|Sr|II|III|IV)\.?$")
_FOR_THE_RE = re.compile(r"^(?:for|on\s+behalf\s+of)\s+(?:the\s+)?", re.IGNORECASE)
_THE_RE = re.compile(r"^the\s+", re.IGNORECASE)
_COLLAB_NOTE_RE = re.compile(
    r"^\s*(?:for|on\s+behalf\s+of)\s|\bcollaborations?\b", re.IGNORECASE
)
_PLURAL_COLLAB_RE = re.compile(
    r"\b(?:collaborations|teams|groups|consortia)\s*$", re.IGNORECASE
)
_DOT_INITIAL_RE = re.compile(r"\.(?=[^\s.,\-)])")
# What _split_top_level looks at: brackets and the separators.
_TOP_LEVEL_RE = re.compile(r"[(){},;:&]| and ")
_PAREN_RE = re.compile(r"[()]")


def read_abs_file(path: Path, root: Path | None = None) -> RawItem:
    """Read one ``.abs`` file as a RawItem without parsing it.

    Invalid UTF-8 does not raise here: the payload is decoded with replacement
    characters and ``problem`` names the byte offset, so the raw text is kept and
    :func:`parse_abs` fails with a clear error.

    Args:
        path: the ``.abs`` file.
        root: folder the locator is relative to (usually ``WOVEPAPER_DATA_DIR``);
            None keeps ``path`` as given.

    Returns:
        A RawItem whose external_id is the versioned arXiv id (``"hep-th/9709111v3"``,
        the version being the highest ``Date (revised vN)`` or 1) when the id line
        can be read, else ``"file:<locator>"``.

    Raises:
        OSError: the file cannot be read.
    """
    locator = file_locator(path, root)
    data = path.read_bytes()
    text, problem = decode_utf8(data)
    external_id = f"file:{locator}"
    match = _ID_LINE_RE.search(text)
    id_match = ARXIV_ID_RE.fullmatch(match.group(1)) if match else None
    if id_match:
        revisions = [int(n) for n in _REVISED_RE.findall(text)]
        version = max(revisions, default=1)
        external_id = f"{id_match.group('id')}v{version}"
    return RawItem(
        external_id=external_id, payload=text, locator=locator, problem=problem
    )


class AbsFile:
    """An ``.abs`` file standing for its RawItem (:func:`read_abs_file`) until
    first read.

    A harvest from files cuts ``.abs`` files into these; its prepare workers
    read them (:mod:`harvest.services.prepare`), so the harvest's own process,
    whose work every batch waits on, never reads the text, and only the file's
    name travels to a worker (bench/ingest.py). ``locator`` is known at once;
    ``external_id``, ``payload`` and ``problem`` read the file on first use,
    once. A file that cannot be read becomes a RawItem carrying the problem
    (:func:`harvest.records.unreadable_item`), as a file read at once does.

    Args:
        path: the ``.abs`` file.
        root: the folder its locator is relative to, or None.
    """

    __slots__ = ("path", "root", "locator", "_item")

    def __init__(self, path: Path, root: Path | None = None) -> None:
        self.path, self.root = path, root
        self.locator = file_locator(path, root)
        self._item: RawItem | None = None

    def read(self) -> RawItem:
        """The file's RawItem (read now unless read before)."""
        if self._item is None:
            try:
                self._item = read_abs_file(self.path, self.root)
            except Exception as exc:  # noqa: BLE001 - one bad file costs itself
                self._item = unreadable_item(self.path, self.root, exc)
        return self._item

    @property
    def external_id(self) -> str:
        return self.read().external_id

    @property
    def payload(self) -> str:
        return self.read().payload

    @property
    def problem(self) -> str:
        return self.read().problem

    def __getstate__(self) -> dict:
        # Only the name crosses to a worker, never the text.
        return {"path": self.path, "root": self.root, "locator": self.locator}

    def __setstate__(self, state: dict) -> None:
        self.path, self.root = state["path"], state["root"]
        self.locator, self._item = state["locator"], None

    def __repr__(self) -> str:
        return f"AbsFile({self.locator!r})"


def parse_abs(item: RawItem) -> PaperRecord:
    """Parse the text of one ``.abs`` file.

    Args:
        item: as made by :func:`read_abs_file`; ``item.payload`` is the file text.

    Returns:
        The PaperRecord: ``arxiv_id`` without version, ``versions`` oldest first with
        aware UTC submission times, ``version`` the latest, ``published`` the date of
        v1 and ``updated`` the date of the latest version. A missing ``Categories``
        line (old ``orig/`` files) gives ``categories == []``.

    Raises:
        RecordError: the message starts with ``item.locator`` and names the problem:
            invalid UTF-8, empty file, no header block, no ``arXiv:``/``Paper:`` id
            line or an unreadable id, no ``Date:`` line, an unparsable date, no
            title.

    Source: arXiv ``.abs`` header fields ``arXiv:``, ``Date:``,
    ``Date (revised vN):``, ``Title:``, ``Authors:``, ``Categories:``, ``DOI:``,
    ``Journal-ref:``, ``Comments:``, ``Report-no:``, ``License:``; the abstract block.
    """
    where = item.locator
    if item.problem:
        raise RecordError(f"{where}: {item.problem}")
    text = item.payload.lstrip("\ufeff")
    if not text.strip():
        raise RecordError(f"{where}: empty file")
    # Lines end at "\n" (or "\r\n") only: a stray "\r", "\x85" or "\u2028"
    # inside a title or byline is whitespace, not the end of the field
    # (str.splitlines would cut the field there).
    lines = _lines(text)
    marks = [i for i, line in enumerate(lines) if line.strip() == _SEPARATOR_LINE]
    if len(marks) < 2:
        raise RecordError(f"{where}: no header block between '\\\\' lines")
    fields = _header_fields(lines[marks[0] + 1 : marks[1]])
    end = marks[-1] if len(marks) > 2 else len(lines)
    abstract = clean_abstract("\n".join(lines[marks[1] + 1 : end]))

    raw_id = _first(fields, "arXiv") or _first(fields, "Paper")
    if not raw_id:
        raise RecordError(f"{where}: no 'arXiv:' or 'Paper:' id line")
    arxiv_id, _ = split_arxiv_id(raw_id.split()[0], where)

    versions = _versions(fields, where)
    title = normalise_space(_first(fields, "Title"))
    if not title:
        raise RecordError(f"{where}: no title")
    comments = normalise_space(_first(fields, "Comments"))
    latest = versions[-1]
    return PaperRecord(
        source=SOURCE,
        external_id=f"{arxiv_id}v{latest.version}",
        title=title,
        authors=split_abs_authors(_first(fields, "Authors")),
        authors_incomplete=byline_incomplete(_first(fields, "Authors")),
        arxiv_id=arxiv_id,
        doi=first_doi(_first(fields, "DOI")),
        version=latest.version,
        versions=versions,
        abstract=abstract,
        published=_date_of(versions[0].submitted),
        updated=_date_of(latest.submitted),
        categories=_first(fields, "Categories").split(),
        journal_ref=normalise_space(_first(fields, "Journal-ref")),
        comments=comments,
        report_no=normalise_space(_first(fields, "Report-no")),
        license=normalise_space(_first(fields, "License")),
        withdrawn=is_withdrawn(comments, abstract),
    )


def split_abs_authors(
    line: str, *, propagate_affiliations: bool = True
) -> list[AuthorRecord]:
    r"""Split an ``.abs`` ``Authors:`` value into byline slots, in printed order.

    Handles ``,`` ``;`` ``:`` `` and `` ``&`` separators; inline affiliations
    ``Andrea Brignole (CERN-TH)``; numbered ones ``Daisuke Kawata (1,2), ...
    ((1) Carnegie Observatories, (2) Swinburne)`` (also ``(1 and 3)``,
    ``(1): X``, ``(1 - X; 2 - Y)``); LaTeX accents; ``et al`` and ``and others``
    (dropped); a ``Jr.`` split off by a comma; a nickname ``Zhe (Rita) Liang``
    (kept in the name); arXiv's ``(750 additional authors not shown)`` (dropped).

    Collaborations (``D0 Collaboration:``, ``the PHOBOS Collaboration``, ``The CMS
    and LHCb Collaborations``, ``... team``) become slots of their own with
    ``is_collaboration=True``, named without a leading ``for the`` / ``the``. A
    parenthetical naming a collaboration (``D.Peressounko (for the PHENIX
    Collaboration)``) is not an affiliation: it becomes a collaboration slot right
    after that person; so does a person printed "for" one (``Kalle Virtanen for
    the ATLAS Collaboration``: the person, then "ATLAS Collaboration"). A
    collaboration named twice keeps only its first slot. Whether the byline says
    it is incomplete (``et al.``) is :func:`byline_incomplete`.

    Args:
        line: the field value; wrapped continuation lines are allowed.
        propagate_affiliations: like arXiv's own parser (arxiv-base
            ``arxiv.authors.parse_author_affil``), a person printed without an
            affiliation gets the affiliations of the next person that has some
            (``A, B (Univ)`` gives both Univ); it never crosses a collaboration.

    Returns:
        One AuthorRecord per slot; persons have given/family/suffix from
        :func:`curation.names.parse_name` and ``raw_name`` in Unicode as printed.

    Source: arXiv ``.abs`` ``Authors:`` field.
    """
    text = normalise_space(line.replace("\\,", " "))
    if not text:
        return []
    text, numbered = _cut_numbered_affiliations(text)

    slots: list[AuthorRecord] = []
    seen_collaborations: set[str] = set()

    def add_collaboration(name: str, affiliations: tuple[str, ...] = ()) -> None:
        record = collaboration_author(name, affiliations)
        key = record.raw_name.casefold()
        if record.raw_name and key not in seen_collaborations:
            seen_collaborations.add(key)
            slots.append(record)

    for piece in _merge_pieces(_split_top_level(text)):
        name, notes = _split_notes(piece)
        affiliations: list[str] = []
        collaborations: list[str] = []
        for note in notes:
            if _NOT_SHOWN_RE.match(note):
                continue
            if _NUMBER_REFS_RE.match(note):
                for number in re.split(r"\s*(?:,|&|\band\b)\s*", note.strip()):
                    if number in numbered and numbered[number] not in affiliations:
                        affiliations.append(numbered[number])
            elif is_collaboration_note(note):
                collaborations.append(note)
            elif cleaned := clean_affiliation(note):
                affiliations.append(cleaned)
        name = _TRAILING_ET_AL_RE.sub("", name).strip(" ,;")
        # A piece that prints as nothing ("{}", "~", "\\relax") names nobody.
        if (
            not name
            or _ET_AL_RE.match(name)
            or not latex_to_unicode(name).strip(" ,;:.")
        ):
            # A note standing alone ("X, (Univ)") belongs to the slot before it.
            if affiliations and slots and not slots[-1].is_collaboration:
                slots[-1] = replace(
                    slots[-1],
                    affiliations=(*slots[-1].affiliations, *affiliations),
                )
        elif (person := _person_for_collaboration(name)) is not None:
            # "Kalle Virtanen for the ATLAS Collaboration": a person, then the
            # collaboration they speak for. "Jane Doe (CERN) for the ATLAS
            # Collaboration": the parenthetical is the person's affiliation.
            who, own = _split_notes(person[0])
            own = [
                cleaned
                for note in own
                if not is_collaboration_note(note)
                and (cleaned := clean_affiliation(note))
            ]
            slots.append(person_author(who, (*own, *affiliations)))
            add_collaboration(person[1])
        elif _FOR_THE_RE.match(name) or is_collaboration(latex_to_unicode(name)):
            add_collaboration(name, tuple(affiliations))
        else:
            slots.append(person_author(name, tuple(affiliations)))
        for collaboration in collaborations:
            add_collaboration(collaboration)

    if propagate_affiliations:
        slots = _propagate_affiliations(slots)
    return slots


# What says a byline names only some of its authors: "et al." (with or without
# its dots), "and others", arXiv's "(750 additional authors not shown)".
_INCOMPLETE_RE = re.compile(
    r"(?:^|[\s,;(])(?:et(?:\.\s*|\s+)al\b\.?|and\s+others\b|\d+\s+additional\s+authors?"
    r"\s+not\s+shown)",
    re.IGNORECASE,
)


def byline_incomplete(line: str) -> bool:
    """Whether a free-text byline says it lists only some of the authors.

    Args:
        line: an ``.abs`` ``Authors:`` value or an arXivRaw ``<authors>``.

    Returns:
        True for ``"M. Rossi, P. Conti, et al."``, ``"A. B and others"`` and
        ``"R. Aaij, ... (750 additional authors not shown)"``; False otherwise.
    """
    return bool(_INCOMPLETE_RE.search(line or ""))


# Helpers shared with arxiv_oai.


def normalise_space(text: str) -> str:
    """Collapse every run of whitespace (newlines included) into one space, and
    trim both ends (``str.split`` splits where ``\\s`` matches: every character
    ``str.isspace`` calls whitespace)."""
    return " ".join(text.split())


def clean_abstract(text: str) -> str:
    """Unwrap an arXiv abstract, keeping its paragraphs.

    Args:
        text: the abstract as stored: lines wrapped at ~80 columns, a line that
            starts with whitespace (or follows a blank line) opens a paragraph.

    Returns:
        The paragraphs, each whitespace-collapsed, joined by ``"\\n"``; LaTeX kept.
    """
    paragraphs: list[list[str]] = []
    current: list[str] = []
    for line in _lines(text):
        if not line.strip():
            if current:
                paragraphs.append(current)
            current = []
            continue
        if line[0].isspace() and current:
            paragraphs.append(current)
            current = []
        current.append(line)
    if current:
        paragraphs.append(current)
    return "\n".join(normalise_space(" ".join(p)) for p in paragraphs)


def first_doi(text: str) -> str:
    """The first of the space-separated DOIs, lower-cased, without resolver prefix."""
    for token in text.split():
        token = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", "", token, flags=re.I)
        if token.startswith("10."):
            return token.rstrip(".,;").lower()
    return ""


def is_withdrawn(comments: str, abstract: str) -> bool:
    """True when the comments or the abstract open by saying the paper is withdrawn.

    Args:
        comments: the comments field.
        abstract: the abstract.

    Returns:
        True for ``"This paper has been withdrawn ..."``, ``"withdrawn by arXiv
        administrators ..."``, ``"paper withdrawn by author"``; a mention further
        in the text (``"... the claim in v1 is withdrawn"``) does not count.
    """
    return bool(_WITHDRAWN_RE.match(comments) or _WITHDRAWN_RE.match(abstract))


def is_collaboration_note(text: str) -> bool:
    """True when an affiliation-like note names a collaboration, not an institution.

    Args:
        text: a parenthetical or affiliation string.

    Returns:
        True for ``"for the STAR Collaboration"``, ``"on behalf of Planck
        Collaboration"``, ``"Milagro Collaboration"``; False for ``"CERN-TH"``.
    """
    return bool(_COLLAB_NOTE_RE.search(text))


def split_arxiv_id(text: str, where: str) -> tuple[str, int | None]:
    """Split ``"hep-th/9709111v3"`` into ``("hep-th/9709111", 3)``
    (:func:`wovepaper.identifiers.arxiv_id_split`, with the record named).

    Args:
        text: an arXiv id, new style (``0704.0001``) or old (``hep-th/9901001``),
            with an optional ``vN``.
        where: the record's locator, for the error message.

    Returns:
        The id without version, and the version or None when there is none.

    Raises:
        RecordError: the text is not an arXiv id.
    """
    try:
        return arxiv_id_split(text)
    except ValueError as exc:
        why = str(exc).partition(" is not an arXiv id")[2]
        raise RecordError(f"{where}: unreadable arXiv id {text!r}{why}") from None


def split_for_collaboration(full: str) -> tuple[str, str]:
    """``"Dipanwita Dutta for the CMS Collaboration"`` -> ``(person, collaboration)``.

    Returns:
        ``("Dipanwita Dutta", "CMS Collaboration")``; ``("", full)`` when the text
        has no ``for`` / ``on behalf of`` after a name.
    """
    match = _FOR_RE.search(full)
    if not match or not match.start():
        return "", full
    return full[: match.start()], full[match.end() :]


# Most words a person's name printed before "for the X Collaboration" holds.
_MOST_NAME_WORDS = 8
# Words of an organisation's name, never of a person's: "The Alliance for
# Cellular Signaling" is not a person speaking for a collaboration.
_ORGANISATION_WORDS = frozenset(
    "the alliance association center centre consortium council federation group "
    "initiative institute laboratory network project society team union "
    "university".split()
)


def _person_for_collaboration(piece: str) -> tuple[str, str] | None:
    """``(person, collaboration)`` of a byline piece "<name> for the <X
    Collaboration>" (or "on behalf of"), or None when the piece is not one.

    The part before ``for`` must read as a person's name (one to
    :data:`_MOST_NAME_WORDS` words, no collaboration word in it) and the part
    after it as a collaboration, so "Alliance for Cellular Signaling" stays
    what it was.
    """
    person, collaboration = split_for_collaboration(piece)
    if not person.strip() or not collaboration.strip():
        return None
    unicode_person = latex_to_unicode(person).strip(" ,;:")
    words = unicode_person.split()
    if not 1 <= len(words) <= _MOST_NAME_WORDS:
        return None
    if is_collaboration(unicode_person) or _COLLAB_NOTE_RE.search(unicode_person):
        return None
    if any(word.casefold() in _ORGANISATION_WORDS for word in words):
        return None
    if not is_collaboration(latex_to_unicode(collaboration)):
        return None
    return person.strip(" ,;:"), collaboration


def clean_affiliation(text: str) -> str:
    """An affiliation string in Unicode, whitespace-collapsed, no trailing ``,;``."""
    return latex_to_unicode(text).strip(" ,;")


def person_author(raw: str, affiliations: tuple[str, ...] = ()) -> AuthorRecord:
    """A person's byline slot from a name printed ``"First Last"`` (LaTeX allowed).

    Args:
        raw: the name as printed, e.g. ``"C. Bal\\'azs"`` or ``"D.Peressounko"``.
        affiliations: raw affiliation strings, in source order.

    Returns:
        An AuthorRecord with ``raw_name`` in Unicode as printed; a single-word
        name (``"Sinya"``) is taken as the family name.
    """
    raw_name = latex_to_unicode(raw)
    # "D.Peressounko" -> "D. Peressounko" so that the initial is not the surname.
    tidy = _DOT_INITIAL_RE.sub(". ", raw_name)
    parsed = parse_name(tidy)
    given, family, suffix = parsed.given, parsed.family, parsed.suffix
    tokens = tidy.split()
    if not tokens:
        raise RecordError(f"an author name that prints as nothing: {raw[:80]!r}")
    if len(tokens) == 1:
        given, family, suffix = "", tokens[0], ""
    elif not family or (not given and tokens[0].endswith(".")):
        # The name parser takes "Th."/"Yu." for titles and "Git" for a suffix;
        # fall back to "given... family [suffix]" rather than lose a part.
        suffix = tokens.pop() if _SUFFIX_RE.match(tokens[-1]) else ""
        given, family = " ".join(tokens[:-1]), tokens[-1]
    return AuthorRecord(
        raw_name=raw_name,
        given_name=given,
        family_name=family,
        suffix=suffix,
        affiliations=affiliations,
    )


def collaboration_author(raw: str, affiliations: tuple[str, ...] = ()) -> AuthorRecord:
    """A collaboration's byline slot.

    Args:
        raw: e.g. ``"for the PHENIX Collaboration"`` or ``"The BABAR Collaboration"``.
        affiliations: raw affiliation strings, in source order.

    Returns:
        An AuthorRecord with ``is_collaboration=True``, ``raw_name`` in Unicode
        without a leading ``for the`` / ``on behalf of`` / ``the``
        (``"PHENIX Collaboration"``), and no given or family name.
    """
    name = latex_to_unicode(raw).strip(" ,;:.")
    name = _THE_RE.sub("", _FOR_THE_RE.sub("", name)).strip()
    return AuthorRecord(raw_name=name, affiliations=affiliations, is_collaboration=True)


# Private helpers.


def _lines(text: str) -> list[str]:
    """The lines of an ``.abs`` file: split at ``"\n"`` and ``"\r\n"`` only."""
    return text.replace("\r\n", "\n").split("\n")


def _header_fields(lines: list[str]) -> dict[str, list[str]]:
    """Header lines to ``{key: [value, ...]}``, continuation lines joined."""
    fields: dict[str, list[str]] = {}
    key = ""
    for line in lines:
        if not line.strip():
            key = ""
            continue
        if line[0].isspace():
            if key:
                fields[key][-1] += "\n" + line
            continue
        match = _FIELD_RE.match(line)
        if not match:
            key = ""
            continue
        key = match.group(1)
        fields.setdefault(key, []).append(match.group(2))
    return fields


def _first(fields: dict[str, list[str]], key: str) -> str:
    values = fields.get(key)
    return values[0].strip() if values else ""


def _versions(fields: dict[str, list[str]], where: str) -> list[VersionRecord]:
    first = _first(fields, "Date")
    if not first:
        raise RecordError(f"{where}: no 'Date:' line")
    versions = [version_record(1, first, where)]
    for key, values in fields.items():
        match = re.fullmatch(r"Date \(revised v(\d+)\)", key)
        if match:
            versions.append(version_record(int(match.group(1)), values[0], where))
    versions.sort(key=lambda v: v.version)
    return versions


def version_record(number: int, text: str, where: str) -> VersionRecord:
    """``"Tue, 16 Sep 1997 14:44:58 GMT   (11kb)"`` -> VersionRecord (size "11kb").

    The letters after the size (``(39kb,D)``) are arXiv source-format flags, not
    part of the size, and are dropped. Also reads the snapshot's ``created``
    (the same date without a size; :mod:`harvest.sources.arxiv_kaggle`).

    Raises:
        RecordError: starting with ``where``: the date cannot be read.
    """
    match = _DATE_RE.match(text.strip())
    month = _MONTHS.get(match.group("month")) if match else None
    if not match or month is None:
        raise RecordError(f"{where}: unparsable date for v{number}: {text.strip()!r}")
    try:
        submitted = datetime(
            int(match.group("year")),
            month,
            int(match.group("day")),
            int(match.group("hour")),
            int(match.group("minute")),
            int(match.group("second")),
            tzinfo=UTC,
        )
    except ValueError as exc:
        raise RecordError(
            f"{where}: unparsable date for v{number}: {text.strip()!r} ({exc})"
        ) from exc
    return VersionRecord(
        version=number, submitted=submitted, size=(match.group("size") or "").strip()
    )


def _date_of(moment: datetime | None) -> date | None:
    return moment.date() if moment else None


def _cut_numbered_affiliations(text: str) -> tuple[str, dict[str, str]]:
    """Cut a trailing ``((1) X, (2) Y)`` block off an author line.

    Returns:
        The line without the block, and ``{"1": "X", "2": "Y"}`` (empty when the
        line has no such block, or no author carries a number like ``(1,2)``).
    """
    if not text.endswith(")"):
        return text, {}
    depth = 0
    start = -1
    for i in range(len(text) - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                start = i
                break
    if start < 0:
        return text, {}
    content, rest = text[start + 1 : -1], text[:start]
    if not _NUMBER_REFS_IN_LINE_RE.search(rest):
        return text, {}
    mapping: dict[str, str] = {}
    if _MARKER_PAREN_START_RE.match(content):
        parts = _MARKER_PAREN_RE.split(content)
        for number, value in zip(parts[1::2], parts[2::2], strict=True):
            mapping[number] = clean_affiliation(value)
    elif _MARKER_BARE_START_RE.match(content):
        # "(1 - Swarthmore College; 2 - Vanderbilt)": numbers must run 1, 2, 3...
        # so that a number inside an address is not taken for a marker.
        markers = []
        for match in _MARKER_BARE_RE.finditer(content):
            if int(match.group(1)) == len(markers) + 1:
                markers.append(match)
        for marker, following in zip(markers, [*markers[1:], None], strict=True):
            end = following.start() if following else len(content)
            mapping[marker.group(1)] = clean_affiliation(content[marker.end() : end])
    else:
        return text, {}
    return rest.rstrip(" ,;"), mapping


def _split_top_level(text: str) -> list[tuple[str, str]]:
    """Split at separators outside parentheses and braces.

    Only the characters that matter (:data:`_TOP_LEVEL_RE`) are visited, not
    every character: on a bulk harvest this split was the largest single cost of
    parsing an ``.abs`` file (bench/ingest.py).

    Returns:
        ``(separator_before, piece)`` pairs in order, empty pieces dropped;
        the separator is ``","``, ``";"``, ``":"``, ``"and"`` or "" (first piece).
    """
    pieces: list[tuple[str, str]] = []
    separator = ""
    start = 0
    parens = braces = 0
    for match in _TOP_LEVEL_RE.finditer(text):
        char = match.group()
        found = ""
        if char == "(":
            parens += 1
        elif char == ")":
            parens = max(parens - 1, 0)
        elif char == "{":
            braces += 1
        elif char == "}":
            braces = max(braces - 1, 0)
        elif parens == 0 and braces == 0:
            if char == " and ":
                found = "and"
            elif char == "&":
                # "\&" is a printed ampersand, not a separator.
                if match.start() == 0 or text[match.start() - 1] != "\\":
                    found = "and"
            else:
                found = char
        if found:
            piece = text[start : match.start()].strip()
            if piece:
                pieces.append((separator, piece))
                separator = found
            elif found == "and" or not separator:
                separator = found
            start = match.end()
    piece = text[start:].strip()
    if piece:
        pieces.append((separator, piece))
    return pieces


def _merge_pieces(pieces: list[tuple[str, str]]) -> list[str]:
    """Undo splits that cut a name: ``"The CMS and LHCb Collaborations"``, ``", Jr."``.

    A piece ending with a plural (``Collaborations``, ``teams``) joined by ``and``
    to a piece that is not itself a collaboration names several collaborations
    together, and a bare suffix after a comma belongs to the name before it.
    """
    merged: list[str] = []
    for separator, piece in pieces:
        if merged and separator == "," and _SUFFIX_RE.match(piece):
            merged[-1] = f"{merged[-1]}, {piece}"
        elif (
            merged
            and separator == "and"
            and _PLURAL_COLLAB_RE.search(piece)
            and not is_collaboration(merged[-1])
            and "(" not in merged[-1]
        ):
            merged[-1] = f"{merged[-1]} and {piece}"
        else:
            merged.append(piece)
    return merged


def _split_notes(piece: str) -> tuple[str, list[str]]:
    """``"Andrea Brignole (CERN-TH)"`` -> ``("Andrea Brignole", ["CERN-TH"])``.

    Only parentheticals at the end are notes; one followed by more name text is
    part of the name (``"Zhe (Rita) Liang"``). An unclosed one runs to the end.
    """
    if "(" not in piece:
        return normalise_space(piece), []
    segments: list[tuple[bool, str]] = []  # (is_parenthetical, text)
    depth = 0
    start = 0  # where the current segment's text begins
    for match in _PAREN_RE.finditer(piece):
        at = match.start()
        if match.group() == "(":
            if depth == 0:
                segments.append((False, piece[start:at]))
                start = at + 1
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                segments.append((True, piece[start:at]))
                start = at + 1
    segments.append((depth > 0, piece[start:]))

    notes: list[str] = []
    while segments and (segments[-1][0] or not segments[-1][1].strip()):
        is_note, value = segments.pop()
        if is_note and value.strip():
            notes.insert(0, value.strip())
    name = "".join(f"({value})" if is_note else value for is_note, value in segments)
    return normalise_space(name), notes


def _propagate_affiliations(slots: list[AuthorRecord]) -> list[AuthorRecord]:
    result = list(slots)
    last: tuple[str, ...] = ()
    for i in range(len(result) - 1, -1, -1):
        slot = result[i]
        if slot.is_collaboration:
            last = ()
        elif slot.affiliations:
            last = slot.affiliations
        elif last:
            result[i] = replace(slot, affiliations=last)
    return result
