from __future__ import annotations

from django.apps import AppConfig


class WovepaperConfig(AppConfig):
    """The core app: Paper, Authorship, Researcher, Institution and the public pages."""

    name = "wovepaper"
    verbose_name = "Scholarly records"
