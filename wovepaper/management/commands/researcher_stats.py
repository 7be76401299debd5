"""``manage.py researcher_stats``: rebuild the browse and search figures."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from wovepaper.models import Researcher
from wovepaper.stats import BATCH, researcher_stats_refresh


class Command(BaseCommand):
    """Rewrite every researcher's figures (papers, citations, h-index, years,
    main field, latest affiliation, A-Z key) from the applied state.

    Curation changes, matching runs and harvests keep the figures of the
    researchers they touch up to date (:func:`wovepaper.stats.researcher_stats_queue`);
    this command is for a database migrated from before the figures existed, or
    after a bulk load that wrote authorships without the services. Idempotent.
    """

    help = "Rebuild the figures the browse pages and search show of researchers"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-progress",
            action="store_true",
            help="draw no progress bar (for logs and scheduled jobs)",
        )

    def handle(self, *args, **options) -> None:
        ids = sorted(Researcher.objects.values_list("pk", flat=True))
        started = time.perf_counter()
        listed = 0
        with tqdm(
            total=len(ids),
            unit="researcher",
            disable=options["no_progress"],
            file=self.stderr,
        ) as bar:
            for start in range(0, len(ids), BATCH):
                chunk = ids[start : start + BATCH]
                listed += researcher_stats_refresh(researcher_ids=chunk)
                bar.update(len(chunk))
        seconds = time.perf_counter() - started
        self.stdout.write(
            f"{listed} researchers listed with figures, of {len(ids)} ({seconds:.1f} s)"
        )
