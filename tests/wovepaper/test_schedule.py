"""The periodic tasks beat runs: installed by ``schedule_ensure``, edited in admin."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django_celery_beat.models import PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler

from wovepaper.celery import app

pytestmark = pytest.mark.django_db


def schedule_of(name: str) -> tuple[str, str, str, bool]:
    task = PeriodicTask.objects.get(name=name)
    return task.task, task.crontab.hour, task.crontab.minute, task.enabled


def test_schedule_ensure_installs_harvests_matching_and_digest(capsys):
    call_command("schedule_ensure")
    assert "10 created, 0 reset, 0 kept" in capsys.readouterr().out
    assert schedule_of("harvest-arxiv-daily") == ("harvest.arxiv_oai", "2", "0", True)
    assert schedule_of("matching-all-blocks") == (
        "curation.matching_run",
        "3",
        "15",
        True,
    )
    assert schedule_of("digest-daily") == ("wovepaper.digest_send", "6", "0", True)
    # What the broker refused during a Redis outage is sent again every minute.
    assert schedule_of("outbox-flush") == ("wovepaper.outbox_flush", "*", "*", True)
    # Whole-source harvests wait for an operator's filter.
    assert schedule_of("harvest-crossref-daily") == (
        "harvest.crossref",
        "2",
        "30",
        False,
    )
    assert schedule_of("harvest-s2-daily")[3] is False
    assert schedule_of("harvest-openalex-authors-daily")[:1] == (
        "harvest.openalex_authors",
    )
    assert schedule_of("harvest-s2-authors-daily")[3] is False
    app.loader.import_default_modules()  # what a worker does when it starts
    for task in PeriodicTask.objects.all():
        assert task.task in app.tasks
        assert task.crontab.timezone.key == "UTC"


def test_an_operators_change_survives_and_reset_restores_the_default(capsys):
    call_command("schedule_ensure")
    task = PeriodicTask.objects.get(name="harvest-arxiv-daily")
    task.enabled = False
    task.save()
    call_command("schedule_ensure")
    assert "0 created, 0 reset, 10 kept" in capsys.readouterr().out
    assert schedule_of("harvest-arxiv-daily")[3] is False
    call_command("schedule_ensure", "--reset")
    assert schedule_of("harvest-arxiv-daily")[3] is True
    assert PeriodicTask.objects.count() == 10


def test_beat_reads_the_tables_not_a_file():
    call_command("schedule_ensure")
    assert app.conf.beat_scheduler == (
        "django_celery_beat.schedulers:DatabaseScheduler"
    )
    entry = DatabaseScheduler.Entry(
        PeriodicTask.objects.get(name="harvest-arxiv-daily"), app=app
    )
    assert entry.task == "harvest.arxiv_oai"
    assert entry.schedule.hour == {2}
    assert entry.schedule.minute == {0}
