"""Reads of the public, curated state (used by the API and the public pages)."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q, QuerySet

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


def researcher_papers(*, researcher: Researcher) -> QuerySet[Paper]:
    """The visible papers applied to a researcher, newest first."""
    return (
        Paper.objects.filter(hidden=False, authorships__researcher=researcher)
        .distinct()
        .order_by("-published", "-id")
    )
