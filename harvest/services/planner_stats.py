"""Fresh planner statistics for the raw record table while a harvest grows it.

PostgreSQL plans every batch's raw record lookup (:func:`harvest.services.raw.
raw_records_found`: which of 500 ``(external_id, content_hash)`` pairs are stored)
from the table's statistics, which only ``ANALYZE`` refreshes. A first harvest
into an empty database outgrows them in seconds. Measured by bench/ingest.py
(100,000 papers, autovacuum off as on this project's machines): with no column
statistics, PostgreSQL took ``source = 'arxiv'`` to match 0.5% of the rows (its
default for an equality) and planned the lookup as a hash join over a bitmap
scan of every raw record of the source, 39 ms a batch on average and growing
with the table (7.8 s of the server's 40 s), where 500 probes of the unique
index take 1.4 ms.

autovacuum would analyze the table once 50 rows + 10% of it changed
(``autovacuum_analyze_threshold``, ``autovacuum_analyze_scale_factor``: PostgreSQL
15 manual, 25.1.6 "The Autovacuum Daemon"), but it looks only every
``autovacuum_naptime`` (a minute) and not at all where it is off; the manual's
advice after a bulk load is to run ``ANALYZE`` (14.4.8 "Run ANALYZE Afterwards").
So the harvest does it itself, on a doubling rule: after the rows this process
stored reach the table's size at its last ``ANALYZE`` (and at least
``HARVEST_ANALYZE_MIN_ROWS``). Statistics off by less than half do not flip this
plan, and an ``ANALYZE`` reads a fixed sample (300 x ``default_statistics_target``
rows: 14.2.5 of the manual, ``ANALYZE``), so a harvest growing the table n-fold
pays for about log2(n) of them (five in all, 0.40 s, for 100,000 papers).

Only the raw record table: it is the one whose lookup a stale plan ruined. The
paper table's own ``ANALYZE`` costs ten times more (its tsvector statistics and
expression index) and its lookups by arXiv id or DOI stayed index scans.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import DatabaseError, connections, transaction

from harvest.models import RawRecord

logger = logging.getLogger(__name__)

_counts = threading.local()


# How long an ANALYZE waits for its table lock (held by a VACUUM, a CREATE INDEX
# CONCURRENTLY or another session's ANALYZE; inserts never take it) before it is
# given up for this time: statistics can wait, a harvest should not.
LOCK_TIMEOUT = "200ms"


def raw_records_stored(*, rows: int, using: str = "default") -> bool:
    """Count ``rows`` new raw records; past the doubling rule, analyze the table
    once the current transaction commits.

    Per process and thread (a harvest writes from one thread): other processes'
    writes are not counted here, only seen in the size each ``ANALYZE`` leaves
    (``pg_class.reltuples``, read again after it). Nothing is done on other
    databases than PostgreSQL.

    Args:
        rows: raw records just inserted (0 or more).
        using: the database alias they were written to.

    Returns:
        True when an ``ANALYZE`` was queued (it runs at commit: see
        :func:`_analyze` for what its failure costs).
    """
    connection = connections[using]
    if connection.vendor != "postgresql" or rows <= 0:
        return False
    state = getattr(_counts, using, None)
    if state is None:
        state = {"since": 0, "size": _table_size(using)}
        setattr(_counts, using, state)
    state["since"] += rows
    if state["since"] < max(settings.HARVEST_ANALYZE_MIN_ROWS, state["size"]):
        return False
    # The size the table will have at least, corrected once ANALYZE has run.
    state["size"] += state["since"]
    state["since"] = 0
    transaction.on_commit(lambda: _analyze(using), using=using)
    return True


def _table_size(using: str) -> int:
    """The raw record table's rows by its last statistics (0 if never taken)."""
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT GREATEST(reltuples, 0)::bigint FROM pg_class "
            "WHERE oid = %s::regclass",
            [RawRecord._meta.db_table],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def _analyze(using: str) -> None:
    """``ANALYZE`` the raw record table, after the batch's transaction (so its
    lock is held only as long as the statement), then read the size it found.

    What PostgreSQL says instead of analyzing (a role that does not own the
    table gets a WARNING, not an error) and a statement that fails (the lock
    not taken within :data:`LOCK_TIMEOUT`) are logged, rolled back to where
    they began, and the harvest goes on.

    Raises:
        DatabaseError: the connection was lost. A harvest holds its run with
            a session lock (:func:`harvest.services.runs.run_held`), gone with
            the session: it must stop, to be resumed, rather than go on in a
            new session another process could resume the run in meanwhile.
    """
    db = connections[using]
    table = db.ops.quote_name(RawRecord._meta.db_table)
    said: list[str] = []

    def notice(diagnostic) -> None:
        said.append(f"{diagnostic.severity}: {diagnostic.message_primary}")

    session = None
    try:
        with transaction.atomic(using=using), db.cursor() as cursor:
            session = db.connection
            session.add_notice_handler(notice)
            try:
                cursor.execute("SET LOCAL lock_timeout = %s", [LOCK_TIMEOUT])
                cursor.execute(f"ANALYZE {table}")
            finally:
                session.remove_notice_handler(notice)
        size = _table_size(using)
    except DatabaseError:
        # Django may already have opened a new session in its place.
        if session is None or session.broken or db.connection is not session:
            raise
        logger.warning("ANALYZE of %s failed", table, exc_info=True)
        return
    if said:
        logger.warning("ANALYZE of %s: %s", table, "; ".join(said))
    state = getattr(_counts, using, None)
    if state is not None:
        state["size"] = max(state["size"], size)
