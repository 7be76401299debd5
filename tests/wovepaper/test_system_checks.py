"""Django's system checks pass (admin, models, URLs): migrate and runserver need it."""

from __future__ import annotations

import io

from django.core.management import call_command


def test_system_checks_pass():
    out = io.StringIO()
    call_command("check", stdout=out)
    assert "System check identified no issues" in out.getvalue()


def test_production_settings_pass_the_deployment_checks():
    import os
    import subprocess
    import sys
    from pathlib import Path

    from django.conf import settings

    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "wovepaper.settings.production",
        "SECRET_KEY": "a-deploy-check-key-" + "x" * 50,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/x",
        "REDIS_URL": "redis://127.0.0.1:6379/15",
    }
    done = subprocess.run(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout
