"""gunicorn settings (``gunicorn -c gunicorn.conf.py``); the environment overrides.

Source of the defaults: gunicorn docs, "Design: How many workers?" ((2 x cores) + 1
sync workers; a page waits on PostgreSQL about a third of its time, bench/pages.py).
"""

from __future__ import annotations

import multiprocessing
import os

wsgi_app = "wovepaper.wsgi:application"
bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(
    os.environ.get("WEB_CONCURRENCY", str(multiprocessing.cpu_count() * 2 + 1))
)
# A request over 30 s is stuck (the slowest page measured takes ~0.2 s cold):
# the worker is replaced rather than left holding a connection.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 30
# Recycle workers now and then so a slow leak in any library cannot grow forever.
max_requests = 5000
max_requests_jitter = 500
# One line a request to stdout; GUNICORN_ACCESS_LOG="" turns it off (the
# benchmarks do, so writing the log does not count in their figures).
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None
errorlog = "-"
