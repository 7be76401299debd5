"""``manage.py evaluate_matching [--dataset PATH ...] [--json]``: measured quality.

Cluster sets (INSPIRE Wang, S2AND) get B³ and pairwise precision, recall and F1
of the whole clustering; a pair gold standard (the MEDLINE pairs) gets
precision, recall, F1 and accuracy of the one-person decisions on its test
pairs (:func:`pairs_report`). Each beside the same baselines.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation import names
from curation.deciding import auto_apply
from curation.management.commands.train_matcher import DEFAULT_THRESHOLD
from curation.matching import (
    evaluation,
    labelled,
    labelled_pairs,
    pipeline,
    scoring,
    training,
)
from wovepaper import embeddings

# The pairwise score above which a link counts as sure: the auto-apply
# policy's bar (issue: B³ precision of such links at least 0.99).
SURE = 0.99
# Block-size bands (mentions per surname + first initial block) for the breakdown.
BANDS = ((1, 10), (11, 100), (101, 1000), (1001, 10**9))


def _baselines(data: labelled.LabelledSet) -> dict[str, dict[int, str]]:
    """The obvious matchers, for comparison in the same run."""
    return {
        "exact name string": {i: data.raw_names[i] for i in data.gold},
        "normalised full name": {
            v.id: f"{names.fold(v.family)}|{names.fold(v.given)}" for v in data.views
        },
        "surname + first initial": {v.id: v.block_key for v in data.views},
    }


def _inputs(data: labelled.LabelledSet) -> dict[int, tuple]:
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


def _scores(predicted: dict[int, str], gold: dict[int, str]) -> dict:
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


def _errors(
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
            constraints=_constraints(data),
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


def _constraints(data: labelled.LabelledSet) -> pipeline.Constraints:
    """The set's cluster seeds as clustering constraints (none without)."""
    return pipeline.Constraints.of(data.must_link, data.cannot_link)


def _obeyed(data: labelled.LabelledSet, predicted: dict[int, str]) -> int:
    """How many of the set's seeds a clustering obeys: must-linked mentions in
    one cluster, cannot-linked ones in two."""
    return sum(predicted[a] == predicted[b] for a, b in data.must_link) + sum(
        predicted[a] != predicted[b] for a, b in data.cannot_link
    )


def _must_links_broken(data: labelled.LabelledSet, predicted: dict[int, str]) -> list:
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


class Command(BaseCommand):
    """Print B³ and pairwise precision, recall and F1 of matching on labelled sets."""

    help = "Evaluate author matching against labelled data (B3 and pairwise P/R/F1)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dataset",
            action="append",
            type=Path,
            help="a labelled set folder (repeatable): clusters (INSPIRE/beard or "
            "S2AND, with its cluster seeds as constraints) or MEDLINE pairs; "
            "'orcid-linked' (or DATA_DIR/orcid-linked): the ORCID-linked set "
            "built from the Crossref and OpenAlex corpora of WOVEPAPER_DATA_DIR "
            "(of DATA_DIR); "
            "default: INSPIRE Wang, S2AND Qian-partial, the MEDLINE pairs and the "
            "S2AND dummy set under WOVEPAPER_DATA_DIR/and",
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help="print one JSON object per dataset, one a line",
        )
        parser.add_argument(
            "--learned-threshold",
            type=float,
            default=None,
            help="clustering threshold of the learned model (default: the one "
            "train_matcher uses)",
        )
        parser.add_argument(
            "--folds",
            type=int,
            default=5,
            help="also train the logistic model in k folds of whole blocks and "
            "gold clusters and report it on the held-out folds (a pair set: "
            "train it on the train pairs, whatever k); 0: no learned model; "
            "default 5",
        )
        parser.add_argument(
            "--errors",
            type=int,
            default=0,
            metavar="N",
            help="cluster sets: also list the N clusters that lose the most B3 "
            "precision (over-merged: which people they join) and the N people "
            "that lose "
            "the most recall (split: over which clusters), of the learned model "
            "(of the default weights with --folds 0), each part with its commonest "
            "printed name and affiliation words; default 0",
        )

    def handle(self, *args, **options) -> None:
        folders = options["dataset"] or [
            Path(settings.WOVEPAPER_DATA_DIR) / p for p in labelled.EVALUATED_SETS
        ]
        learned_threshold = options["learned_threshold"]
        if learned_threshold is None:
            learned_threshold = DEFAULT_THRESHOLD
        elif not 0.0 < learned_threshold < 1.0:  # also refuses nan
            raise CommandError("--learned-threshold must lie strictly between 0 and 1")
        if options["errors"] < 0:
            raise CommandError("--errors must be 0 (none) or a number of clusters")
        if options["folds"] < 0 or options["folds"] == 1:
            raise CommandError(
                "--folds must be 0 (no learned model) or at least 2 (train on "
                "the other folds)"
            )
        # Titles and abstracts, for the sets that print them (the MEDLINE
        # pairs, the ORCID-linked set): as matching reads stored embeddings.
        self._embed = embeddings.text_embedder()
        text_evidence = embeddings.model_name() if self._embed else None
        self._progress(
            f"title and abstract evidence: {text_evidence or 'off'} "
            "(MATCHING_TEXT_EVIDENCE)"
        )
        for folder in folders:
            if problem := labelled.not_a_folder(folder):
                hint = "" if options["dataset"] else labelled.DATA_DIR_HINT
                raise CommandError(f"{folder}: {problem}{hint}")
            if labelled_pairs.is_pair_set(folder):
                try:
                    pairs = labelled_pairs.load_pairs(folder, embed=self._embed)
                    report = pairs_report(
                        pairs,
                        learned_threshold if options["folds"] else None,
                        self._shipped(folder, pairs.name) if options["folds"] else None,
                    )
                except (labelled.DatasetError, ValueError) as exc:
                    raise CommandError(str(exc)) from exc
                report["text_evidence"] = text_evidence
                if options["json"]:
                    self.stdout.write(json.dumps(report))
                else:
                    self._print_pairs(report)
                continue
            try:
                data = labelled.load(folder, embed=self._embed)
            except labelled.DatasetError as exc:
                raise CommandError(str(exc)) from exc
            started = time.perf_counter()
            self._progress(
                f"{data.name}: {len(data.views)} mentions; clustering with the "
                "default weights"
            )
            ours = pipeline.cluster_all(
                data.views,
                threshold=settings.CURATION_ATTACH_THRESHOLD,
                constraints=_constraints(data),
            )
            seconds = time.perf_counter() - started
            learned, untrained, others = None, [], []
            # More folds than people would only add empty folds.
            folds = min(options["folds"], len(set(data.gold.values())))
            if options["folds"] > 1:
                self._progress(
                    f"{data.name}: training and clustering {folds} folds, each "
                    "on a model trained on the others"
                )
                learned, untrained = cross_validated(data, folds, learned_threshold)
                others = self._other_sets(folder, data.name, labelled.DEFAULT_SETS)
                if others:
                    self._progress(
                        f"{data.name}: the same, trained with "
                        + ", ".join(one.name for one in others)
                    )
                    as_trained, _ = cross_validated(
                        data,
                        folds,
                        learned_threshold,
                        [one.examples for one in others],
                    )
            report = {
                "dataset": data.name,
                "mentions": len(data.gold),
                "gold_clusters": len(set(data.gold.values())),
                "seconds": round(seconds, 2),
                "threshold": settings.CURATION_ATTACH_THRESHOLD,
                "ours": _scores(ours, data.gold),
                "baselines": {
                    name: _scores(pred, data.gold)
                    for name, pred in _baselines(data).items()
                },
                "ours_by_block_size": self._by_band(data, ours),
                "ceiling": _scores(
                    evaluation.same_input_ceiling(_inputs(data), data.gold), data.gold
                ),
            }
            if learned is not None:
                report["learned"] = {
                    "folds": folds,
                    "threshold": learned_threshold,
                    # Folds with too few labelled pairs to train on, clustered
                    # with the default weights instead (tiny sets).
                    "untrained_folds": untrained,
                    **_scores(learned, data.gold),
                }
                if others:
                    report["learned_as_trained"] = {
                        "folds": folds,
                        "threshold": learned_threshold,
                        "with": [one.name for one in others],
                        **_scores(as_trained, data.gold),
                    }
            if options["folds"] > 1 and (found := self._shipped(folder, data.name)):
                self._progress(
                    f"{data.name}: clustering with the shipped model, trained "
                    f"without it (on {', '.join(found[1])})"
                )
                report["shipped"] = self._shipped_report(data, *found)
            if data.must_link or data.cannot_link or data.seeds_dropped:
                report["seeds"] = {
                    "must_link": len(data.must_link),
                    "cannot_link": len(data.cannot_link),
                    "obeyed": {
                        "ours": _obeyed(data, ours),
                        **({"learned": _obeyed(data, learned)} if learned else {}),
                    },
                    "must_links_broken": _must_links_broken(data, ours),
                    "dropped": list(data.seeds_dropped),
                }
            if data.left_out:
                report["left_out"] = list(data.left_out)
            if options["errors"]:
                report["errors"] = _errors(
                    data,
                    learned if learned is not None else ours,
                    options["errors"],
                    "learned" if learned is not None else "default weights",
                )
            report["seconds_total"] = round(time.perf_counter() - started, 2)
            report["text_evidence"] = text_evidence
            if options["json"]:
                self.stdout.write(json.dumps(report))
            else:
                self._print(report)

    def _progress(self, step: str) -> None:
        """Say on stderr what the run is doing (a learned run takes minutes
        with no figure to print; the new-user trial read 6 silent minutes)."""
        self.stderr.write(f"{step}...")

    # train_matcher's default sets as (resolved folder, name, pairs), read by
    # _training_sets once a run.
    _sets: list[tuple[Path, training.SetPairs]] | None = None
    _embed = None

    def _other_sets(
        self, folder: Path, name: str, among: Sequence[str]
    ) -> list[training.SetPairs]:
        """The labelled sets of ``among`` (paths under WOVEPAPER_DATA_DIR)
        other than the set in ``folder`` named ``name`` (by path or by name: a
        copy of a set is the set), their pairs read once a run
        (:func:`curation.matching.training.set_pairs`); a set that is missing
        or unreadable is left out and said so once."""
        if self._sets is None:
            self._sets = []
            for path in dict.fromkeys((*labelled.DEFAULT_SETS, *labelled.SHIPPED_SETS)):
                default = Path(settings.WOVEPAPER_DATA_DIR) / path
                if labelled.not_a_folder(default):
                    continue
                try:
                    one = training.set_pairs(default, embed=self._embed)
                except labelled.DatasetError as exc:
                    self.stderr.write(f"  not trained on with the other sets: {exc}")
                    continue
                self._sets.append((default.resolve(), one))
        here = folder.resolve()
        wanted = {(Path(settings.WOVEPAPER_DATA_DIR) / p).resolve() for p in among}
        return [
            one
            for path, one in self._sets
            if path in wanted and path != here and one.name != name
        ]

    def _shipped(
        self, folder: Path, name: str
    ) -> tuple[scoring.Weights, list[str]] | None:
        """The model ``train_matcher --ship`` writes, trained without the set
        in ``folder``: what a deployment faces on a corpus it never saw.

        Returns:
            ``(weights at the shipped threshold, the sets trained on)``, or
            None when no other set is there to train on.
        """
        others = self._other_sets(folder, name, labelled.SHIPPED_SETS)
        if not others:
            return None
        weights, _ = training.fit_sets(others, version=f"shipped-without-{name}")
        return replace(weights, threshold=DEFAULT_THRESHOLD), [o.name for o in others]

    def _shipped_report(
        self, data: labelled.LabelledSet, weights: scoring.Weights, on: list[str]
    ) -> dict:
        """The shipped model's figures on a cluster set it was not trained on:
        B³ and pairwise at its threshold, and the B³ precision of the links it
        scores at :data:`SURE` or more (clustered at that threshold: what an
        auto-apply policy at that score would join), with how many mentions
        those links join to another."""
        constraints = _constraints(data)
        found = pipeline.cluster_all(
            data.views,
            threshold=weights.threshold,
            weights=weights,
            constraints=constraints,
        )
        sure = pipeline.cluster_all(
            data.views, threshold=SURE, weights=weights, constraints=constraints
        )
        sizes = Counter(sure.values())
        return {
            "threshold": weights.threshold,
            "trained_on": on,
            **_scores(found, data.gold),
            "sure_links": {
                "threshold": SURE,
                "b3_precision": evaluation.b_cubed(sure, data.gold).precision,
                "linked_mentions": sum(
                    1 for label in sure.values() if sizes[label] > 1
                ),
            },
            "auto_applied": auto_applied_report(data, weights, constraints),
        }

    def _by_band(self, data: labelled.LabelledSet, ours: dict[int, str]) -> dict:
        sizes = Counter(v.block_key for v in data.views)
        out = {}
        for low, high in BANDS:
            ids = {v.id for v in data.views if low <= sizes[v.block_key] <= high}
            if ids:
                gold = {i: data.gold[i] for i in ids}
                band = f"{low}-{high}" if high < 10**9 else f"{low}+"
                out[band] = {"mentions": len(ids), **_scores(ours, gold)}
        return out

    def _print(self, report: dict) -> None:
        w = self.stdout.write
        w(
            f"== {report['dataset']}: {report['mentions']} mentions, "
            f"{report['gold_clusters']} gold clusters; default weights matched in "
            f"{report['seconds']} s at threshold {report['threshold']}; the whole "
            f"run took {report['seconds_total']} s"
        )
        w(
            f"{'matcher':<36} {'B3 P':>6} {'B3 R':>6} {'B3 F1':>6}  "
            f"{'pw P':>6} {'pw R':>6} {'pw F1':>6}"
        )
        rows = [("wovepaper, default weights", report["ours"])]
        if "shipped" in report:
            rows.append(
                (
                    f"wovepaper, shipped (at {report['shipped']['threshold']})",
                    report["shipped"],
                )
            )
        if "learned" in report:
            learned = report["learned"]
            rows.append(
                (
                    f"wovepaper, learned ({learned['folds']}-fold, "
                    f"at {learned['threshold']})",
                    learned,
                )
            )
        if "learned_as_trained" in report:
            rows.append(
                ("  the same, with the other sets", report["learned_as_trained"])
            )
        rows += [(f"baseline: {n}", s) for n, s in report["baselines"].items()]
        rows.append(("ceiling (reads the gold)", report["ceiling"]))
        for name, s in rows:
            cells = [
                s[kind][m]
                for kind in ("b3", "pairwise")
                for m in ("precision", "recall", "f1")
            ]
            w(f"{name:<36} " + " ".join(f"{c:>6.3f}" for c in cells))
        untrained = report.get("learned", {}).get("untrained_folds")
        if untrained:
            which = ", ".join(map(str, untrained))
            w(
                f"  (held-out fold{'s' if len(untrained) > 1 else ''} {which}: "
                "too few labelled pairs in the other folds to train on, so "
                "clustered with the default weights)"
            )
        w(
            "  ceiling: mentions that read alike (name, affiliation words, "
            "co-authors, identifiers, fields, year) kept together, each group "
            "given to the gold person holding most of it; it reads the gold "
            "labels: a reference for a target, not a bound (cluster seeds and "
            "the one-paper rule can part identical inputs)"
        )
        if "learned" in report:
            w(
                "  the learned model is scored on the folds it was not trained "
                "on (whole blocks and whole people held out)"
            )
        if "shipped" in report:
            shipped = report["shipped"]
            sure = shipped["sure_links"]
            w(
                "  shipped: the model train_matcher --ship writes, trained "
                f"without this set (on {', '.join(shipped['trained_on'])}): "
                "what a deployment faces on a corpus it never saw"
            )
            w(
                f"  shipped, links scored {sure['threshold']} or more: B3 "
                f"precision {sure['b3_precision']:.4f}, joining "
                f"{sure['linked_mentions']} of {report['mentions']} mentions"
            )
            auto = shipped["auto_applied"]
            w(
                f"  auto-applied (new clusters whose weakest link is "
                f"{auto['threshold']} or more): B3 precision of the linked "
                f"mentions {auto['linked_b3_precision']:.4f} "
                f"({auto['linked_mentions']} linked, {auto['placed_mentions']} "
                f"placed of {auto['mentions']}); of the whole set "
                f"{auto['b3_precision']:.4f}"
            )
        if "learned_as_trained" in report:
            w(
                "  'with the other sets': trained on the other folds and, whole, "
                f"on {', '.join(report['learned_as_trained']['with'])}, each set "
                "weighing alike: as train_matcher trains the model matching uses"
            )
        if "seeds" in report:
            seeds = report["seeds"]
            obeyed = ", ".join(f"{k} {v}" for k, v in seeds["obeyed"].items())
            w(
                f"  cluster seeds: {seeds['must_link']} must-link and "
                f"{seeds['cannot_link']} cannot-link, obeyed: {obeyed} (seeds "
                "are decisions, obeyed even where the gold clusters disagree; a "
                "cannot-link always, a must-link within a block and where "
                "matching may join the two)"
            )
            for broken in seeds["must_links_broken"]:
                w(f"  must-link not held (default weights): {broken}")
            for dropped in seeds["dropped"]:
                w(f"  seed left out: {dropped}")
        left_out = report.get("left_out", [])
        for why in left_out[:LEFT_OUT_SHOWN]:
            w(f"  left out: {why}")
        if len(left_out) > LEFT_OUT_SHOWN:
            w(
                f"  and {len(left_out) - LEFT_OUT_SHOWN} more records left out or "
                "read in part (--json lists each)"
            )
        if "errors" in report:
            self._print_errors(report["errors"])
        w("  by block size, default weights:")
        for band, s in report["ours_by_block_size"].items():
            w(
                f"  blocks of {band:>9} mentions, {s['mentions']:>5} mentions in all: "
                f"B3 F1 {s['b3']['f1']:.3f}, pairwise F1 {s['pairwise']['f1']:.3f}"
            )

    def _print_errors(self, errors: dict) -> None:
        w = self.stdout.write
        for kind, what, parts in (
            ("over_merged", "over-merged clusters (B3 precision lost", "people"),
            ("split", "split people (B3 recall lost", "clusters"),
        ):
            w(f"  worst {what}, in mentions; {errors['model']}; its {parts}):")
            if kind == "over_merged":
                w(
                    "    (a predicted cluster reads [fold:]block[/sub-block]:n, "
                    "a person the set's own id)"
                )
            for error in errors[kind]:
                w(
                    f"    {error['loss']:>7.1f} of {error['mentions']:>5} "
                    f"mentions, {kind.replace('_', '-')} {error['cluster']}:"
                )
                for p in error["parts"]:
                    words = " ".join(p["affiliation_words"]) or "-"
                    w(
                        f"      {p['mentions']:>5} {p['name']!r} at {words}; "
                        f"{p['no_affiliation']} with no affiliation word "
                        f"({p['cluster']})"
                    )
                more = error["more_parts"]
                if more["parts"]:
                    w(
                        f"      and {more['parts']} more {parts} of "
                        f"{more['mentions']} mentions, {more['no_affiliation']} "
                        "with no affiliation word"
                    )

    def _print_pairs(self, report: dict) -> None:
        w = self.stdout.write
        n = report["pairs"]
        trained = (
            f", a model trained on {n['train']} train pairs"
            if "learned" in report
            else ""
        )
        w(
            f"== {report['dataset']}: {n['test']} test pairs scored in "
            f"{report['seconds']} s{trained}; {n['skipped']} rows left out"
        )
        w(f"{'matcher':<36} {'P':>6} {'R':>6} {'F1':>6} {'acc':>6}")
        rows = [
            (f"wovepaper, default weights (at {report['threshold']})", report["ours"])
        ]
        if "shipped" in report:
            rows.append(
                (
                    f"wovepaper, shipped (at {report['shipped']['threshold']})",
                    report["shipped"],
                )
            )
        if "learned" in report:
            rows.append(
                (
                    f"wovepaper, learned (at {report['learned']['threshold']})",
                    report["learned"],
                )
            )
        rows += [(f"baseline: {k}", v) for k, v in report["baselines"].items()]
        for name, s in rows:
            m = s["pairwise"]
            w(
                f"{name:<36} {m['precision']:>6.3f} {m['recall']:>6.3f} "
                f"{m['f1']:>6.3f} {m['accuracy']:>6.3f}"
            )
        if "shipped" in report:
            w(
                "  shipped: the model train_matcher --ship writes, trained "
                f"without this set (on {', '.join(report['shipped']['trained_on'])})"
            )
            auto = report["shipped"]["auto_applied"]
            w(
                f"  auto-applied (pairs scored {auto['threshold']} or more): "
                f"{auto['pairs']} pairs, precision {auto['precision']:.4f}"
            )
        if "untrained" in report:
            w(f"  {report['untrained']}")
        w(
            f"  {n['shared_pmids']} articles are named by both a train and a test "
            "pair (the files are not split by person)"
        )
        for why in report["skipped"]:
            w(f"  left out: {why}")
