"""Large blocks clustered in chunks, in an order that keeps names together,
and the chunks' clusters merged again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from curation.matching import clustering, scoring
from curation.matching.features import (
    AuthorshipView,
    ProfileView,
    given_form,
    names_conflict,
    profile_of,
    profile_profile_features,
)
from curation.matching.pipeline.shapes import NO_CONSTRAINTS, Cluster, Constraints, _ids


def _chunk_order(view: AuthorshipView) -> tuple:
    """Mentions printed alike, then sharing an affiliation word, chunk together."""
    return (given_form(view.given), min(view.affiliation_tokens, default="~"), view.id)


def _input_order(cluster: Cluster) -> tuple:
    return (0,)  # a stable sort keeps the order the chunks produced


def _tokens(cluster: Cluster) -> list[str]:
    """The affiliation words and co-author keys of a cluster's members."""
    return [t for m in cluster.members for t in m.affiliation_tokens | m.coauthor_keys]


def _by_rarest_token(cluster: Cluster) -> tuple:
    """Clusters sharing their smallest affiliation word or co-author key sort
    together: a one-token min-hash of the profile."""
    return (min(_tokens(cluster), default="~"), min(m.id for m in cluster.members))


def _by_name_then_token(cluster: Cluster) -> tuple:
    return (
        min(given_form(m.given) for m in cluster.members),
        max(_tokens(cluster), default=""),
        min(m.id for m in cluster.members),
    )


# The orders the chunk clusters of a big block are compared in, part by part:
# a cluster meets only those of its own part of clustering.MAX_ITEMS, so each
# pass sorts them another way, and merging ends when every order in turn has
# merged nothing. Source: the multi-pass sorted-neighbourhood method, Hernández
# and Stolfo (1995), "The merge/purge problem for large databases", SIGMOD.
_MERGE_ORDERS = (_input_order, _by_rarest_token, _by_name_then_token)


def _merge_clusters(
    found: list[Cluster],
    *,
    threshold: float,
    weights: scoring.Weights,
    constraints: Constraints = NO_CONSTRAINTS,
) -> list[Cluster]:
    passes = quiet = 0
    known: dict = {}  # pair scores of clusters unchanged since an earlier pass
    while len(found) > 1 and quiet < len(_MERGE_ORDERS):
        found = sorted(found, key=_MERGE_ORDERS[passes % len(_MERGE_ORDERS)])
        passes += 1
        merged_any = False
        out: list[Cluster] = []
        for start in range(0, len(found), clustering.MAX_ITEMS):
            part = found[start : start + clustering.MAX_ITEMS]
            profiles = [profile_of(c.members) for c in part]
            # A cluster is known by its first member and size: merging changes both
            # or the size.
            keys = [(c.members[0].id, len(c.members)) for c in part]
            link, vetoed, links = _pair_scorer(profiles, weights, keys, known)
            must: set[tuple[int, int]] = set()
            if constraints:
                owner = {m.id: k for k, c in enumerate(part) for m in c.members}
                must = constraints.between(owner, constraints.must_link)
                vetoed = _also_cannot(
                    vetoed, constraints.between(owner, constraints.cannot_link)
                )
            groups = clustering.cluster(
                len(part), link, threshold=threshold, cannot_link=vetoed, must_link=must
            )
            for group in groups:
                merged_any = merged_any or len(group) > 1
                joins = [(i, j) for n, i in enumerate(group) for j in group[n + 1 :]]
                out.append(
                    Cluster(
                        members=[m for i in group for m in part[i].members],
                        pair_scores=[s for i in group for s in part[i].pair_scores]
                        + [links[i, j] for i, j in joins],
                        pair_sides=[s for i in group for s in part[i].pair_sides]
                        + [(_ids(part[i]), _ids(part[j])) for i, j in joins],
                    )
                )
        found = out
        quiet = 0 if merged_any else quiet + 1
    return found


def _pair_scorer(
    profiles: list[ProfileView],
    weights: scoring.Weights,
    keys: list[tuple[int, int]] | None = None,
    known: dict | None = None,
) -> tuple[
    Callable[[int, int], float],
    Callable[[Sequence[int], Sequence[int]], bool],
    dict[tuple[int, int], scoring.Score],
]:
    """Pair functions over profiles for :func:`clustering.cluster`.

    Returns:
        ``(pair_score, cannot_link, scores)``: the pairwise score of ``i < j``;
        whether two items can never be one person (a veto of
        :func:`scoring.is_vetoed`: one paper, or given names that cannot be one
        person's, as "Jian" and "Jie"), or, for clusters, any two of their
        members' given names conflict (:func:`names_conflict`); the constraint
        carries over to merged clusters, so a bridge such as "J." never joins
        "Jian" and "Jie"; and the Scores computed, by pair.

    Args:
        keys: an identity of each profile that holds across calls (the
            chunk-merge passes compare many unchanged clusters again).
        known: ``{(key, key): (Score, cannot link)}`` filled and read across
            calls when ``keys`` are given.
    """
    scores: dict[tuple[int, int], scoring.Score] = {}
    conflicts: dict[tuple[int, int], bool] = {}

    def scored(i: int, j: int) -> scoring.Score:
        if (i, j) not in scores:
            pair = tuple(sorted((keys[i], keys[j]))) if keys is not None else None
            if pair is not None and known is not None and pair in known:
                scores[i, j], conflicts[i, j] = known[pair]
            else:
                scores[i, j] = scoring.score(
                    profile_profile_features(profiles[i], profiles[j]), weights
                )
                conflicts[i, j] = names_conflict(profiles[i], profiles[j])
                if pair is not None and known is not None:
                    known[pair] = (scores[i, j], conflicts[i, j])
        return scores[i, j]

    def cannot_link(a: Sequence[int], b: Sequence[int]) -> bool:
        i, j = sorted((a[0], b[0]))
        return bool(scored(i, j).veto) or conflicts[i, j]

    return (lambda i, j: scored(i, j).pairwise_score), cannot_link, scores


def _also_cannot(
    vetoed: Callable[[Sequence[int], Sequence[int]], bool],
    pairs: set[tuple[int, int]],
) -> Callable[[Sequence[int], Sequence[int]], bool]:
    """``vetoed``, and true as well for the item pairs ``pairs`` (``i < j``)."""

    def cannot_link(a: Sequence[int], b: Sequence[int]) -> bool:
        return (min(a[0], b[0]), max(a[0], b[0])) in pairs or vetoed(a, b)

    return cannot_link


def _cluster_small(
    views: list[AuthorshipView],
    *,
    threshold: float,
    weights: scoring.Weights,
    constraints: Constraints = NO_CONSTRAINTS,
) -> list[Cluster]:
    pair_score, vetoed, scores = _pair_scorer([profile_of([v]) for v in views], weights)
    must: set[tuple[int, int]] = set()
    if constraints:
        owner = {v.id: i for i, v in enumerate(views)}
        must = constraints.between(owner, constraints.must_link)
        vetoed = _also_cannot(
            vetoed, constraints.between(owner, constraints.cannot_link)
        )
    groups = clustering.cluster(
        len(views), pair_score, threshold=threshold, cannot_link=vetoed, must_link=must
    )
    out = []
    for group in groups:
        pairs = [(i, j) for n, i in enumerate(group) for j in group[n + 1 :]]
        out.append(
            Cluster(
                members=[views[i] for i in group],
                pair_scores=[scores[i, j] for i, j in pairs],
                pair_sides=[((views[i].id,), (views[j].id,)) for i, j in pairs],
            )
        )
    return out
