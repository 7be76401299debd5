from __future__ import annotations

from django.apps import AppConfig


class HarvestConfig(AppConfig):
    """Sources, parsers, idempotent upserts, HarvestRun and RawRecord."""

    name = "harvest"
