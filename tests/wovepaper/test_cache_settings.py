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


@pytest.mark.parametrize("rate", ["300/monthly", "300/fortnight", "abc", "0/minute"])
def test_a_rate_that_is_not_one_stops_the_settings(rate):
    answer = _setting("1", PAGE_ANON_RATE=rate)
    assert answer.returncode != 0
    assert "PAGE_ANON_RATE must be a rate like 300/minute" in answer.stderr


def test_the_lockout_and_the_rate_limits_read_the_client_alike(rf, settings):
    from axes.helpers import get_client_ip_address

    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    request = rf.post(
        "/accounts/login/",
        HTTP_X_FORWARDED_FOR="7.7.7.1, 5.5.5.5",
        REMOTE_ADDR="10.0.0.9",
    )
    assert get_client_ip_address(request) == "5.5.5.5"
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 0}
    assert get_client_ip_address(request) == "10.0.0.9"
