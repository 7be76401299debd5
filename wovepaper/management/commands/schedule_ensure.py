"""``manage.py schedule_ensure [--reset]``: install the periodic tasks for beat."""

from __future__ import annotations

import json

from celery.schedules import crontab
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django_celery_beat.models import CrontabSchedule, PeriodicTask


def _crontab_row(schedule: crontab) -> CrontabSchedule:
    """The CrontabSchedule row of a Celery crontab (UTC), created if missing."""
    row, _ = CrontabSchedule.objects.get_or_create(
        minute=str(schedule._orig_minute),
        hour=str(schedule._orig_hour),
        day_of_week=str(schedule._orig_day_of_week),
        day_of_month=str(schedule._orig_day_of_month),
        month_of_year=str(schedule._orig_month_of_year),
        timezone="UTC",
    )
    return row


class Command(BaseCommand):
    """Write ``settings.PERIODIC_TASKS`` into django-celery-beat's tables.

    A task already there is left as it is (an operator may have changed its
    schedule or disabled it in the admin), unless ``--reset`` restores the
    defaults. Idempotent: running it twice changes nothing.
    """

    help = "Install the periodic tasks (harvest, matching, digest) for celery beat"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reset",
            action="store_true",
            help="restore every task's default schedule, arguments and state",
        )

    @transaction.atomic
    def handle(self, *args, **options) -> None:
        created = reset = kept = 0
        for name, entry in settings.PERIODIC_TASKS.items():
            schedule = entry["schedule"]
            if not isinstance(schedule, crontab):
                raise CommandError(f"{name}: only crontab schedules are supported")
            fields = {
                "task": entry["task"],
                "crontab": _crontab_row(schedule),
                "interval": None,
                "kwargs": json.dumps(entry.get("kwargs", {})),
                "enabled": entry.get("enabled", True),
            }
            task = PeriodicTask.objects.filter(name=name).first()
            if task is None:
                PeriodicTask.objects.create(name=name, **fields)
                created += 1
            elif options["reset"]:
                for key, value in fields.items():
                    setattr(task, key, value)
                task.save()
                reset += 1
            else:
                kept += 1
        self.stdout.write(
            f"periodic tasks: {created} created, {reset} reset, {kept} kept as they are"
        )
