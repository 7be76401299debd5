"""A harvest that grows the raw record table analyzes it on a doubling rule
(harvest.services.planner_stats), so its batch lookups keep an index plan."""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError, connection

from harvest import services
from harvest.models import RawRecord
from harvest.services import files, planner_stats
from tests.sessions import second_session

pytestmark = pytest.mark.django_db


def _reltuples() -> float:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples FROM pg_class WHERE oid = 'harvest_rawrecord'::regclass"
        )
        return cursor.fetchone()[0]


def test_a_harvest_analyzes_the_raw_record_table_each_time_it_doubled(
    tmp_path, settings, monkeypatch, django_capture_on_commit_callbacks
):
    month = settings.WOVEPAPER_DATA_DIR / "arxiv/abs_files/ftp/arxiv/papers/0704"
    for path in sorted(month.glob("*.abs"))[:150]:
        (tmp_path / path.name).symlink_to(path)
    with connection.cursor() as cursor:
        # Statistics of an empty table (other tests' rows were rolled back).
        cursor.execute("ANALYZE harvest_rawrecord")
    assert _reltuples() == 0
    monkeypatch.setattr(planner_stats, "_counts", threading.local())
    monkeypatch.setattr(files, "BATCH_RECORDS", 50)
    settings.HARVEST_ANALYZE_MIN_ROWS = 30
    settings.HARVEST_PREPARE_WORKERS = 0

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        run = services.harvest_files(source="arxiv", root=tmp_path)

    assert run.records_seen == RawRecord.objects.count() == 150
    # Batches of 50 on a table analyzed empty: after the first (50 >= 30) and the
    # second (50 more >= the 50 the first ANALYZE saw), not after the third (50 <
    # 100).
    analyzes = [c for c in callbacks if c.__qualname__.startswith("raw_records_")]
    assert len(analyzes) == 2
    # They ran after the batches (here: at the end), on every row stored, and
    # the next ANALYZE waits for the size the last one found, not the guess.
    assert _reltuples() == 150
    assert planner_stats._counts.default["size"] == 150


def test_a_table_analyzed_bigger_than_the_rows_stored_is_not_analyzed_again(
    settings, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(planner_stats, "_counts", threading.local())
    monkeypatch.setattr(planner_stats, "_table_size", lambda using: 1_000_000)
    settings.HARVEST_ANALYZE_MIN_ROWS = 10
    with django_capture_on_commit_callbacks() as callbacks:
        queued = [planner_stats.raw_records_stored(rows=500_000) for _ in range(3)]
    assert queued == [False, True, False]
    assert len(callbacks) == 1


def test_nothing_is_counted_for_no_rows(monkeypatch):
    monkeypatch.setattr(planner_stats, "_counts", threading.local())
    assert planner_stats.raw_records_stored(rows=0) is False
    assert not hasattr(planner_stats._counts, "default")


def test_a_failed_analyze_is_logged_and_costs_nothing_else(monkeypatch, caplog):
    monkeypatch.setattr(
        planner_stats.RawRecord._meta, "db_table", "harvest_no_such_table"
    )
    planner_stats._analyze("default")
    assert 'ANALYZE of "harvest_no_such_table" failed' in caplog.text
    monkeypatch.undo()
    # Rolled back to its savepoint: the connection goes on.
    assert RawRecord.objects.count() == 0


def test_an_analyze_that_cannot_take_its_lock_soon_is_given_up(caplog):
    """A VACUUM or another ANALYZE holds the table's lock: the harvest does not
    wait for it past planner_stats.LOCK_TIMEOUT."""
    other = second_session()
    try:
        other.execute("LOCK TABLE harvest_rawrecord IN SHARE UPDATE EXCLUSIVE MODE")
        planner_stats._analyze("default")
    finally:
        other.close()
    assert "lock timeout" in caplog.text
    assert RawRecord.objects.count() == 0  # the session goes on


def test_what_postgresql_says_instead_of_analyzing_is_logged(caplog):
    with connection.cursor() as cursor:
        cursor.execute("CREATE ROLE wovepaper_test_not_owner")
        cursor.execute("GRANT SELECT ON pg_class TO wovepaper_test_not_owner")
        cursor.execute("SET ROLE wovepaper_test_not_owner")
    try:
        planner_stats._analyze("default")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")
    assert "WARNING: permission denied to analyze" in caplog.text or (
        "only table or database owner can analyze it" in caplog.text
    )


@pytest.mark.django_db(transaction=True)
def test_a_connection_lost_in_analyze_stops_the_harvest():
    """The run's session lock went with the session: going on in a new one
    would let another process resume the same run meanwhile."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with second_session(autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    try:
        with pytest.raises(OperationalError):
            planner_stats._analyze("default")
    finally:
        connection.close()
