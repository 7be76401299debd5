"""Harvest and matching through a real Celery worker process and the real Redis.

The worker is a separate process started here (``celery -A wovepaper worker``) on
Redis database 15 and the test PostgreSQL database; tasks are sent over the broker,
not run eagerly, and the test waits on the database for their effects.
"""

from __future__ import annotations

import pytest

from curation.models import Proposal
from harvest.models import HarvestRun
from tests.integration.workers import (
    broker_in_use,
    start_worker,
    stop_worker,
    task_result,
)
from wovepaper.models import Paper


@pytest.fixture
def worker(transactional_db):
    """A real worker process on the test database; the app sends over Redis."""
    with broker_in_use():
        proc = start_worker()
        try:
            yield proc
        finally:
            stop_worker(proc)


def test_worker_runs_harvest_then_matching_over_redis(worker, arxiv_dir):
    from curation.tasks import matching_run_task
    from harvest.tasks import harvest_arxiv_files_task

    sent = harvest_arxiv_files_task.delay(str(arxiv_dir / "hepcrawl_oai"))

    counts = task_result(sent.id, worker)

    assert counts["seen"] == 30
    assert counts["created"] == 19
    assert counts["failed"] == 0
    run = HarvestRun.objects.get(pk=counts["run"])
    assert run.status == "finished"
    assert Paper.objects.count() == 19

    # The harvest queued matching of the blocks it touched; wait for that task.
    assert counts["blocks_queued"] > 0
    matched = task_result(counts["matching_task"], worker)

    assert matched["proposed_new"] == Proposal.objects.filter(kind="new").count()
    assert matched["proposed_new"] > 0
    assert not Proposal.objects.exclude(status="pending").exists()

    again = task_result(matching_run_task.delay().id, worker)
    assert again.get("proposed_new", 0) == 0  # nothing new to propose
