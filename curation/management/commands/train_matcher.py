"""``manage.py train_matcher [--dataset PATH ...] [--threshold T] [--no-activate]``
and ``manage.py train_matcher --ship [--ship-to PATH]``.

Without ``--ship`` the model is trained on the labelled sets and this
database's curator decisions and stored as a MatcherModel (the active one
unless ``--no-activate``). With ``--ship`` it is trained on the labelled sets
alone (:data:`curation.matching.labelled.SHIPPED_SETS` unless ``--dataset``
names others) and written to the committed file matching falls back to
(``CURATION_SHIPPED_MODEL``, :mod:`curation.matching.shipped`); the database
is not touched.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from curation.matching import labelled, shipped, training
from curation.services import matcher_train
from wovepaper import embeddings

# Chosen by ``evaluate_matching --learned-threshold T`` (5 folds of whole blocks
# and whole gold clusters, training.block_folds) on the Wang and Qian-partial
# sets, B3 F1 (Wang / Qian), with the family-rarity feature: 0.25 gives
# 0.898 / 0.816, 0.35 gives 0.901 / 0.819, 0.4 gives 0.911 / 0.817, 0.45 gives
# 0.910 / 0.807, 0.5 gives 0.917 / 0.802: 0.4 has the best mean. (0.25 was
# chosen earlier on folds that clustered a fifth of each block's people: an
# easier task, 0.953 / 0.890, that hid this.) Tuned on the sets it is scored on.
# With main affiliation words between clusters added after: 0.919 / 0.818;
# with family names counted by initials too: 0.919 / 0.817; with sign-bounded
# weights and same_initials apart: 0.918 / 0.817, and the model as trained here
# (each set's held-out folds, the other set whole, weighing alike) 0.861 / 0.811,
# at 0.3 0.867 / 0.775, at 0.5 0.833 / 0.804; with same_initials never above
# same_given and the prior at the default weights: 0.918 / 0.817 and, as
# trained here, 0.812 / 0.782 (each set's pairs weighing at most 50,000 in
# all: 0.814 / 0.780); with how often each block's affiliations repeat
# (features.block_repeats): 0.917 / 0.814 and, as trained here, 0.887 / 0.789.
DEFAULT_THRESHOLD = 0.4


class Command(BaseCommand):
    """Train the pairwise model on labelled sets and curator decisions."""

    # The embeddings --ship read the labelled texts with (None: none).
    _text_evidence: str | None = None

    help = "Train the matcher (logistic regression) and make it the active model."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dataset",
            action="append",
            type=Path,
            help="labelled set folder (repeatable; the sets named replace the "
            "defaults): clusters (INSPIRE/beard, S2AND) or a MEDLINE pair set "
            "(its train pairs), or 'orcid-linked' (or DATA_DIR/orcid-linked): "
            "the ORCID-linked set built from the Crossref and OpenAlex corpora "
            "of WOVEPAPER_DATA_DIR (of DATA_DIR); default: INSPIRE Wang and "
            "S2AND Qian-partial under WOVEPAPER_DATA_DIR/and. Applied and "
            "rejected attach and merge proposals are always added",
        )
        parser.add_argument(
            "--threshold",
            type=float,
            default=DEFAULT_THRESHOLD,
            help=f"pairwise score at which clusters join (default {DEFAULT_THRESHOLD})",
        )

        parser.add_argument(
            "--no-activate",
            dest="activate",
            action="store_false",
            help="store the model without making it the one matching uses "
            "(read its weights first; manage.py matcher_models --activate "
            "VERSION activates it)",
        )

        parser.add_argument(
            "--ship",
            action="store_true",
            help="train on the labelled sets alone (default: every set in "
            "WOVEPAPER_DATA_DIR/and) and write the shipped model file that "
            "matching uses while no trained model is active; the database is "
            "not touched",
        )
        parser.add_argument(
            "--ship-to",
            type=Path,
            help="with --ship: the file to write (default: CURATION_SHIPPED_MODEL)",
        )

    def handle(self, *args, **options) -> None:
        if not 0.0 < options["threshold"] < 1.0:
            raise CommandError("--threshold must lie strictly between 0 and 1")
        if options["ship_to"] and not options["ship"]:
            raise CommandError("--ship-to goes with --ship")
        sets = labelled.SHIPPED_SETS if options["ship"] else labelled.DEFAULT_SETS
        folders = options["dataset"] or [
            Path(settings.WOVEPAPER_DATA_DIR) / p for p in sets
        ]
        for folder in folders:
            if problem := labelled.not_a_folder(folder):
                hint = "" if options["dataset"] else labelled.DATA_DIR_HINT
                raise CommandError(f"{folder}: {problem}{hint}")
        if options["ship"]:
            self._ship(folders, options)
            return
        try:
            model = matcher_train(
                datasets=folders,
                threshold=options["threshold"],
                activate=options["activate"],
            )
        except (labelled.DatasetError, ValueError) as exc:
            hint = "" if options["dataset"] else labelled.DATA_DIR_HINT
            raise CommandError(f"{exc}{hint}") from exc
        t = model.training
        sets = ", ".join(
            f"{name} {d['pairs']} ({d['positives']} matching)"
            for name, d in t["datasets"].items()
        )
        state = (
            "now the active model"
            if model.active
            else "stored, not active (manage.py matcher_models --activate "
            f"{model.version} makes it the model matching uses)"
        )
        self.stdout.write(
            f"trained {model.version}, {state}: {t['pairs']} pairs "
            f"({t['positives']} matching): {sets}, {t['curator_decisions']} from "
            f"curator decisions; threshold {model.threshold}"
        )
        self.stdout.write(
            "  (pairs are drawn as matching scores them: pairs it never scores, "
            "on one paper or with given names that cannot be one person's, are "
            "left out)"
        )
        weights = ", ".join(f"{k} {v:+.3f}" for k, v in model.weights.items())
        self.stdout.write(f"bias {model.bias:+.3f}; {weights}")
        for name, d in t["datasets"].items():
            if d.get("rows_left_out"):
                self.stdout.write(
                    f"  {d['rows_left_out']} train rows of {name} left out "
                    "(evaluate_matching --dataset on its folder lists each with why)"
                )
            if d.get("records_left_out"):
                self.stdout.write(
                    f"  {d['records_left_out']} signature records of {name} left "
                    "out or read in part (evaluate_matching --dataset on its "
                    "folder lists each with why)"
                )
        for why in t.get("curator_decisions_left_out", []):
            self.stdout.write(f"  curator decision left out: {why}")
        # A feature kept at a default of 0 (block_repeat) is listed below.
        kept = set(t.get("defaults_kept", []))
        held = [k for k, v in model.weights.items() if v == 0.0 and k not in kept]
        if held:
            self.stdout.write(
                "  held at 0 (the data would give them the sign that speaks "
                "the other way): " + ", ".join(held)
            )
        if t.get("defaults_kept"):
            self.stdout.write(
                "  kept at their default weight (no labelled pair varies them, "
                f"nor {training.DECISIONS_TO_LEARN} curator decisions): "
                + ", ".join(t["defaults_kept"])
            )

    def _ship(self, folders: list[Path], options: dict) -> None:
        """Train on ``folders`` alone and write the shipped model file."""
        target = options["ship_to"] or Path(settings.CURATION_SHIPPED_MODEL)
        # Said before training (half a minute): the file could not be written.
        if target.is_dir() or not target.parent.is_dir():
            raise CommandError(
                f"{target}: cannot write the model there ("
                + ("a folder" if target.is_dir() else "its folder does not exist")
                + ")"
            )
        if not os.access(target.parent, os.W_OK):
            raise CommandError(f"{target}: cannot write the model there (not writable)")
        stamp = timezone.now()
        try:
            embed = embeddings.text_embedder()
            self._text_evidence = embeddings.model_name() if embed else None
            loaded = [training.set_pairs(folder, embed=embed) for folder in folders]
            weights, kept = training.fit_sets(
                loaded, version=f"shipped-logreg-{stamp:%Y%m%d%H%M%S}"
            )
        except (labelled.DatasetError, ValueError) as exc:
            hint = "" if options["dataset"] else labelled.DATA_DIR_HINT
            raise CommandError(f"{exc}{hint}") from exc
        # A feature no labelled pair varies is left out of the file: it
        # weighs its default (scoring.WEIGHTS), and follows the code when the
        # default is changed (shipped.read fills it in).
        weights = replace(
            weights,
            weights={k: v for k, v in weights.weights.items() if k not in kept},
            threshold=options["threshold"],
        )
        try:
            self._write(target, weights, folders, loaded, kept, stamp, options)
        except OSError as exc:
            raise CommandError(
                f"{target}: cannot write the model there ({exc})"
            ) from exc
        self._said(target, weights, loaded)

    def _write(self, target, weights, folders, loaded, kept, stamp, options) -> None:
        """Write the shipped file with how it was trained."""
        data_dir = Path(settings.WOVEPAPER_DATA_DIR).resolve()

        def named(folder: Path) -> str:
            # Relative to the data folder, so the file names no machine's path.
            path = folder.resolve()
            if path.is_relative_to(data_dir):
                return str(path.relative_to(data_dir))
            return path.name

        shipped.write(
            target,
            weights,
            {
                "command": "manage.py train_matcher --ship"
                + "".join(f" --dataset {named(f)}" for f in options["dataset"] or [])
                + f" --threshold {options['threshold']}",
                "trained_at": stamp.isoformat(timespec="seconds"),
                "data": "WOVEPAPER_DATA_DIR: " + ", ".join(named(f) for f in folders),
                "datasets": {one.name: one.summary for one in loaded},
                "pairs": sum(len(one.examples.y) for one in loaded),
                "defaults_kept": kept,
                # The embeddings the MEDLINE and ORCID-linked texts were read
                # with (title_similarity), or None: trained without texts.
                "text_evidence": self._text_evidence,
            },
        )

    def _said(self, target, weights, loaded) -> None:
        """Say what was written and its weights."""
        self.stdout.write(
            f"wrote {target}: {weights.version}, trained on "
            + ", ".join(f"{one.name} ({one.summary['pairs']} pairs)" for one in loaded)
            + f"; threshold {weights.threshold}"
        )
        self.stdout.write(
            f"bias {weights.bias:+.3f}; "
            + ", ".join(f"{k} {v:+.3f}" for k, v in weights.weights.items())
        )
