"""Operations settings: task queues and JSON log lines."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from logging.config import dictConfig

import pytest
from django.conf import settings

from wovepaper.celery import app
from wovepaper.settings.base import env_int


@pytest.mark.parametrize(
    ("task", "queue"),
    [
        ("harvest.arxiv_files", "harvest"),
        ("curation.matching_run", "matching"),
        ("curation.notify_followers", "notifications"),
        ("wovepaper.digest_send", "notifications"),
    ],
)
def test_each_task_goes_to_its_queue(task, queue):
    app.loader.import_default_modules()  # what a worker does at start
    assert task in app.tasks  # the name is a real task
    route = app.amqp.router.route({}, task, args=(), kwargs={})
    assert route["queue"].name == queue


def test_json_log_format_writes_one_object_a_line_with_extra_fields(monkeypatch):
    config = json.loads(json.dumps(settings.LOGGING))
    config["handlers"]["console"]["formatter"] = "json"
    stream = io.StringIO()
    config["handlers"]["console"]["stream"] = stream
    config["root"]["level"] = "INFO"
    dictConfig(config)
    try:
        # A logger no other test touched (one configured elsewhere may be
        # disabled or have its own level).
        logging.getLogger("wovepaper.test.json_lines").info(
            "record refused", extra={"harvest_run": 7, "record": "arXiv:2101.00001"}
        )
    finally:
        dictConfig(settings.LOGGING)
    (line,) = stream.getvalue().splitlines()
    entry = json.loads(line)
    assert entry["message"] == "record refused"
    assert (entry["level"], entry["name"]) == ("INFO", "wovepaper.test.json_lines")
    assert (entry["harvest_run"], entry["record"]) == (7, "arXiv:2101.00001")
    assert "time" in entry


def test_a_number_setting_that_is_not_a_number_names_the_variable():
    """Every command loads the settings: a bad value stops it with the variable
    named, not a bare ValueError."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "wovepaper.settings.base",
        "HARVEST_PREPARE_WORKERS": "2.5",
    }
    out = subprocess.run(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode != 0
    assert (
        "ImproperlyConfigured: HARVEST_PREPARE_WORKERS must be a whole number, "
        "not '2.5'" in out.stderr
    )
    assert env_int("WOVEPAPER_TEST_UNSET_NUMBER", 7) == 7


class _Worker:
    """What gunicorn's post_worker_init hook is given: a worker with a log."""

    def __init__(self) -> None:
        self.log = logging.getLogger("gunicorn.error")


def _post_worker_init():
    from pathlib import Path
    from runpy import run_path

    return run_path(str(Path(settings.BASE_DIR) / "gunicorn.conf.py"))[
        "post_worker_init"
    ]


def test_a_new_web_worker_loads_the_embedding_model_before_serving():
    from wovepaper import embeddings

    embeddings._encoder.cache_clear()
    _post_worker_init()(_Worker())
    assert embeddings._encoder.cache_info().currsize == 1


def test_a_web_worker_without_the_model_starts_and_says_so(settings, tmp_path, caplog):
    settings.EMBEDDING_MODEL_DIR = tmp_path
    with caplog.at_level(logging.WARNING, logger="gunicorn.error"):
        _post_worker_init()(_Worker())
    assert "embedding model not loaded" in caplog.text
