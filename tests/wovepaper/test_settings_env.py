"""Settings read from the environment: a value that is not one is named."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from wovepaper.settings.base import env_bool


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("1", True),
        ("On", True),
        (" yes ", True),
        ("0", False),
        ("OFF", False),
        ("", None),
    ],
)
def test_a_switch_reads_the_usual_words(monkeypatch, value, read):
    monkeypatch.setenv("WOVEPAPER_SWITCH", value)
    assert env_bool("WOVEPAPER_SWITCH", None) is read


@pytest.mark.parametrize("typo", ["2", "y", "enabled", "ture"])
def test_a_typo_in_a_switch_is_named_not_read_as_off(monkeypatch, typo):
    monkeypatch.setenv("MATCHING_TEXT_EVIDENCE", typo)
    with pytest.raises(ImproperlyConfigured, match=f"MATCHING_TEXT_EVIDENCE.*{typo!r}"):
        env_bool("MATCHING_TEXT_EVIDENCE", True)
