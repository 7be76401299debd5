"""The shipped model on a corpus it never saw, with its prior adapted by EM.

``evaluate_matching``'s ``shipped`` figure trains on every labelled set but
one and clusters that one: on INSPIRE Wang it keeps namesakes apart (B³
recall 0.60), on S2AND Qian it joins them (precision 0.56), because one
person stands behind 79% of Wang's namesake pairs and 38% of Qian's. This
script tries the textbook remedy for a class prior that differs between
training and deployment, which needs no labels of the new corpus: Saerens,
Latinne and Decaestecker (2002), "Adjusting the outputs of a classifier to
new a priori probabilities: a simple procedure", Neural Computation 14(1).
The model's pair probabilities over the new corpus's block pairs give, by
EM, an estimate of its prior; the logistic model's bias is then moved by
the difference of the two priors' logits, and the corpus clustered again.

Prints, for each held-out set: the training prior (pairs weighted as
``train_matcher`` weighs them), the mean probability, the EM estimate and
the true share of one-person pairs (read from the gold labels, for the
report only), then B³ precision, recall and F1 of the shipped model before
and after the shift, at the shipped threshold.

Measured 2026-12-07 (three minutes on 2 cores; titles not embedded, so
``title_similarity`` reads 0 in the MEDLINE and ORCID-linked pairs):

- Wang: training prior 0.39, EM 0.60 (true 0.79); B³ F1 0.729 (P 0.937,
  R 0.596) -> 0.792 (P 0.909, R 0.702), a shift of +0.87 in the logit.
- Qian: training prior 0.79, EM 0.99 (true 0.38); B³ F1 0.716 -> 0.710.

EM moves the prior the wrong way on Qian: the assumption it rests on (only
the prior differs; a one-person pair looks the same in both corpora) does
not hold, since the model trained mostly on Wang scores most Qian pairs
near 1. So matching does not adapt its prior this way.

Usage::

    WOVEPAPER_DATA_DIR=/path/to/shared/data .venv/bin/python bench/prior_shift.py
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from curation.matching import (  # noqa: E402
    evaluation,
    labelled,
    pipeline,
    scoring,
    training,
)

THRESHOLD = 0.4  # evaluate_matching's shipped threshold
HELD_OUT = ("and/beard_inspire_wang", "and/s2and/qian_partial")


def probabilities(weights: scoring.Weights, rows: list[list[float]]) -> list[float]:
    """The logistic model's probability of each feature row (in
    ``scoring.FEATURES`` order), without the name-alone cap."""
    out = []
    for row in rows:
        logit = weights.bias + sum(
            weights.weights.get(name, 0.0) * value
            for name, value in zip(scoring.FEATURES, row, strict=True)
        )
        out.append(scoring.sigmoid(max(-700.0, min(700.0, logit))))
    return out


def em_prior(p: list[float], prior: float, rounds: int = 200) -> float:
    """Saerens et al. (2002), section 2.2: the new corpus's prior, in (0, 1),
    from the probabilities ``p`` a model trained at ``prior`` gives its
    pairs; iterated until it moves by less than 1e-6."""
    estimate = prior
    for _ in range(rounds):
        up, down = estimate / prior, (1 - estimate) / (1 - prior)
        adjusted = sum(up * q / (up * q + down * (1 - q)) for q in p) / len(p)
        if abs(adjusted - estimate) < 1e-6:
            return adjusted
        estimate = adjusted
    return estimate


def main() -> None:
    data_dir = Path(settings.WOVEPAPER_DATA_DIR)
    sets = {path: training.set_pairs(data_dir / path) for path in labelled.SHIPPED_SETS}
    for held_out in HELD_OUT:
        others = [one for path, one in sets.items() if path != held_out]
        weights, _ = training.fit_sets(others, version=f"shipped-without-{held_out}")
        sample = training.set_weights([len(o.examples.y) for o in others])
        labels = [y for o in others for y in o.examples.y]
        prior = sum(w * y for w, y in zip(sample, labels, strict=True)) / sum(sample)
        target = sets[held_out].examples
        p = probabilities(weights, target.x)
        estimate = em_prior(p, prior)
        shift = math.log(estimate / (1 - estimate)) - math.log(prior / (1 - prior))
        print(
            f"{held_out}: training prior {prior:.3f}, mean probability "
            f"{sum(p) / len(p):.3f}, EM prior {estimate:.3f}, true "
            f"{sum(target.y) / len(target.y):.3f}; logit shift {shift:+.3f}"
        )
        data = labelled.load(data_dir / held_out)
        for name, model in (
            ("shipped", weights),
            ("prior adapted", replace(weights, bias=weights.bias + shift)),
        ):
            found = pipeline.cluster_all(data.views, threshold=THRESHOLD, weights=model)
            b3 = evaluation.b_cubed(found, data.gold)
            print(
                f"  {name:<14} B3 P {b3.precision:.3f}  R {b3.recall:.3f}  "
                f"F1 {b3.f1:.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
