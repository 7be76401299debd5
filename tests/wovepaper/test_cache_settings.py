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
