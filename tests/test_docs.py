"""The README and docs/ name only what exists and works: every ``manage.py``
command (each run by a test), every ``bench/`` script (each started), every
``make`` target (``make demo`` run end to end) and every link to a file; and
the README stays short (issue 52: a newcomer reads it in five minutes; every
command in docs/ is run by a test or by .ci/run, which runs ``make test``).
``docs/api.md``'s exchanges are replayed by ``tests/api/test_api_guide.py``."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
import redis
from django.conf import settings
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_command_script_target_and_link_a_page_names_exists(page: Path):
    text = _text(page)
    commands = set(get_commands())
    for name in re.findall(r"manage\.py ([a-z_]+)", text):
        assert name in commands, f"{page.name} names manage.py {name}"
    for script in re.findall(r"\bbench/([a-z_]+\.py)", text):
        assert (ROOT / "bench" / script).is_file(), f"{page.name} names bench/{script}"
    makefile = _text(ROOT / "Makefile")
    for target in re.findall(r"`make ([a-z][a-z-]*)", text):
        assert re.search(rf"^{target}:", makefile, re.M), f"{page.name}: make {target}"
    for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (page.parent / link).exists(), f"{page.name} links {link}"


def test_the_readme_is_short_and_leads_to_every_guide():
    readme = _text(ROOT / "README.md")
    assert len(readme.splitlines()) <= 150
    for guide in sorted((ROOT / "docs").glob("*.md")):
        assert f"(docs/{guide.name})" in readme, guide.name
    # .ci/run runs the README's test command.
    assert "make test" in readme
    assert re.search(r"^make test\b", _text(ROOT / ".ci" / "run"), re.M)


def _named(pattern: str) -> list[str]:
    return sorted({m for page in PAGES for m in re.findall(pattern, _text(page))})


def _env(**extra: str) -> dict[str, str]:
    """This process's environment without the suite's database, cache and
    settings: what a newcomer's shell has."""
    left_out = {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    env = {k: v for k, v in os.environ.items() if k not in left_out}
    env["WOVEPAPER_DATA_DIR"] = str(settings.WOVEPAPER_DATA_DIR)
    return env | extra


def _started(script: str) -> tuple[str, int, str]:
    done = subprocess.run(  # noqa: S603 - our own scripts, fixed arguments
        [sys.executable, str(ROOT / "bench" / script), "--help"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return script, done.returncode, done.stdout + done.stderr


def test_every_bench_script_a_page_names_starts():
    # A benchmark's run takes minutes to hours; its --help imports all it
    # times (a module moved away breaks it there), says what it measures,
    # and lists the options a page may name with it.
    scripts = _named(r"\bbench/([a-z_]+\.py)")
    assert len(scripts) >= 10
    options: dict[str, set[str]] = {}
    for page in PAGES:
        for script, rest in re.findall(
            r"\bbench/([a-z_]+\.py)((?:[ \t]+\[?--[a-z][a-z0-9-]*[^\]\n`]*\]?)*)",
            _text(page),
        ):
            options.setdefault(script, set()).update(
                re.findall(r"--[a-z][a-z0-9-]*", rest)
            )
    assert options["faults.py"] >= {"--rate", "--json"}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for script, code, said in pool.map(_started, scripts):
            assert code == 0, (script, said[-1500:])
            assert "usage:" in said, (script, said[-1500:])
            for option in options.get(script, ()):
                assert option in said, (script, option)


# Commands of Django and django-axes, tested by their own projects.
NOT_OURS = {"createsuperuser", "shell", "axes_reset_username", "runserver"}


def test_every_manage_command_a_page_names_is_run_by_a_test():
    tests = "".join(p.read_text(encoding="utf-8") for p in ROOT.glob("tests/**/*.py"))
    for name in _named(r"manage\.py ([a-z_]+)"):
        if name in NOT_OURS:
            continue
        run = rf"(call_command|_manage)\([^)]*\"{name}\""
        assert re.search(run, tests), f"no test runs manage.py {name}"


def test_make_demo_runs_on_a_fresh_embedded_setup(tmp_path):
    """The README's first command, end to end but for serving: SQLite in a
    fresh folder, Celery tasks eager, no server; every bundled arXiv record."""
    done = subprocess.run(  # noqa: S603, S607 - make, fixed arguments
        ["make", "demo", "NO_SERVE=1"],
        cwd=ROOT,
        env=_env(WOVEPAPER_VAR_DIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout
    assert "1273 papers created" in said
    assert "demo curator: curator / curator-demo" in said
    live = int(re.search(r"researchers:\s+(\d+)", said).group(1))
    assert live >= 5000, said[-3000:]

    # And what it serves: `make serve` is the demo's last step on its own.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        host = f"127.0.0.1:{probe.getsockname()[1]}"
    server = subprocess.Popen(  # noqa: S603, S607 - make, fixed arguments
        ["make", "serve", f"HOST={host}"],
        cwd=ROOT,
        env=_env(WOVEPAPER_VAR_DIR=str(tmp_path)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        paper = _first_answer(f"http://{host}/api/papers/0704.0033/?fields=title")
        assert "discrete dipole approximation" in paper
        assert "Maxim A. Yurkin" in _first_answer(f"http://{host}/papers/0704.0033")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def _first_answer(url: str, seconds: float = 60) -> str:
    """The body of ``url`` once the server answers it (within ``seconds``)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310
                return answer.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_every_screenshot_in_docs_is_one_a_browser_test_takes():
    # docs/img/ is refreshed from the browser tests (make docs-screenshots).
    taken = "".join(
        p.read_text(encoding="utf-8") for p in ROOT.glob("tests/browser/*.py")
    )
    shown = _named(r"\]\((img/[^)]+\.png)\)")
    assert shown
    for image in shown:
        assert f'"{Path(image).name}"' in taken, image
    makefile = _text(ROOT / "Makefile")
    assert all(Path(image).name in makefile for image in shown)


@pytest.fixture
def scratch_database():
    """A PostgreSQL database of its own, dropped afterwards: the URL."""
    from django.db import connection

    params = connection.get_connection_params()
    host, port = params.get("host") or "127.0.0.1", params.get("port") or 5432
    name = f"wovepaper_make_run_{os.getpid()}"

    def admin(sql: str) -> None:
        with psycopg.connect(
            dbname="postgres", host=host, port=port, user="postgres", autocommit=True
        ) as session:
            session.execute(sql)

    admin(f'DROP DATABASE IF EXISTS "{name}"')
    admin(f'CREATE DATABASE "{name}"')
    yield f"postgres://postgres@{host}:{port}/{name}"
    admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_make_run_serves_with_postgresql_redis_a_worker_and_beat(
    tmp_path, scratch_database
):
    """docs/operations.md's production-like command: migrations on a fresh
    PostgreSQL database, static files, the schedule, then gunicorn, a worker
    and beat; /healthz says the database and the broker answer."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        host = f"127.0.0.1:{probe.getsockname()[1]}"
    broker = "redis://127.0.0.1:6379/15"  # the suite's own, emptied by its tests
    run = subprocess.Popen(  # noqa: S603, S607 - make, fixed arguments
        ["make", "run", f"HOST={host}"],
        cwd=ROOT,
        env=_env(
            WOVEPAPER_VAR_DIR=str(tmp_path),
            DATABASE_URL=scratch_database,
            REDIS_URL=broker,
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        health = json.loads(_first_answer(f"http://{host}/healthz", seconds=240))
        assert health["database"] == "ok"
        assert health["broker"] == "ok"
        assert "wovepaper" in _first_answer(f"http://{host}/")
    finally:
        os.killpg(run.pid, signal.SIGTERM)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait(timeout=30)
        redis.Redis.from_url(broker).flushdb()
