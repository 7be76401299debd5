"""Signs that one researcher profile holds several people (pure, no ORM).

Two signs besides several ORCID iDs (which the matching service reads from the
database): more papers in one year than a person writes, and papers that fall
into groups sharing neither a field nor a co-author. Either makes the profile a
suspect; the matching service then finds the partition (the groups, or a
re-clustering of the profile's authorships) and proposes a split only where the
scoring model does not call the parts one person.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from curation.matching.features import COAUTHOR_MAX_BYLINE, AuthorshipView

# More papers than this in one calendar year is "hyperprolific": Ioannidis,
# Klavans and Boyack (2018), "Thousands of scientists publish a paper every five
# days", Nature 561:167-169, who count authors with more than 72 papers (one
# every five days) in a year. Papers of bylines past COAUTHOR_MAX_BYLINE (the
# large collaborations, where every member signs a hundred papers a year) are
# not counted.
HYPERPROLIFIC_PAPERS_PER_YEAR = 72
# A group of fewer papers than this is too little to move a person off.
MIN_GROUP = 2

PAPERS_PER_YEAR = "implausible papers per year"
DISJOINT = "disjoint fields and co-author groups"


@dataclass(frozen=True)
class Suspicion:
    """Why a profile may hold several people.

    Attributes:
        flag: :data:`PAPERS_PER_YEAR` or :data:`DISJOINT`.
        detail: the figures in plain words ("91 papers in 2019").
        groups: for :data:`DISJOINT`, the authorship ids of each group of at
            least :data:`MIN_GROUP` papers, largest first; empty for
            :data:`PAPERS_PER_YEAR` (the service re-clusters the profile).
    """

    flag: str
    detail: str
    groups: tuple[tuple[int, ...], ...] = ()


def busiest_year(views: Sequence[AuthorshipView]) -> tuple[int | None, int]:
    """The year with the most papers, and how many, outside large collaborations.

    Args:
        views: one researcher's authorships.

    Returns:
        ``(year, papers)``; ``(None, 0)`` when no counted paper has a year.
    """
    per_year = Counter(
        v.year
        for v in {v.paper_id: v for v in views}.values()
        if v.year is not None and v.authors <= COAUTHOR_MAX_BYLINE
    )
    if not per_year:
        return None, 0
    year, papers = max(per_year.items(), key=lambda item: (item[1], -item[0]))
    return year, papers


def disjoint_groups(views: Sequence[AuthorshipView]) -> list[list[AuthorshipView]]:
    """The groups of authorships that share no arXiv category and no co-author.

    Two authorships are in one group when they share a category or a co-author
    name key, directly or through others (connected components, union-find).
    Authorships of papers without categories have no known field and are left
    out; so are groups of fewer than :data:`MIN_GROUP` papers.

    Args:
        views: one researcher's authorships.

    Returns:
        The groups, largest first (ties: the group of the smallest id first);
        fewer than two means nothing is disjoint.
    """
    known = [v for v in views if v.categories]
    parent = list(range(len(known)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[str, int] = {}
    for i, v in enumerate(known):
        for token in [f"c:{c}" for c in v.categories] + [
            f"a:{k}" for k in v.coauthor_keys
        ]:
            if token in first_with:
                parent[root(i)] = root(first_with[token])
            else:
                first_with[token] = i
    groups: dict[int, list[AuthorshipView]] = {}
    for i, v in enumerate(known):
        groups.setdefault(root(i), []).append(v)
    big = [g for g in groups.values() if len({v.paper_id for v in g}) >= MIN_GROUP]
    return sorted(big, key=lambda g: (-len(g), min(v.id for v in g)))


def suspect(views: Sequence[AuthorshipView]) -> Suspicion | None:
    """Whether one researcher's authorships look like several people.

    Args:
        views: the researcher's authorships.

    Returns:
        A :class:`Suspicion` (disjoint groups first, being the more specific),
        or None.
    """
    groups = disjoint_groups(views)
    if len(groups) > 1:
        sizes = ", ".join(
            f"{len(g)} in {'/'.join(sorted(set().union(*(v.categories for v in g))))}"
            for g in groups
        )
        return Suspicion(
            DISJOINT,
            f"papers in groups that share no category and no co-author ({sizes})",
            tuple(tuple(sorted(v.id for v in g)) for g in groups),
        )
    year, papers = busiest_year(views)
    if papers > HYPERPROLIFIC_PAPERS_PER_YEAR:
        return Suspicion(
            PAPERS_PER_YEAR,
            f"{papers} papers in {year} outside large collaborations (more than "
            f"{HYPERPROLIFIC_PAPERS_PER_YEAR} a year is hyperprolific)",
        )
    return None
