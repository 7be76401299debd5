"""Operations settings: task queues and JSON log lines."""

from __future__ import annotations

import io
import json
import logging
from logging.config import dictConfig

import pytest
from django.conf import settings

from wovepaper.celery import app


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
