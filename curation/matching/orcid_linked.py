"""The ORCID-linked labelled set: bundled works whose byline slots carry an iD.

Built from the recorded corpora of a data folder (``shared/data``, see its
SOURCES.md), read in place with the harvest's own readers and parsers
(:mod:`harvest.sources.crossref`, :mod:`harvest.sources.openalex`) and cleaned
as a harvest cleans them (:func:`harvest.records.clean_record`):

- Crossref saved ``/works`` answers, ``crossref/habanero_decoded/*.json``
  (Source: Crossref ``message.items[].author[].ORCID``);
- OpenAlex saved works, ``openalex/**/*.json`` (the 2022 TU9 array, the
  search page, the single-entity fixtures; Source: OpenAlex
  ``work.authorships[].author.orcid``).

Semantic Scholar is not read: its Graph API paper authors carry an
``authorId`` and a ``name``, no ORCID, and no author entry of the bundled
answers has one; an S2 author id is S2's own clustering, not a label.

Every person slot whose iD the parsers kept (:func:`wovepaper.identifiers.
orcid_normalise`: the check digit verified, a wrong one dropped) is a labelled
mention whose gold cluster is the iD: an iD seen once is a singleton, so two
namesakes of one block with different iDs give a negative pair and two slots
of one iD on different works a positive one. Other slots are no mention, but
are the co-authors, and are counted with the mentions for the name rarities
and block repeats, as the matching run counts its whole corpus.

One work is one paper: records sharing a DOI or an OpenAlex id (one work in
several answers or sources) are one work, read from the copy with the most
iD-bearing slots, then the longest byline, then the first read (files in
name order); so a person on one work is never two mentions of themself. An
iD printed on two slots of one work leaves both out: which one is its
holder cannot be told.

The iD is hidden from the features: each view's ``orcid`` is "" and its
``source_ids`` is empty. OpenAlex author ids are dropped too: OpenAlex's
``author.orcid`` is a property of its author profile (the 2022 records carry
the profile's iD, not one printed on the byline), so an author id stands for
its iD one to one and would leak the label.

Views are filled as :mod:`curation.selectors` fills them for harvested papers:
the parsed given and family names, ``block_key``, co-author name keys of the
whole byline (:func:`coauthor_keys_of`, collaborations keyless), the year
published, affiliation words of the slot's printed affiliations, the byline's
length. Categories: the work's venue as ``"venue:<folded name>"`` (Crossref
``container-title[0]``, OpenAlex ``primary_location.source.display_name``,
2022 ``host_venue.display_name``), compared like MEDLINE's journals by the
``categories`` feature (no arXiv archive: never a ``field_conflict``); the
harvest keeps no categories for these sources, so the matching run compares
them by nothing there.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from curation import names
from curation.matching.features import (
    BLOCK_REPEAT_UNKNOWN,
    AuthorshipView,
    NameRarities,
    affiliation_tokens,
    block_repeats,
    coauthor_keys_of,
    full_given_key,
    with_text_vectors,
)
from curation.matching.labelled_set import ORCID_LINKED, DatasetError, LabelledSet
from harvest.records import (
    NotARecordFile,
    PaperRecord,
    RawItem,
    RecordError,
    clean_record,
)

# The set's name, and the last part of the pseudo-path that names it
# (:func:`curation.matching.labelled.orcid_linked_corpora`).
NAME = ORCID_LINKED


@dataclass(frozen=True)
class _Corpus:
    """Where one source's saved answers are and how they are read."""

    folder: str
    pattern: str
    split: Callable[[Path, Path | None], Iterator[RawItem]]
    parse: Callable[[RawItem], PaperRecord]
    venue: Callable[[dict], object]


def _crossref_venue(work: dict) -> object:
    titles = work.get("container-title")
    return titles[0] if isinstance(titles, list) and titles else None


def _openalex_venue(work: dict) -> object:
    location = work.get("primary_location")
    source = location.get("source") if isinstance(location, dict) else None
    if not isinstance(source, dict):
        source = work.get("host_venue")  # the 2022 schema
    return source.get("display_name") if isinstance(source, dict) else None


def _corpora() -> tuple[_Corpus, ...]:
    # Imported here: the harvest's sources pull in HTTP clients and lxml,
    # which only building this set needs.
    from harvest.sources import crossref, openalex

    return (
        _Corpus(
            "crossref/habanero_decoded",
            "*.json",
            crossref.read_crossref_file,
            crossref.parse_crossref_work,
            _crossref_venue,
        ),
        _Corpus(
            "openalex",
            "**/*.json",
            openalex.read_openalex_file,
            openalex.parse_openalex_work,
            _openalex_venue,
        ),
    )


@dataclass(frozen=True)
class _Work:
    """One parsed record: its identifiers, venue and where it was read."""

    record: PaperRecord
    keys: frozenset[str]
    venue: str
    locator: str

    @property
    def rank(self) -> tuple[int, int]:
        """Which copy of a work is read: most iDs, then longest byline."""
        return (
            sum(1 for a in self.record.authors if a.orcid),
            len(self.record.authors),
        )


def load(
    data_dir: Path | None = None,
    *,
    embed: Callable[[list[str]], np.ndarray] | None = None,
) -> LabelledSet:
    """Build the ORCID-linked labelled set from a data folder's corpora.

    Args:
        data_dir: the folder holding ``crossref/`` and ``openalex/`` as in
            ``shared/data``; None: ``settings.WOVEPAPER_DATA_DIR``.
        embed: texts to unit vectors (``wovepaper.embeddings.embed_cached``):
            each mention then carries the embedding of its work's title and
            abstract (the ``title_similarity`` feature); None leaves them
            without.

    Returns:
        The LabelledSet named :data:`NAME`: one view per labelled mention (in
        work order, then byline order), ``mention_ids``
        ``"<doi:...|openalex:W...>#<position from 1>"``, ``gold`` the iD,
        ``raw_names`` the name as printed; ``left_out`` names each file that
        is not JSON and each record that cannot be parsed (with the harvest
        parser's reason), and each iD printed twice on one work: each costs
        itself, not the set. Files that hold no works (funder lists, author
        and institution entities, error answers) are no records and are
        passed over in silence.

    Raises:
        DatasetError: no mention carries a valid iD (no corpus there).
    """
    if data_dir is None:
        from django.conf import settings

        data_dir = Path(settings.WOVEPAPER_DATA_DIR)
    left_out: list[str] = []
    works = _works(data_dir, left_out)
    views, ids, gold, raw = _mentions(works, left_out)
    if embed is not None:
        from wovepaper.embeddings import paper_text

        texts = {
            paper: paper_text(w.record.title, w.record.abstract)
            for paper, w in enumerate(works)
            if w.record.title or w.record.abstract
        }
        views = with_text_vectors(views, texts, embed)
    if not views:
        raise DatasetError(
            f"{data_dir}: no Crossref or OpenAlex work there has a byline slot "
            "with a valid ORCID iD (crossref/habanero_decoded/*.json, "
            "openalex/**/*.json)"
        )
    return LabelledSet(NAME, views, ids, gold, raw, left_out=tuple(left_out))


def _records(data_dir: Path, left_out: list[str]) -> Iterator[_Work]:
    """Every parsed work of the corpora, files in name order."""
    for corpus in _corpora():
        for path in sorted((data_dir / corpus.folder).glob(corpus.pattern)):
            if not path.is_file():
                continue
            try:
                items = list(corpus.split(path, data_dir))
            except NotARecordFile:
                continue
            except (RecordError, OSError) as exc:
                left_out.append(f"{exc}; file left out")
                continue
            for item in items:
                try:
                    record = clean_record(corpus.parse(item))
                except (ValueError, TypeError, KeyError, AttributeError) as exc:
                    # RecordError is a ValueError; the others are shapes the
                    # parser did not foresee: one record costs itself.
                    why = str(exc)
                    if not why.startswith(item.locator):
                        why = f"{item.locator}: {why}"
                    left_out.append(f"{why}; left out")
                    continue
                # Never empty: the parsers refuse a Crossref work without a
                # DOI and an OpenAlex one without its id.
                keys = {f"doi:{record.doi}"} if record.doi else set()
                if record.openalex_id:
                    keys.add(f"openalex:{record.openalex_id}")
                yield _Work(record, frozenset(keys), _venue(item, corpus), item.locator)


def _venue(item: RawItem, corpus: _Corpus) -> str:
    """The work's venue as a category, ``"venue:<folded name>"``, or ""."""
    try:
        work = json.loads(item.payload)
    except ValueError:
        return ""
    name = corpus.venue(work) if isinstance(work, dict) else None
    folded = " ".join(names.fold(name).split()) if isinstance(name, str) else ""
    return f"venue:{folded}" if folded else ""


def _works(data_dir: Path, left_out: list[str]) -> list[_Work]:
    """One work per paper: records sharing a DOI or an OpenAlex id joined
    (transitively), each read from its best copy (:attr:`_Work.rank`, the
    first read on a tie), in the order each paper was first read."""
    copies: list[list[_Work]] = []
    owner: dict[str, int] = {}
    for work in _records(data_dir, left_out):
        found = sorted({owner[k] for k in work.keys if k in owner})
        if not found:
            owner.update(dict.fromkeys(work.keys, len(copies)))
            copies.append([work])
            continue
        into = found[0]
        for other in found[1:]:  # a record joining two papers read apart
            copies[into] += copies[other]
            owner.update(
                dict.fromkeys((k for w in copies[other] for k in w.keys), into)
            )
            copies[other] = []
        copies[into].append(work)
        owner.update(dict.fromkeys(work.keys, into))
    return [max(group, key=lambda w: w.rank) for group in copies if group]


def _work_key(record: PaperRecord) -> str:
    """How mention ids name a work: its DOI, else its OpenAlex id."""
    return f"doi:{record.doi}" if record.doi else f"openalex:{record.openalex_id}"


def _mentions(
    works: list[_Work], left_out: list[str]
) -> tuple[list[AuthorshipView], list[str], dict[int, str], dict[int, str]]:
    """The views, mention ids, gold iDs and printed names of the labelled slots."""
    people = [
        (a.given_name, a.family_name)
        for w in works
        for a in w.record.authors
        if not a.is_collaboration
    ]
    rarities = NameRarities.of(people)
    repeat = block_repeats(
        (
            names.block_key(a.given_name, a.family_name),
            affiliation_tokens(a.affiliations),
            1,
        )
        for w in works
        for a in w.record.authors
        if not a.is_collaboration
    )
    views: list[AuthorshipView] = []
    ids: list[str] = []
    gold: dict[int, str] = {}
    raw: dict[int, str] = {}
    for paper, work in enumerate(works):
        authors = work.record.authors
        byline = [
            (
                position,
                ""
                if a.is_collaboration
                else names.name_key(a.given_name, a.family_name),
            )
            for position, a in enumerate(authors, start=1)
        ]
        twice = {
            i for i, n in Counter(a.orcid for a in authors if a.orcid).items() if n > 1
        }
        where = _work_key(work.record)
        for orcid in sorted(twice):
            slots = [str(p) for p, a in enumerate(authors, start=1) if a.orcid == orcid]
            left_out.append(
                f"{where}: one ORCID iD on slots {', '.join(slots)}; which is its "
                "holder cannot be told: left out"
            )
        year = work.record.published.year if work.record.published else None
        for position, author in enumerate(authors, start=1):
            block = names.block_key(author.given_name, author.family_name)
            if not author.orcid or author.orcid in twice or author.is_collaboration:
                continue
            if not block:
                left_out.append(f"{where}#{position}: no name to block by; left out")
                continue
            index = len(views)
            views.append(
                AuthorshipView(
                    id=index,
                    paper_id=paper,
                    given=author.given_name,
                    family=author.family_name,
                    block_key=block,
                    coauthor_keys=coauthor_keys_of(byline, own=position),
                    categories=frozenset({work.venue} - {""}),
                    year=year,
                    affiliation_tokens=affiliation_tokens(author.affiliations),
                    given_rarity=rarities.get(full_given_key(author.given_name), 0.0),
                    family_rarity=rarities.family.get(
                        names.fold(author.family_name), 0.0
                    ),
                    block_repeat=repeat.get(block, BLOCK_REPEAT_UNKNOWN),
                    authors=len(authors),
                )
            )
            ids.append(f"{where}#{position}")
            gold[index] = author.orcid
            raw[index] = author.raw_name
    return views, ids, gold, raw
