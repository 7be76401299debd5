"""Batches prepared by forked workers while the harvest writes (harvest.services.
prepare): the same papers as a harvest alone, on the real arXiv .abs files; a dead
worker costs time, not records; a worker never touches its parent's database
session; workers die with their harvest; no workers where none may be forked."""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

from harvest import services
from harvest.models import RawRecord
from harvest.records import RecordError
from harvest.services import files
from harvest.services.files import FileSource, arxiv_files
from harvest.services.prepare import PreparePool, prepare_workers
from harvest.services.raw import FileReader
from harvest.sources.arxiv_abs import parse_abs, read_abs_file
from tests.harvest.test_bulk_write import _abs_files, _snapshot
from tests.sessions import close_and_wait, second_session
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db

# The harvest's own process, so a parser can tell it runs in a worker.
_PARENT = os.getpid()


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of 40 records: 150 files make four, three of them for workers."""
    monkeypatch.setattr(files, "BATCH_RECORDS", 40)


def _counts(run) -> dict:
    return {
        name: getattr(run, name)
        for name in (
            "records_seen",
            "records_failed",
            "papers_created",
            "papers_updated",
            "papers_unchanged",
        )
    }


def _with_parser(monkeypatch, parse) -> None:
    """Harvest arXiv .abs files with ``parse`` instead of the real parser."""
    reader = FileReader(
        split=lambda path, root: iter([read_abs_file(path, root)]), parse=parse
    )
    monkeypatch.setitem(
        files.FILE_SOURCES,
        "arxiv",
        FileSource(arxiv_files, lambda path: reader, services.harvest_batch),
    )


def test_workers_store_what_the_harvest_stores_alone(
    tmp_path, settings, small_batches, monkeypatch
):
    _abs_files(tmp_path, 150)
    submitted: list[int] = []
    submit = PreparePool.submit

    def counted(self, items, parse):
        submitted.append(len(items))
        return submit(self, items, parse)

    monkeypatch.setattr(PreparePool, "submit", counted)
    settings.HARVEST_PREPARE_WORKERS = 2
    run = services.harvest_files(source="arxiv", root=tmp_path)
    # Every batch went to the workers, the first too: the harvest knew more
    # files followed it.
    assert submitted == [40, 40, 40, 30]
    assert run.status == run.Status.FINISHED
    assert run.papers_created == 150
    with_workers, raw_with_workers = _snapshot(), _raw_records()

    Authorship.objects.all().delete()
    Paper.objects.all().delete()
    RawRecord.objects.all().delete()
    settings.HARVEST_PREPARE_WORKERS = 0
    alone = services.harvest_files(source="arxiv", root=tmp_path)
    assert submitted == [40, 40, 40, 30]  # no pool this time
    assert _snapshot() == with_workers
    assert _raw_records() == raw_with_workers
    assert _counts(alone) == _counts(run)


def test_a_harvest_of_one_batch_starts_no_workers(
    tmp_path, settings, small_batches, monkeypatch
):
    _abs_files(tmp_path, 40)
    started: list[int] = []
    monkeypatch.setattr(
        PreparePool, "__init__", lambda self, workers: started.append(workers)
    )
    settings.HARVEST_PREPARE_WORKERS = 2
    run = services.harvest_files(source="arxiv", root=tmp_path)
    assert run.papers_created == 40
    assert started == []


def _raw_records() -> list[tuple]:
    return list(
        RawRecord.objects.order_by("external_id").values_list(
            "external_id", "content_hash", "locator", "status", "error", "payload"
        )
    )


def _dies_in_a_worker(item):
    if os.getpid() != _PARENT:
        os._exit(1)  # as a worker killed by the OOM killer
    return parse_abs(item)


def test_a_worker_that_dies_costs_time_not_records(
    tmp_path, settings, small_batches, monkeypatch, caplog
):
    _abs_files(tmp_path, 150)
    _with_parser(monkeypatch, _dies_in_a_worker)
    settings.HARVEST_PREPARE_WORKERS = 2
    with caplog.at_level(logging.WARNING, logger="harvest.services.prepare"):
        run = services.harvest_files(source="arxiv", root=tmp_path)
    assert run.status == run.Status.FINISHED
    assert run.records_failed == 0
    assert run.papers_created == Paper.objects.count() == 150
    assert "preparing in process" in caplog.text


def _queries_in_a_worker(item):
    Paper.objects.exists()  # fine in the harvest's own process
    return parse_abs(item)


def test_a_worker_never_uses_its_parents_database_session(
    tmp_path, settings, small_batches, monkeypatch
):
    """A parser that queries the database fails its record in a worker (the
    connection it inherited is its parent's) and the parent's session is intact."""
    _abs_files(tmp_path, 150)
    _with_parser(monkeypatch, _queries_in_a_worker)
    settings.HARVEST_PREPARE_WORKERS = 2
    run = services.harvest_files(source="arxiv", root=tmp_path)
    assert run.status == run.Status.FINISHED
    # Every batch was parsed in a worker.
    assert run.papers_created == Paper.objects.count() == 0
    assert run.records_failed == 150
    failed = RawRecord.objects.filter(status=RawRecord.Status.FAILED)
    assert failed.count() == 150
    assert all(
        "RuntimeError: a harvest prepare worker must not use the database" in error
        for error in failed.values_list("error", flat=True)
    )
    assert all(
        error.startswith(locator)
        for locator, error in failed.values_list("locator", "error")
    )


def _reports_frozen_objects(item):
    raise RecordError(f"frozen={gc.get_freeze_count()} pid={os.getpid()}")


def test_a_worker_keeps_what_it_inherited_out_of_its_garbage_collector(tmp_path):
    """The parent's heap, forked into a worker, is frozen there (gc.freeze), so the
    worker's collections walk only what it makes; the parent is left as it was."""
    item = read_abs_file(_abs_files(tmp_path, 1)[0], None)
    assert gc.get_freeze_count() == 0
    with PreparePool(1) as pool:
        prepared = pool.submit([item], _reports_frozen_objects).result()
    assert prepared is not None
    frozen, pid = (int(part.split("=")[1]) for part in prepared[0][1].error.split())
    assert pid != os.getpid()
    # Everything Django and the test run had built: tens of thousands of objects.
    assert frozen > 10_000
    assert gc.get_freeze_count() == 0


def _sleeps_in_a_worker(item):
    Path(os.environ["WOVEPAPER_TEST_PID_FILE"]).write_text(str(os.getpid()))
    time.sleep(120)
    return parse_abs(item)


def _harvest_that_waits(path: str) -> None:
    item = read_abs_file(Path(path), None)
    with PreparePool(1) as pool:
        pool.submit([item], _sleeps_in_a_worker).result()


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie is dead, only not reaped


def test_workers_die_with_a_harvest_killed_with_sigkill(tmp_path, monkeypatch):
    pid_file = tmp_path / "worker.pid"
    monkeypatch.setenv("WOVEPAPER_TEST_PID_FILE", str(pid_file))
    source = _abs_files(tmp_path, 1)[0]
    harvest = multiprocessing.get_context("fork").Process(
        target=_harvest_that_waits, args=(str(source),)
    )
    harvest.start()
    try:
        deadline = time.monotonic() + 60  # generous: a loaded host forks slowly
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the worker never started"
            time.sleep(0.05)
        worker = int(pid_file.read_text())
        assert _alive(worker)
        os.kill(harvest.pid, signal.SIGKILL)
        harvest.join(30)
        deadline = time.monotonic() + 30
        while _alive(worker):
            assert time.monotonic() < deadline, "the worker outlived its harvest"
            time.sleep(0.05)
    finally:
        if harvest.is_alive():
            harvest.kill()


def _report_workers(answers) -> None:
    answers.put(prepare_workers())


def test_no_workers_where_none_may_be_forked(settings):
    settings.HARVEST_PREPARE_WORKERS = 2
    assert prepare_workers() == 2
    # A Celery prefork worker's child is daemonic: it may not have children.
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=_report_workers, args=(answers,), daemon=True)
    child.start()
    assert answers.get(timeout=60) == 0
    child.join(30)
    settings.HARVEST_PREPARE_WORKERS = 0
    assert prepare_workers() == 0
    settings.HARVEST_PREPARE_WORKERS = None
    assert prepare_workers() == (os.cpu_count() or 1)
    # More workers than CPUs only cost memory (a batch each, and one ahead each).
    settings.HARVEST_PREPARE_WORKERS = 100_000
    assert prepare_workers() == (os.cpu_count() or 1)


_calls = {"n": 0}


def _ctrl_c_at_the_fiftieth(item):
    _calls["n"] += 1
    if _calls["n"] == 50:
        raise KeyboardInterrupt
    return parse_abs(item)


def test_ctrl_c_closes_the_run_as_failed_and_its_resume_finishes_it(
    tmp_path, settings, small_batches, monkeypatch
):
    _abs_files(tmp_path, 150)
    _with_parser(monkeypatch, _ctrl_c_at_the_fiftieth)
    settings.HARVEST_PREPARE_WORKERS = 0
    with pytest.raises(services.HarvestInterrupted) as stop:
        services.harvest_files(source="arxiv", root=tmp_path)
    run = stop.value.run
    run.refresh_from_db()
    assert run.status == run.Status.FAILED
    assert run.error == "interrupted (Ctrl-C)"
    # The first batch landed, the one cut short did not, and the counts say so.
    assert Paper.objects.count() == run.papers_created == 40
    assert services.files_cursor(run.cursor)[0] == 40
    resumed = services.harvest_files(source="arxiv", root=tmp_path, run=run)
    assert resumed.status == resumed.Status.FINISHED
    assert Paper.objects.count() == resumed.papers_created == 150
    assert resumed.records_failed == 0


def test_a_run_another_process_is_harvesting_is_refused(tmp_path, settings):
    """Resuming a run whose harvest still runs elsewhere (its session holds the
    run's advisory lock) is refused, and nothing is written."""
    _abs_files(tmp_path, 3)
    run = services.harvest_run_start(source="arxiv", params={"root": str(tmp_path)})
    other = second_session()
    try:
        other.execute("SELECT pg_advisory_lock(7301, %s)", [run.pk])
        with pytest.raises(
            services.HarvestRunRefused, match="being harvested by another process"
        ):
            services.harvest_files(source="arxiv", root=tmp_path, run=run)
        assert not Paper.objects.exists()
    finally:
        close_and_wait(other)  # the other harvest ends: its lock goes with it
    done = services.harvest_files(source="arxiv", root=tmp_path, run=run)
    assert done.papers_created == 3
