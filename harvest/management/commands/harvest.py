"""``manage.py harvest arxiv --file PATH | --dir PATH [--resume RUN_ID]``."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from harvest import services
from harvest.models import HarvestRun, RawRecord

SOURCES = ("arxiv",)


class Command(BaseCommand):
    """Harvest records from files, with a progress bar.

    Prints the run's counts and each rejected record with its reason.
    """

    help = "Harvest a source from files: harvest arxiv --dir ../shared/data/arxiv"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", choices=SOURCES)
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument("--file", type=Path, help="one .abs, OAI-PMH .xml or .json")
        where.add_argument("--dir", type=Path, help="a folder, searched recursively")
        where.add_argument(
            "--resume", type=int, metavar="RUN_ID", help="resume a run from its cursor"
        )
        parser.add_argument("--no-progress", action="store_true")
        parser.add_argument(
            "--reparse",
            action="store_true",
            help="parse again records stored and parsed before (after a parser fix)",
        )

    def handle(self, *args, **options) -> None:
        run = None
        if options["resume"]:
            run = HarvestRun.objects.filter(pk=options["resume"]).first()
            if run is None:
                raise CommandError(f"no harvest run {options['resume']}")
            root = Path(run.params["root"])
        else:
            root = options["file"] or options["dir"]
        if not root.exists():
            raise CommandError(f"{root}: no such file or folder")
        files = services.arxiv_files(root)
        with tqdm(
            total=len(files),
            unit="file",
            disable=options["no_progress"],
            desc=f"harvest {options['source']}",
        ) as bar:
            if run is not None:
                bar.update(int(run.cursor or 0))
            run = services.harvest_arxiv_files(
                root=root, run=run, progress=bar.update, reparse=options["reparse"]
            )
        self.stdout.write(
            f"run #{run.pk}: {run.records_seen} records, {run.papers_created} created, "
            f"{run.papers_updated} updated, {run.papers_unchanged} unchanged, "
            f"{run.records_failed} failed"
        )
        for raw in RawRecord.objects.filter(
            last_run=run, status=RawRecord.Status.FAILED
        ):
            self.stdout.write(f"  rejected {raw.external_id}: {raw.error}")
        for skipped in run.files_skipped:
            self.stdout.write(f"  skipped {skipped['reason']}")
