"""``manage.py match [--block KEY ...]``: propose matches for unassigned authorships."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from curation.deciding import auto_apply
from curation.models import Proposal
from curation.selectors import (
    active_model,
    active_weights,
    fallback_description,
    joining_threshold,
    unblocked_authorships,
)
from curation.services import matching_run
from wovepaper.models import Authorship

# Authorships without a block key named one by one after a run; the rest counted.
UNBLOCKED_SHOWN = 5


class Command(BaseCommand):
    """Run author matching once (all blocks, or the blocks named) and print counts."""

    help = (
        "Propose attach/new/merge/split for unassigned authorships and their "
        "blocks' researchers; apply what ORCIDs prove."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--block",
            action="append",
            dest="blocks",
            metavar="KEY",
            help='a block key such as "serre j" (repeatable); default: every block',
        )

    def handle(self, *args, **options) -> None:
        blocks = options["blocks"]
        if blocks:
            known = set(
                Authorship.objects.filter(block_key__in=blocks).values_list(
                    "block_key", flat=True
                )
            )
            for key in sorted(set(blocks) - known):
                self.stderr.write(
                    f"no authorship is in block {key!r}: a block key is the folded "
                    'family name and first initial, as "serre j"'
                )
        counts = matching_run(block_keys=blocks)
        proposed = ", ".join(
            f"{counts.get(f'proposed_{kind}', 0)} {kind}"
            for kind in Proposal.Kind.values
        )
        self.stdout.write(
            f"{counts.get('blocks', 0)} blocks with unassigned authorships; proposed "
            f"{proposed}; {counts.get('auto_applied', 0)} applied by the matcher "
            f"(auto-apply: {auto_apply.policy().describe()})"
        )
        if counts.get("made_stale"):
            self.stdout.write(
                f"{counts['made_stale']} pending proposals made stale: superseded "
                "by this run's, or naming what changed since (each with its event)"
            )
        self._model()
        if not blocks:
            self._unblocked()

    def _model(self) -> None:
        """Say which scoring model the proposals record (the run read it just
        before), and why an active model was passed over."""
        # Remembered: the run just read them (read again, a model that cannot
        # be scored with would be logged again).
        weights = active_weights(remembered=True)
        model = active_model()
        self.stdout.write(
            f"scored with {weights.version}, joining at "
            f"{joining_threshold(remembered=True)}"
        )
        if model is not None and model.problem:
            self.stderr.write(
                f"the active matcher model {model.version} cannot be scored with "
                f"({model.problem}): {fallback_description()} was used; "
                "manage.py matcher_models lists the others"
            )

    def _unblocked(self) -> None:
        """Name the unassigned authorships no run can propose for."""
        unblocked = unblocked_authorships()
        total = unblocked.count()
        if not total:
            return
        self.stdout.write(
            f"{total} unassigned authorship{'s' if total > 1 else ''} not matched: "
            "the printed name folds to no block key, so no block holds it and "
            "no proposal is made"
        )
        for a in unblocked[:UNBLOCKED_SHOWN]:
            self.stdout.write(
                f"  authorship {a.pk}: {a.raw_name!r}, author {a.position} of "
                f"paper {a.paper.url_key}"
            )
        if total > UNBLOCKED_SHOWN:
            self.stdout.write(f"  and {total - UNBLOCKED_SHOWN} more")
