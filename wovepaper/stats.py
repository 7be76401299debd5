"""Researcher figures for browsing and search: papers, citations, h-index, years.

:func:`researcher_stats_refresh` rewrites the :class:`ResearcherStats` rows of
some researchers from their visible papers; :func:`publication_figures` gives
the per-year series a profile draws. Both read the applied state only.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import connection, transaction

from curation.names import family_core, fold
from wovepaper.models import Authorship, Researcher, ResearcherStats
from wovepaper.text import strings_in

# Researchers refreshed per statement batch (ids in one IN list).
BATCH = 2000


def h_index(citations: Iterable[int | None]) -> int:
    """The h-index of a list of papers: the largest h such that h papers have at
    least h citations each.

    Source: J. E. Hirsch (2005), "An index to quantify an individual's
    scientific research output", PNAS 102(46):16569.

    Args:
        citations: each paper's citation count; None (unknown) counts as 0.

    Returns:
        h >= 0.
    """
    ranked = sorted((c or 0 for c in citations), reverse=True)
    h = 0
    for rank, cited in enumerate(ranked, start=1):
        if cited < rank:
            break
        h = rank
    return h


@dataclass(frozen=True)
class YearFigures:
    """Papers and citations of one year of a researcher's record."""

    year: int
    papers: int
    citations: int


def publication_figures(papers: Sequence[tuple]) -> list[YearFigures]:
    """Papers and citations per year, every year from the first to the last.

    Args:
        papers: ``(paper id, published date or None, cited_by_count or None,
            ...)`` per paper, as :func:`wovepaper.profile.researcher_summary`'s
            ``papers``; undated papers are left out.

    Returns:
        One entry per calendar year, oldest first, years without papers
        included with 0; [] when no paper is dated. Citations are counted in
        the year of the cited paper (what OpenAlex's ``cited_by_count`` gives:
        a total, not the year the citations came).
    """
    per_year: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for _, published, cited, *_ in papers:
        if published is None:
            continue
        figures = per_year[published.year]
        figures[0] += 1
        figures[1] += cited or 0
    if not per_year:
        return []
    first, last = min(per_year), max(per_year)
    return [
        YearFigures(year, *per_year.get(year, (0, 0)))
        for year in range(first, last + 1)
    ]


def _letter(core: str) -> str:
    head = core[:1].upper()
    return head if "A" <= head <= "Z" else "#"


def _stats_of(researcher: Researcher, slots: list[tuple]) -> ResearcherStats:
    """The figures of one researcher from its visible slots.

    Args:
        slots: ``(paper id, published, cited_by_count, primary category,
            affiliations, given name, family name, institution name or None)``
            per authorship, any order.
    """
    papers: dict[int, tuple] = {}
    for slot in slots:
        papers.setdefault(slot[0], slot)
    years = [p[1].year for p in papers.values() if p[1] is not None]
    categories = Counter(p[3] for p in papers.values() if p[3])
    main = (
        min(categories.items(), key=lambda kv: (-kv[1], kv[0]))[0] if categories else ""
    )
    # The latest dated slot's institution, else its first printed affiliation.
    latest = ""
    for slot in sorted(
        slots, key=lambda s: (s[1] is not None, s[1] or 0, s[0]), reverse=True
    ):
        printed = [" ".join(t.split()) for t in strings_in(slot[4])]
        latest = slot[7] or next((t for t in printed if t), "")
        if latest:
            break
    families = Counter((s[6], s[5]) for s in slots if s[6])
    family, given = (
        min(families.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        if families
        else (researcher.display_name, "")
    )
    core = family_core(family) or fold(researcher.display_name).replace(" ", "")
    per_year = publication_figures([p[:3] for p in papers.values()])
    return ResearcherStats(
        researcher=researcher,
        paper_count=len(papers),
        citation_count=sum(p[2] or 0 for p in papers.values()),
        h_index=h_index(p[2] for p in papers.values()),
        first_year=min(years) if years else None,
        last_year=max(years) if years else None,
        active_year=max(years) if years else 0,
        main_category=main[:40],
        latest_affiliation=latest[:300],
        per_year=[
            {"year": y.year, "papers": y.papers, "citations": y.citations}
            for y in per_year
        ],
        sort_name=f"{core} {fold(given)}".strip()[:300],
        letter=_letter(core),
    )


def researcher_stats_queue(researcher_ids: Iterable[int]) -> None:
    """Have a worker refresh these researchers' figures once the current
    transaction commits (at once outside one), through the outbox
    (:func:`wovepaper.outbox.outbox_send`): a broker that is down loses none.

    Args:
        researcher_ids: researchers whose papers, placements or profile a
            committed change touched.
    """
    from wovepaper.outbox import outbox_send

    ids = sorted({int(pk) for pk in researcher_ids})
    if ids:
        outbox_send(task="wovepaper.researcher_stats", kwargs={"researcher_ids": ids})


def researcher_stats_refresh(*, researcher_ids: Iterable[int] | None = None) -> int:
    """Rewrite the browse and search figures of some researchers (or all).

    A live researcher with a visible paper gets its row written; any other
    (merged away, retired, no visible paper, deleted) loses its row. Safe to
    repeat and to run concurrently with itself: each batch replaces its rows
    in one transaction.

    A rebuild of every row ends with PostgreSQL's ``ANALYZE`` of the table:
    the browse pages' plans read its statistics, and before autovacuum came
    round a freshly filled table had none. The planner then took a field's
    4,206 researchers for 126 and sorted them all, wide rows and joins, for a
    page of 50: 32 ms a page against 10 ms analysed (bench/pages.py's corpus).

    Args:
        researcher_ids: the researchers to refresh; None for every researcher.

    Returns:
        How many rows were written (researchers listed now).
    """
    if researcher_ids is None:
        ids = sorted(Researcher.objects.values_list("pk", flat=True))
    else:
        ids = sorted({int(pk) for pk in researcher_ids})
    written = 0
    for start in range(0, len(ids), BATCH):
        written += _refresh_batch(ids[start : start + BATCH])
    if researcher_ids is None and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {ResearcherStats._meta.db_table}")
    return written


def _refresh_batch(ids: list[int]) -> int:
    live = {r.pk: r for r in Researcher.objects.live().filter(pk__in=ids)}
    slots: dict[int, list[tuple]] = defaultdict(list)
    rows = (
        Authorship.objects.filter(researcher_id__in=list(live), paper__hidden=False)
        .order_by("researcher_id", "paper_id", "position")
        .values_list(
            "researcher_id",
            "paper_id",
            "paper__published",
            "paper__cited_by_count",
            "paper__primary_category",
            "affiliations",
            "given_name",
            "family_name",
            "id",
        )
    )
    institution_of = _first_institutions(live)
    for researcher_id, *slot, authorship_id in rows:
        slots[researcher_id].append((*slot, institution_of.get(authorship_id)))
    fresh = [_stats_of(live[pk], slots[pk]) for pk in live if slots.get(pk)]
    kept = [row.researcher_id for row in fresh]
    with transaction.atomic():
        ResearcherStats.objects.filter(researcher_id__in=ids).exclude(
            researcher_id__in=kept
        ).delete()
        # An upsert: two workers refreshing one researcher at once both
        # write, neither fails on the other's row.
        ResearcherStats.objects.bulk_create(
            fresh,
            update_conflicts=True,
            unique_fields=["researcher"],
            update_fields=_FIGURES,
        )
    return len(fresh)


# Every column of a row but its key, as an upsert rewrites them.
_FIGURES = [f.name for f in ResearcherStats._meta.concrete_fields if not f.primary_key]


def _first_institutions(live: dict[int, Researcher]) -> dict[int, str]:
    """The name of the first institution linked to each authorship of these
    researchers (by institution id): one query."""
    out: dict[int, str] = {}
    through = Authorship.institutions.through.objects.filter(
        authorship__researcher_id__in=list(live), authorship__paper__hidden=False
    ).order_by("authorship_id", "institution_id")
    for authorship_id, name in through.values_list(
        "authorship_id", "institution__name"
    ):
        out.setdefault(authorship_id, name)
    return out
