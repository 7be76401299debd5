"""The figures ``manage.py evaluate_matching`` prints, computed: the inputs of a
labelled set, the trivial baselines, the learned model cross-validated by
block, the auto-apply report (B³ precision of the links the policy would
apply) and the pair report of a pair gold standard (the MEDLINE pairs).

The same engine the matching run calls scores every figure
(:mod:`curation.matching.pipeline`), so a figure measured is the product's.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from django.conf import settings

from curation import names
from curation.deciding import auto_apply
from curation.matching import (
    evaluation,
    labelled,
    labelled_pairs,
    pipeline,
    scoring,
    training,
)

# The pairwise score above which a link counts as sure: the auto-apply
# policy's bar (issue: B³ precision of such links at least 0.99).
SURE = 0.99
# Block-size bands (mentions per surname + first initial block) for the breakdown.
BANDS = ((1, 10), (11, 100), (101, 1000), (1001, 10**9))


def baseline_clusterings(data: labelled.LabelledSet) -> dict[str, dict[int, str]]:
    """The obvious matchers, for comparison in the same run."""
    return {
        "exact name string": {i: data.raw_names[i] for i in data.gold},
        "normalised full name": {
            v.id: f"{names.fold(v.family)}|{names.fold(v.given)}" for v in data.views
        },
        "surname + first initial": {v.id: v.block_key for v in data.views},
    }


def signature_inputs(data: labelled.LabelledSet) -> dict[int, tuple]:
    """What matching reads of each mention, for the same-input ceiling
    (:func:`curation.matching.evaluation.same_input_ceiling`): its name as
    parsed, affiliation words, co-authors and identifiers, fields and year
    (the corpus rarities and the block follow from these and the set)."""
    return {
        v.id: (
            v.given,
            v.family,
            v.affiliation_tokens,
            v.coauthor_keys,
            v.orcid,
            v.source_ids,
            v.categories,
            v.year,
        )
        for v in data.views
    }


def cluster_scores(predicted: dict[int, str], gold: dict[int, str]) -> dict:
    return {
        "b3": evaluation.b_cubed(predicted, gold).as_dict(),
        "pairwise": evaluation.pairwise(predicted, gold).as_dict(),
    }


# Signature records left out (or read in part) that the text report lists;
# --json lists them all.
LEFT_OUT_SHOWN = 20
# Affiliation words shown for one part of an error (its commonest), and parts
# shown for one error (its biggest; the rest are summed up).
ERROR_WORDS = 4
ERROR_PARTS = 5


def worst_errors(
    data: labelled.LabelledSet, predicted: dict[int, str], top: int, model: str
) -> dict:
    """The worst over-merged and split clusters of ``predicted``
    (:func:`evaluation.b_cubed_errors`), each part described by its mentions'
    commonest printed name, commonest affiliation words and how many printed
    no affiliation: what a reader needs to see why they were joined or parted.
    """
    over, split = evaluation.b_cubed_errors(predicted, data.gold, top)
    views = {v.id: v for v in data.views}
    members: dict[tuple[str, str], list[int]] = {}
    for i in data.gold:
        members.setdefault(("gold", data.gold[i]), []).append(i)
        members.setdefault(("predicted", predicted[i]), []).append(i)

    def part(inside: list[int], cluster: str, mentions: int) -> dict:
        raw = Counter(data.raw_names[i] for i in inside)
        words = Counter(t for i in inside for t in views[i].affiliation_tokens)
        return {
            "cluster": cluster,
            "mentions": mentions,
            "name": min(raw.items(), key=lambda kv: (-kv[1], kv[0]))[0],
            "affiliation_words": [
                w for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))
            ][:ERROR_WORDS],
            "no_affiliation": sum(1 for i in inside if not views[i].affiliation_tokens),
        }

    def described(error: evaluation.ClusterError, side: str, other: str) -> dict:
        own = set(members[(side, error.cluster)])
        inside = {
            c: [i for i in members[(other, c)] if i in own] for c, _ in error.parts
        }
        rest = error.parts[ERROR_PARTS:]
        return {
            "cluster": error.cluster,
            "mentions": error.size,
            "loss": error.loss,
            "parts": [part(inside[c], c, n) for c, n in error.parts[:ERROR_PARTS]],
            "more_parts": {
                "parts": len(rest),
                "mentions": sum(n for _, n in rest),
                "no_affiliation": sum(
                    1
                    for c, _ in rest
                    for i in inside[c]
                    if not views[i].affiliation_tokens
                ),
            },
        }

    return {
        "model": model,
        "over_merged": [described(e, "predicted", "gold") for e in over],
        "split": [described(e, "gold", "predicted") for e in split],
    }


def cross_validated(
    data: labelled.LabelledSet,
    folds: int,
    threshold: float,
    others: Sequence[training.Examples] = (),
) -> tuple[dict[int, str], list[int]]:
    """Cluster each fold with a model trained on the other folds.

    Folds keep whole gold clusters and whole blocks together
    (:func:`curation.matching.training.block_folds`), so no person's mentions are
    both trained on and evaluated, and each held-out block is clustered with all
    its namesakes, as the baselines are. A fold whose training part holds only
    one class of pairs (tiny sets) uses the default weights. ``folds`` is at
    most the number of gold clusters (the command caps it): a fold past that
    would hold no one, and placing the components costs time in ``folds``.
    With ``others`` (the pairs of other labelled sets) each fold's model is
    trained on them too, every set weighing alike, as train_matcher trains
    the model matching uses (:func:`curation.matching.training.set_weights`).

    Returns:
        ``({view id: predicted cluster label} over all folds, [the folds that
        fell back to the default weights])``.
    """
    fold = training.block_folds(data.views, data.gold, folds)
    predicted: dict[int, str] = {}
    untrained: list[int] = []
    for k in sorted(set(fold.values())):
        train = [v for v in data.views if fold[v.id] != k]
        test = [v for v in data.views if fold[v.id] == k]
        examples = training.labelled_pairs(train, data.gold)
        sizes = [len(examples.y)]
        for other in others:
            examples.extend(other)
            sizes.append(len(other.y))
        try:
            weights = training.fit(
                examples,
                version=f"cv-{k}",
                sample_weight=training.set_weights(sizes),
            )
        except ValueError:
            # Too few labelled pairs to learn from (a tiny set): default weights.
            weights = scoring.DEFAULT
            untrained.append(k)
        for view_id, label in pipeline.cluster_all(
            test,
            threshold=threshold,
            weights=weights,
            constraints=seed_constraints(data),
        ).items():
            predicted[view_id] = f"{k}:{label}"
    return predicted, untrained


def auto_applied_report(
    data: labelled.LabelledSet,
    weights: scoring.Weights,
    constraints: pipeline.Constraints = pipeline.NO_CONSTRAINTS,
) -> dict:
    """What the auto-apply policy would apply on a labelled set, and how right
    it is: the ``new`` clusters the model forms at its threshold whose weakest
    link clears the policy's (:func:`curation.matching.pipeline.sure_clusters`,
    :mod:`curation.deciding.auto_apply`; the default threshold when the setting is not
    a probability).

    Returns:
        ``{"threshold", "linked_mentions", "placed_mentions", "mentions",
        "linked_b3_precision", "b3_precision"}``: ``linked_b3_precision`` is
        the B³ precision over the mentions automation links to another (the
        figure issue 47 holds at 0.99 or more; 1.0 when it links none),
        ``b3_precision`` that of the whole set with every mention automation
        leaves waiting alone, ``placed_mentions`` those in an applied profile,
        alone included.
    """
    sure = auto_apply.measured_threshold()
    kept = pipeline.sure_clusters(
        data.views,
        threshold=weights.threshold,
        sure=sure,
        weights=weights,
        constraints=constraints,
    )
    placed = {m: f"auto:{n}" for n, members in enumerate(kept) for m in members}
    linked = {m: placed[m] for members in kept if len(members) > 1 for m in members}
    whole = {v.id: placed.get(v.id, f"alone:{v.id}") for v in data.views}
    return {
        "threshold": sure,
        "mentions": len(data.views),
        "placed_mentions": len(placed),
        "linked_mentions": len(linked),
        "linked_b3_precision": round(
            evaluation.b_cubed(linked, {m: data.gold[m] for m in linked}).precision
            if linked
            else 1.0,
            4,
        ),
        "b3_precision": round(evaluation.b_cubed(whole, data.gold).precision, 4),
    }


def seed_constraints(data: labelled.LabelledSet) -> pipeline.Constraints:
    """The set's cluster seeds as clustering constraints (none without)."""
    return pipeline.Constraints.of(data.must_link, data.cannot_link)


def seeds_obeyed(data: labelled.LabelledSet, predicted: dict[int, str]) -> int:
    """How many of the set's seeds a clustering obeys: must-linked mentions in
    one cluster, cannot-linked ones in two."""
    return sum(predicted[a] == predicted[b] for a, b in data.must_link) + sum(
        predicted[a] != predicted[b] for a, b in data.cannot_link
    )


def must_links_broken(data: labelled.LabelledSet, predicted: dict[int, str]) -> list:
    """Each must-link the clustering left apart, and why it could not hold.

    A must-link holds within a block (sub-blocks of a big one included) and
    yields to a cannot-link and to what matching never joins: two mentions on
    one paper, or given names that cannot be one person's.
    """
    views = {v.id: v for v in data.views}
    out = []
    for a, b in sorted(data.must_link):
        if predicted[a] == predicted[b]:
            continue
        block_a = predicted[a].rsplit(":", 1)[0]
        block_b = predicted[b].rsplit(":", 1)[0]
        if block_a != block_b:
            why = f"in different blocks ({block_a!r}, {block_b!r}): never compared"
        else:
            features = training.mention_pair_features(views[a], views[b])
            why = scoring.is_vetoed(features) or "a cannot-link lies between them"
        out.append(f"{data.mention_ids[a]}-{data.mention_ids[b]}: {why}")
    return out


def _pair_scores(
    decisions: list[bool], pairs: list[labelled_pairs.LabelledPair]
) -> dict:
    prf, accuracy = evaluation.labelled_pairs_prf(decisions, [p.same for p in pairs])
    return {"pairwise": {**prf.as_dict(), "accuracy": round(accuracy, 4)}}


def pairs_report(
    data: labelled_pairs.PairSet,
    learned_threshold: float | None,
    shipped: tuple[scoring.Weights, list[str]] | None = None,
) -> dict:
    """The report on a pair gold standard: decisions on its test pairs.

    ``ours`` is the default weights at ``CURATION_ATTACH_THRESHOLD``;
    ``learned`` a model trained on the set's train pairs (as its authors split
    them) at ``learned_threshold`` (None: no learned model); the baselines say
    "one person" when the exact printed names, the normalised full names, or
    the family names and first initials agree (the set's pairs were drawn
    sharing the last, so that baseline says "one person" for nearly all, and
    its precision is about the share of pairs that are one).

    Returns:
        ``{"dataset", "pairs": {"train", "test", "skipped", "shared_pmids"},
        "seconds", "threshold", "ours": {"pairwise": {precision, recall, f1,
        accuracy}}, "learned": {..., "threshold"}, "baselines": {name:
        {"pairwise": ...}}, "skipped": [row: why]}``; ``seconds`` is the time
        the default weights took to score the test pairs.

    Raises:
        labelled.DatasetError: no test pair could be used (no decision to score).
    """
    test = data.test
    if not test:
        first = "; ".join(data.skipped[:3]) or "the test file holds no row"
        raise labelled.DatasetError(
            f"{data.name}: no usable test pair to score ({first})"
        )
    started = time.perf_counter()
    ours = [
        training.pair_score(p.a, p.b, scoring.DEFAULT)
        >= settings.CURATION_ATTACH_THRESHOLD
        for p in test
    ]
    seconds = time.perf_counter() - started
    learned, untrained = None, ""
    if learned_threshold is not None:
        try:
            weights = training.fit(
                training.pair_examples((p.a, p.b, p.same) for p in data.train),
                version="pairs-train",
            )
        except ValueError as exc:  # the train pairs hold one class, or none
            untrained = f"no model learned from the train pairs: {exc}"
        else:
            learned = [
                training.pair_score(p.a, p.b, weights) >= learned_threshold
                for p in test
            ]

    def full(v) -> str:
        return f"{names.fold(v.family)}|{names.fold(v.given)}"

    baselines = {
        "exact name string": [
            (p.a.family, p.a.given) == (p.b.family, p.b.given) for p in test
        ],
        "normalised full name": [full(p.a) == full(p.b) for p in test],
        "surname + first initial": [p.a.block_key == p.b.block_key for p in test],
    }
    report = {
        "dataset": data.name,
        "pairs": {
            "train": len(data.train),
            "test": len(test),
            "skipped": len(data.skipped),
            "shared_pmids": data.shared_pmids,
        },
        "seconds": round(seconds, 2),
        "threshold": settings.CURATION_ATTACH_THRESHOLD,
        "ours": _pair_scores(ours, test),
        "baselines": {name: _pair_scores(d, test) for name, d in baselines.items()},
        "skipped": data.skipped,
    }
    if learned is not None:
        report["learned"] = {
            "threshold": learned_threshold,
            **_pair_scores(learned, test),
        }
    if shipped is not None:
        weights, on = shipped
        scores = [training.pair_score(p.a, p.b, weights) for p in test]
        sure = auto_apply.measured_threshold()
        applied = [
            p.same for p, score in zip(test, scores, strict=True) if score >= sure
        ]
        report["shipped"] = {
            "threshold": weights.threshold,
            "trained_on": on,
            **_pair_scores([score >= weights.threshold for score in scores], test),
            # The pairs the auto-apply policy would join, and the share of
            # them that are one person (1.0 when it joins none).
            "auto_applied": {
                "threshold": sure,
                "pairs": len(applied),
                "precision": round(sum(applied) / len(applied), 4) if applied else 1.0,
            },
        }
    if untrained:
        report["untrained"] = untrained
    return report
