"""A second PostgreSQL session in a test, as another worker or process holds one."""

from __future__ import annotations

import time

import psycopg
from django.db import DatabaseError, connection


def second_session(*, autocommit: bool = False) -> psycopg.Connection:
    """Open a second connection to the test database, as another worker or
    process holds one.

    Args:
        autocommit: whether the session commits each statement, as a worker
            holding a session-level advisory lock does.

    Returns:
        A new psycopg connection, outside Django's transaction for the test; the
        caller closes it (see ``close_and_wait``).
    """
    params = connection.get_connection_params()
    return psycopg.connect(
        dbname=params["dbname"],
        host=params.get("host") or "127.0.0.1",
        port=params.get("port") or 5432,
        user=params.get("user") or "postgres",
        password=params.get("password") or None,
        autocommit=autocommit,
    )


def close_and_wait(other, timeout: float = 10.0) -> None:
    """Close ``other`` (a psycopg connection) and wait until its server process
    has ended, so the session-level advisory locks it held are released.

    ``close()`` only sends the termination; the backend releases its locks
    when it processes it, which on a loaded 2-core machine can come after the
    test's next statement (PostgreSQL docs, 13.3.5 "Advisory Locks": a session
    lock is held until released or the session ends).

    Each look clears the statistics snapshot first: inside a transaction (every
    ``django_db`` test runs in one) ``pg_stat_activity`` is read once and cached
    until the transaction ends (PostgreSQL docs, 27.2.2 "Viewing Statistics",
    ``pg_stat_clear_snapshot``), so without it a backend seen once is seen for
    the rest of the test.

    Returns at once for a connection already closed, and without waiting when
    the test's own transaction has failed (the caller's ``finally``), so the
    failure that matters is not hidden.

    Raises:
        AssertionError: the backend is still there after ``timeout`` seconds.
    """
    if other.closed:
        return  # closed by the caller: its backend id is gone with it
    pid = other.info.backend_pid
    other.close()
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while True:
            try:
                cursor.execute("SELECT pg_stat_clear_snapshot()")
            except DatabaseError:
                # The test's transaction failed already (this runs in its
                # ``finally``): that failure is the one to see, not this.
                return
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid]
            )
            if cursor.fetchone()[0] == 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"backend {pid} still runs {timeout} s after close"
                )
            time.sleep(0.02)
