"""``manage.py create_curator`` makes a login that may decide proposals."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def test_create_curator_makes_a_staff_member_of_curators(monkeypatch):
    monkeypatch.setenv("CURATOR_PASSWORD", "long-enough-pw")
    out = io.StringIO()
    call_command("create_curator", "ada", email="ada@example.org", stdout=out)
    user = get_user_model().objects.get(username="ada")
    assert user.is_staff
    assert not user.is_superuser
    assert user.groups.filter(name="curators").exists()
    assert user.has_perm("curation.decide_proposal")
    assert user.check_password("long-enough-pw")
    assert "curator ada is ready" in out.getvalue()


def test_create_curator_refuses_a_short_password(monkeypatch):
    monkeypatch.setenv("CURATOR_PASSWORD", "short")
    with pytest.raises(CommandError, match="at least 8 characters"):
        call_command("create_curator", "bob", stdout=io.StringIO())
    assert not get_user_model().objects.filter(username="bob").exists()


def test_create_curator_without_password_or_terminal_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("CURATOR_PASSWORD", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO())
    with pytest.raises(CommandError, match="set CURATOR_PASSWORD"):
        call_command("create_curator", "eve", stdout=io.StringIO())
