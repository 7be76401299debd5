"""Pairwise score from features: a logistic model, learned or default.

The score is ``sigmoid(bias + sum(weight * value))``. ``manage.py train_matcher``
learns the weights (logistic regression) from labelled data and curator decisions
and stores them as a versioned ``MatcherModel``; until one is trained the hand-set
default weights below apply. The defaults follow the evidence order used by
INSPIRE's beard and S2AND (identifiers first, then co-authors, then name agreement,
then topical and affiliation overlap): a same-ORCID pair scores above 0.99; a full
given-name match with overlapping categories about 0.88; a bare initial match with
nothing else about 0.27.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from curation.matching.features import Features

MODEL_VERSION = "default-weights-v8"

BIAS = -3.0
WEIGHTS: dict[str, float] = {
    "orcid": 6.0,  # +6 on agreement, -6 on conflict (value -1)
    "name": 3.0,  # name similarity in [0, 1]
    "coauthors": 1.5,  # per shared co-author, capped below
    "categories": 2.0,  # Jaccard overlap in [0, 1]
    "affiliation": 2.0,  # Jaccard overlap of affiliation words in [0, 1]
    "rare_name": 3.0,  # same full given name, by its rarity in [0, 1]
    "same_given": 0.3,  # the same printed full given name (two bare "Wei" stay < 0.6)
    "affiliation_conflict": -1.0,  # both printed affiliations, no word shared
    "rare_family": 1.0,  # a family name printed with few given names, in [0, 1]
    # One OpenAlex or Semantic Scholar author id on both sides, beside evidence
    # beyond the name (features.Features.source_id: never enough alone).
    "source_id": 2.5,
    "source_id_conflict": -0.5,  # ids of one source on both sides, none shared
    "years_apart": -0.5,  # 20 or more years between the two sides' papers
    # The same printed initials alone ("Y.F." twice): what same_given weighed
    # for initials before the two were told apart, so default scores are as
    # they were.
    "same_initials": 0.3,
    # How often the block's affiliations repeat (features.block_repeats): a
    # corpus's prior, which only training on labelled sets can weigh; 0 by
    # default, so the default scores are as they were.
    "block_repeat": 0.0,
    # Both sides' fields known and no arXiv archive shared (hep-ex against
    # astro-ph). Measured on the demo corpus (same block, same rare full given
    # name as one person: 5 of 242 pairs archives apart; incompatible full
    # given names as two: 102 of 122; bench/field_conflict.py) the log
    # likelihood ratio is -3.7 (95%: -4.6 to -2.8); held
    # at -1.5, less than a shared field's +2, since that corpus is a few
    # archives' harvests, where two people are apart by construction, and
    # people who publish across fields (I. Grabec: cs.NE and physics) exist.
    "field_conflict": -1.5,
    # Title-and-abstract cosine less its neutral point (features.TITLE_NEUTRAL),
    # in [-1, 1]. Alone on the MEDLINE pair set's train pairs it weighs 12.1
    # a unit of cosine; held at half that here, since beside co-authors and
    # fields it says in part what they say: +0.3 above neutral weighs 1.5, one
    # shared co-author's worth.
    "title_similarity": 5.0,
}
# The features a model weighs, in this order (vectors for training use it too).
FEATURES: tuple[str, ...] = tuple(WEIGHTS)
COAUTHOR_CAP = 3.0
# The features whose agreement is evidence beyond the name (:func:`beyond_name`).
# A source's author id is not one: it counts only beside one of these
# (features.Features.source_id).
BEYOND_NAME = ("orcid", "coauthors", "categories", "affiliation", "title_similarity")
# The highest score a pair that agrees on nothing but its name can have
# (:func:`score`). How often two mentions in one block that share only a name
# are one person depends on the corpus, not on the names: 0.69 of such pairs
# in INSPIRE Wang, 0.26 in S2AND Qian, 0.25 in the MEDLINE pairs, 0.87 in the
# ORCID-linked set (training.labelled_pairs; evaluate_matching). A model
# trained on one corpus scored Qian's name-only pairs at 0.99 or more, where
# 0.87 were one person. No labelled set has name-only pairs one person at
# 0.99, so a name alone is never sure: it stays under the 0.99 band of sure
# links and the auto-apply threshold (curation.deciding.auto_apply), and far above
# any clustering threshold. At 0.95 it lowered Wang's 5-fold B³ F1 from
# 0.9177 to 0.9162 (average linkage averages the capped scores); at 0.98 it
# leaves it, and Qian's sure links are 0.955 either way (0.947 uncapped).
NAME_ALONE_MAX = 0.98


@dataclass(frozen=True)
class Weights:
    """A scoring model: a bias and one weight per feature in :data:`FEATURES`.

    Attributes:
        version: recorded on every proposal scored with it.
        bias: the logit of a pair with every feature 0.
        weights: ``{feature: weight}``; a feature missing here weighs 0.
        threshold: the pairwise score in [0, 1] this model was tuned to join
            clusters and attach at; None leaves it to the settings.
    """

    version: str
    bias: float
    weights: dict[str, float] = field(default_factory=dict)
    threshold: float | None = None


DEFAULT = Weights(MODEL_VERSION, BIAS, WEIGHTS)


# The largest magnitude a stored weight or bias may have: logistic regression on
# these features learns weights of a few units; a value past this is a row
# edited by hand, whose logits would overflow the sigmoid.
STORED_WEIGHT_MAX = 1000.0


def _finite(value: object) -> bool:
    # abs() first: math.isfinite of an int past a float's range overflows.
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and abs(value) <= STORED_WEIGHT_MAX
        and math.isfinite(value)
    )


def stored_weights(
    version: str, bias: object, weights: object, threshold: object
) -> Weights:
    """The scoring model a stored ``MatcherModel`` row holds.

    A feature the row does not weigh (a model trained before the feature
    existed never saw it) keeps its default weight, as one the training pairs
    never varied does (:func:`curation.matching.training.fit`), rather than
    weighing nothing. Before ``same_initials``, ``same_given`` stood for printed
    initials too: such a model weighs them as it learned to. Keys that name no
    feature are ignored, as :func:`score` ignores them.

    Args:
        version, bias, weights, threshold: the row's fields; ``weights`` a JSON
            object ``{feature: number}``.

    Returns:
        The Weights.

    Raises:
        ValueError: the row cannot be scored with (edited by hand): its
            ``version`` is empty or the default weights' own, ``weights`` is
            not an object of numbers, a number is not finite or is larger
            than :data:`STORED_WEIGHT_MAX`, or ``threshold`` is not a number
            strictly between 0 and 1; the message names the field and value.
    """
    if not version or version == MODEL_VERSION:
        # Proposals record the version: they would read as the defaults'.
        raise ValueError(
            f"version is {version!r}, which names no trained model"
            + (" (it is the default weights' own)" if version else "")
        )
    if not isinstance(weights, dict):
        raise ValueError(
            f"weights is {type(weights).__name__} {_clip(weights)}, not an object "
            "{feature: weight}"
        )
    for name, value in weights.items():
        if not _finite(value):
            raise ValueError(
                f"the weight of {name!r} is {_clip(value)}, not a finite number "
                f"of at most {STORED_WEIGHT_MAX:g} in size"
            )
    if not _finite(bias):
        raise ValueError(f"bias is {_clip(bias)}, not a finite number")
    if not (_finite(threshold) and 0.0 < threshold < 1.0):
        raise ValueError(
            f"threshold is {_clip(threshold)}, not a number strictly between 0 and 1"
        )
    learned = dict(weights)
    if "same_initials" not in learned and "same_given" in learned:
        learned["same_initials"] = learned["same_given"]
    return Weights(version, float(bias), {**WEIGHTS, **learned}, float(threshold))


def _clip(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Score:
    """A pairwise score and its explanation.

    Attributes:
        pairwise_score: probability-like score in [0, 1]; 0.0 exactly when the pair
            is impossible (names incompatible, or both on one paper).
        veto: why the pair is impossible, or "" (see :func:`is_vetoed`).
        evidence: ``{"features": {name: value}, "bias": float, "model_version":
            str, "contributions": {name: logit}}`` (and ``"veto"`` when vetoed,
            ``"rule"`` when a rule, not the score, joined the pair), built
            when first read: clustering scores millions of pairs and keeps the
            evidence of few.
        rule: why the pair was joined though its score is below the threshold
            ("" when its score joined it, or it was not joined):
            :func:`curation.matching.pipeline.attach_evidence_free` says it.

    Made by :func:`score` from the features as a dict (``values``), the model
    (``weights``), each feature's logit contribution in :data:`FEATURES` order
    (``logits``; None when vetoed) and the veto.
    """

    __slots__ = (
        "pairwise_score",
        "veto",
        "rule",
        "_values",
        "_weights",
        "_logits",
        "_built",
    )

    def __init__(
        self,
        pairwise_score: float,
        values: dict[str, float],
        weights: Weights,
        logits: list[float] | None = None,
        veto: str = "",
        rule: str = "",
    ) -> None:
        self.pairwise_score = pairwise_score
        self.veto = veto
        self.rule = rule
        self._values = values
        self._weights = weights
        self._logits = logits
        self._built: dict | None = None

    @property
    def evidence(self) -> dict:
        """The pair's evidence (see the class docstring); the same dict each read."""
        if self._built is None:
            base = {
                "features": self._values,
                "bias": self._weights.bias,
                "model_version": self._weights.version,
            }
            if self.veto:
                self._built = {**base, "contributions": {}, "veto": self.veto}
            else:
                contributions = dict(zip(FEATURES, self._logits or (), strict=True))
                self._built = {**base, "contributions": contributions}
            if self.rule:
                self._built["rule"] = self.rule
        return self._built

    def joined_by(self, rule: str) -> Score:
        """This pair's Score, saying that ``rule`` joined it (a new Score; its
        value and features are this one's)."""
        return Score(
            self.pairwise_score,
            self._values,
            self._weights,
            self._logits,
            self.veto,
            rule,
        )


def vector(features: Features) -> list[float]:
    """The model inputs of a pair, in :data:`FEATURES` order (co-authors capped)."""
    return _inputs(features.as_dict())


def _inputs(values: dict[str, float]) -> list[float]:
    """:func:`vector` of ``features.as_dict()``, which it leaves as it is."""
    return [
        float(min(values[name], COAUTHOR_CAP) if name == "coauthors" else values[name])
        for name in FEATURES
    ]


def is_vetoed(features: Features) -> str:
    """Why a pair cannot be one person ("" when it can).

    Two authorships of one paper never are; nor are incompatible given names,
    unless an ORCID agrees.
    """
    if features.same_paper:
        return "same paper"
    if features.name <= 0.0 and features.orcid < 1.0:
        return "names incompatible"
    return ""


def score(features: Features, weights: Weights = DEFAULT) -> Score:
    """Score one pair.

    Args:
        features: the pair's features.
        weights: the model (default: the hand-set :data:`DEFAULT`).

    Returns:
        The Score; impossible pairs (see :func:`is_vetoed`) get 0.0 and say why in
        the evidence.
    """
    values = features.as_dict()
    veto = is_vetoed(features)
    if veto:
        return Score(0.0, values, weights, veto=veto)
    logits = _contributions(values, weights)
    logit = weights.bias + sum(logits)
    probability = sigmoid(logit)
    if probability > NAME_ALONE_MAX and not beyond_name(values):
        probability = NAME_ALONE_MAX
    return Score(round(probability, 6), values, weights, logits)


def beyond_name(values: dict[str, float]) -> bool:
    """Whether a pair's features (``Features.as_dict()``) agree on more than
    the name: an ORCID iD, a co-author, an arXiv category, an affiliation
    word, or titles and abstracts closer than the field makes likely
    (``title_similarity`` above 0)."""
    return any(values[name] > 0.0 for name in BEYOND_NAME)


def _contributions(values: dict[str, float], weights: Weights) -> list[float]:
    """Each feature's logit contribution, in :data:`FEATURES` order, to 4 places."""
    return [
        round(weights.weights.get(name, 0.0) * value, 4)
        for name, value in zip(FEATURES, _inputs(values), strict=True)
    ]


def score_of_features(values: dict, weights: Weights) -> float | None:
    """The pairwise score a model gives a pair from its stored evidence.

    For a proposal made by another model (a model switch): its evidence's
    ``features`` scored again with ``weights``, as :func:`score` would.

    Args:
        values: ``{feature: value}`` as a proposal's evidence stores them; a
            feature it lacks (added since) reads 0.
        weights: the model.

    Returns:
        The score in [0, 1], as :func:`score` gives it (0.0 for a vetoed
        pair); None when a value is not a number (a row edited by hand).
    """
    if not all(
        isinstance(values.get(name, 0.0), int | float)
        and not isinstance(values.get(name, 0.0), bool)
        for name in (*FEATURES, "same_paper")
    ):
        return None
    full = {name: float(values.get(name, 0.0)) for name in (*FEATURES, "same_paper")}
    return score(Features(**full), weights).pairwise_score


def sigmoid(logit: float) -> float:
    """The logistic function: a score in [0, 1] from a logit of any size
    (exp(-logit) overflows a float past 709; the score there rounds to 0)."""
    if logit < -700.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(-logit))
