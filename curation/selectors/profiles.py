"""Researchers as the engine sees them: profiles built from their authorships
(kept per process while unchanged), the profiles a block visits, the links
between blocks, and a snapshot of the researchers a run reads.
"""

from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.db import connection
from django.db.models import (
    Count,
    F,
    QuerySet,
)

from curation import matching_sql
from curation.history import researcher_history
from curation.matching import overmerge, variants
from curation.matching.features import (
    AuthorshipView,
    NameRarities,
    ProfileView,
    profile_of,
    source_ids_of,
)
from curation.matching.overmerge import Suspicion
from curation.names import block_key_readings, fold
from curation.selectors.constraints import (
    OrcidConflict,
    _merged_survivors,
)
from curation.selectors.views import _VIEW_FIELDS, CHUNK, _chunks, _given_rarity, _views
from wovepaper.models import Authorship, Researcher


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
