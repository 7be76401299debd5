"""Harvest and matching through a real Celery worker process and the real Redis.

The worker is a separate process started here (``celery -A wovepaper worker``) on
Redis database 15 and the test PostgreSQL database; tasks are sent over the broker,
not run eagerly, and the test waits on the database for their effects.
"""

from __future__ import annotations

import pytest
import redis
from django.test import override_settings

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


def test_worker_runs_a_full_matching_run_fanned_out_in_shards(worker, arxiv_dir):
    from curation.services import matching_plan
    from curation.tasks import matching_run_task
    from harvest.services import harvest_arxiv_files
    from tests.integration.workers import BROKER

    harvest_arxiv_files(root=arxiv_dir / "abs_files")
    with override_settings(CURATION_MATCHING_SHARDS=32):  # the worker's default
        shards = len(matching_plan().shards)
    stored = redis.Redis.from_url(BROKER)

    counts = task_result(matching_run_task.delay().id, worker, 300)

    assert shards == 32
    # The run's result is its finishing step's, after every shard's task: each
    # stored its counts in Redis (the chord's header), besides the run's own.
    assert len(stored.keys("celery-task-meta-*")) >= shards + 1
    assert counts["blocks"] > 6000
    assert counts["proposed_new"] == Proposal.objects.filter(kind="new").count()
    assert counts["proposed_new"] > 6000
    again = task_result(matching_run_task.delay().id, worker, 300)
    assert again.get("proposed_new", 0) == 0


def test_a_bulk_approval_runs_in_the_worker_and_the_request_returns_at_once(
    worker, client, curator
):
    """Issue 47: the admin's bulk approve answers with the action's progress
    page; a real worker decides the proposals and writes its progress on the
    batch event, which the page reads."""
    from django.urls import reverse

    from curation.models import CurationEvent
    from tests.curation.test_bulk_actions import _attaches
    from tests.integration.workers import wait_for

    proposals = _attaches(60)
    researcher = proposals[0].researcher
    proposals[-1].authorships.first().delete()  # stale: skipped with its reason
    client.force_login(curator)

    response = client.post(
        reverse("admin:curation_proposal_changelist"),
        {"action": "approve_selected", "_selected_action": [p.pk for p in proposals]},
    )

    batch = CurationEvent.objects.get(kind="batch")
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "admin:curation_curationevent_progress", args=[batch.pk]
    )
    wait_for(
        lambda: CurationEvent.objects.get(pk=batch.pk).extra["state"] == "done",
        worker,
        120,
    )
    page = client.get(response["Location"]).content.decode()
    assert "59 applied, 1 skipped, 0 failed. Audit entry: event" in page
    assert 'data-state="done"' in page
    assert researcher.authorships.count() == 59
    linked = CurationEvent.objects.filter(batch=batch, kind="proposal_applied")
    assert linked.count() == 59
    assert set(linked.values_list("actor", flat=True)) == {curator.pk}
