"""gunicorn settings (``gunicorn -c gunicorn.conf.py``); the environment overrides.

Workers: gunicorn's docs ("Design: How many workers?") give (2 x cores) + 1 sync
workers as a starting point, to be tuned by load. A page here waits on
PostgreSQL about a third of its time and computes the rest, so 1.5 workers a
core keep the cores busy (:func:`default_workers`) and more only queue on them:
on 2 cores at 100 req/s (bench/pages.py, PostgreSQL on the same host),
never-seen searches' p99 was 50-60 ms with 3 workers against 74-131 ms with 5.
Set ``WEB_CONCURRENCY`` higher where PostgreSQL is far away and pages wait
longer on it.
"""

from __future__ import annotations

import multiprocessing
import os


def default_workers(cores: int | None = None) -> int:
    """Sync workers for ``cores`` CPUs (this machine's by default): 1.5 a core,
    at least 2 (see the module docstring)."""
    cores = cores or multiprocessing.cpu_count()
    return max(2, round(cores * 1.5))


wsgi_app = "wovepaper.wsgi:application"
bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", str(default_workers())))
# A request over 30 s is stuck (the slowest page measured takes ~0.2 s cold):
# the worker is replaced rather than left holding a connection.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 30
# Recycle workers now and then so a slow leak in any library cannot grow forever.
# Not often: a new worker starts cold (imports, its first search loads the
# embedding model), and at 100 req/s on 3 workers 5,000 requests came every
# 150 s, each replacement stalling pages up to 1.8 s (bench/soak.py's p99 of
# each 30 s).
max_requests = 20000
max_requests_jitter = 2000


def post_worker_init(worker) -> None:
    """Load the embedding model before the worker takes its first request,
    so no search waits for it (about 0.5 s); a missing model is left to the
    search, which says so."""
    from django.core.exceptions import ImproperlyConfigured

    from wovepaper.embeddings import encoder

    try:
        encoder()
    except ImproperlyConfigured as exc:
        worker.log.warning("embedding model not loaded: %s", exc)


# One line a request to stdout; GUNICORN_ACCESS_LOG="" turns it off (the
# benchmarks do, so writing the log does not count in their figures).
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None
errorlog = "-"
# A web worker embeds only short search texts, one request at a time: one
# onnxruntime thread each (wovepaper.embeddings). With every worker using
# every core, three workers' threads would fight over two cores.
os.environ.setdefault("EMBEDDING_THREADS", "1")
