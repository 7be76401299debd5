"""The curators' dossier of a researcher: its papers with their bylines,
co-authors, and the papers incoming from proposals.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import (
    Count,
    F,
    Q,
)

from curation.matching.features import (
    COAUTHOR_MAX_BYLINE,
)
from wovepaper.models import Authorship, Researcher
from wovepaper.text import strings_in

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
