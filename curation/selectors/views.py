"""The engine's inputs: authorships as plain views (:class:`curation.matching.
features.AuthorshipView`), read in chunks, with the corpus's name rarities and
what the pending proposals hold.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TypeVar

from django.conf import settings
from django.db import connection
from django.db.models import (
    Case,
    Count,
    F,
    OuterRef,
    Q,
    Subquery,
    Value,
    When,
)

from curation import matching_sql
from curation.matching.features import (
    BLOCK_REPEAT_UNKNOWN,
    AuthorshipView,
    NameRarities,
    affiliation_tokens,
    block_repeats,
    coauthor_keys_of,
    full_given_key,
    source_ids_of,
)
from curation.matching.variants import Slot
from curation.models import Proposal
from curation.names import fold
from harvest.models import SourceAuthor
from wovepaper.models import Authorship
from wovepaper.semantic import paper_vectors
from wovepaper.text import strings_in

T = TypeVar("T")


# SQLite allows 32,766 bound parameters per statement; PostgreSQL plans long IN lists
# slowly. Id lists are read in chunks of this size.
CHUNK = 2000


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
