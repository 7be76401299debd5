"""Celery tasks of harvest: thin, idempotent, each calls one service."""

from __future__ import annotations

import uuid
from pathlib import Path

from celery import shared_task
from django.db import transaction

from harvest import selectors, services
from wovepaper.celery import TRANSIENT


@shared_task(
    bind=True,
    acks_late=True,
    name="harvest.arxiv_files",
    autoretry_for=TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=300,
    max_retries=8,
)
def harvest_arxiv_files_task(
    self, root: str, run_id: int | None = None, then_match: bool = True
) -> dict[str, int | str]:
    """Harvest arXiv files under ``root`` (resuming run ``run_id`` if given).

    Redelivered after its worker died, or retried after the database connection
    dropped (:data:`wovepaper.celery.TRANSIENT`; backoff 2 s doubling to 300 s,
    8 tries), the task resumes its own run from the cursor (the run records the
    task id; :func:`harvest.services.harvest_arxiv_files`).

    With ``then_match``, matching of the blocks this run touched is queued once the
    run has committed (incremental matching after each harvest).

    Returns:
        The run's counts: ``run``, ``seen``, ``created``, ``updated``, ``unchanged``,
        ``failed``, ``blocks_queued`` (blocks sent to matching) and
        ``matching_task`` (the queued matching task's id, or "").
    """
    from curation.tasks import matching_run_task
    from harvest.models import HarvestRun

    run = HarvestRun.objects.get(pk=run_id) if run_id else None
    run = services.harvest_arxiv_files(
        root=Path(root), run=run, task_id=self.request.id or ""
    )
    blocks = selectors.run_block_keys(run=run) if then_match else []
    matching_id = ""
    if blocks:
        matching_id = str(uuid.uuid4())
        transaction.on_commit(
            lambda: matching_run_task.apply_async(
                kwargs={"block_keys": blocks}, task_id=matching_id
            )
        )
    return {
        "run": run.pk,
        "seen": run.records_seen,
        "created": run.papers_created,
        "updated": run.papers_updated,
        "unchanged": run.papers_unchanged,
        "failed": run.records_failed,
        "blocks_queued": len(blocks),
        "matching_task": matching_id,
    }
