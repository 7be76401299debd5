from __future__ import annotations

from django.apps import AppConfig


class CurationConfig(AppConfig):
    """Names, matching, proposals, constraints, the curation audit log and admin."""

    name = "curation"
