"""Authorships to clusters in one block: the scoring and clustering steps together.

Used by the matching service for authorships that match no researcher, by the
quality evaluation (``manage.py evaluate_matching``) and by ``bench/matching.py``,
so all three measure the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from curation.matching import clustering, scoring
from curation.matching.features import (
    AuthorshipView,
    profile_of,
    profile_profile_features,
)


@dataclass(frozen=True)
class Cluster:
    """One proposed person.

    Attributes:
        members: the authorships, in input order.
        pair_scores: the Score of every pair of members (empty for one member).
    """

    members: list[AuthorshipView]
    pair_scores: list[scoring.Score]

    @property
    def cohesion(self) -> float:
        """Mean pairwise score of the members in [0, 1]; 1.0 for a single member."""
        if not self.pair_scores:
            return 1.0
        return sum(s.pairwise_score for s in self.pair_scores) / len(self.pair_scores)


def cluster_authorships(
    views: list[AuthorshipView], *, threshold: float
) -> list[Cluster]:
    """Cluster the authorships of one block.

    Args:
        views: at most :data:`curation.matching.clustering.MAX_ITEMS` authorships
            (blocking keeps blocks smaller).
        threshold: pairwise score in [0, 1] at which clusters join (average
            linkage).

    Returns:
        Clusters ordered by their first member's input position. Two authorships of
        one paper are never in one cluster.
    """
    singles = [profile_of([v]) for v in views]
    scores: dict[tuple[int, int], scoring.Score] = {}

    def pair_score(i: int, j: int) -> float:
        result = scoring.score(profile_profile_features(singles[i], singles[j]))
        scores[i, j] = result
        return result.pairwise_score

    groups = clustering.cluster(
        len(views),
        pair_score,
        threshold=threshold,
        cannot_link=lambda a, b: views[a[0]].paper_id == views[b[0]].paper_id,
    )
    return [
        Cluster(
            members=[views[i] for i in group],
            pair_scores=[
                scores[i, j] for n, i in enumerate(group) for j in group[n + 1 :]
            ],
        )
        for group in groups
    ]


def cluster_all(views: list[AuthorshipView], *, threshold: float) -> dict[int, str]:
    """Block and cluster a whole set of authorships, as matching does.

    Args:
        views: authorships with unique ``id``.
        threshold: pairwise score in [0, 1] at which clusters join.

    Returns:
        ``{view id: cluster label}``; the label is ``"<block>:<n>"``.
    """
    from curation import names
    from curation.matching import blocking

    grouped = blocking.blocks(
        views,
        key=lambda v: v.block_key or f"#{v.id}",
        sub_key=lambda v: names.name_key(v.given, v.family),
    )
    labels: dict[int, str] = {}
    for block, members in grouped.items():
        for n, found in enumerate(cluster_authorships(members, threshold=threshold)):
            for member in found.members:
                labels[member.id] = f"{block}:{n}"
    return labels
