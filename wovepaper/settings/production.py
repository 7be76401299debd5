"""Production settings: PostgreSQL and Redis from the environment, secure defaults."""

from __future__ import annotations

import os

from .base import *  # noqa: F403
from .base import env_bool, env_int

DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = os.environ["SECRET_KEY"]
if "DATABASE_URL" not in os.environ or "REDIS_URL" not in os.environ:
    raise RuntimeError("production settings need DATABASE_URL and REDIS_URL")
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# HTTPS only: plain HTTP is redirected (except the health check, which load
# balancers call over HTTP) and browsers are told to stay on HTTPS for a year.
# Source: Django docs, "Deployment checklist" (security.W004, W008).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
# Every subdomain must be HTTPS too before these stay on (set them to 0 if not).
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool(
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True
)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
# Persistent database connections (a new PostgreSQL connection costs more than an
# API request), checked before reuse so a restarted server costs one error-free
# reconnect. Source: Django docs, "Databases: persistent connections".
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DB_CONN_MAX_AGE", 60)  # noqa: F405
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # noqa: F405
