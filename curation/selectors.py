"""Curation reads: the snapshots the matcher works on, and the proposal queue."""

from __future__ import annotations

import logging
import time
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from django.conf import settings
from django.db import connection
from django.db.models import (
    Case,
    Count,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Abs, Coalesce

from curation import matching_sql
from curation.deciding import auto_apply
from curation.history import researcher_history
from curation.matching import overmerge, scoring, variants
from curation.matching.features import (
    BLOCK_REPEAT_UNKNOWN,
    COAUTHOR_MAX_BYLINE,
    AuthorshipView,
    NameRarities,
    ProfileView,
    affiliation_tokens,
    block_repeats,
    coauthor_keys_of,
    full_given_key,
    names_meet,
    profile_of,
    source_ids_of,
)
from curation.matching.orcids import IdSlot
from curation.matching.overmerge import Suspicion
from curation.matching.variants import Slot
from curation.models import Constraint, CurationEvent, MatcherModel, Proposal
from curation.names import block_key_readings, family_core, fold
from harvest.models import SourceAuthor
from wovepaper.models import Authorship, Researcher
from wovepaper.semantic import paper_vectors
from wovepaper.text import strings_in

T = TypeVar("T")

# SQLite allows 32,766 bound parameters per statement; PostgreSQL plans long IN lists
# slowly. Id lists are read in chunks of this size.
CHUNK = 2000

logger = logging.getLogger(__name__)


def _chunks(ids: list[T], size: int = CHUNK) -> Iterable[list[T]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def _bylines(paper_ids: Iterable[int]) -> dict[int, list[tuple[int, str]]]:
    """``{paper id: [(authorship id, name key)]}``: every slot of each paper.

    A slot without a name key has "" (:func:`curation.matching.features.
    coauthor_keys_of` reads them). One query per :data:`CHUNK` papers.
    """
    keys: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for chunk in _chunks(sorted(set(paper_ids))):
        rows = (
            matching_sql.byline_rows(chunk)
            if matching_sql.enabled()
            else Authorship.objects.filter(paper_id__in=chunk).values_list(
                "paper_id", "id", "name_key"
            )
        )
        for pid, aid, key in rows:
            keys[pid].append((aid, key))
    return keys


# The corpus rarities an incremental run last read, by database: (monotonic
# expiry time, rarities). Kept in the process, not the shared cache: at millions
# of authorships the table is tens of MB, dearer to fetch than to keep.
_RARITIES: dict[str, tuple[float, float, NameRarities]] = {}


def _read_remembered(
    store: dict,
    remembered: bool,
    read: Callable[[], T],
    since: datetime | None = None,
) -> T:
    """``read()``, or what it gave this process for this database less than
    ``CURATION_RARITY_SECONDS`` ago when ``remembered``, or (``since``, an
    aware datetime) at or after ``since``; the answer is kept."""
    database = connection.settings_dict["NAME"]
    if (remembered or since is not None) and database in store:
        expires, read_at, value = store[database]
        if (since is None and time.monotonic() < expires) or (
            since is not None and read_at >= since.timestamp()
        ):
            return value
    read_at = time.time()
    value = read()
    store[database] = (
        time.monotonic() + settings.CURATION_RARITY_SECONDS,
        read_at,
        value,
    )
    return value


def forget_given_rarities() -> None:
    """Drop the remembered rarities, the profiles built with them and the model.

    For tests, after a bulk load, and when this process trains a model.
    """
    _RARITIES.clear()
    _PROFILES.clear()
    _WEIGHTS.clear()


def corpus_given_rarities(
    *, remembered: bool = False, since: datetime | None = None
) -> NameRarities:
    """Rarity of every full given name and family name over person authorships.

    Args:
        remembered: accept the table this process read less than
            ``CURATION_RARITY_SECONDS`` ago (an incremental run: a name's share of
            the corpus barely moves in minutes, and the grouping query reads every
            authorship, 60 ms at 100,000). False reads it afresh and remembers it.
        since: accept the table this process began to read at or after this
            aware datetime (the shards of a full run, fanned out, that one
            worker runs in turn: each would count the same table again).

    Returns:
        NameRarities: ``{full given key: rarity}`` in [0, 1] (see
        :func:`curation.matching.features.given_name_rarities`), its
        ``family`` table (:func:`curation.matching.features.family_name_rarities`)
        and its ``block_repeat`` table
        (:func:`curation.matching.features.block_repeats`); two queries, one
        that groups by given and family name and one by block and printed
        affiliations, or none.
    """
    return _read_remembered(_RARITIES, remembered, _count_name_rarities, since)


def _count_name_rarities() -> NameRarities:
    people = Authorship.objects.filter(is_collaboration=False)
    rarities = NameRarities.counted(
        people.values_list("given_name", "family_name").annotate(n=Count("id"))
    )
    # One row per block and distinct affiliation list, grouped in the database.
    rarities.block_repeat = block_repeats(
        (block, affiliation_tokens(strings_in(printed)), n)
        for block, printed, n in people.exclude(affiliations=[])
        .values_list("block_key", "affiliations")
        .annotate(n=Count("id"))
        .order_by()
    )
    return rarities


# What an AuthorshipView is built from, read as plain values (no model
# instances): the authorship's fields and its paper's.
_VIEW_FIELDS = (
    "id",
    "paper_id",
    "given_name",
    "family_name",
    "block_key",
    "orcid",
    "affiliations",
    "openalex_author_id",
    "s2_author_id",
    "paper__categories",
    "paper__published",
)


def _given_rarity(given: str, rarities: NameRarities) -> float:
    """The rarity of a full given name; 0.0 for initials."""
    key = full_given_key(given)
    return rarities.get(key, rarities.given_unseen) if key else 0.0


def _profile_orcids(rows: list[tuple]) -> dict[tuple[str, str], str]:
    """The ORCID iDs the sources' author profiles behind these rows' slots carry.

    Args:
        rows: tuples of :data:`_VIEW_FIELDS`.

    Returns:
        ``{("openalex" | "semanticscholar", author id): ORCID}`` from the stored
        :class:`~harvest.models.SourceAuthor` profiles (not deleted, with an
        ORCID); no query when no row carries a source author id.
    """
    wanted = {
        "openalex": {row[_OPENALEX] for row in rows if row[_OPENALEX]},
        "semanticscholar": {row[_S2] for row in rows if row[_S2]},
    }
    if not any(wanted.values()):
        return {}
    found: dict[tuple[str, str], str] = {}
    for source, ids in wanted.items():
        for chunk in _chunks(sorted(ids)):
            found.update(
                ((source, external_id), orcid)
                for external_id, orcid in SourceAuthor.objects.filter(
                    source=source, external_id__in=chunk, deleted=False
                )
                .exclude(orcid="")
                .values_list("external_id", "orcid")
            )
    return found


_OPENALEX = _VIEW_FIELDS.index("openalex_author_id")
_S2 = _VIEW_FIELDS.index("s2_author_id")


def _views(rows: list[tuple], rarities: NameRarities) -> list[AuthorshipView]:
    """AuthorshipViews of ``rows`` (tuples of :data:`_VIEW_FIELDS`), in order.

    A slot's source ids are its OpenAlex and Semantic Scholar author ids and,
    as ``"orcid:<iD>"``, the ORCID iDs their stored author profiles carry
    (:func:`_profile_orcids`) and its own. A profile's ORCID was linked by the
    source's disambiguation, not printed with the byline: it is source-id
    evidence (``source_id``), not the ``orcid`` feature, and never makes a
    proposal the identifier policy applies. The slot's own iD is among them so
    that a profile's iD can meet it (two own iDs that agree count twice: as
    ``orcid`` and as ``source_id``).

    A view's ``text_vector`` is its paper's stored embedding
    (:func:`wovepaper.semantic.paper_vectors`), when
    ``settings.MATCHING_TEXT_EVIDENCE`` is on and the paper is embedded.
    """
    keys = _bylines(row[1] for row in rows)
    profile_orcids = _profile_orcids(rows)
    vectors = (
        paper_vectors(row[1] for row in rows)
        if settings.MATCHING_TEXT_EVIDENCE and rows
        else {}
    )
    return [
        AuthorshipView(
            id=aid,
            paper_id=pid,
            given=given,
            family=family,
            block_key=block,
            orcid=orcid,
            coauthor_keys=coauthor_keys_of(keys[pid], own=aid),
            categories=frozenset(strings_in(categories)),
            year=published.year if published else None,
            affiliation_tokens=affiliation_tokens(strings_in(affiliations)),
            given_rarity=_given_rarity(given, rarities),
            family_rarity=rarities.family.get(fold(family), rarities.family_unseen),
            block_repeat=rarities.block_repeat.get(block, BLOCK_REPEAT_UNKNOWN),
            source_ids=source_ids_of(openalex_id, s2_id)
            | {
                f"orcid:{found}"
                for found in (
                    orcid,
                    profile_orcids.get(("openalex", openalex_id)),
                    profile_orcids.get(("semanticscholar", s2_id)),
                )
                if found
            },
            authors=len(keys[pid]),
            text_vector=vectors.get(pid),
        )
        for (
            aid,
            pid,
            given,
            family,
            block,
            orcid,
            affiliations,
            openalex_id,
            s2_id,
            categories,
            published,
        ) in rows
    ]


def authorship_views(
    authorships: Iterable[Authorship], rarities: NameRarities | None = None
) -> list[AuthorshipView]:
    """Snapshot saved authorships for the matcher (co-authors and categories).

    Args:
        authorships: saved Authorship rows (read again by id, with their papers'
            fields).
        rarities: name rarities (:func:`corpus_given_rarities`); None leaves
            every rarity at 0.0.

    Returns:
        One AuthorshipView per row, in input order. Two queries per
        :data:`CHUNK` authorships.
    """
    ids = [a.pk for a in authorships]
    found: dict[int, tuple] = {}
    for chunk in _chunks(ids):
        found.update(
            (row[0], row)
            for row in Authorship.objects.filter(pk__in=chunk).values_list(
                *_VIEW_FIELDS
            )
        )
    return _views(
        [found[pk] for pk in ids if pk in found],
        rarities if rarities is not None else NameRarities(),
    )


# What the pending proposal holding a slot is, as matchable_views reads it: its
# kind, or this for an attach whose researcher was merged away or retired since
# (it can never apply: the slot is matched again, and a draft holding the slot
# supersedes it). Sorts between "attach" and "merge", so a live attach wins.
DEAD_ATTACH = "dead"


def _gone(researcher: str) -> Q:
    """The researcher reached by the lookup path ``researcher`` was merged
    away or retired since."""
    return Q(**{f"{researcher}__merged_into__isnull": False}) | Q(
        **{f"{researcher}__retired": True}
    )


def _dead_attach(prefix: str = "") -> Q:
    """An attach proposal whose researcher was merged away or retired since
    (:data:`DEAD_ATTACH`), the proposal reached by ``prefix``."""
    return Q(**{f"{prefix}kind": Proposal.Kind.ATTACH}) & _gone(f"{prefix}researcher")


def pending_attach_names(block_keys: Iterable[str] | None) -> dict[int, list[Slot]]:
    """``{researcher id: [(given, family, block key)]}``: the names, as
    printed, of the slots pending attach proposals give the researchers of
    these blocks (None: of every block); researchers with none are left
    out. A run proposes no attach to one of them whose given name cannot be
    the same person's (:func:`curation.matching.variants.names_clash`
    compares two slots of two blocks in one frame). One query a
    :data:`CHUNK` of block keys (a sub-block name ``"key/sub"`` counts as
    ``key``): pending attaches are few beside researchers, where an IN list
    of the researchers read cost 145 ms for 20,000 of them
    (bench/matching.py)."""
    pairs = Proposal.authorships.through.objects.filter(
        proposal__status=Proposal.Status.PENDING,
        proposal__kind=Proposal.Kind.ATTACH,
    ).order_by("proposal_id", "authorship_id")
    fields = (
        "proposal__researcher_id",
        "authorship__given_name",
        "authorship__family_name",
        "authorship__block_key",
    )
    if block_keys is None:
        rows = list(pairs.values_list(*fields))
    else:
        keys = sorted({k.split("/", 1)[0] for k in block_keys})
        rows = [
            row
            for chunk in _chunks(keys)
            for row in pairs.filter(
                proposal__researcher__block_key__in=chunk
            ).values_list(*fields)
        ]
    out: dict[int, list[Slot]] = defaultdict(list)
    for researcher, given, family, block in rows:
        out[researcher].append((given, family, block))
    return dict(out)


def matchable_views(
    block_keys: Iterable[str] | None, rarities: NameRarities
) -> tuple[list[AuthorshipView], frozenset[int]]:
    """The authorships a matching run matches, as views.

    Person authorships not yet assigned, on visible papers, not held by a
    pending ``attach`` proposal to a live researcher. Those in a pending
    ``new`` proposal, or in an attach to a researcher merged away or retired
    since, are matched again: a paper that arrived since, or a researcher
    created since, may change their cluster (the matcher then supersedes the
    old proposal).

    Args:
        block_keys: only these blocks; None for every block.
        rarities: name rarities (:func:`corpus_given_rarities`).

    Returns:
        ``(views by id, ids held by a pending new proposal or a dead attach)``:
        a draft holding one of the latter supersedes those proposals. Two
        queries per :data:`CHUNK` authorships; for some blocks on PostgreSQL,
        written-out statements (:mod:`curation.matching_sql`).
    """
    if block_keys is not None:
        block_keys = list(block_keys)
    if block_keys is not None and matching_sql.enabled():
        read = matching_sql.matchable_rows(block_keys)
    else:
        # One correlated lookup (so a run over a few blocks looks up only its
        # own authorships' proposals) tells both: the kind of a pending
        # proposal holding the authorship, a live "attach" first.
        dead = _dead_attach("proposal__")
        pending_kind = (
            Proposal.authorships.through.objects.filter(
                authorship_id=OuterRef("pk"), proposal__status=Proposal.Status.PENDING
            )
            .annotate(
                held_as=Case(
                    When(dead, then=Value(DEAD_ATTACH)), default=F("proposal__kind")
                )
            )
            .order_by("held_as")
            .values("held_as")[:1]
        )
        qs = (
            Authorship.objects.filter(
                researcher__isnull=True, is_collaboration=False, paper__hidden=False
            )
            .exclude(block_key="")
            .annotate(pending=Subquery(pending_kind))
            .order_by("id")
        )
        if block_keys is not None:
            qs = qs.filter(block_key__in=block_keys)
        read = qs.values_list(*_VIEW_FIELDS, "pending")
    rows = [row for row in read if row[-1] != Proposal.Kind.ATTACH]
    held = frozenset(
        row[0] for row in rows if row[-1] in (Proposal.Kind.NEW, DEAD_ATTACH)
    )
    return _views([row[:-1] for row in rows], rarities), held


def pending_attach_papers(
    *,
    researcher_ids: Iterable[int] | None = None,
    paper_ids: Iterable[int] | None = None,
    created_before: datetime | None = None,
) -> dict[int, frozenset[int]]:
    """The papers pending attach proposals give researchers.

    One person holds one slot of a paper, so a matching run proposes no
    other slot of such a paper to the researcher (wherever that slot sits
    now: a re-harvest may have moved it to another block), and no merge of
    two researchers that would then hold two slots of one paper.

    Args:
        researcher_ids: only attaches to these researchers; None for any.
        paper_ids: only attaches of slots on these papers; None for any.
        created_before: only attaches proposed before this aware datetime
            (those a fanned-out run found pending when it started:
            :func:`curation.services.matching_finish`); None for any.

    Returns:
        ``{researcher id: paper ids}``, only researchers with such an attach;
        one query (a written-out statement on PostgreSQL:
        :mod:`curation.matching_sql`), none when either collection is empty.
    """
    researcher_ids = None if researcher_ids is None else list(researcher_ids)
    paper_ids = None if paper_ids is None else list(paper_ids)
    if researcher_ids == [] or paper_ids == []:
        return {}
    if matching_sql.enabled() and created_before is None:
        rows = matching_sql.pending_attach_rows(researcher_ids, paper_ids)
    else:
        pairs = Proposal.authorships.through.objects.filter(
            proposal__status=Proposal.Status.PENDING,
            proposal__kind=Proposal.Kind.ATTACH,
        )
        if researcher_ids is not None:
            pairs = pairs.filter(proposal__researcher_id__in=researcher_ids)
        if paper_ids is not None:
            pairs = pairs.filter(authorship__paper_id__in=paper_ids)
        if created_before is not None:
            pairs = pairs.filter(proposal__created__lt=created_before)
        rows = pairs.values_list("proposal__researcher_id", "authorship__paper_id")
    out: dict[int, set[int]] = defaultdict(set)
    for researcher, paper in rows:
        out[researcher].add(paper)
    return {r: frozenset(papers) for r, papers in out.items()}


@dataclass(frozen=True)
class Suspect:
    """A researcher whose authorships look like several people.

    Attributes:
        profile: the researcher's profile.
        block_key: the researcher's block.
        suspicion: the sign (:func:`curation.matching.overmerge.suspect`).
        views: the researcher's authorships, by id.
    """

    profile: ProfileView
    block_key: str
    suspicion: Suspicion
    views: tuple[AuthorshipView, ...]


@dataclass(frozen=True)
class ResearcherSnapshot:
    """The live researchers of some blocks as one matching run reads them.

    Attributes:
        profiles: ``{block_key: [ProfileView, ...]}``, each list by researcher id;
            researchers without any authorship are left out.
        orcid_conflicts: the researchers among them whose authorships carry more
            than one ORCID iD (see :func:`orcid_conflicts`), by researcher id.
        suspects: the researchers among them whose authorships look like
            several people on other signs (:func:`curation.matching.overmerge.
            suspect`), by researcher id.
    """

    profiles: dict[str, list[ProfileView]]
    orcid_conflicts: list[OrcidConflict]
    suspects: list[Suspect] = field(default_factory=list)

    def revisions(self) -> dict[int, int]:
        """``{researcher id: revision}`` as read."""
        return {p.id: p.revision for ps in self.profiles.values() for p in ps}


# What a researcher's profile was built from: (revision, ORCID, locked, its own
# source ids with their OpenAlex survivors) as read.
_Head = tuple[int, str, bool, frozenset[str]]
# One researcher's built profile, ``{ORCID iD: [authorship id]}`` of its
# authorships that carry one, and what makes it a suspect (None for most).
_Built = tuple[ProfileView, dict[str, list[int]], Suspect | None]
# The profiles that incremental runs built, by database: the rarity table they
# were built with, and ``{researcher id: (head, built)}`` least recently used
# first. One is reused while its researcher's head is unchanged and the rarity
# table is the one remembered (so for at most ``CURATION_RARITY_SECONDS``):
# every move of an authorship to or from a researcher goes through
# curation.changes, every harvest change of an assigned authorship (deleted,
# given an ORCID iD or affiliations) through harvest.services.upsert, and every
# OpenAlex merge or new profile ORCID iD behind its slots through
# harvest.services.authors; all bump the revision.
PROFILE_MEMORY = 50_000
_PROFILES: dict[str, tuple[NameRarities, OrderedDict[int, tuple]]] = {}


def _profile_memo(rarities: NameRarities) -> OrderedDict[int, tuple]:
    database = connection.settings_dict["NAME"]
    held = _PROFILES.get(database)
    if held is None or held[0] is not rarities:
        held = (rarities, OrderedDict())
        _PROFILES[database] = held
    return held[1]


def _in_one_frame(
    members: list[AuthorshipView], block: str, rarities: NameRarities
) -> list[AuthorshipView]:
    """A researcher's authorships, those printed in another block read in its
    own (:func:`curation.matching.variants.view_in_block`): a curator merged
    ``"Zhang Ping"`` into ``"Ping Zhang"``, and its given names are to read
    ``"Ping"``, not ``"Zhang"`` and ``"Ping"``. A view read so takes the
    rarities of the names it reads as."""
    if all(v.block_key == block for v in members):
        return members
    home = next((v.family for v in members if v.block_key == block), "")
    out = []
    for v in members:
        read = variants.view_in_block(v, block, home)
        if read is not v:
            read = replace(
                read,
                given_rarity=_given_rarity(read.given, rarities),
                family_rarity=rarities.family.get(
                    fold(read.family), rarities.family_unseen
                ),
            )
        out.append(read)
    return out


def _members(
    researcher_ids: Iterable[int], rarities: NameRarities
) -> dict[int, list[AuthorshipView]]:
    """``{researcher id: its authorships as views, by id}``, as printed; those
    with none are left out. Two queries a chunk."""
    rows_of: dict[int, list[tuple]] = defaultdict(list)
    for chunk in _chunks(sorted(set(researcher_ids))):
        for row in (
            matching_sql.rows_of_researchers(chunk)
            if matching_sql.enabled()
            else Authorship.objects.filter(researcher_id__in=chunk)
            .order_by("id")
            .values_list("researcher_id", *_VIEW_FIELDS)
        ):
            rows_of[row[0]].append(row[1:])
    rows = [row for rs in rows_of.values() for row in rs]
    views = dict(zip((row[0] for row in rows), _views(rows, rarities), strict=True))
    return {pk: [views[row[0]] for row in rs] for pk, rs in rows_of.items()}


def _profile_of_head(
    members: list[AuthorshipView], pk: int, head: _Head
) -> ProfileView:
    """The profile of researcher ``pk`` made of ``members``, with what its
    head was read with (revision, ORCID iD, lock, source ids)."""
    revision, orcid, locked, source_ids = head
    return profile_of(
        members,
        id=pk,
        orcid=orcid,
        locked=locked,
        revision=revision,
        source_ids=source_ids,
    )


def _build_profiles(
    heads: dict[int, _Head], blocks: dict[int, str], rarities: NameRarities
) -> dict[int, _Built]:
    """Profiles of these researchers from their authorships: two queries a chunk.

    ``heads`` and ``blocks`` are by researcher id; each researcher with an
    authorship gets a :data:`_Built`.
    """
    built: dict[int, _Built] = {}
    for pk, printed in _members(heads, rarities).items():
        members = _in_one_frame(printed, blocks[pk], rarities)
        orcids: dict[str, list[int]] = defaultdict(list)
        for v in members:
            if v.orcid:
                orcids[v.orcid].append(v.id)
        profile = _profile_of_head(members, pk, heads[pk])
        suspicion = overmerge.suspect(members)
        built[pk] = (
            profile,
            dict(orcids),
            Suspect(profile, blocks[pk], suspicion, tuple(members))
            if suspicion
            else None,
        )
    return built


# What a researcher's head is read from (:func:`_heads`).
_HEAD_FIELDS = (
    "pk",
    "block_key",
    "revision",
    "orcid",
    "locked",
    "openalex_author_id",
    "s2_author_id",
)


def _heads(rows: Iterable[tuple]) -> tuple[dict[int, _Head], dict[int, str]]:
    """``({researcher id: head}, {researcher id: block key})`` of researcher
    rows of :data:`_HEAD_FIELDS`; a source id OpenAlex merged into another
    brings its survivor's along (:func:`_merged_survivors`)."""
    heads: dict[int, _Head] = {}
    block_of: dict[int, str] = {}
    for pk, block, revision, orcid, locked, openalex_id, s2_id in rows:
        ids = source_ids_of(openalex_id or "", s2_id or "")
        heads[pk] = (revision, orcid or "", locked, ids)
        block_of[pk] = block
    survivors = _merged_survivors({i for head in heads.values() for i in head[3]})
    for pk, (revision, orcid, locked, ids) in list(heads.items()):
        if ids & survivors.keys():
            later = {survivors[i] for i in ids if i in survivors}
            heads[pk] = (revision, orcid, locked, ids | later)
    return heads, block_of


def researcher_profile(
    researcher_id: int, rarities: NameRarities | None = None
) -> ProfileView | None:
    """One researcher's profile as a matching run would build it now.

    Args:
        researcher_id: a researcher id.
        rarities: name rarities (:func:`corpus_given_rarities`); None leaves
            every rarity at 0.0 (enough to compare names).

    Returns:
        Its ProfileView, its authorships read in its own block's frame;
        None when it does not exist or holds no authorship. Three queries.
    """
    heads, block_of = _heads(
        Researcher.objects.filter(pk=researcher_id).values_list(*_HEAD_FIELDS)
    )
    built = _build_profiles(
        heads, block_of, rarities if rarities is not None else NameRarities()
    )
    return built[researcher_id][0] if researcher_id in built else None


def researcher_names(
    researcher_id: int, block_key: str, *, orcid: str = ""
) -> ProfileView | None:
    """A researcher's names as its authorships print them, read in its own
    block's frame: enough to tell whether a name can be its person's
    (:func:`curation.matching.features.names_meet`), without reading its
    papers.

    Args:
        researcher_id: a researcher id.
        block_key: its block.
        orcid: its ORCID iD ("" for none).

    Returns:
        A ProfileView of ``given_names`` and ``family`` (the first printed in
        its block, else the first printed) and ``orcid``; None when it holds
        no authorship. One query.
    """
    printed = list(
        Authorship.objects.filter(researcher_id=researcher_id)
        .values_list("given_name", "family_name", "block_key")
        .distinct()
        .order_by("given_name", "family_name", "block_key")
    )
    if not printed:
        return None
    home = next((f for _, f, b in printed if b == block_key), printed[0][1])
    givens = []
    for given, family, block in printed:
        read = (
            (given, family)
            if block == block_key
            else variants.name_in_block(given, family, block_key, home)
        )
        givens.append(read[0] if read else given)
    return ProfileView(
        id=researcher_id,
        given_names=tuple(dict.fromkeys(givens)),
        family=home,
        orcid=orcid,
    )


def moved_away_since(researcher_id: int, since: datetime) -> list[int]:
    """The authorships curation moved off a researcher after ``since`` (a
    split, a move, a detach, an undone attach or merge), by id; those moved
    back since count too. One query (on SQLite, two)."""
    moved = []
    for event in researcher_history(researcher_id=researcher_id).filter(
        created__gt=since
    ):
        moves = event.moves if isinstance(event.moves, list) else []
        moved += [
            m["authorship"]
            for m in moves
            if isinstance(m, dict) and m.get("before") == researcher_id
        ]
    return sorted(set(moved))


@dataclass(frozen=True)
class Visitor:
    """A live researcher of another block that holds authorships printed in
    this one, read in this block's frame (:func:`visiting_profiles`).

    Attributes:
        profile: its profile, made of its authorships printed in this
            block or read into it (:func:`_in_one_frame`), so that it is
            scored with this block's features.
        home: its own block key.
        holds: how many of its authorships are printed in this block (its
            profile here is made of those and of the others that read into
            it).
    """

    profile: ProfileView
    home: str
    holds: int


def _visiting() -> QuerySet[Authorship]:
    """The authorships live researchers hold printed in another block than
    theirs (:func:`visiting_profiles`)."""
    return (
        Authorship.objects.filter(
            researcher__isnull=False,
            researcher__merged_into__isnull=True,
            researcher__retired=False,
        )
        .exclude(block_key="")
        .exclude(researcher__block_key="")
        .exclude(block_key=F("researcher__block_key"))
        .order_by()
    )


def visiting_profiles(
    block_keys: Iterable[str] | None, rarities: NameRarities
) -> dict[str, list[Visitor]]:
    """The researchers of other blocks that hold authorships printed in these.

    A researcher lives in one block (its display name's), yet can hold
    authorships printed in another: a curator merged "Zhang Ping" (block
    ``ping z``) with "Ping Zhang" (``zhang p``), and the survivor is the one of
    ``ping z``; or moved a paper. A new "Ping Zhang" paper has no reading into
    ``ping z`` ("Ping" is not among the frequent family names a swapped
    reading needs, :func:`curation.names.block_key_readings`), so without
    this its own block never meets the profile that holds its person's
    papers (stop 39's note: it was proposed as ``new``, then as a merge).
    A researcher visits a block where one of its authorships printed
    elsewhere reads into it, or where most of its authorships are printed;
    a name its other names never meet (a married name) is left to curators.

    Args:
        block_keys: the blocks (a sub-block name ``"key/sub"`` counts as
            ``key``); None for every block.
        rarities: name rarities (:func:`corpus_given_rarities`).

    Returns:
        ``{block: [Visitor, ...] by researcher id}`` for the blocks some
        researcher of another block visits. One query per :data:`CHUNK`
        block keys for the pairs (on the indexed ``block_key``; 0.8 ms for
        a block run among 100,000 researchers in PostgreSQL), one for the
        heads and two per :data:`CHUNK` visitors for their authorships.
    """
    pairs = _visiting().values_list("researcher_id", "block_key").distinct()
    if block_keys is None:
        found = list(pairs)
    else:
        keys = sorted({k.split("/", 1)[0] for k in block_keys})
        found = [
            row for chunk in _chunks(keys) for row in pairs.filter(block_key__in=chunk)
        ]
    visits: dict[int, set[str]] = defaultdict(set)
    for pk, block in found:
        visits[pk].add(block)
    if not visits:
        return {}
    heads, home_of = _heads(
        Researcher.objects.filter(pk__in=sorted(visits)).values_list(*_HEAD_FIELDS)
    )
    members_of = _members(heads, rarities)
    out: dict[str, list[Visitor]] = defaultdict(list)
    for pk in sorted(heads):
        printed = members_of.get(pk, [])
        home = home_of[pk]
        for block in sorted(visits[pk]):
            # None left (moved away since the pairs were read): no visitor.
            holds = sum(1 for v in printed if v.block_key == block)
            if not holds:
                continue
            read = _in_one_frame(printed, block, rarities)
            # Its other names must meet the block (one printed elsewhere reads
            # into it), or most of what it holds be printed there (a profile
            # renamed into another block): a curator's one "Wei Wang" paper
            # moved onto a "Zhang Ping" by mistake drew the next six "Wei
            # Wang" papers of that institution to him (hostile trial).
            if holds * 2 <= len(printed) and not any(
                v.block_key != block and r.block_key == block
                for v, r in zip(printed, read, strict=True)
            ):
                continue
            # Read from what it holds or reads into the block only: not with
            # every given name it prints elsewhere.
            members = [v for v in read if v.block_key == block]
            profile = _profile_of_head(members, pk, heads[pk])
            out[block].append(Visitor(profile, home, holds))
    return dict(out)


def researcher_snapshot(
    block_keys: Iterable[str],
    rarities: NameRarities | None = None,
    *,
    remembered: bool = False,
) -> ResearcherSnapshot:
    """The live researchers of the given blocks: profiles, ORCID conflicts, suspects.

    Args:
        block_keys: block keys (a sub-block name ``"key/sub"`` counts as ``key``).
        rarities: name rarities (:func:`corpus_given_rarities`).
        remembered: reuse what this process built for an earlier incremental
            run with the same remembered ``rarities`` table, for the researchers
            whose revision, ORCID and lock have not changed since (at most
            :data:`PROFILE_MEMORY` researchers, least recently used dropped). A
            run over a block of 50 researchers then reads one row per researcher
            instead of every authorship and co-author of theirs.

    Returns:
        A ResearcherSnapshot whose profiles carry the revisions read. One query
        per :data:`CHUNK` keys, and two per :data:`CHUNK` researchers not
        remembered; the ORCID conflicts and suspects come from the same rows.
    """
    rarities = rarities if rarities is not None else NameRarities()
    wanted = sorted({k.split("/", 1)[0] for k in block_keys})
    heads, block_of = _heads(
        row
        for start in range(0, len(wanted), CHUNK)
        for row in (
            matching_sql.live_researcher_rows(wanted[start : start + CHUNK])
            if matching_sql.enabled()
            else Researcher.objects.live()
            .filter(block_key__in=wanted[start : start + CHUNK])
            .values_list(*_HEAD_FIELDS)
        )
    )
    memo = _profile_memo(rarities) if remembered else None
    built: dict[int, _Built] = {}
    if memo is not None:
        for pk, head in heads.items():
            known = memo.get(pk)
            if known is not None and known[0] == head:
                built[pk] = known[1]
                memo.move_to_end(pk)
    fresh = _build_profiles(
        {pk: head for pk, head in heads.items() if pk not in built}, block_of, rarities
    )
    if memo is not None:
        for pk, made in fresh.items():
            memo[pk] = (heads[pk], made)
        while len(memo) > PROFILE_MEMORY:
            memo.popitem(last=False)
    built.update(fresh)
    profiles: dict[str, list[ProfileView]] = defaultdict(list)
    conflicts = []
    suspects = []
    for pk in sorted(built):
        profile, orcids, suspect = built[pk]
        profiles[block_of[pk]].append(profile)
        if suspect is not None:
            suspects.append(suspect)
        if len(orcids) > 1:
            conflicts.append(
                OrcidConflict(
                    researcher_id=pk,
                    orcid=heads[pk][1],
                    block_key=block_of[pk],
                    by_orcid={o: sorted(a) for o, a in orcids.items()},
                )
            )
    return ResearcherSnapshot(dict(profiles), conflicts, suspects)


def _merged_survivors(source_ids: set[str]) -> dict[str, str]:
    """``{"openalex:<old>": "openalex:<survivor>"}`` for the OpenAlex ids among
    ``source_ids`` whose stored profile OpenAlex merged into another: a
    researcher's own id, set by a curator, keeps meeting the slots that the
    merge moved to the survivor (harvest.services.authors). No query when no
    OpenAlex id is given."""
    wanted = sorted(i.split(":", 1)[1] for i in source_ids if i.startswith("openalex:"))
    if not wanted:
        return {}
    return {
        f"openalex:{old}": f"openalex:{new}"
        for old, new in SourceAuthor.objects.filter(
            source="openalex", external_id__in=wanted
        )
        .exclude(merged_into="")
        .values_list("external_id", "merged_into")
    }


def cannot_links(researcher_ids: Iterable[int]) -> set[tuple[str, int, int]]:
    """Cannot-link constraints touching these researchers, and those of the
    researchers merged into them (:func:`_merged_cannot_links`).

    Returns:
        ``{("a", authorship_id, researcher_id)}`` for authorship/researcher pairs and
        ``{("r", low_id, high_id)}`` for researcher pairs.
    """
    ids = set(researcher_ids)
    out: set[tuple[str, int, int]] = set()
    for chunk in _chunks(sorted(ids)):
        for rid, aid, other in (
            matching_sql.cannot_link_rows(chunk)
            if matching_sql.enabled()
            else Constraint.objects.filter(
                kind=Constraint.Kind.CANNOT_LINK, researcher_id__in=chunk, active=True
            ).values_list("researcher_id", "authorship_id", "other_researcher_id")
        ):
            if aid:
                out.add(("a", aid, rid))
            elif other:
                lo, hi = sorted((rid, other))
                out.add(("r", lo, hi))
    return out | _merged_cannot_links(ids)


def _merged_cannot_links(live: set[int]) -> set[tuple[str, int, int]]:
    """The cannot-links of researchers merged away into these, as the
    survivor's: "this authorship is not R" holds for what R became. Read, not
    copied, so undoing the merge or the decision takes it back. One query for
    every merged-away researcher (merges are curators' acts: thousands, not
    millions; a chain of merges is followed), whatever the number of researchers
    read, and one a :data:`CHUNK` of those merged into these (an IN list over
    the researchers read cost 80 ms for 20,000 of them in bench/matching.py)."""
    into = dict(
        Researcher.objects.filter(merged_into__isnull=False).values_list(
            "pk", "merged_into"
        )
    )

    def root(pk: int) -> int:
        seen = set()
        while pk in into and pk not in seen:
            seen.add(pk)
            pk = into[pk]
        return pk

    survivor_of = {pk: r for pk in into if (r := root(pk)) in live}
    losers = sorted(survivor_of)
    out: set[tuple[str, int, int]] = set()
    for chunk in _chunks(losers):
        for rid, aid, other in Constraint.objects.filter(
            Q(researcher_id__in=chunk) | Q(other_researcher_id__in=chunk),
            kind=Constraint.Kind.CANNOT_LINK,
            active=True,
        ).values_list("researcher_id", "authorship_id", "other_researcher_id"):
            rid = survivor_of.get(rid, rid)
            if aid:
                out.add(("a", aid, rid))
            elif other:
                other = survivor_of.get(other, other)
                if other != rid:
                    out.add(("r", *sorted((rid, other))))
    return out


def holders(authorship_ids: Iterable[int]) -> dict[int, int]:
    """``{authorship id: researcher id}`` of these authorships that a researcher
    holds (one query a :data:`CHUNK` of ids)."""
    out: dict[int, int] = {}
    for chunk in _chunks(sorted(set(authorship_ids))):
        out.update(
            Authorship.objects.filter(
                pk__in=chunk, researcher__isnull=False
            ).values_list("pk", "researcher_id")
        )
    return out


def orcid_holders(orcids: Iterable[str]) -> dict[str, int]:
    """``{ORCID iD: researcher id}`` of the researchers holding these iDs (one
    query a :data:`CHUNK`)."""
    out: dict[str, int] = {}
    for chunk in _chunks(sorted(set(orcids))):
        out.update(
            Researcher.objects.filter(orcid__in=chunk).values_list("orcid", "pk")
        )
    return out


def orcid_slots(orcids: Iterable[str]) -> dict[str, list[IdSlot]]:
    """Every byline slot printing these ORCID iDs, assigned or not.

    Source: ``Authorship.orcid``, as the sources print it with the byline
    (Crossref ``message.author[].ORCID``, OpenAlex
    ``work.authorships[].author.orcid``).

    Args:
        orcids: bare iDs.

    Returns:
        ``{iD: [IdSlot]}`` by authorship id, for the iDs printed on some
        slot; one query a :data:`CHUNK` of iDs.
    """
    out: dict[str, list[IdSlot]] = defaultdict(list)
    for chunk in _chunks(sorted(set(orcids) - {""})):
        for orcid, pk, given, family in (
            Authorship.objects.filter(orcid__in=chunk)
            .order_by("pk")
            .values_list("orcid", "pk", "given_name", "family_name")
        ):
            out[orcid].append(IdSlot(pk, given, family))
    return dict(out)


def orcids_shared() -> dict[str, list[int]]:
    """The ORCID iDs that two or more live researchers hold: as their own iD
    or printed on an authorship they hold.

    Returns:
        ``{iD: [researcher id, ...]}`` (ids ascending), only iDs with two or
        more; two queries.
    """
    held: dict[str, set[int]] = defaultdict(set)
    for orcid, pk in (
        Researcher.objects.live()
        .filter(orcid__isnull=False)
        .exclude(orcid="")
        .values_list("orcid", "pk")
    ):
        held[orcid].add(pk)
    for orcid, pk in (
        Authorship.objects.filter(
            researcher__isnull=False,
            researcher__merged_into__isnull=True,
            researcher__retired=False,
        )
        .exclude(orcid="")
        .values_list("orcid", "researcher_id")
        .distinct()
    ):
        held[orcid].add(pk)
    return {o: sorted(ids) for o, ids in sorted(held.items()) if len(ids) > 1}


def must_links(researcher_ids: Iterable[int]) -> set[tuple[int, int]]:
    """Active must-link constraints of these researchers.

    Returns:
        ``{(authorship_id, researcher_id)}``: a curator said the authorship is
        that researcher's, so no split proposal may move it off.
    """
    out: set[tuple[int, int]] = set()
    for chunk in _chunks(sorted(set(researcher_ids))):
        out.update(
            Constraint.objects.filter(
                kind=Constraint.Kind.MUST_LINK,
                researcher_id__in=chunk,
                active=True,
                authorship__isnull=False,
            ).values_list("authorship_id", "researcher_id")
        )
    return out


def display_names(researcher_ids: Iterable[int]) -> dict[int, str]:
    """``{researcher id: display name}`` of these researchers (one query a
    :data:`CHUNK` of ids)."""
    out: dict[int, str] = {}
    for chunk in _chunks(sorted(set(researcher_ids))):
        out.update(
            Researcher.objects.filter(pk__in=chunk).values_list("pk", "display_name")
        )
    return out


def confirmed_links(researcher_ids: Iterable[int]) -> set[tuple[int, int]]:
    """Must-links of these researchers that a curator gave one authorship at a time.

    Those of a curator's move of the authorship, a researcher split whose
    partition the curator chose, an approved claim, the approval of an
    ``attach`` or ``split`` proposal, or the rejection of a ``split`` proposal.
    Not those of automation (the identifier policy), nor of approving a ``new``
    cluster or a merge wholesale: an
    over-merged profile is often such a cluster, and a split proposal must be
    able to move part of it off (see curation.proposing.splits.propose_suspect_splits).

    Returns:
        ``{(authorship_id, researcher_id)}``.
    """
    kinds = CurationEvent.Kind
    one_by_one = (
        Q(event__kind__in=[kinds.MOVED, kinds.SPLIT, kinds.CLAIM_APPROVED])
        | Q(
            event__kind=kinds.PROPOSAL_APPLIED,
            event__proposal__kind__in=[Proposal.Kind.ATTACH, Proposal.Kind.SPLIT],
        )
        | Q(
            event__kind=kinds.PROPOSAL_REJECTED,
            event__proposal__kind=Proposal.Kind.SPLIT,
        )
    )
    out: set[tuple[int, int]] = set()
    for chunk in _chunks(sorted(set(researcher_ids))):
        out.update(
            Constraint.objects.filter(
                one_by_one,
                kind=Constraint.Kind.MUST_LINK,
                researcher_id__in=chunk,
                active=True,
                authorship__isnull=False,
                event__actor__isnull=False,
            ).values_list("authorship_id", "researcher_id")
        )
    return out


def curator_merges(authorship_ids: Iterable[int]) -> list[tuple[frozenset[int], ...]]:
    """The sides of each merge a curator made one at a time that joined any of
    these authorships and stands (is not undone now): a merge in the admin,
    or a ``merge`` proposal approved on its own (alone, or the only proposal
    a bulk action selected). Not a merge approved in a bulk action with
    others, whose mistakes a split proposal must still be able to catch, nor
    one of the identifier policy.

    A side is the authorships one researcher brought to the merge: each
    merged-away researcher's (the event's moves) and the survivor's as the
    event recorded them (``extra["kept"]``, :func:`curation.edits.held_by`;
    merges recorded before it have no survivor's side). The curator saw these
    papers on the merge's confirmation page and said they are one person's, so
    a split parting two sides again is the same evidence, as a rejected merge
    is (DESIGN.md, "Curation: matching" 4; :func:`curation.services.
    _held_by_merges`).

    An authorship stays on its side while nothing placed it since the merge,
    or while what last placed it (its latest must-link) was a curator acting
    one at a time: a curator who moved it away and back still vouches for it,
    but one moved away by a curator and brought back by a bulk approval is no
    longer the merge's. Moves and ids edited by hand into other shapes are
    passed over.

    Returns:
        One tuple of sides (frozensets of authorship ids) a merge, in event
        order; sides may hold authorships no longer on the researcher. Three
        queries, plus one per :data:`CHUNK` authorships and one per undo of
        a merge found.
    """
    from curation.history import event_undone, is_id

    kinds = CurationEvent.Kind
    links: list[tuple[int, int, str, str | None, int | None, int | None]] = []
    for chunk in _chunks(sorted(set(authorship_ids))):
        links += Constraint.objects.filter(
            kind=Constraint.Kind.MUST_LINK, authorship_id__in=chunk
        ).values_list(
            "authorship_id",
            "event_id",
            "event__kind",
            "event__proposal__kind",
            "event__actor_id",
            "event__batch_id",
        )
    batches = {
        pk: extra
        for pk, extra in CurationEvent.objects.filter(
            pk__in={batch for *_, batch in links if batch}
        ).values_list("pk", "extra")
    }

    def one_at_a_time(actor: int | None, batch: int | None) -> bool:
        if actor is None:
            return False
        if batch is None:
            return True
        extra = batches.get(batch)
        return (
            isinstance(extra, dict)
            and extra.get("done") == 1
            and not extra.get("skipped")
        )

    latest: dict[int, tuple[int, bool]] = {}  # authorship: (event, by a curator)
    merge_ids: set[int] = set()
    for authorship, event, kind, proposal_kind, actor, batch in links:
        curator = one_at_a_time(actor, batch)
        if event > latest.get(authorship, (0, False))[0]:
            latest[authorship] = (event, curator)
        merge = kind == kinds.MERGED or (
            kind == kinds.PROPOSAL_APPLIED and proposal_kind == Proposal.Kind.MERGE
        )
        if merge and curator:
            merge_ids.add(event)
    out: list[tuple[frozenset[int], ...]] = []
    events = (
        CurationEvent.objects.filter(pk__in=merge_ids)
        .order_by("pk")
        .values_list("pk", "moves", "extra")
    )
    for pk, moves, extra in events:
        if event_undone(event_id=pk):
            continue
        brought: dict[int, set[int]] = defaultdict(set)
        for m in moves if isinstance(moves, list) else ():
            if isinstance(m, dict) and is_id(m.get("authorship")):
                before = m.get("before")
                if is_id(before):
                    brought[before].add(m["authorship"])
        kept = extra.get("kept") if isinstance(extra, dict) else None
        sides = [ids for _, ids in sorted(brought.items())]
        if isinstance(kept, list):
            sides.insert(0, {k for k in kept if is_id(k)})

        def still(authorship: int, merge: int = pk) -> bool:
            event, curator = latest.get(authorship, (0, True))
            return event <= merge or curator

        out.append(
            tuple(
                frozenset(a for a in side if still(a))
                for side in sides
                if any(still(a) for a in side)
            )
        )
    return out


def researcher_revisions(researcher_ids: Iterable[int]) -> dict[int, int]:
    """``{researcher id: revision}`` now, for proposals to record what they saw."""
    out: dict[int, int] = {}
    for chunk in _chunks(sorted(set(researcher_ids))):
        out.update(
            Researcher.objects.filter(pk__in=chunk).values_list("pk", "revision")
        )
    return out


@dataclass(frozen=True)
class OrcidConflict:
    """A live researcher whose authorships carry more than one ORCID iD.

    Attributes:
        researcher_id: the researcher.
        orcid: the researcher's own iD or "".
        block_key: the researcher's block.
        by_orcid: ``{orcid: [authorship ids]}`` for the authorships with an iD.
    """

    researcher_id: int
    orcid: str
    block_key: str
    by_orcid: dict[str, list[int]]


def orcid_conflicts(block_keys: Iterable[str] | None = None) -> list[OrcidConflict]:
    """Live researchers (in these blocks, or all) with several ORCID iDs on them.

    Returns:
        One OrcidConflict per such researcher, by researcher id; one grouped query
        finds them, one more reads their authorships.
    """
    candidates = (
        Authorship.objects.filter(
            researcher__isnull=False,
            researcher__merged_into__isnull=True,
            researcher__retired=False,
        )
        .exclude(orcid="")
        .values("researcher_id")
        .annotate(n=Count("orcid", distinct=True))
        .filter(n__gt=1)
    )
    if block_keys is not None:
        wanted = {k.split("/", 1)[0] for k in block_keys}
        candidates = candidates.filter(researcher__block_key__in=wanted)
    ids = [row["researcher_id"] for row in candidates]
    if not ids:
        return []
    by_researcher: dict[int, dict[str, list[int]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for rid, aid, orcid in (
        Authorship.objects.filter(researcher_id__in=ids)
        .exclude(orcid="")
        .values_list("researcher_id", "id", "orcid")
    ):
        by_researcher[rid][orcid].append(aid)
    researchers = Researcher.objects.in_bulk(ids)
    return [
        OrcidConflict(
            researcher_id=rid,
            orcid=researchers[rid].orcid or "",
            block_key=researchers[rid].block_key,
            by_orcid={o: sorted(a) for o, a in by_researcher[rid].items()},
        )
        for rid in sorted(ids)
    ]


def unblocked_authorships() -> QuerySet[Authorship]:
    """Unassigned authorships matching never reads: their printed name folds
    to no block key (only punctuation, or characters with no Latin reading,
    :func:`curation.names.block_key`), so no block holds them and no proposal
    is made for them (``manage.py match`` names them). Collaborations and
    hidden papers' authorships are left out, as matching leaves them.

    Returns:
        The authorships, by id, with their papers.
    """
    return (
        Authorship.objects.filter(
            researcher__isnull=True,
            is_collaboration=False,
            paper__hidden=False,
            block_key="",
        )
        .select_related("paper")
        .order_by("id")
    )


def researcher_block_keys() -> list[str]:
    """The block keys that hold at least one live researcher, sorted."""
    return sorted(
        set(
            Researcher.objects.live()
            .exclude(block_key="")
            .values_list("block_key", flat=True)
        )
    )


@dataclass(frozen=True)
class BlockLinks:
    """What a matching run's plan reads to cut it into shards
    (:func:`block_links`).

    Attributes:
        sizes: ``{block: unassigned person authorships}`` (on hidden papers
            too: a plan may only over-join).
        researchers: ``{block: live researchers}`` of every block (a run
            over some blocks: of those and of the blocks their names read
            into).
        pairs: ``[(block, block)]`` whose matching meets, in no order: a name
            of one, read another way (:func:`curation.names.block_key_readings`),
            lands in the other and it holds researchers; a researcher of one
            holds authorships printed in the other (:func:`visiting_profiles`);
            unassigned authorships of both carry one ORCID iD.
    """

    sizes: dict[str, int]
    researchers: dict[str, int]
    pairs: list[tuple[str, str]]


def block_links(block_keys: Iterable[str] | None) -> BlockLinks:
    """The sizes of blocks and the pairs of blocks whose matching meets.

    Args:
        block_keys: the run's blocks; None for every block. A pair may name
            a block not among them (it joins two of them through it).

    Returns:
        :class:`BlockLinks`. One grouping query for the researchers, and one
        each for the unassigned authorships (by block, name and ORCID iD) and
        the visits per :data:`CHUNK` blocks; 0.9 s for 100,000 authorships in
        PostgreSQL, most of it reading each distinct name another way.
    """
    live = (
        Researcher.objects.live()
        .exclude(block_key="")
        .order_by()
        .values("block_key")
        .annotate(n=Count("id"))
        .values_list("block_key", "n")
    )
    unassigned = (
        Authorship.objects.filter(researcher__isnull=True, is_collaboration=False)
        .exclude(block_key="")
        .order_by()
        .values("block_key", "given_name", "family_name", "orcid")
        .annotate(n=Count("id"))
        .values_list("block_key", "given_name", "family_name", "orcid", "n")
    )
    visits = _visiting().values_list("block_key", "researcher__block_key").distinct()
    if block_keys is None:
        rows, pairs = list(unassigned), list(visits)
    else:
        chunks = list(_chunks(sorted(set(block_keys))))
        rows = [r for c in chunks for r in unassigned.filter(block_key__in=c)]
        pairs = [p for c in chunks for p in visits.filter(block_key__in=c)]
    readings: dict[tuple[str, str], set[str]] = {}
    for _, given, family, _, _ in rows:
        if (given, family) not in readings:
            readings[given, family] = {r.key for r in block_key_readings(given, family)}
    if block_keys is None:
        researchers = dict(live)
    else:
        # A run over some blocks counts the researchers of those and of the
        # blocks their names read into, not of every block.
        keys = set(block_keys).union(*readings.values())
        researchers = {
            k: n
            for chunk in _chunks(sorted(keys))
            for k, n in live.filter(block_key__in=chunk)
        }
    sizes: Counter[str] = Counter()
    first_of_orcid: dict[str, str] = {}
    for block, given, family, orcid, n in rows:
        sizes[block] += n
        pairs.extend(
            (block, key)
            for key in readings[given, family]
            if key != block and key in researchers
        )
        if orcid:
            pairs.append((block, first_of_orcid.setdefault(orcid, block)))
    return BlockLinks(dict(sizes), researchers, pairs)


def pending_superseded_proposals(authorship_ids: Iterable[int]) -> QuerySet[Proposal]:
    """Pending proposals a newer draft holding any of these authorships
    replaces, locked: ``new`` proposals, and attaches to a researcher merged
    away or retired since (:data:`DEAD_ATTACH`).

    Must run inside a transaction (``select_for_update``).
    """
    holding = Proposal.authorships.through.objects.filter(
        authorship_id__in=list(authorship_ids)
    ).values("proposal_id")
    dead = _dead_attach()
    return (
        Proposal.objects.select_for_update(of=("self",))
        .filter(Q(kind=Proposal.Kind.NEW) | dead)
        .filter(status=Proposal.Status.PENDING, id__in=holding)
        .order_by("pk")
    )


def _changed_since() -> list[int]:
    """The pending attaches whose researcher's revision is not the one they
    were proposed on, or whose authorship a harvest rewrote since, by id.
    Two queries. (A merge or split on another revision is not among them:
    a run that drafts it again brings the pending one up to date, so the
    proposal a curator is reading stays the one to approve.)"""
    pending = Proposal.objects.filter(
        status=Proposal.Status.PENDING, kind=Proposal.Kind.ATTACH
    )
    rows = pending.values_list(
        "pk", "researcher_id", "researcher_revisions", "researcher__revision"
    )
    changed = {
        pk
        for pk, researcher, seen, now in rows
        if isinstance(seen, dict) and seen.get(str(researcher)) != now
    }
    changed.update(
        pending.filter(authorships__modified__gt=F("created")).values_list(
            "pk", flat=True
        )
    )
    return sorted(changed)


def pending_dead_proposals() -> QuerySet[Proposal]:
    """Pending proposals naming a researcher merged away or retired since, and
    attach and new proposals of an authorship assigned or deleted since (a curator's
    move or assignment by hand, a claim, another proposal applied), locked,
    with their researchers: none of them can apply any more; and the
    attaches whose evidence has a ``frame`` (a researcher of another block),
    or whose researcher or authorship changed since they were proposed,
    which may no longer (:func:`curation.proposing.staleness._frame_lost`,
    :func:`curation.proposing.staleness._evidence_lost`).

    Must run inside a transaction (``select_for_update``).
    """
    assigned = Proposal.authorships.through.objects.filter(
        authorship__researcher__isnull=False
    ).values("proposal_id")
    changed = _changed_since()
    orphaned = Proposal.objects.filter(
        kind__in=[Proposal.Kind.ATTACH, Proposal.Kind.NEW],
        status=Proposal.Status.PENDING,
        authorships__isnull=True,
    ).values("pk")
    return (
        Proposal.objects.select_for_update(of=("self",))
        .select_related("researcher", "other_researcher")
        .filter(
            _gone("researcher")
            | _gone("other_researcher")
            | Q(
                kind__in=[Proposal.Kind.ATTACH, Proposal.Kind.NEW],
                pk__in=Subquery(assigned),
            )
            # A re-harvest deleted their authorships (the person left the
            # byline, or another took the slot).
            | Q(pk__in=Subquery(orphaned))
            # Attaches across blocks (curation.proposing.staleness._frame_lost), to be
            # checked: few beside the rest.
            | Q(kind=Proposal.Kind.ATTACH, evidence__has_key="frame")
            # Attaches whose researcher or authorship changed since
            # (curation.proposing.staleness._evidence_lost), to be checked.
            | Q(pk__in=changed)
        )
        .filter(status=Proposal.Status.PENDING)
        .order_by("pk")
    )


def pending_attaches_of_other_models(version: str) -> QuerySet[Proposal]:
    """Pending attach proposals scored by a model other than ``version``, not
    identifier-proven, locked, by id. Must run inside a transaction
    (``select_for_update``)."""
    return (
        Proposal.objects.select_for_update()
        .filter(
            status=Proposal.Status.PENDING,
            kind=Proposal.Kind.ATTACH,
            identifier_proven=False,
        )
        .exclude(model_version=version)
        .order_by("pk")
    )


def active_model() -> MatcherModel | None:
    """The newest active trained model, or None when none was trained."""
    return (
        MatcherModel.objects.filter(active=True).order_by("-trained_at", "-id").first()
    )


# The scoring model an incremental run last read, by database: (monotonic expiry
# time, weights).
_WEIGHTS: dict[str, tuple[float, float, scoring.Weights]] = {}


def active_weights(*, remembered: bool = False) -> scoring.Weights:
    """The scoring model matching uses: the newest active trained one, else the
    shipped one (:func:`shipped_weights`), else the hand-set defaults.

    Args:
        remembered: accept the model this process read less than
            ``CURATION_RARITY_SECONDS`` ago, as the rarities are (an incremental
            run; a model trained in another process reaches it within that
            time, one trained in this process at once). False reads it afresh
            and remembers it.
    """
    return _read_remembered(_WEIGHTS, remembered, _read_weights)


def joining_threshold(*, remembered: bool = False) -> float:
    """The pairwise score in [0, 1] at which matching joins clusters and
    attaches: the active model's own threshold, else
    ``CURATION_ATTACH_THRESHOLD`` (``remembered``: see :func:`active_weights`)."""
    weights = active_weights(remembered=remembered)
    return weights.threshold or settings.CURATION_ATTACH_THRESHOLD


def _read_weights() -> scoring.Weights:
    model = active_model()
    if model is None:
        return shipped_weights()
    try:
        return scoring.stored_weights(
            model.version, model.bias, model.weights, model.threshold
        )
    except ValueError as exc:
        # A row edited by hand: matching goes on with the shipped model (and
        # records its version on its proposals); the admin's Matcher models
        # page and manage.py matcher_models say why.
        logger.error(
            "matcher model %s cannot be scored with (%s): using the shipped model",
            model.version,
            exc,
        )
        return shipped_weights()


def matcher_description() -> str:
    """Which model matching scores with now, for a person: its version and
    where it comes from (the active model trained on this database, else
    :func:`fallback_description`).

    Returns:
        One line of text, no trailing period.
    """
    model = active_model()
    if model is not None and not model.problem:
        return f"{model.version} (the active model trained on this database)"
    return fallback_description()


def fallback_description() -> str:
    """What matching scores with while no trained model is active (or the
    active one cannot be scored with): "the shipped model <version>
    (<file>)", or "the hand-set default weights" saying why no shipped model
    is read and what writes one.

    Returns:
        One line of text, no trailing period.
    """
    weights = shipped_weights()
    if weights is not scoring.DEFAULT:
        path = Path(settings.CURATION_SHIPPED_MODEL).resolve()
        base = Path(settings.BASE_DIR).resolve()
        # The committed file by its place in the checkout, whatever the machine.
        shown = path.relative_to(base) if path.is_relative_to(base) else path
        return f"the shipped model {weights.version} ({shown})"
    path = settings.CURATION_SHIPPED_MODEL
    if not path:
        why = "CURATION_SHIPPED_MODEL is empty"
    elif Path(path).exists():
        why = f"the shipped model {path} cannot be read; the error log says why"
    else:
        why = f"no shipped model at {path}; manage.py train_matcher --ship writes it"
    return f"the hand-set default weights {weights.version} ({why})"


# Each missing or unreadable shipped-model file is said once a process (every
# matching run reads the model: a log line a run would bury the first).
_SHIPPED_WARNED: set[str] = set()


def shipped_weights() -> scoring.Weights:
    """The model committed with the code (``CURATION_SHIPPED_MODEL``, written by
    ``manage.py train_matcher --ship``), or the hand-set default weights when
    the setting is empty or the file is missing or unreadable, said loudly
    once a process (an ERROR log naming the file, the problem and the
    command that writes it): they match far worse (B³ F1 0.72 against 0.89
    on INSPIRE Wang, ``manage.py evaluate_matching``).

    Returns:
        The Weights, with their joining threshold (the defaults' is None:
        ``CURATION_ATTACH_THRESHOLD`` applies).
    """
    from curation.matching import shipped

    path = settings.CURATION_SHIPPED_MODEL
    if not path:
        return scoring.DEFAULT
    try:
        weights, _ = shipped.read(Path(path))
    except (OSError, ValueError) as exc:
        if str(path) not in _SHIPPED_WARNED:
            _SHIPPED_WARNED.add(str(path))
            logger.error(
                "no shipped matcher model (%s): matching with the hand-set "
                "default weights, which disambiguate far worse; write it with "
                "'manage.py train_matcher --ship' or point "
                "CURATION_SHIPPED_MODEL at it",
                exc,
            )
        return scoring.DEFAULT
    return weights


def pending_auto_apply(policy: auto_apply.Policy) -> list[Proposal]:
    """Pending proposals the auto-apply policy may apply, oldest first.

    What a full matching run applies besides those it created: the ones an
    earlier run saved but did not get to apply (a worker killed between
    saving and applying; their authorships are no longer matchable, so no
    later run proposes them again), that a lock or clash held, or that a
    stricter policy left waiting. A superset: ``new`` and ``attach``
    proposals identifier-proven or scored at least the policy's threshold (a
    ``new``'s score, its mean link, is never below its weakest link);
    :meth:`curation.deciding.auto_apply.Policy.clears` decides each.

    Args:
        policy: the policy in force.

    Returns:
        The proposals, by id; none in strict mode. One query.
    """
    if not policy.applies_any:
        return []
    sure = Q(identifier_proven=True)
    if policy.threshold is not None:
        sure |= Q(score__gte=policy.threshold)
    return list(
        Proposal.objects.filter(
            sure, status=Proposal.Status.PENDING, kind__in=sorted(auto_apply.KINDS)
        ).order_by("pk")
    )


# The evidence key of a proposal holding a slot of a paper of over
# COAUTHOR_MAX_BYLINE (100) authors: the admin's "large collaborations" lane
# (curation.admin.proposals.LaneFilter). Such slots print little beyond a
# name and a collaboration's shared affiliation, and were 51% of the demo's
# proposals (issue 47): the auto-apply policy places them when their links
# are sure, and the rest wait in their own lane, after the others.
LARGE_COLLABORATION = "large_collaboration"


def next_pending(after: int) -> int | None:
    """The id of the first pending proposal in queue order other than
    ``after`` (the queue's main lane first, as the list opens on it), or
    None when none waits."""
    pending = proposal_queue(
        Proposal.objects.filter(status=Proposal.Status.PENDING).exclude(pk=after)
    )
    main = pending.exclude(evidence__has_key=LARGE_COLLABORATION)
    found = main.values_list("pk", flat=True).first()
    if found is None:
        found = pending.values_list("pk", flat=True).first()
    return found


def known_fingerprints(fingerprints: Iterable[str]) -> dict[str, tuple[int, dict]]:
    """The fingerprints among these that are pending, rejected or reverted.

    Returns:
        ``{fingerprint: (proposal id, researcher revisions)}``; the revisions
        (``{"<researcher id>": revision}``) of a pending proposal, ``{}`` for a
        rejected or reverted one. One query per :data:`CHUNK` fingerprints.
    """
    found: dict[str, tuple[int, dict]] = {}
    fps = sorted(set(fingerprints))
    for start in range(0, len(fps), CHUNK):
        for fp, pk, status, revisions in Proposal.objects.filter(
            fingerprint__in=fps[start : start + CHUNK],
            status__in=[
                Proposal.Status.PENDING,
                Proposal.Status.REJECTED,
                Proposal.Status.REVERTED,
            ],
        ).values_list("fingerprint", "pk", "status", "researcher_revisions"):
            pending = status == Proposal.Status.PENDING
            if pending or fp not in found:
                found[fp] = (pk, (revisions or {}) if pending else {})
    return found


def merge_name_warnings(researchers: list[Researcher]) -> list[str]:
    """Why researchers a curator is about to merge look like different people
    on their printed names, for the merge confirmation page.

    Two researchers whose authorships share no family name (folded, particles
    aside: :func:`curation.names.family_core`), or whose given names cannot be
    one person's (:func:`curation.matching.features.names_meet`: "Jae-Weon"
    and "Jae-Joon"), are named, unless they carry one ORCID iD. The merge stays
    the curator's call; matching proposes splitting them again where each
    side holds :data:`overmerge.MIN_GROUP` papers or more apart.

    Args:
        researchers: the researchers chosen, in any order.

    Returns:
        One sentence per such pair, in id order; empty when none.
    """
    ids = sorted(r.pk for r in researchers)
    printed: dict[int, set[tuple[str, str]]] = {pk: set() for pk in ids}
    for pk, given, family in (
        Authorship.objects.filter(researcher_id__in=ids, is_collaboration=False)
        .values_list("researcher_id", "given_name", "family_name")
        .distinct()
    ):
        printed[pk].add((given, family))
    by_id = {r.pk: r for r in researchers}
    out = []
    for n, a in enumerate(ids):
        for b in ids[n + 1 :]:
            if not printed[a] or not printed[b]:
                continue
            if by_id[a].orcid and by_id[a].orcid == by_id[b].orcid:
                continue
            families_a = {family_core(f) for _, f in printed[a]}
            families_b = {family_core(f) for _, f in printed[b]}
            who = f"researchers {a} ({by_id[a].display_name}) and {b} "
            who += f"({by_id[b].display_name})"
            if not families_a & families_b:
                out.append(f"{who} print different family names")
                continue
            family = next(f for _, f in sorted(printed[a]))
            p, q = (
                ProfileView(
                    id=pk,
                    given_names=tuple(sorted({g for g, _ in printed[pk]})),
                    family=family,
                )
                for pk in (a, b)
            )
            if not names_meet(p, q):
                out.append(f"{who} print given names that cannot be one person's")
    return out


def proposal_queue(queryset: QuerySet[Proposal] | None = None) -> QuerySet[Proposal]:
    """Proposals in curator order: most papers affected first, then most uncertain.

    ``impact`` is the number of authorships a proposal moves (for a merge, those of
    the researcher that goes); ``uncertainty`` is the distance of the score from
    the joining threshold, for a split from 1 minus it (its score is 1 minus
    the pairwise score of its parts; small = a hard case). Deciding
    high-impact, borderline proposals first fixes the most papers per curator
    minute.

    Args:
        queryset: proposals to order (default: all).

    Returns:
        The QuerySet annotated with ``impact`` and ``uncertainty``, ordered by
        ``-impact``, ``uncertainty``, ``id``, researchers joined.
    """
    queryset = Proposal.objects.all() if queryset is None else queryset
    moved = (
        Proposal.authorships.through.objects.filter(proposal_id=OuterRef("pk"))
        .values("proposal_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    merged_away = (
        Authorship.objects.filter(researcher_id=OuterRef("other_researcher_id"))
        .values("researcher_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    threshold = joining_threshold()
    return (
        queryset.select_related("researcher", "other_researcher")
        .annotate(
            impact=Case(
                When(kind=Proposal.Kind.MERGE, then=Coalesce(Subquery(merged_away), 0)),
                default=Coalesce(Subquery(moved), 0),
            ),
            # A split scores 1 - the pairwise score of its parts: it is
            # borderline where that pairwise score meets the threshold.
            uncertainty=Case(
                When(
                    kind=Proposal.Kind.SPLIT,
                    then=Abs(F("score") - Value(1.0 - threshold)),
                ),
                default=Abs(F("score") - Value(threshold)),
            ),
        )
        .order_by("-impact", "uncertainty", "id")
    )


# Papers with more authors than this (collaborations) are not read name by name:
# the bound under which the matcher counts co-authors at all.
DOSSIER_MAX_BYLINE = COAUTHOR_MAX_BYLINE


@dataclass(frozen=True)
class DossierPaper:
    """One paper of a researcher, as the review page lists it.

    Attributes:
        authorship: the researcher's authorship on it (paper selected).
        coauthors: the other printed names in byline order (at most 8).
        more_coauthors: how many more co-authors the paper has.
    """

    authorship: Authorship
    coauthors: list[str]
    more_coauthors: int


@dataclass(frozen=True)
class Dossier:
    """What a curator needs to judge a researcher profile.

    Attributes:
        researcher: the profile.
        paper_count: its authorships (all papers, hidden ones included).
        years: ``(first, last)`` publication years, or None without dated papers.
        categories: ``[(category, papers)]``, most frequent first (at most 8).
        affiliations: ``[(affiliation as printed, papers)]`` (at most 6).
        coauthors: ``[(name as printed, shared papers)]`` (at most 10).
        papers: the newest papers first (at most ``limit``).
    """

    researcher: Researcher
    paper_count: int
    years: tuple[int, int] | None
    categories: list[tuple[str, int]]
    affiliations: list[tuple[str, int]]
    coauthors: list[tuple[str, int]]
    papers: list[DossierPaper]


# Co-authors listed for one paper on the curators' pages.
COAUTHORS_SHOWN = 8


def incoming_papers(authorships: Iterable[Authorship]) -> list[DossierPaper]:
    """The incoming authorships of an attach or ``new`` proposal as the review
    page lists them, each with its paper's other printed names.

    Args:
        authorships: authorships with their paper selected, in the order
            listed.

    Returns:
        One DossierPaper each, in that order: the first
        :data:`COAUTHORS_SHOWN` co-authors in byline order and how many more
        (a collaboration of more than :data:`DOSSIER_MAX_BYLINE` authors is
        read no further than its first ten slots). Two queries.
    """
    authorships = list(authorships)
    sizes = dict(
        Authorship.objects.filter(paper_id__in={a.paper_id for a in authorships})
        .values("paper_id")
        .annotate(n=Count("id"))
        .values_list("paper_id", "n")
    )
    bylines = _listed_bylines(sizes, [a.paper_id for a in authorships])
    return [_dossier_paper(a, sizes, bylines) for a in authorships]


def _listed_bylines(
    sizes: dict[int, int], listed: Iterable[int]
) -> dict[int, list[tuple[int, str]]]:
    """``{paper id: [(position, name as printed)]}`` of the papers of
    ``sizes`` (``{paper id: authors}``) of at most :data:`DOSSIER_MAX_BYLINE`
    authors, and the first ten slots of the larger ones among ``listed``:
    large collaborations say nothing about co-authorship and would read
    thousands of names. One query."""
    small = [pid for pid, n in sizes.items() if n <= DOSSIER_MAX_BYLINE]
    large = [pid for pid in listed if sizes.get(pid, 0) > DOSSIER_MAX_BYLINE]
    bylines: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for paper_id, position, name in Authorship.objects.filter(
        Q(paper_id__in=small) | Q(paper_id__in=large, position__lte=10)
    ).values_list("paper_id", "position", "raw_name"):
        bylines[paper_id].append((position, name))
    return bylines


def _dossier_paper(
    a: Authorship, sizes: dict[int, int], bylines: dict[int, list[tuple[int, str]]]
) -> DossierPaper:
    others = [n for pos, n in sorted(bylines[a.paper_id]) if pos != a.position]
    shown = others[:COAUTHORS_SHOWN]
    total = sizes.get(a.paper_id, 1) - 1
    return DossierPaper(a, shown, max(total - len(shown), 0))


def researcher_dossier(
    researcher: Researcher,
    *,
    limit: int = 25,
    highlight: Iterable[int] = (),
) -> Dossier:
    """Summarise a researcher for the review and split pages in a few queries.

    Args:
        researcher: any researcher (merged-away ones show what they held).
        limit: papers listed, newest first; the counts cover every paper.
        highlight: authorship ids always listed (the ones a proposal moves),
            whatever their date.

    Returns:
        A Dossier; three queries whatever the paper count. Co-authors are counted
        over papers of at most ``DOSSIER_MAX_BYLINE`` authors.
    """
    rows = list(
        Authorship.objects.filter(researcher=researcher)
        .select_related("paper")
        .order_by(F("paper__published").desc(nulls_last=True), "-paper_id", "position")
    )
    wanted = set(highlight)
    listed = rows[:limit] + [a for a in rows[limit:] if a.pk in wanted]
    sizes = dict(
        Authorship.objects.filter(paper_id__in=[a.paper_id for a in rows])
        .values("paper_id")
        .annotate(n=Count("id"))
        .values_list("paper_id", "n")
    )
    bylines = _listed_bylines(sizes, [a.paper_id for a in listed])
    categories: Counter = Counter()
    affiliations: Counter = Counter()
    coauthors: Counter = Counter()
    years = []
    for a in rows:
        categories.update(strings_in(a.paper.categories))
        affiliations.update(set(strings_in(a.affiliations)))
        if a.paper.published:
            years.append(a.paper.published.year)
        if sizes.get(a.paper_id, 0) <= DOSSIER_MAX_BYLINE:
            coauthors.update(
                {name for pos, name in bylines[a.paper_id] if pos != a.position}
            )
    papers = [_dossier_paper(a, sizes, bylines) for a in listed]
    return Dossier(
        researcher=researcher,
        paper_count=len(rows),
        years=(min(years), max(years)) if years else None,
        categories=categories.most_common(8),
        affiliations=affiliations.most_common(6),
        coauthors=coauthors.most_common(10),
        papers=papers,
    )
