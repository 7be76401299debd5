"""Celery tasks, run eagerly: harvest queues matching; matching runs are locked."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from curation.models import Proposal
from curation.services import matching_lock_key
from curation.tasks import matching_run_task
from harvest.tasks import harvest_arxiv_files_task
from tests.factories import AuthorshipFactory
from wovepaper.celery import app

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


def test_matching_task_skips_while_another_run_holds_the_lock():
    AuthorshipFactory()
    key = matching_lock_key(None)
    cache.add(key, "1", timeout=60)
    try:
        assert matching_run_task.delay().get() == {"skipped": 1}
        assert not Proposal.objects.exists()
    finally:
        cache.delete(key)
    assert matching_run_task.delay().get()["proposed_new"] == 1


def test_beat_schedule_runs_full_matching_nightly():
    entry = app.conf.beat_schedule["matching-all-blocks"]
    assert entry["task"] == "curation.matching_run"
    assert entry["task"] in app.tasks
    assert entry["schedule"].hour == {3}
