from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings


def pytest_sessionstart(session) -> None:
    """Stop at once, saying what to set, when the shared real data is not there."""
    data = Path(settings.WOVEPAPER_DATA_DIR)
    if not (data / "arxiv").is_dir():
        pytest.exit(
            f"the real records are missing: {data}/arxiv is not a folder. The tests "
            "read ../shared/data beside the checkout; set WOVEPAPER_DATA_DIR to "
            "the shared data folder.",
            returncode=4,
        )


@pytest.fixture
def arxiv_dir() -> Path:
    """The real recorded arXiv files (read in place, never copied)."""
    path = Path(settings.WOVEPAPER_DATA_DIR) / "arxiv"
    assert path.is_dir(), f"shared data missing: {path}"
    return path


@pytest.fixture
def curator(db):
    """A staff user in the curators group, as the demo creates one."""
    from curation.services import curator_ensure

    return curator_ensure(username="cura", password="pw-cura")


@pytest.fixture(autouse=True)
def _empty_cache():
    """Every test starts with an empty cache, no remembered name rarities and
    no learned pacing of a host.

    Cached renderings and search heads are keyed by ids and texts that repeat
    from test to test while the rows behind them differ (each test rolls back);
    a local server's port may come back in a later test.
    """
    from django.core.cache import cache

    from curation.selectors import forget_given_rarities
    from harvest.sources.polite_http import intervals_forget

    cache.clear()
    forget_given_rarities()
    intervals_forget()


@pytest.fixture
def server():
    """A threaded HTTP server on 127.0.0.1 (pytest-httpserver) standing in for a source.

    Threaded, so a client that timed out and asks again is served while an earlier
    answer still hangs.
    """
    from pytest_httpserver import HTTPServer

    http = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    http.start()
    yield http
    http.clear()
    if http.is_running():
        http.stop()


@pytest.fixture
def default_weights(settings):
    """Matching scores with the hand-set default weights, not the shipped model.

    For tests whose inputs were built around those weights' scores: a mechanism
    (a rule, a message, a veto) is under test there, not the model. Every
    other test matches with the shipped model, as a fresh deployment does.
    """
    from curation.selectors import forget_given_rarities

    settings.CURATION_SHIPPED_MODEL = ""
    forget_given_rarities()


@pytest.fixture
def redis_cache(tmp_path, settings, monkeypatch):
    """The cache on a Redis server of the test's own (127.0.0.1:6392), as
    production configures it (:class:`wovepaper.failsafe_cache.FailOpenRedisCache`),
    which the test may kill and restart (:class:`tests.redis_server.OwnRedis`);
    after a failed call the cache is bypassed for 0.2 s (5 s in production),
    so a restart shows at once."""
    from tests.redis_server import OwnRedis
    from wovepaper import failsafe_cache

    server = OwnRedis(tmp_path, port=6392)
    server.start()
    monkeypatch.setattr(failsafe_cache, "RETRY_SECONDS", 0.2)
    settings.CACHES = {
        "default": {
            "BACKEND": "wovepaper.failsafe_cache.FailOpenRedisCache",
            "LOCATION": server.url,
            "KEY_PREFIX": "test",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    yield server
    server.crash()


# The training pairs of the bundled labelled sets, read once a test session:
# evaluate_matching's shipped figure and train_matcher read every set again on
# each call (about 30 s), and the sets in WOVEPAPER_DATA_DIR never change.
_SET_PAIRS: dict = {}


@pytest.fixture(autouse=True)
def _bundled_set_pairs_read_once(monkeypatch):
    """:func:`curation.matching.training.set_pairs` of a folder of the shared
    data, with no embedder or the product's own (``embed_cached``), computed
    once and handed out as a copy; any other folder or embedder (a test's own
    files, a counting fake) is read as always."""
    import copy

    from curation.matching import training
    from wovepaper import embeddings

    data = Path(settings.WOVEPAPER_DATA_DIR).resolve()
    real = training.set_pairs

    def once(folder, *, embed=None):
        path = Path(folder).resolve()
        if embed not in (None, embeddings.embed_cached) or not path.is_relative_to(
            data
        ):
            return real(folder, embed=embed)
        key = (str(path), embed is None, embeddings.model_name())
        if key not in _SET_PAIRS:
            _SET_PAIRS[key] = real(folder, embed=embed)
        return copy.deepcopy(_SET_PAIRS[key])

    monkeypatch.setattr(training, "set_pairs", once)
