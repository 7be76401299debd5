"""What curators and identifiers fix: cannot-links and must-links, curator
merges and confirmed slots, ORCID iDs, their holders and conflicts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import (
    Count,
    Q,
    QuerySet,
)

from curation import matching_sql
from curation.matching.orcids import IdSlot
from curation.models import Constraint, CurationEvent, Proposal
from curation.selectors.views import _chunks
from harvest.models import SourceAuthor
from wovepaper.models import Authorship, Researcher


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
