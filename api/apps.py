from __future__ import annotations

from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The read-only public REST API (no models, no domain logic)."""

    name = "api"
