"""Learning the pairwise scoring model: labelled pairs in, logistic weights out.

Pairs are drawn inside blocks, as matching compares them (same blocking, same
features, vetoed pairs left out); a pair is positive when both mentions have one
gold cluster. Curator decisions add pairs too: an applied attach or merge is a
positive, a rejected one a negative, from the features stored on the proposal.
The model is a logistic regression (scikit-learn's objective, fitted under sign
bounds by SciPy, :func:`fit`), whose coefficients are the weights of
:func:`curation.matching.scoring.score`. Evaluation folds split by gold
cluster, so training and evaluation never share a person's mentions.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from curation import names
from curation.matching import blocking, scoring
from curation.matching.features import (
    AuthorshipView,
    Features,
    profile_of,
    profile_profile_features,
)

# ``(stronger, weaker)``: the first feature weighs at least what the second
# does. A full given name printed alike is stronger evidence than initials
# printed alike: fitted freely on Wang and Qian together, same_initials took
# +3.2 and same_given 0.0, and two bare "J. Wang" scored 0.89 where two "Wei
# Wang" scored 0.31 (a new-user trial: cross-field initials-only attaches at
# the top of the queue).
AT_LEAST = (("same_given", "same_initials"),)
# The most a labelled set's pairs weigh in all (:func:`set_weights`): below
# the smallest corpus-sized set (Qian's 91,000 pairs in four folds of five).
# At 100,000 that fold part weighed less than Wang, and the model trained as
# train_matcher trains it scored 0.760 on Qian, against 0.782 weighed alike.
SET_WEIGHT = 50_000
# Curator decisions that must vary a feature no labelled set varies before
# its weight is learned rather than held at its default
# (:func:`features_to_hold`).
DECISIONS_TO_LEARN = 50
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


def decision_pairs(
    decisions: Iterable[tuple[int, object, bool]],
) -> tuple[Examples, list[str]]:
    """Pairs from curator decisions.

    Args:
        decisions: ``(proposal id, evidence, approved)`` of decided attach and
            merge proposals; ``evidence`` as stored (``{"features": {name:
            value}, ...}``).

    Returns:
        ``(Examples, left out)``: approved ones positive, rejected ones
        negative; ``left out`` names each decision whose evidence holds no
        feature matching weighs, or a value outside its range
        (:func:`_feature_value`), with why. Evidence stored before a
        feature existed reads it 0.0; evidence stored before same_initials
        was told apart has same_given 1.0 for shared initials too, read as
        stored.
    """
    out, left_out = Examples([], []), []
    for proposal, evidence, approved in decisions:
        features = evidence.get("features") if isinstance(evidence, dict) else None
        known = (
            {k: v for k, v in features.items() if k in scoring.FEATURES}
            if isinstance(features, dict)
            else {}
        )
        if not known:
            left_out.append(f"proposal #{proposal}: no feature in its evidence")
            continue
        values = dict.fromkeys(scoring.FEATURES, 0.0)
        bad = ""
        for name, value in known.items():
            number = _feature_value(name, value)
            if number is None:
                bad = f"{name} is {value!r}, not a feature value"
                break
            values[name] = number
        if bad:
            left_out.append(f"proposal #{proposal}: {bad}")
            continue
        out.x.append([values[name] for name in scoring.FEATURES])
        out.y.append(int(approved))
    return out, left_out


def _feature_value(name: str, value: object) -> float | None:
    """A stored feature value as a model input, or None when it is none:
    ``orcid`` and ``title_similarity`` in [-1, 1], ``coauthors`` 0 or more
    (capped at :data:`scoring.COAUTHOR_CAP`), every other feature in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int too big for a float
        return None
    if not math.isfinite(number):
        return None
    if name == "coauthors":
        return min(number, scoring.COAUTHOR_CAP) if number >= 0 else None
    low = -1.0 if name in {"orcid", "title_similarity"} else 0.0
    return number if low <= number <= 1.0 else None


def fit(
    examples: Examples,
    *,
    version: str,
    sample_weight: Sequence[float] | None = None,
    hold: Iterable[str] = (),
) -> scoring.Weights:
    """Fit logistic regression weights, each of the sign its evidence has.

    The loss is scikit-learn's ``LogisticRegression(C=1.0)`` objective (log
    loss summed over the pairs, each times its sample weight, plus half the
    squared weights; the bias unpenalised) with the weights' prior centred
    on the default weights rather than 0 (a few curator decisions varying a
    feature no labelled set varies move it from its default, not to 0; a
    feature no pair varies is held there), minimised by SciPy's L-BFGS-B
    (Byrd, Lu, Nocedal and Zhu 1995; the solver scikit-learn's ``lbfgs``
    uses) under bounds: a feature that speaks for one person (a name alike,
    an affiliation shared, an ORCID agreeing) weighs 0 or more, one that
    speaks against (an affiliation conflict, years apart) 0 or less; the
    sign of each feature's default weight (:data:`scoring.WEIGHTS`) says
    which (a default of 0, ``block_repeat``'s, weighs 0 or more); and of
    each pair in :data:`AT_LEAST` the first weighs at least the second.
    Unbounded, features that move together (``name`` and
    ``same_given``) took weights of opposite signs (``name`` -6.0 with Wang
    and Qian together), which ranked "J."/"Jian" above two matching full
    names and showed curators a name agreeing as evidence against; the
    monotone constraints of gradient-boosted models (LightGBM's
    ``monotone_constraints``) serve the same end.

    Args:
        examples: at least one positive and one negative pair.
        version: the model version to record.
        sample_weight: one weight of 0 or more a pair, in ``examples`` order
            (:func:`set_weights`); None weighs every pair 1.
        hold: features held at their default weight whatever the examples
            say (:func:`features_to_hold`).

    Returns:
        The Weights (bias and one weight per feature); a feature constant over
        the examples, or in ``hold``, keeps its default weight
        (:data:`scoring.WEIGHTS`); which did is :func:`kept_defaults`.

    Raises:
        ValueError: the examples hold only one class, a feature value is not
            a finite number (named by the pair's index), ``sample_weight`` is
            not one finite weight of 0 or more a pair, or the solver found no
            weights (said with its message).
    """
    if len(set(examples.y)) < 2:
        raise ValueError("training needs both matching and non-matching pairs")
    # Imported here: SciPy takes a second to import, and every process that
    # loads the curation app (web, Celery, every command) would pay it, where
    # only training uses it.
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    x = np.asarray(examples.x, dtype=float)
    y = np.asarray(examples.y, dtype=float)
    each = np.asarray(
        [1.0] * len(y) if sample_weight is None else sample_weight, dtype=float
    )
    if each.shape != y.shape or not (np.isfinite(each) & (each >= 0)).all():
        raise ValueError(
            f"{len(each)} sample weights for {len(y)} pairs: give one finite "
            "weight of 0 or more a pair"
        )
    if not np.isfinite(x).all():
        row = int(np.flatnonzero(~np.isfinite(x).all(axis=1))[0])
        raise ValueError(f"pair {row} has a feature value that is not a finite number")
    d = x.shape[1]
    column = {name: n for n, name in enumerate(scoring.FEATURES)}
    # Fitted as theta: theta of a weaker feature is its weight, and theta of
    # the stronger one what it weighs above it (0 or more), its column the
    # sum of both; so the stronger weighs at least the weaker.
    x = x.copy()
    prior = np.array([scoring.WEIGHTS[name] for name in scoring.FEATURES])
    for stronger, weaker in AT_LEAST:
        x[:, column[weaker]] += x[:, column[stronger]]
        prior[column[stronger]] -= prior[column[weaker]]

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        coef, bias = theta[:d], theta[d]
        z = x @ coef + bias
        value = -(each * (y * log_expit(z) + (1 - y) * log_expit(-z))).sum()
        residual = each * (expit(z) - y)
        gradient = np.append(x.T @ residual + coef - prior, residual.sum())
        return value + 0.5 * (coef - prior) @ (coef - prior), gradient

    # A feature the training pairs never vary (no ORCIDs, no co-authors in the
    # labelled sets) teaches nothing: it is held at its default weight while
    # the rest are fitted, so that the bias does not take its part too.
    kept = set(kept_defaults(examples, hold))
    stronger_of = {stronger for stronger, _ in AT_LEAST}
    bounds = [
        (prior[column[name]],) * 2
        if name in kept
        else (0.0, None)
        if name in stronger_of or scoring.WEIGHTS[name] >= 0
        else (None, 0.0)
        for name in scoring.FEATURES
    ] + [(None, None)]
    found = minimize(
        loss,
        np.append(prior, scoring.BIAS),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": 5000},
    )
    if not np.isfinite(found.x).all() or (not found.success and found.nit == 0):
        raise ValueError(f"the fit found no weights ({found.message})")
    fitted = found.x[:d].copy()
    for stronger, weaker in AT_LEAST:
        fitted[column[stronger]] += fitted[column[weaker]]
    weights = {
        # + 0.0: a weight held at its bound reads 0.0, not -0.0.
        name: scoring.WEIGHTS[name] if name in kept else round(float(value), 6) + 0.0
        for name, value in zip(scoring.FEATURES, fitted, strict=True)
    }
    return scoring.Weights(version, round(float(found.x[d]), 6), weights)


def set_weights(sizes: Sequence[int], *, decisions: int = 0) -> list[float]:
    """Sample weights that make the big labelled sets weigh alike in :func:`fit`.

    A set's pairs weigh at most :data:`SET_WEIGHT` in all: INSPIRE's Wang
    gives about 236,000 pairs and S2AND's Qian 114,000 (91,000 in four of
    five folds), both then weigh 50,000; unweighted, Wang's corpus (one
    family name, printed mostly with initials) sets the model Qian is
    matched with too. A smaller set (the MEDLINE pairs' 1,448) and each
    curator decision weigh 1 a pair: a set too small to stand for a corpus
    is not blown up to one, and the weight grows with a set's size without a
    step.

    Args:
        sizes: the pairs of each labelled set, in the order their pairs
            come in the examples.
        decisions: the curator-decision pairs that follow them.

    Returns:
        One weight a pair: ``min(1, SET_WEIGHT / size)`` for a pair of a set
        of ``size`` pairs; then 1.0 a decision.
    """
    out: list[float] = []
    for n in sizes:
        out += [min(1.0, SET_WEIGHT / n)] * n if n else []
    return out + [1.0] * decisions


def features_to_hold(labelled: Examples, decisions: Examples) -> list[str]:
    """The features :func:`fit` is to hold at their default weight: those the
    labelled pairs never vary and fewer than :data:`DECISIONS_TO_LEARN`
    curator decisions vary (hold a value other than the labelled pairs'
    one). A handful of decisions, most of them rejections of pairs that
    scored high, would otherwise set the weight of ORCID, co-authors or
    categories alone, down to 0 (a hostile trial: 8 decisions took
    co-authors from 1.5 to 0).

    Args:
        labelled: the labelled sets' pairs.
        decisions: the curator decisions' pairs (:func:`decision_pairs`).

    Returns:
        Feature names, in :data:`scoring.FEATURES` order.
    """
    out = []
    for column, name in enumerate(scoring.FEATURES):
        seen = {row[column] for row in labelled.x}
        if len(seen) > 1:
            continue
        constant = next(iter(seen), 0.0)
        varying = sum(1 for row in decisions.x if row[column] != constant)
        if varying < DECISIONS_TO_LEARN:
            out.append(name)
    return out


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
    views = list(views)
    root = blocking.components(
        (f"b:{v.block_key or v.id}", f"g:{gold[v.id]}") for v in views
    )
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


def kept_defaults(examples: Examples, hold: Iterable[str] = ()) -> list[str]:
    """The features :func:`fit` leaves at their default weight for these
    examples: those no example varies, and those in ``hold``; not the
    features of :data:`AT_LEAST`, fitted together so that their order holds
    (an unvaried one stays where its prior puts it: level with the other)."""
    held = set(hold)
    ordered = {name for pair in AT_LEAST for name in pair}
    return [
        name
        for column, name in enumerate(scoring.FEATURES)
        if name not in ordered
        and (name in held or len({row[column] for row in examples.x}) <= 1)
    ]


@dataclass(frozen=True)
class SetPairs:
    """One labelled set's training pairs and what they came from.

    Attributes:
        name: the set's folder name.
        examples: its pairs (:func:`labelled_pairs`, or :func:`pair_examples`
            of a pair set's train pairs).
        summary: ``{"mentions", "pairs", "positives"}`` and, when some were,
            ``records_left_out`` (signature records) or ``rows_left_out``
            (pair rows), as a trained model records them.
    """

    name: str
    examples: Examples
    summary: dict


def set_pairs(folder, *, embed=None) -> SetPairs:
    """The training pairs of one labelled set folder.

    Args:
        folder: a cluster set (:func:`curation.matching.labelled.load`: INSPIRE
            beard, S2AND, the ORCID-linked set's pseudo-path
            :data:`curation.matching.labelled.ORCID_LINKED`) or a pair set
            (:func:`curation.matching.labelled_pairs.load_pairs`: its train
            pairs; its test pairs are what evaluate_matching scores).
        embed: texts to unit vectors (``wovepaper.embeddings.embed_cached``),
            for the sets that print titles and abstracts (the MEDLINE pairs,
            the ORCID-linked set): their pairs then carry ``title_similarity``;
            None leaves it 0.0.

    Returns:
        The SetPairs.

    Raises:
        labelled.DatasetError: the folder holds no set those read (their
            message names the file and the problem).
    """
    from curation.matching import labelled
    from curation.matching import labelled_pairs as pair_sets

    if pair_sets.is_pair_set(folder):
        pair_set = pair_sets.load_pairs(folder, embed=embed)
        examples = pair_examples((p.a, p.b, p.same) for p in pair_set.train)
        name, mentions = pair_set.name, 2 * len(pair_set.train)
        left_out = (
            {"rows_left_out": pair_set.train_left_out}
            if pair_set.train_left_out
            else {}
        )
    else:
        data = labelled.load(folder, embed=embed)
        examples = labelled_pairs(data.views, data.gold)
        name, mentions = data.name, len(data.views)
        left_out = {"records_left_out": len(data.left_out)} if data.left_out else {}
    summary = {
        "mentions": mentions,
        "pairs": len(examples.y),
        "positives": sum(examples.y),
        **left_out,
    }
    return SetPairs(name, examples, summary)


def fit_sets(
    sets: Sequence[SetPairs],
    *,
    version: str,
    decisions: Examples | None = None,
) -> tuple[scoring.Weights, list[str]]:
    """:func:`fit` on several labelled sets, each weighing alike
    (:func:`set_weights`), and curator decisions (one weight a decision),
    features that neither varies held (:func:`features_to_hold`): the one
    recipe of ``train_matcher`` (the database's model and the shipped file)
    and of ``evaluate_matching``'s ``shipped`` figure.

    Args:
        sets: the labelled sets' pairs.
        version: the model version to record.
        decisions: curator-decision pairs (:func:`decision_pairs`), or None.

    Returns:
        ``(weights, kept)``: the Weights (threshold unset: the caller's) and
        the features left at their default weight (:func:`kept_defaults`).

    Raises:
        ValueError: the pairs hold only one class (or none).
    """
    decisions = decisions or Examples([], [])
    examples = Examples([], [])
    for one in sets:
        examples.extend(one.examples)
    hold = features_to_hold(examples, decisions)
    examples.extend(decisions)
    weights = fit(
        examples,
        version=version,
        sample_weight=set_weights(
            [len(one.examples.y) for one in sets], decisions=len(decisions.y)
        ),
        hold=hold,
    )
    return weights, kept_defaults(examples, hold)
