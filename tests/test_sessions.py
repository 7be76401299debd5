"""The second-session helper waits for the closed backend even after seeing it."""

from __future__ import annotations

import pytest
from django.db import connection

from tests.sessions import close_and_wait, second_session

pytestmark = pytest.mark.django_db


def test_close_and_wait_returns_once_a_backend_seen_earlier_has_ended():
    other = second_session(autocommit=True)
    pid = other.info.backend_pid
    with connection.cursor() as cursor:
        # Seen once inside the test's transaction, as on a slow machine where
        # the first look comes before the backend has gone: the view is cached.
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        assert cursor.fetchone()[0] == 1

    close_and_wait(other, timeout=5.0)

    assert other.closed
