"""Reads of the public, curated state (used by the API and the public pages)."""

from __future__ import annotations

from datetime import date

from django.db.models import Count, Prefetch, Q, QuerySet, Value
from django.db.models.functions import Coalesce

from wovepaper.models import Authorship, Paper, Researcher


def paper_list() -> QuerySet[Paper]:
    """Visible papers with their byline and applied researchers prefetched."""
    return Paper.objects.filter(hidden=False).prefetch_related(
        Prefetch(
            "authorships",
            queryset=Authorship.objects.select_related("researcher").order_by(
                "position"
            ),
        )
    )


def researcher_list() -> QuerySet[Researcher]:
    """Live researchers (not merged away) with their applied paper count."""
    return Researcher.objects.live().annotate(
        paper_count=Count(
            "authorships", filter=Q(authorships__paper__hidden=False), distinct=True
        )
    )


# Undated papers sort as the oldest: a cursor needs a value on every row.
UNDATED = date(1, 1, 1)


def researcher_papers(*, researcher: Researcher) -> QuerySet[Paper]:
    """The visible papers applied to a researcher, newest first.

    Returns:
        Papers annotated with ``sort_date`` (``published``, or :data:`UNDATED`) and
        ordered by ``-sort_date``, ``-id``: what cursor pagination pages on.
    """
    return (
        Paper.objects.filter(hidden=False, authorships__researcher=researcher)
        .distinct()
        .annotate(sort_date=Coalesce("published", Value(UNDATED)))
        .order_by("-sort_date", "-id")
    )


# Merge chains are short (a survivor merged again later); the cap guards a cycle.
MAX_MERGE_HOPS = 50


def researcher_survivor(pk: int) -> int | None:
    """The live researcher a merged-away researcher ``pk`` now lives on, or None.

    Follows ``merged_into`` (A merged into B, later B into C: A's survivor is C).

    Returns:
        The survivor's id; None when ``pk`` does not exist or was not merged away.
    """
    current = Researcher.objects.filter(pk=pk).values_list("merged_into", flat=True)
    target = current.first()
    hops = 0
    while target and hops < MAX_MERGE_HOPS:
        nxt = (
            Researcher.objects.filter(pk=target)
            .values_list("merged_into", flat=True)
            .first()
        )
        if not nxt:
            return target
        target, hops = nxt, hops + 1
    return None
