"""Celery tasks, run eagerly: harvest queues matching; matching runs are locked."""

from __future__ import annotations

import pytest
from celery.exceptions import Retry

from curation.exceptions import MatchingBusy
from curation.matching_run.fanout import MATCHING_LOCK_KEY
from curation.models import Proposal
from curation.services import matching_run_exclusive
from curation.tasks import matching_run_task
from harvest.tasks import harvest_arxiv_files_task
from tests.factories import AuthorshipFactory
from tests.sessions import close_and_wait, second_session

pytestmark = pytest.mark.django_db


def test_harvest_task_queues_matching_of_the_blocks_it_touched(
    arxiv_dir, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        counts = harvest_arxiv_files_task.delay(
            str(arxiv_dir / "hepcrawl_oai" / "arxiv-single.xml")
        ).get()
    assert counts["blocks_queued"] == 1
    assert counts["matching_task"]
    proposal = Proposal.objects.get()
    assert proposal.block_key == "sergyeyev a"


def test_harvest_task_without_matching_queues_nothing(arxiv_dir):
    counts = harvest_arxiv_files_task.delay(
        str(arxiv_dir / "hepcrawl_oai" / "arxiv-single.xml"), then_match=False
    ).get()
    assert counts["blocks_queued"] == 0
    assert not Proposal.objects.exists()


@pytest.fixture
def other_session_lock(db):
    """Hold the matching lock from a second PostgreSQL session, as another worker."""
    other = second_session(autocommit=True)
    other.execute("SELECT pg_advisory_lock(%s)", [MATCHING_LOCK_KEY])
    yield other
    if not other.closed:
        other.close()


def test_matching_waits_while_another_session_holds_the_lock(other_session_lock):
    AuthorshipFactory()

    with pytest.raises(MatchingBusy, match="another matching run holds"):
        matching_run_exclusive()
    # The task asks to be retried later (eager here, so the Retry surfaces).
    with pytest.raises(Retry, match="Retry in 30s: MatchingBusy"):
        matching_run_task.apply()
    assert not Proposal.objects.exists()

    other_session_lock.execute("SELECT pg_advisory_unlock(%s)", [MATCHING_LOCK_KEY])
    assert matching_run_task.delay().get()["proposed_new"] == 1


def test_matching_lock_goes_with_the_connection_that_held_it(other_session_lock):
    AuthorshipFactory()
    close_and_wait(other_session_lock)  # a killed worker's connection ends so

    assert matching_run_exclusive()["proposed_new"] == 1


def test_a_harvests_matching_proposes_no_merges_the_full_run_does(
    arxiv_dir, django_capture_on_commit_callbacks
):
    from tests.factories import ResearcherFactory

    # Two researchers of one name, same field, each with a paper: a merge the
    # nightly full run proposes.
    for _ in range(2):
        researcher = ResearcherFactory(display_name="Alex Sergyeyev")
        researcher.block_key = "sergyeyev a"
        researcher.save()
        AuthorshipFactory(
            given_name="Alex",
            family_name="Sergyeyev",
            researcher=researcher,
            orcid="0000-0002-1825-0097",
        )
    with django_capture_on_commit_callbacks(execute=True):
        counts = harvest_arxiv_files_task.delay(
            str(arxiv_dir / "hepcrawl_oai" / "arxiv-single.xml")
        ).get()
    assert counts["blocks_queued"] == 1
    assert Proposal.objects.filter(block_key="sergyeyev a").exists()
    assert not Proposal.objects.filter(kind="merge").exists()

    matching_run_task.delay().get()  # the nightly run over every block
    assert Proposal.objects.filter(kind="merge").count() == 1
