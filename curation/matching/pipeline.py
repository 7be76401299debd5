"""Authorships to clusters in one block: the scoring and clustering steps together.

Used by the matching service for authorships that match no researcher, by the
quality evaluation (``manage.py evaluate_matching``) and by ``bench/matching.py``,
so all three measure the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from curation.matching import clustering, scoring
from curation.matching.features import (
    AuthorshipView,
    ProfileView,
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


# Authorships clustered at once before chunk clusters are merged (see
# :func:`cluster_authorships`); at most clustering.MAX_ITEMS.
CHUNK = 200


def cluster_authorships(
    views: list[AuthorshipView],
    *,
    threshold: float,
    weights: scoring.Weights = scoring.DEFAULT,
) -> list[Cluster]:
    """Cluster the authorships of one block, of any size.

    Up to :data:`CHUNK` authorships are clustered directly (average linkage over
    pairwise scores). A bigger block is clustered in chunks of :data:`CHUNK` in
    input order, then the chunks' clusters are clustered again as profiles
    (average linkage over profile-to-profile scores), repeatedly until no two
    merge: memory and time grow with the number of chunks, not the square of the
    block. Two authorships of one paper are never in one cluster.

    Args:
        views: the block's authorships.
        threshold: pairwise score in [0, 1] at which clusters join.
        weights: the scoring model.

    Returns:
        Clusters; every view is in exactly one.
    """
    if len(views) <= CHUNK:
        return _cluster_small(views, threshold=threshold, weights=weights)
    found: list[Cluster] = []
    for start in range(0, len(views), CHUNK):
        found += _cluster_small(
            views[start : start + CHUNK], threshold=threshold, weights=weights
        )
    return _merge_clusters(found, threshold=threshold, weights=weights)


def _merge_clusters(
    found: list[Cluster], *, threshold: float, weights: scoring.Weights
) -> list[Cluster]:
    while len(found) > 1:
        merged_any = False
        out: list[Cluster] = []
        for start in range(0, len(found), clustering.MAX_ITEMS):
            part = found[start : start + clustering.MAX_ITEMS]
            profiles = [profile_of(c.members) for c in part]
            link, links = _pair_scorer(profiles, weights)
            groups = clustering.cluster(
                len(part),
                link,
                threshold=threshold,
                cannot_link=lambda a, b, profiles=profiles: bool(
                    profiles[a[0]].paper_ids & profiles[b[0]].paper_ids
                ),
            )
            for group in groups:
                merged_any = merged_any or len(group) > 1
                out.append(
                    Cluster(
                        members=[m for i in group for m in part[i].members],
                        pair_scores=[s for i in group for s in part[i].pair_scores]
                        + [
                            links[i, j]
                            for n, i in enumerate(group)
                            for j in group[n + 1 :]
                        ],
                    )
                )
        found = out
        if not merged_any:
            break
    return found


def _pair_scorer(
    profiles: list[ProfileView], weights: scoring.Weights
) -> tuple[Callable[[int, int], float], dict[tuple[int, int], scoring.Score]]:
    """A pair-score function over profiles, and the Scores it computed (by pair)."""
    scores: dict[tuple[int, int], scoring.Score] = {}

    def pair_score(i: int, j: int) -> float:
        result = scoring.score(
            profile_profile_features(profiles[i], profiles[j]), weights
        )
        scores[i, j] = result
        return result.pairwise_score

    return pair_score, scores


def _cluster_small(
    views: list[AuthorshipView], *, threshold: float, weights: scoring.Weights
) -> list[Cluster]:
    pair_score, scores = _pair_scorer([profile_of([v]) for v in views], weights)
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


def cluster_all(
    views: list[AuthorshipView],
    *,
    threshold: float,
    weights: scoring.Weights = scoring.DEFAULT,
) -> dict[int, str]:
    """Block and cluster a whole set of authorships, as matching does.

    Args:
        views: authorships with unique ``id``.
        threshold: pairwise score in [0, 1] at which clusters join.
        weights: the scoring model.

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
        found_clusters = cluster_authorships(
            members, threshold=threshold, weights=weights
        )
        for n, found in enumerate(found_clusters):
            for member in found.members:
                labels[member.id] = f"{block}:{n}"
    return labels
