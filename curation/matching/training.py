"""Learning the pairwise scoring model: labelled pairs in, logistic weights out.

Pairs are drawn inside blocks, as matching compares them (same blocking, same
features, vetoed pairs left out); a pair is positive when both mentions have one
gold cluster. Curator decisions add pairs too: an applied attach or merge is a
positive, a rejected one a negative, from the features stored on the proposal.
The model is scikit-learn's LogisticRegression, whose coefficients are the
weights of :func:`curation.matching.scoring.score`. Evaluation folds split by gold
cluster, so training and evaluation never share a person's mentions.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from curation import names
from curation.matching import blocking, scoring
from curation.matching.features import (
    AuthorshipView,
    Features,
    profile_of,
    profile_profile_features,
)

# Pairs drawn from one block at most (sampled, seeded): big blocks would otherwise
# drown the small ones, and training time grows with the square of block size.
PAIRS_PER_BLOCK = 5000


@dataclass
class Examples:
    """Training pairs: ``x`` rows in :data:`scoring.FEATURES` order, ``y`` 0/1."""

    x: list[list[float]]
    y: list[int]

    def extend(self, other: Examples) -> None:
        """Append another set of pairs."""
        self.x.extend(other.x)
        self.y.extend(other.y)


def labelled_pairs(
    views: list[AuthorshipView], gold: Mapping[int, str], *, seed: int = 0
) -> Examples:
    """Pairs of mentions inside each block, labelled by the gold clusters.

    Args:
        views: mentions with unique ``id``.
        gold: view id -> gold cluster id.
        seed: seed of the per-block pair sampling.

    Returns:
        Examples; a block with more than :data:`PAIRS_PER_BLOCK` pairs is sampled.
    """
    rng = random.Random(seed)  # noqa: S311 - sampling, not security
    out = Examples([], [])
    grouped = blocking.blocks(
        views,
        key=lambda v: v.block_key,
        sub_key=lambda v: names.sub_block_key(v.given, v.family),
    )
    for members in grouped.values():
        n = len(members)
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        if len(pairs) > PAIRS_PER_BLOCK:
            pairs = rng.sample(pairs, PAIRS_PER_BLOCK)
        singles = [profile_of([m]) for m in members]
        for i, j in pairs:
            features = profile_profile_features(singles[i], singles[j])
            if scoring.is_vetoed(features):
                continue
            out.x.append(scoring.vector(features))
            out.y.append(int(gold[members[i].id] == gold[members[j].id]))
    return out


def decision_pairs(decisions: Iterable[tuple[dict, bool]]) -> Examples:
    """Pairs from curator decisions.

    Args:
        decisions: ``(evidence["features"], approved)`` of decided attach and
            merge proposals.

    Returns:
        Examples: approved ones positive, rejected ones negative.
    """
    out = Examples([], [])
    for features, approved in decisions:
        values = dict.fromkeys(scoring.FEATURES, 0.0) | {
            k: float(v) for k, v in features.items() if k in scoring.FEATURES
        }
        values["coauthors"] = min(values["coauthors"], scoring.COAUTHOR_CAP)
        out.x.append([values[name] for name in scoring.FEATURES])
        out.y.append(int(approved))
    return out


def fit(examples: Examples, *, version: str) -> scoring.Weights:
    """Fit logistic regression weights.

    Args:
        examples: at least one positive and one negative pair.
        version: the model version to record.

    Returns:
        The Weights (bias and one weight per feature); a feature constant over the
        examples keeps its default weight (:data:`scoring.WEIGHTS`); which did
        is :func:`kept_defaults`.

    Raises:
        ValueError: the examples hold only one class.
    """
    if len(set(examples.y)) < 2:
        raise ValueError("training needs both matching and non-matching pairs")
    # Imported here: scikit-learn (with SciPy) takes over a second to import, and
    # every process that loads the curation app (web, Celery, every command)
    # would pay it, where only training uses it.
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0, max_iter=2000)
    model.fit(examples.x, examples.y)
    # A feature the training pairs never vary (no ORCIDs, no co-authors in the
    # labelled sets) teaches nothing: it keeps its default weight rather than
    # being switched off.
    kept = set(kept_defaults(examples))
    weights = {
        name: scoring.WEIGHTS[name] if name in kept else round(float(w), 6)
        for name, w in zip(scoring.FEATURES, model.coef_[0], strict=True)
    }
    return scoring.Weights(version, round(float(model.intercept_[0]), 6), weights)


def block_folds(
    views: Iterable[AuthorshipView], gold: Mapping[int, str], folds: int
) -> dict[int, int]:
    """Evaluation folds that keep whole blocks and whole gold clusters together.

    Mentions are grouped into the connected components of "same block key" and
    "same gold cluster", and components go, largest first, to the fold holding
    the fewest mentions so far (ties: the lower fold). So no person's mentions
    are both trained on and evaluated, and a held-out block is clustered with
    every mention it has: the same confusable namesakes as on the whole set.
    Clustering a fold of one person in ``folds`` would leave a block with a
    ``folds``-th of its namesakes, an easier task than the whole set and than
    the baselines, which are scored on whole blocks. S2AND's benchmark holds out
    whole blocks for the same reason (Subramanian et al. 2021: its train, validation
    and test sets are disjoint sets of blocks).

    Args:
        views: mentions with unique ``id`` and their ``block_key``.
        gold: view id -> gold cluster id.
        folds: number of folds, at least 1.

    Returns:
        ``{view id: fold in 0..folds-1}``, the same on every run and machine.
    """
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    views = list(views)
    for v in views:
        a, b = root(f"b:{v.block_key or v.id}"), root(f"g:{gold[v.id]}")
        if a != b:
            parent[max(a, b)] = min(a, b)
    members: dict[str, list[int]] = {}
    for v in views:
        members.setdefault(root(f"g:{gold[v.id]}"), []).append(v.id)
    load = [0] * folds
    out: dict[int, int] = {}
    for component in sorted(members.values(), key=lambda m: (-len(m), min(m))):
        k = load.index(min(load))
        load[k] += len(component)
        out.update((i, k) for i in component)
    return out


def pair_examples(
    pairs: Iterable[tuple[AuthorshipView, AuthorshipView, bool]],
) -> Examples:
    """Examples from labelled mention pairs (a pair gold standard such as the
    MEDLINE pairs, :mod:`curation.matching.labelled_pairs`).

    Each pair's features are those matching computes for two single mentions;
    pairs that matching never scores (vetoed: one paper, incompatible names)
    are left out, as in :func:`labelled_pairs`.

    Args:
        pairs: ``(mention, mention, one person)`` triples.

    Returns:
        Examples: one person positive, else negative.
    """
    out = Examples([], [])
    for a, b, same in pairs:
        features = mention_pair_features(a, b)
        if scoring.is_vetoed(features):
            continue
        out.x.append(scoring.vector(features))
        out.y.append(int(same))
    return out


def mention_pair_features(a: AuthorshipView, b: AuthorshipView) -> Features:
    """The features matching computes for two single mentions (each as a
    profile of one, as clustering compares them)."""
    return profile_profile_features(profile_of([a]), profile_of([b]))


def pair_score(a: AuthorshipView, b: AuthorshipView, weights: scoring.Weights) -> float:
    """The pairwise score in [0, 1] matching gives two single mentions (0.0 for
    a vetoed pair)."""
    return scoring.score(mention_pair_features(a, b), weights).pairwise_score


def kept_defaults(examples: Examples) -> list[str]:
    """The features :func:`fit` leaves at their default weight for these
    examples: those no example varies."""
    return [
        name
        for column, name in enumerate(scoring.FEATURES)
        if len({row[column] for row in examples.x}) <= 1
    ]
