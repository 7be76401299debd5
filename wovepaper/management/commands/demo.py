"""``manage.py demo [--data PATH]``: harvest bundled arXiv records, match, summarise."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Count

from curation import selectors
from curation.deciding import auto_apply
from curation.models import Proposal
from curation.services import curator_ensure
from curation.tasks import matching_run_task
from harvest.models import HarvestRun, RawRecord
from harvest.tasks import harvest_arxiv_files_task
from wovepaper.embeddings import model_name
from wovepaper.models import Authorship, Paper, PaperEmbedding, Researcher

DEMO_CURATOR = ("curator", "curator-demo")


# Matching runs the demo makes at most (see handle).
MATCHING_PASSES = 3


class Command(BaseCommand):
    """Run the main job end to end and print what it did."""

    help = "Harvest real arXiv records, propose matches, apply what identifiers prove."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--data",
            type=Path,
            default=None,
            help="arXiv files to harvest (default: WOVEPAPER_DATA_DIR/arxiv)",
        )

    def handle(self, *args, **options) -> None:
        started = time.monotonic()
        root = Path(options["data"] or settings.WOVEPAPER_DATA_DIR / "arxiv").resolve()
        if not root.exists():
            raise CommandError(
                f"{root}: no such folder (set WOVEPAPER_DATA_DIR to the shared "
                "data folder, or DATA=PATH for make demo)"
            )
        self.stdout.write(
            f"harvesting {root} ... (then embedding titles and abstracts for "
            "semantic search, about 100 papers/s on two cores)"
        )
        # Rejected records are listed in the summary; no need to log each twice.
        # Only while the demo harvests: the process may go on (tests, a shell).
        quiet = logging.getLogger("harvest")
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            # Matching runs next, on every block, so its counts can be printed.
            harvest = harvest_arxiv_files_task.delay(str(root), then_match=False).get()
        finally:
            quiet.setLevel(level)
        self.stdout.write("matching ...")
        matching = matching_run_task.delay().get()
        last = matching
        for _ in range(MATCHING_PASSES - 1):
            # What the matcher applied gives the rest of its blocks profiles to
            # be scored against: run again until a run applies nothing, as the
            # nightly run would, so that a second demo changes no counts (two
            # passes on the bundled data).
            if not last.get("auto_applied"):
                break
            last = matching_run_task.delay().get()
            for key, value in last.items():
                if key != "blocks":
                    matching[key] = matching.get(key, 0) + value
        user = curator_ensure(username=DEMO_CURATOR[0], password=DEMO_CURATOR[1])
        self._summary(harvest, matching, time.monotonic() - started)
        self.stdout.write(f"demo curator: {user.username} / {DEMO_CURATOR[1]}")

    def _summary(self, harvest: dict, matching: dict, seconds: float) -> None:
        w = self.stdout.write
        w("")
        w("== wovepaper demo summary ==")
        w(
            f"harvest run #{harvest['run']}: {harvest['seen']} records read, "
            f"{harvest['created']} papers created, {harvest['updated']} updated, "
            f"{harvest['unchanged']} unchanged, {harvest['failed']} rejected"
        )
        w(
            f"papers:       {Paper.objects.count()} "
            f"({Paper.objects.filter(hidden=True).count()} hidden, "
            f"{Paper.objects.filter(withdrawn=True).count()} withdrawn)"
        )
        # Vectors of this model as it now runs: others (made under other
        # settings) are not searched until embed_papers has run.
        embedded = PaperEmbedding.objects.filter(model=model_name()).count()
        w(
            f"embeddings:   {embedded} papers "
            f"({model_name()}, for semantic search and similar papers)"
            + (
                f"; none: is the model at EMBEDDING_MODEL_DIR "
                f"({settings.EMBEDDING_MODEL_DIR})? then manage.py embed_papers"
                if not embedded and Paper.objects.exists()
                else ""
            )
        )
        people = Authorship.objects.filter(is_collaboration=False)
        collaborations = Authorship.objects.filter(is_collaboration=True).count()
        w(
            f"authorships:  {Authorship.objects.count()} "
            f"({people.count()} people, {collaborations} collaborations, "
            f"{people.filter(researcher__isnull=False).count()} assigned)"
        )
        merged = Researcher.objects.filter(merged_into__isnull=False).count()
        w(
            f"researchers:  {Researcher.objects.live().count()} live, "
            f"{merged} merged away"
        )
        w(
            f"matching:     {matching.get('blocks', 0)} blocks; proposed "
            + ", ".join(
                f"{matching.get(f'proposed_{kind}', 0)} {kind}"
                for kind in Proposal.Kind.values
            )
            + f"; {matching.get('auto_applied', 0)} applied by the matcher "
            f"(auto-apply: {auto_apply.policy().describe()})"
        )
        w(f"matcher:      {selectors.matcher_description()}")
        w("proposals by kind and status:")
        rows = (
            Proposal.objects.values("kind", "status")
            .annotate(n=Count("id"))
            .order_by("kind", "status")
        )
        for row in rows:
            w(f"  {row['kind']:<8} {row['status']:<10} {row['n']}")
        failed = RawRecord.objects.filter(status=RawRecord.Status.FAILED).order_by("id")
        w(f"records rejected: {failed.count()}")
        for raw in failed:
            w(f"  {raw.problem}")
        run = HarvestRun.objects.get(pk=harvest["run"])
        w(f"files skipped (they hold no records): {len(run.files_skipped)}")
        for skipped in run.files_skipped:
            w(f"  {skipped['reason']}")
        w(f"harvest runs: {HarvestRun.objects.count()}")
        w(f"wall time:    {seconds:.1f} s")
