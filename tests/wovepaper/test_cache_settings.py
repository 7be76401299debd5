"""Two sites sharing one Redis never read each other's cache entries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _prefix(**env: str) -> str:
    code = (
        "import wovepaper.settings.base as s; "
        "print(s.CACHES['default'].get('KEY_PREFIX', ''))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "REDIS_URL": "redis://127.0.0.1:6379/0", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


@pytest.mark.parametrize(
    ("env", "prefix"),
    [
        ({"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/site_a"}, "site_a"),
        ({"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/site_b"}, "site_b"),
        (
            {
                "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/site_a",
                "CACHE_KEY_PREFIX": "staging",
            },
            "staging",
        ),
    ],
)
def test_redis_cache_keys_carry_the_database_name(env, prefix):
    assert _prefix(**env) == prefix


def _setting(expression: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            f"import wovepaper.settings.base as s; print({expression})",
        ],
        cwd=ROOT,
        env={**os.environ, "REDIS_URL": "redis://127.0.0.1:6379/0", **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_production_cache_fails_open_with_bounded_waits():
    backend = _setting("s.CACHES['default']['BACKEND']")
    assert backend.stdout.strip() == "wovepaper.failsafe_cache.FailOpenRedisCache"
    waits = _setting("s.CACHES['default']['OPTIONS']", CACHE_SOCKET_TIMEOUT="0.25")
    assert waits.stdout.strip() == (
        "{'socket_connect_timeout': 0.25, 'socket_timeout': 0.25}"
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CACHE_SOCKET_TIMEOUT": "soon"}, "CACHE_SOCKET_TIMEOUT must be a positive"),
        ({"CACHE_SOCKET_TIMEOUT": "0"}, "CACHE_SOCKET_TIMEOUT must be a positive"),
        ({"PROXY_COUNT": "-1"}, "PROXY_COUNT must be 0 or more"),
    ],
)
def test_bad_values_are_refused_naming_the_variable(env, message):
    answer = _setting("1", **env)
    assert answer.returncode != 0
    assert message in answer.stderr
