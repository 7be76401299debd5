"""``manage.py match [--block KEY ...]``: propose matches for unassigned authorships."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from curation.models import Proposal
from curation.services import matching_run


class Command(BaseCommand):
    """Run author matching once (all blocks, or the blocks named) and print counts."""

    help = (
        "Propose attach/new/merge for unassigned authorships; apply what ORCIDs prove."
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
        counts = matching_run(block_keys=options["blocks"])
        proposed = ", ".join(
            f"{counts.get(f'proposed_{kind}', 0)} {kind}"
            for kind in Proposal.Kind.values
        )
        self.stdout.write(
            f"{counts.get('blocks', 0)} blocks with unassigned authorships; proposed "
            f"{proposed}; {counts.get('auto_applied', 0)} applied by the identifier "
            "policy"
        )
