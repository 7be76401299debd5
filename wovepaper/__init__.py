"""wovepaper: the project and its core app (scholarly models and public pages)."""

from .celery import app as celery_app

__all__ = ["celery_app"]
