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

from curation.management.commands.train_matcher import DEFAULT_THRESHOLD
from curation.matching import (
    evaluation,
    labelled,
    labelled_pairs,
    pipeline,
    scoring,
    training,
)
from curation.matching_reports import (
    BANDS,
    LEFT_OUT_SHOWN,
    SURE,
    auto_applied_report,
    baseline_clusterings,
    cluster_scores,
    cross_validated,
    must_links_broken,
    pairs_report,
    seed_constraints,
    seeds_obeyed,
    signature_inputs,
    worst_errors,
)
from wovepaper import embeddings


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
                constraints=seed_constraints(data),
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
                "ours": cluster_scores(ours, data.gold),
                "baselines": {
                    name: cluster_scores(pred, data.gold)
                    for name, pred in baseline_clusterings(data).items()
                },
                "ours_by_block_size": self._by_band(data, ours),
                "ceiling": cluster_scores(
                    evaluation.same_input_ceiling(signature_inputs(data), data.gold),
                    data.gold,
                ),
            }
            if learned is not None:
                report["learned"] = {
                    "folds": folds,
                    "threshold": learned_threshold,
                    # Folds with too few labelled pairs to train on, clustered
                    # with the default weights instead (tiny sets).
                    "untrained_folds": untrained,
                    **cluster_scores(learned, data.gold),
                }
                if others:
                    report["learned_as_trained"] = {
                        "folds": folds,
                        "threshold": learned_threshold,
                        "with": [one.name for one in others],
                        **cluster_scores(as_trained, data.gold),
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
                        "ours": seeds_obeyed(data, ours),
                        **({"learned": seeds_obeyed(data, learned)} if learned else {}),
                    },
                    "must_links_broken": must_links_broken(data, ours),
                    "dropped": list(data.seeds_dropped),
                }
            if data.left_out:
                report["left_out"] = list(data.left_out)
            if options["errors"]:
                report["errors"] = worst_errors(
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
        constraints = seed_constraints(data)
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
            **cluster_scores(found, data.gold),
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
                out[band] = {"mentions": len(ids), **cluster_scores(ours, gold)}
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
