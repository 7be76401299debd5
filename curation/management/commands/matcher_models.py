"""``manage.py matcher_models [--activate VERSION | --default]``: the stored
matcher models, and which one matching uses."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.models import MatcherModel
from curation.selectors import active_model, fallback_description
from curation.services import matcher_activate
from wovepaper.text import count_shown

# Models listed, newest first.
SHOWN = 20


class Command(BaseCommand):
    """List the stored matcher models; activate one, or go back to the defaults."""

    help = (
        "List the trained matcher models (newest first); --activate VERSION makes "
        "one the model matching uses, --default goes back to the default weights."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group()
        which.add_argument(
            "--activate",
            metavar="VERSION",
            help="make this stored model the one matching uses (a rollback, or "
            "a model trained with train_matcher --no-activate)",
        )
        which.add_argument(
            "--default",
            action="store_true",
            help="deactivate every trained model: matching uses the shipped model "
            "(the hand-set default weights without one)",
        )

    def handle(self, *args, **options) -> None:
        if options["activate"] is not None or options["default"]:
            try:
                model = matcher_activate(version=options["activate"])
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(
                f"matching now uses {model.version}"
                if model
                else f"matching now uses {fallback_description()}"
            )
        self._list()

    def _list(self) -> None:
        models = list(MatcherModel.objects.all()[: SHOWN + 1])
        if not models:
            self.stdout.write(
                f"no trained model is stored: matching uses {fallback_description()} "
                "(manage.py train_matcher trains one on this database)"
            )
            return
        if active_model() is None:
            self.stdout.write(
                f"no model is active: matching uses {fallback_description()}"
            )
        for m in models[:SHOWN]:
            learned = m.learned_from
            sets = ", ".join(learned["datasets"]) or "no labelled set"
            self.stdout.write(
                f"{'*' if m.active else ' '} {m.version}  trained "
                f"{_when(m.trained_at)}, threshold {m.threshold}, "
                f"{count_shown(learned['pairs'])} pairs ({sets}; "
                f"{count_shown(learned['curator_decisions'])} from curator decisions)"
            )
            if m.problem:
                self.stdout.write(
                    f"    cannot be scored with: {m.problem}"
                    + (f"; matching uses {fallback_description()}" if m.active else "")
                )
        if len(models) > SHOWN:
            self.stdout.write(f"  (the newest {SHOWN} shown)")


def _when(moment: object) -> str:
    """When a model was trained, or "at an unknown time" for a row whose
    ``trained_at`` was edited into something else (SQLite reads it as None)."""
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment else "at an unknown time"
