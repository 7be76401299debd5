"""Faults survived, with real processes: a worker killed with SIGKILL in the middle of
a harvest and in the middle of a matching run, the database connection dropped in
the middle of a harvest, Redis restarted with tasks queued and running, and two
matching runs at once.

Each test runs the faulty course through real Celery workers over Redis on the real
1,192 arXiv ``.abs`` files, then wipes the tables and runs the same work
uninterrupted in process: the two end states must be equal, row for row.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.db import connection

from curation.models import Constraint, CurationEvent, Proposal
from curation.services import matching_run
from curation.tasks import matching_run_task
from harvest.models import HarvestRun, RawRecord
from harvest.services import files_cursor, harvest_arxiv_files
from harvest.tasks import harvest_arxiv_files_task
from tests.integration.workers import (
    broker_in_use,
    start_worker,
    stop_worker,
    task_result,
    wait_for,
)
from tests.redis_server import OwnRedis
from wovepaper.models import Authorship, Paper, Researcher

pytestmark = pytest.mark.django_db(transaction=True)

# Seconds after which Redis hands a dead worker's unacknowledged task out again
# (kombu's visibility_timeout; production keeps 3,600).
VISIBILITY = 3


def _kill(proc) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def _harvested() -> dict:
    return {
        "papers": sorted(
            Paper.objects.values_list(
                "arxiv_id", "title", "latest_version", "versions", "hidden"
            )
        ),
        "authorships": sorted(
            Authorship.objects.values_list("paper__arxiv_id", "position", "raw_name")
        ),
        "raw": sorted(
            RawRecord.objects.values_list("external_id", "content_hash", "status")
        ),
    }


def _run_counts(run: HarvestRun) -> tuple:
    return (
        run.records_seen,
        run.papers_created,
        run.papers_updated,
        run.papers_unchanged,
        run.records_failed,
        sorted(f["file"] for f in run.files_skipped),
    )


def _proposed() -> list:
    return sorted(
        (
            p.kind,
            p.fingerprint,
            p.status,
            p.block_key,
            tuple(
                sorted(a.paper.arxiv_id + f"#{a.position}" for a in p.authorships.all())
            ),
        )
        for p in Proposal.objects.prefetch_related("authorships__paper")
    )


def _matching_wipe() -> None:
    Proposal.objects.all().delete()
    CurationEvent.objects.all().delete()
    Constraint.objects.all().delete()
    Authorship.objects.update(researcher=None)
    Researcher.objects.all().delete()


def test_worker_killed_mid_harvest_resumes_its_run_losing_and_doubling_nothing(
    arxiv_dir,
):
    root = arxiv_dir / "abs_files"
    with broker_in_use():
        first = start_worker(CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY))
        try:
            sent = harvest_arxiv_files_task.apply_async(
                args=[str(root)], kwargs={"then_match": False}
            )
            wait_for(lambda: RawRecord.objects.count() >= 300, first, 180, every=0.1)
            _kill(first)
        finally:
            stop_worker(first)
        run = HarvestRun.objects.get()
        killed_at = files_cursor(run.cursor)[0]
        assert run.status == "running"
        assert 0 < killed_at < run.params["files"]
        seen_at_kill = run.records_seen

        time.sleep(VISIBILITY + 1)
        # Redis hands the task out again to a worker whose own visibility
        # timeout it has outlived (the restart's check, then every 10 s).
        second = start_worker(CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY))
        try:
            counts = task_result(sent.id, second, 300)
        finally:
            stop_worker(second)

    run.refresh_from_db()
    assert counts["run"] == run.pk
    assert run.records_seen > seen_at_kill
    _assert_as_uninterrupted(root, run)


def test_database_connection_dropped_mid_harvest_the_task_retries_and_resumes(
    arxiv_dir,
):
    root = arxiv_dir / "abs_files"
    with broker_in_use():
        worker = start_worker()
        try:
            sent = harvest_arxiv_files_task.apply_async(
                args=[str(root)], kwargs={"then_match": False}
            )
            wait_for(lambda: RawRecord.objects.count() >= 300, worker, 180, every=0.1)
            # Every other session on the test database: the worker's, mid-file.
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                assert cursor.fetchone()[0] >= 1
            counts = task_result(sent.id, worker, 300)
        finally:
            stop_worker(worker)

    run = HarvestRun.objects.get()
    assert counts["run"] == run.pk
    _assert_as_uninterrupted(root, run)


def _assert_as_uninterrupted(root, run: HarvestRun) -> None:
    """The run finished alone, and equals an uninterrupted harvest row for row."""
    assert HarvestRun.objects.count() == 1  # the same run, resumed
    assert run.status == "finished"
    resumed, resumed_counts = _harvested(), _run_counts(run)

    Authorship.objects.all().delete()
    Paper.objects.all().delete()
    RawRecord.objects.all().delete()
    HarvestRun.objects.all().delete()
    reference = harvest_arxiv_files(root=root)

    assert _run_counts(reference) == resumed_counts
    assert _harvested() == resumed
    assert len(resumed["papers"]) > 1000


def test_worker_killed_mid_matching_leaves_what_an_uninterrupted_run_proposes(
    arxiv_dir,
):
    harvest_arxiv_files(root=arxiv_dir / "abs_files")
    with broker_in_use():
        first = start_worker(CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY))
        try:
            sent = matching_run_task.delay()
            wait_for(lambda: Proposal.objects.exists(), first, 300, every=0.05)
            _kill(first)
        finally:
            stop_worker(first)
        saved_at_kill = Proposal.objects.count()

        time.sleep(VISIBILITY + 1)
        # The dead worker's lock went with its connection: the redelivered task
        # runs at once rather than waiting for a lock to expire.
        second = start_worker(CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY))
        try:
            task_result(sent.id, second, 300)
        finally:
            stop_worker(second)

    resumed = _proposed()
    assert 0 < saved_at_kill < len(resumed)  # it was killed half-way through saving
    assert len({fp for _, fp, *_ in resumed}) == len(resumed)

    _matching_wipe()
    matching_run()

    assert _proposed() == resumed


def test_two_matching_runs_at_once_one_waits_and_nothing_is_doubled(arxiv_dir):
    harvest_arxiv_files(root=arxiv_dir / "abs_files")
    with broker_in_use():
        workers = [start_worker(CURATION_MATCHING_RETRY_SECONDS="1") for _ in range(2)]
        try:
            sent = [matching_run_task.delay() for _ in workers]
            results = [task_result(s.id, workers[0], 300) for s in sent]
        finally:
            for w in workers:
                stop_worker(w)

    proposed = _proposed()
    made = [r.get("proposed_new", 0) for r in results]
    # Together the two runs proposed each new researcher once: a shard whose
    # blocks the other run held waited for the lock (retrying), then found them
    # proposed. Which run proposes which shard depends on the order the two
    # workers take them (shards of different blocks run at once, by design): on
    # an idle machine one run took every shard first, on a loaded one they
    # share them, so only the sum is fixed.
    assert sum(made) == sum(1 for kind, *_ in proposed if kind == "new") > 1000
    assert len({fp for _, fp, *_ in proposed}) == len(proposed)

    _matching_wipe()
    matching_run()
    assert _proposed() == proposed


@pytest.fixture
def own_redis(tmp_path):
    server = OwnRedis(tmp_path, port=6391)
    server.start()
    yield server
    server.crash()


def test_tasks_queued_when_redis_restarts_all_run_once(own_redis, arxiv_dir):
    folders = ("hepcrawl_oai", "arxivpy_2016_atom")
    with broker_in_use(own_redis.url):
        sent = [
            harvest_arxiv_files_task.apply_async(
                args=[str(arxiv_dir / folder)], kwargs={"then_match": False}
            )
            for folder in folders
        ]
        own_redis.restart()  # no worker has taken them yet
        worker = start_worker(broker=own_redis.url)
        try:
            results = [task_result(s.id, worker, 120, own_redis.url) for s in sent]
        finally:
            stop_worker(worker)

    runs = HarvestRun.objects.order_by("pk")
    assert [r.status for r in runs] == ["finished", "finished"]
    assert sorted(r["run"] for r in results) == [r.pk for r in runs]
    assert Paper.objects.count() == sum(r["created"] for r in results) > 19


def test_redis_restarted_mid_harvest_the_run_ends_as_uninterrupted(
    own_redis, arxiv_dir
):
    root = arxiv_dir / "abs_files"
    with broker_in_use(own_redis.url):
        worker = start_worker(
            broker=own_redis.url, CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY)
        )
        try:
            sent = harvest_arxiv_files_task.apply_async(
                args=[str(root)], kwargs={"then_match": False}
            )
            wait_for(lambda: RawRecord.objects.count() >= 300, worker, 180, every=0.1)
            own_redis.restart()
            counts = task_result(sent.id, worker, 300, own_redis.url)
        finally:
            stop_worker(worker)

    run = HarvestRun.objects.get()
    assert counts["run"] == run.pk
    _assert_as_uninterrupted(root, run)
