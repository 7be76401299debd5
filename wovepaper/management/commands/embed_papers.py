"""``manage.py embed_papers``: embed titles and abstracts, with a progress bar."""

from __future__ import annotations

import argparse
import time

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from wovepaper.models import Paper
from wovepaper.semantic import REFRESH_CHUNK, embeddings_refresh

# The largest paper id the database holds (a signed 64-bit key).
_MOST_ID = 2**63 - 1


def _positive(text: str) -> int:
    """A whole number from 1 (ASCII digits; argparse names the option)."""
    text = text.strip()
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= _MOST_ID:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1")
    return int(text)


class Command(BaseCommand):
    """Backfill or refresh paper embeddings for semantic search and similar papers.

    Idempotent: papers whose title and abstract did not change since their
    embedding are skipped (:func:`wovepaper.semantic.embeddings_refresh`), so
    running it again after an interruption carries on where it stopped.
    Harvests queue the same work for their own papers
    (``settings.EMBED_AFTER_HARVEST``).
    """

    help = "Embed the papers whose title or abstract has no up-to-date embedding"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--paper",
            type=_positive,
            action="append",
            default=[],
            help="embed only this paper id (repeatable)",
        )
        parser.add_argument(
            "--chunk",
            type=_positive,
            default=REFRESH_CHUNK,
            help=f"papers per transaction (default {REFRESH_CHUNK})",
        )
        parser.add_argument(
            "--no-progress",
            action="store_true",
            help="draw no progress bar (for logs and scheduled jobs)",
        )

    def handle(self, *args, **options) -> None:
        papers = Paper.objects.all()
        if options["paper"]:
            papers = papers.filter(pk__in=options["paper"])
            unknown = sorted(
                set(options["paper"]) - set(papers.values_list("pk", flat=True))
            )
            if unknown:
                raise CommandError(
                    "no paper has the id " + ", ".join(str(pk) for pk in unknown)
                )
        started = time.monotonic()
        with tqdm(
            total=papers.count(),
            unit="paper",
            desc="embedding",
            disable=options["no_progress"],
        ) as bar:
            try:
                counts = embeddings_refresh(
                    papers=papers, chunk=options["chunk"], progress=bar.update
                )
            except ImproperlyConfigured as exc:
                raise CommandError(str(exc)) from exc
        seconds = time.monotonic() - started
        rate = counts["embedded"] / seconds if seconds and counts["embedded"] else 0
        self.stdout.write(
            f"papers: {counts['papers']}, embedded: {counts['embedded']}, "
            f"unchanged: {counts['unchanged']} ({seconds:.1f} s, "
            f"{rate:.1f} papers/s embedded)"
        )
