"""Django's system checks pass (admin, models, URLs): migrate and runserver need it."""

from __future__ import annotations

import io

from django.core.management import call_command


def test_system_checks_pass():
    out = io.StringIO()
    call_command("check", stdout=out)
    assert "System check identified no issues" in out.getvalue()
