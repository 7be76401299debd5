"""Curation reads: the snapshots the matcher works on, and the proposal queue."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import QuerySet

from curation.matching.features import AuthorshipView, ProfileView, profile_of
from curation.models import Constraint, Proposal
from wovepaper.models import Authorship, Paper, Researcher


def matchable_authorships() -> QuerySet[Authorship]:
    """Person authorships not yet assigned, on visible papers, with no pending proposal.

    Returns:
        QuerySet ordered by id.
    """
    return (
        Authorship.objects.filter(
            researcher__isnull=True, is_collaboration=False, paper__hidden=False
        )
        .exclude(block_key="")
        .exclude(proposals__status=Proposal.Status.PENDING)
        .order_by("id")
    )


def _paper_context(paper_ids: Iterable[int]) -> tuple[dict, dict]:
    keys: dict[int, list[tuple[int, str]]] = defaultdict(list)
    ids = list(set(paper_ids))
    for pid, aid, key in Authorship.objects.filter(paper_id__in=ids).values_list(
        "paper_id", "id", "name_key"
    ):
        if key:
            keys[pid].append((aid, key))
    papers = {
        p["id"]: p
        for p in Paper.objects.filter(id__in=ids).values("id", "categories", "published")
    }
    return keys, papers


def authorship_views(authorships: Iterable[Authorship]) -> list[AuthorshipView]:
    """Snapshot authorships for the matcher (co-authors and categories included).

    Args:
        authorships: Authorship rows (any iterable; evaluated once).

    Returns:
        One AuthorshipView per row, in input order. Two queries in all.
    """
    rows = list(authorships)
    keys, papers = _paper_context(a.paper_id for a in rows)
    views = []
    for a in rows:
        paper = papers.get(a.paper_id, {})
        published = paper.get("published")
        views.append(
            AuthorshipView(
                id=a.id,
                paper_id=a.paper_id,
                given=a.given_name,
                family=a.family_name,
                block_key=a.block_key,
                orcid=a.orcid,
                coauthor_keys=frozenset(k for aid, k in keys[a.paper_id] if aid != a.id),
                categories=frozenset(paper.get("categories") or ()),
                year=published.year if published else None,
            )
        )
    return views


def researcher_profiles(block_keys: Iterable[str]) -> list[ProfileView]:
    """Profiles of the live researchers in the given blocks.

    Args:
        block_keys: block keys (a sub-block name ``"key/sub"`` counts as ``key``).

    Returns:
        One ProfileView per live researcher that has at least one authorship,
        ordered by researcher id.
    """
    wanted = {k.split("/", 1)[0] for k in block_keys}
    researchers = list(
        Researcher.objects.live().filter(block_key__in=wanted).order_by("id")
    )
    by_researcher: dict[int, list[Authorship]] = defaultdict(list)
    for a in Authorship.objects.filter(researcher__in=researchers).order_by("id"):
        by_researcher[a.researcher_id].append(a)
    all_rows = [a for rows in by_researcher.values() for a in rows]
    views = {v.id: v for v in authorship_views(all_rows)}
    profiles = []
    for r in researchers:
        rows = by_researcher.get(r.id)
        if not rows:
            continue
        profiles.append(
            profile_of([views[a.id] for a in rows], id=r.id, orcid=r.orcid or "",
                       locked=r.locked)
        )
    return profiles


def cannot_links(researcher_ids: Iterable[int]) -> set[tuple[str, int, int]]:
    """Cannot-link constraints touching these researchers.

    Returns:
        ``{("a", authorship_id, researcher_id)}`` for authorship/researcher pairs and
        ``{("r", low_id, high_id)}`` for researcher pairs.
    """
    ids = list(researcher_ids)
    out: set[tuple[str, int, int]] = set()
    for c in Constraint.objects.filter(
        kind=Constraint.Kind.CANNOT_LINK, researcher_id__in=ids
    ):
        if c.authorship_id:
            out.add(("a", c.authorship_id, c.researcher_id))
        elif c.other_researcher_id:
            lo, hi = sorted((c.researcher_id, c.other_researcher_id))
            out.add(("r", lo, hi))
    return out


def proposal_queue() -> QuerySet[Proposal]:
    """Pending proposals, most papers affected first, then most uncertain.

    Returns:
        QuerySet of pending proposals with their researchers joined.
    """
    return (
        Proposal.objects.filter(status=Proposal.Status.PENDING)
        .select_related("researcher", "other_researcher")
        .order_by("-score", "id")
    )
