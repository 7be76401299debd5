"""The curation event log's JSON reads use its GIN indexes on PostgreSQL
(migration curation/0008_event_json_indexes; bench/event_log.py measures
them: 13x to 77x at 200,000 events). A read whose SQL no longer matches an
index's operator (``@>`` on ``researchers`` or ``moves``, ``?|`` on
``fields``) would scan the whole log again, silently; this catches it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from curation import edits
from curation.history import researcher_history
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from wovepaper import profile

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="GIN indexes are PostgreSQL's"
    ),
]


def _plans(read) -> str:
    """The plans of every event-log query ``read`` runs, sequential scans
    ruled out so that an index that fits is taken on a tiny table."""
    with CaptureQueriesContext(connection) as queries:
        read()
    plans = []
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for q in queries.captured_queries:
            if "curation_curationevent" not in q["sql"]:
                continue
            cursor.execute("EXPLAIN " + q["sql"])
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    assert plans, "the read ran no query on the event log"
    return "\n".join(plans)


@pytest.fixture
def merged():
    """Two researchers merged, so the log holds moves and fields naming them."""
    a, b = ResearcherFactory(), ResearcherFactory()
    AuthorshipFactory(researcher=a)
    AuthorshipFactory(researcher=b)
    edits.researcher_merge(researchers=[a, b], actor=UserFactory())
    return a, b


@pytest.mark.parametrize(
    ("index", "read"),
    [
        (
            "curation_event_researchers_gin",
            lambda a, b: list(researcher_history(researcher_id=a.pk)[:50]),
        ),
        ("curation_event_moves_gin", lambda a, b: profile._split_events(b)),
        ("curation_event_moves_gin", lambda a, b: profile.former_holders(b)),
        ("curation_event_fields_gin", lambda a, b: edits._merges_of({b.pk: a.pk})),
    ],
)
def test_event_log_reads_use_their_index(merged, index, read):
    a, b = merged
    assert index in _plans(lambda: read(a, b))
