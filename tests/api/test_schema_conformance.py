"""Schemathesis against our own /openapi.json: no 500s, responses match the schema.

Every public GET operation is called with generated parameters (valid and
invalid), through the WSGI application (no network), on a database holding real
harvested arXiv records with curated researchers. Bounded: a few examples per
operation, so the run stays under a minute.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

from wovepaper.wsgi import application

schema = schemathesis.openapi.from_wsgi("/openapi.json", application).include(
    method="GET"
)


@pytest.fixture
def keep_connection():
    """Keep the test's database connection open across WSGI requests.

    A real request closes the connection when it finishes; inside a test that
    would close the test transaction's connection, so (like Django's test
    client) the signal handlers are disconnected for the run.
    """
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def corpus(db, arxiv_dir, keep_connection):
    """Real arXiv records, matched, with their `new` proposals applied."""
    from curation import services
    from curation.models import Proposal
    from harvest.services import harvest_arxiv_files

    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    services.matching_run()
    for p in Proposal.objects.filter(status="pending")[:40]:
        services.proposal_apply(proposal=p, actor=None)


@schema.parametrize()
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
@pytest.mark.usefixtures("corpus")
def test_public_get_operations_conform(case):
    case.call_and_validate(checks=[not_a_server_error, response_schema_conformance])
