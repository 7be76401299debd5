"""One block's authorships scored pair by pair and clustered under the
curators' constraints (:func:`cluster_authorships`).
"""

from __future__ import annotations

from collections.abc import Sequence

from curation.matching import scoring
from curation.matching.features import (
    AuthorshipView,
    ProfileView,
)
from curation.matching.pipeline.chunks import (
    _chunk_order,
    _cluster_small,
    _merge_clusters,
)
from curation.matching.pipeline.evidence_free import _joined, attach_evidence_free
from curation.matching.pipeline.shapes import NO_CONSTRAINTS, Cluster, Constraints

# Authorships clustered at once before chunk clusters are merged (see
# :func:`cluster_authorships`); at most clustering.MAX_ITEMS. It bounds the pair
# scores per authorship (CHUNK - 1), so a re-cluster grows linearly once common
# names fill their chunks. Chosen by evaluate_matching (5-fold learned B3 F1,
# Wang / Qian) and bench/matching.py (seconds to re-cluster 10,000 / 100,000
# re-keyed Wang mentions, and the growth exponent):
#   200, input order: 0.954 / 0.890; 10.7 s / 259.5 s, exponent 1.38
#   200, name order:  0.953 / 0.890
#   100, name order:  0.954 / 0.887
#    50, name order:  0.9545 / 0.8875; 11.2 s / 149.8 s, exponent 1.13
# (those folds clustered a fifth of each block's people; on folds of whole
# blocks, with the family-rarity feature, at threshold 0.25 / 0.4:
#   400: 0.906 / 0.818;  50: 0.898 / 0.817.)
CHUNK = 50


def cluster_authorships(
    views: list[AuthorshipView],
    *,
    threshold: float,
    weights: scoring.Weights = scoring.DEFAULT,
    constraints: Constraints = NO_CONSTRAINTS,
    researchers: Sequence[ProfileView] = (),
) -> list[Cluster]:
    """Cluster the authorships of one block, of any size.

    Up to :data:`CHUNK` authorships are clustered directly (average linkage over
    pairwise scores). A bigger block is clustered in chunks of :data:`CHUNK`,
    its authorships ordered so that given names printed alike, then a shared
    affiliation word, fall in one chunk (:func:`_chunk_order`); then the chunks'
    clusters are clustered again as profiles
    (average linkage over profile-to-profile scores), repeatedly until no two
    merge: memory and time grow with the number of chunks, not the square of the
    block. Two authorships of one paper are never in one cluster. Last,
    clusters of authorships that print nothing but a full name join the
    likeliest person of that name (:func:`attach_evidence_free`).

    Args:
        views: the block's authorships.
        threshold: pairwise score in [0, 1] at which clusters join.
        weights: the scoring model.
        constraints: must-links and cannot-links between the authorships; the
            chunks' clusters that a must-link joins are joined before the
            chunks are merged, so chunking never parts them.
        researchers: the block's live researchers, when ``views`` are the
            authorships none of them took: they count among the holders of a
            name (:func:`attach_evidence_free`).

    Returns:
        Clusters, each with its members in input order; every view is in
        exactly one.
    """
    position = {v.id: n for n, v in enumerate(views)}
    return [
        Cluster(
            sorted(c.members, key=lambda m: position[m.id]),
            c.pair_scores,
            c.pair_sides,
            c.likeliest,
        )
        for c in attach_evidence_free(
            _cluster_scored(
                views, threshold=threshold, weights=weights, constraints=constraints
            ),
            weights=weights,
            constraints=constraints,
            researchers=researchers,
        )
    ]


def _cluster_scored(
    views: list[AuthorshipView],
    *,
    threshold: float,
    weights: scoring.Weights,
    constraints: Constraints,
) -> list[Cluster]:
    """:func:`cluster_authorships` without :func:`attach_evidence_free`: the
    clusters that pairwise scores alone join, their members in no set order."""
    if len(views) <= CHUNK:
        return _cluster_small(
            views, threshold=threshold, weights=weights, constraints=constraints
        )
    ordered = sorted(views, key=_chunk_order)
    found: list[Cluster] = []
    for start in range(0, len(ordered), CHUNK):
        found += _cluster_small(
            ordered[start : start + CHUNK],
            threshold=threshold,
            weights=weights,
            constraints=constraints,
        )
    if constraints.must_link:
        found = _joined(found, constraints)
    # Members in chunk order: cluster_authorships puts them in input order.
    return _merge_clusters(
        found, threshold=threshold, weights=weights, constraints=constraints
    )
