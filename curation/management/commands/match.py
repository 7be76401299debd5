"""``manage.py match [--block KEY ...]``: propose matches for unassigned authorships."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

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
        self.stdout.write(
            ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "nothing to do"
        )
