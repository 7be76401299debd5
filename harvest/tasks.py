"""Celery tasks of harvest: thin, idempotent, each calls one service."""

from __future__ import annotations

from pathlib import Path

from celery import shared_task

from harvest import services


@shared_task(acks_late=True, name="harvest.arxiv_files")
def harvest_arxiv_files_task(root: str, run_id: int | None = None) -> dict[str, int]:
    """Harvest arXiv files under ``root`` (resuming run ``run_id`` if given).

    Returns:
        The run's counts: ``run``, ``seen``, ``created``, ``updated``, ``unchanged``,
        ``failed``.
    """
    from harvest.models import HarvestRun

    run = HarvestRun.objects.get(pk=run_id) if run_id else None
    run = services.harvest_arxiv_files(root=Path(root), run=run)
    return {
        "run": run.pk,
        "seen": run.records_seen,
        "created": run.papers_created,
        "updated": run.papers_updated,
        "unchanged": run.papers_unchanged,
        "failed": run.records_failed,
    }
