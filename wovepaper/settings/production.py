"""Production settings: PostgreSQL and Redis from the environment, secure defaults."""

from __future__ import annotations

import os

from .base import *  # noqa: F403
from .base import env_bool

DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = os.environ["SECRET_KEY"]
if "DATABASE_URL" not in os.environ or "REDIS_URL" not in os.environ:
    raise RuntimeError("production settings need DATABASE_URL and REDIS_URL")
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
# Persistent database connections (a new PostgreSQL connection costs more than an
# API request), checked before reuse so a restarted server costs one error-free
# reconnect. Source: Django docs, "Databases: persistent connections".
DATABASES["default"]["CONN_MAX_AGE"] = int(  # noqa: F405
    os.environ.get("DB_CONN_MAX_AGE", "60")
)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # noqa: F405
