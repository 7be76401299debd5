"""The Celery application; configuration comes from Django settings (``CELERY_*``)."""

from __future__ import annotations

import os

from celery import Celery
from django.db import InterfaceError, OperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")

app = Celery("wovepaper")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Errors of the database connection itself (dropped, restarted, failed over). Tasks
# retry on them with backoff (``autoretry_for``): the retry carries the same task
# id, so a harvest resumes its run from the cursor, and matching is idempotent. A
# bad record is no such error: it is recorded on its RawRecord and the run goes on.
TRANSIENT = (OperationalError, InterfaceError)
