"""Pending proposals: superseded, dead or of another model; what auto-apply
takes; the admin queue, its next item, and the warnings a merge carries.
"""

from __future__ import annotations

from collections.abc import Iterable

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

from curation.deciding import auto_apply
from curation.matching.features import (
    ProfileView,
    names_meet,
)
from curation.models import Proposal
from curation.names import family_core
from curation.selectors.model import joining_threshold
from curation.selectors.views import CHUNK, _dead_attach, _gone
from wovepaper.models import Authorship, Researcher


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
