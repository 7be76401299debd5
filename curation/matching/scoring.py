"""Pairwise score from features: documented default weights, a logistic link.

Until ``train_matcher`` (issue 4) learns weights from labelled data and curator
decisions, the score is ``sigmoid(bias + sum(weight * value))`` with the hand-set
weights below. They follow the evidence order used by INSPIRE's beard and S2AND
(identifiers first, then co-authors, then name agreement, then topical overlap):
a same-ORCID pair scores above 0.99; a full given-name match with overlapping
categories about 0.88; a bare initial match with nothing else about 0.18.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from curation.matching.features import Features

MODEL_VERSION = "default-weights-v3"

BIAS = -3.0
WEIGHTS: dict[str, float] = {
    "orcid": 6.0,  # +6 on agreement, -6 on conflict (value -1)
    "name": 3.0,  # name similarity in [0, 1]
    "coauthors": 1.5,  # per shared co-author, capped below
    "categories": 2.0,  # Jaccard overlap in [0, 1]
    "affiliation": 2.0,  # Jaccard overlap of affiliation words in [0, 1]
    "rare_name": 3.0,  # same full given name, by its rarity in [0, 1]
}
COAUTHOR_CAP = 3.0


@dataclass(frozen=True)
class Score:
    """A pairwise score and its explanation.

    Attributes:
        pairwise_score: probability-like score in [0, 1]; 0.0 exactly when the pair
            is impossible (names incompatible, or both on one paper).
        evidence: ``{"features": {name: value}, "contributions": {name: logit},
            "bias": float, "model_version": str}``.
    """

    pairwise_score: float
    evidence: dict


def score(features: Features) -> Score:
    """Score one pair with the default weights.

    Args:
        features: the pair's features.

    Returns:
        The Score; impossible pairs (incompatible names without an agreeing ORCID,
        or two authorships of one paper) get 0.0 and say why in the evidence.
    """
    values = features.as_dict()
    base = {"features": values, "bias": BIAS, "model_version": MODEL_VERSION}
    if features.same_paper:
        return Score(0.0, {**base, "contributions": {}, "veto": "same paper"})
    if features.name <= 0.0 and features.orcid < 1.0:
        return Score(0.0, {**base, "contributions": {}, "veto": "names incompatible"})
    capped = dict(values, coauthors=min(values["coauthors"], COAUTHOR_CAP))
    contributions = {k: round(WEIGHTS[k] * capped[k], 4) for k in WEIGHTS}
    logit = BIAS + sum(contributions.values())
    return Score(
        round(1.0 / (1.0 + math.exp(-logit)), 6),
        {**base, "contributions": contributions},
    )
