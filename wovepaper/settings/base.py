"""Settings shared by every environment; what varies comes from the environment.

Embedded default (nothing set): SQLite in ``var/wovepaper.sqlite3`` and Celery tasks run
eagerly in-process, so the demo needs no servers. Production and tests set
``DATABASE_URL`` (PostgreSQL via psycopg 3) and ``REDIS_URL`` (Celery broker and cache).
"""

from __future__ import annotations

import math
import os
import re
from datetime import timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean from the environment.

    Args:
        name: variable name.
        default: value when the variable is unset or empty.

    Returns:
        True for ``1/true/yes/on``, False for ``0/false/no/off`` (any case).

    Raises:
        ImproperlyConfigured: any other value (naming the variable): a typo
            ("ture", "enabled") would otherwise turn a feature off in silence.
    """
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(
        f"{name} must be 1, true, yes or on, or 0, false, no or off, not {value!r}"
    )


def env_int(name: str, default: int | None) -> int | None:
    """Read a whole number from the environment.

    Args:
        name: variable name.
        default: value when the variable is unset or empty.

    Returns:
        The number.

    Raises:
        ImproperlyConfigured: the value is not a whole number (naming the
            variable and the value, instead of a bare ``ValueError`` from every
            command).
    """
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(
            f"{name} must be a whole number, not {value!r}"
        ) from None


def env_seconds(name: str, default: float) -> float:
    """Read a duration in seconds (a positive, finite number) from the environment.

    Args:
        name: variable name.
        default: seconds when the variable is unset or empty.

    Returns:
        The seconds.

    Raises:
        ImproperlyConfigured: the value is not a positive finite number
            (naming the variable and the value).
    """
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ImproperlyConfigured(
            f"{name} must be a positive number of seconds, not {value!r}"
        )
    return seconds


_RATE_RE = re.compile(r"^[1-9][0-9]{0,8}/(s|sec|second|m|min|minute|h|hour|d|day)$")


def env_rate(name: str, default: str) -> str:
    """Read a rate limit, ``"<requests>/<second|minute|hour|day>"``, from the
    environment (DRF's spelling; ``s``, ``m``, ``h``, ``d`` too).

    Raises:
        ImproperlyConfigured: any other value, naming the variable: read per
            request, a bad one answered every page with 500, and DRF reads only
            the first letter of the period ("300/monthly" was 300 a minute).
    """
    value = os.environ.get(name, "").strip() or default
    if not _RATE_RE.match(value):
        raise ImproperlyConfigured(
            f"{name} must be a rate like 300/minute (second, minute, hour or day), "
            f"not {value!r}"
        )
    return value


DEBUG = env_bool("DEBUG", default=True)
SECRET_KEY = os.environ.get(
    "SECRET_KEY",
    "embedded-development-key-not-for-production",  # noqa: S105
)
ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(
        ","
    )
    if h.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sitemaps",
    "rest_framework",
    "rest_framework.authtoken",
    "corsheaders",
    "axes",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "csp",
    "wovepaper",
    "harvest",
    "curation",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "wovepaper.middleware.RejectNulBytesMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # After authentication: signed-in users count by account (PAGE_*_RATE below).
    "wovepaper.middleware.PageThrottleMiddleware",
    "wovepaper.middleware.AdminFilterRefusedMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it answers a locked-out login (see AXES_* below).
    "axes.middleware.AxesMiddleware",
]

# --- Content-Security-Policy (django-csp) --------------------------------------------
# Scripts, styles, images and fonts from this site only; no plugins, no framing,
# forms post here. Inline style attributes stay allowed (the admin's, Swagger
# UI's and the profile histogram's bars); inline scripts do not: the site has
# none (JSON-LD is data, which CSP does not govern), the curators' review keys
# are a file, and /api/docs/ is drf-spectacular's split view. Checked in the
# browser by tests/browser/test_content_security_policy.py. CSP_REPORT_ONLY=1
# sends it as Content-Security-Policy-Report-Only instead, to try a change.
_CSP = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
if env_bool("CSP_REPORT_ONLY", default=False):
    CONTENT_SECURITY_POLICY_REPORT_ONLY = _CSP
else:
    CONTENT_SECURITY_POLICY = _CSP

# --- Login throttling (django-axes) -------------------------------------------------
# Every login (the site's, the admin's, the API's token endpoint) goes through
# django-axes first: the LOGIN_FAILURE_LIMIT-th failed attempt for one username
# from one address locks that pair, which is then refused with 429 and Retry-After
# for LOGIN_COOLOFF_MINUTES (django-axes docs, "Configuration");
# ``manage.py axes_reset_username NAME`` lifts it early. Behind a proxy, set
# PROXY_COUNT (below) to the number of proxies in front so the client's address
# is read from X-Forwarded-For.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "wovepaper.views.accounts.locked_out"
# Proxies in front of the web processes (a load balancer, nginx): the client is
# then the address the nearest one saw, read from X-Forwarded-For; with none,
# the socket's address, and a client's own X-Forwarded-For is never believed
# (the login lockout, the API's and the pages' rate limits all read it so).
# LOGIN_PROXY_COUNT is its older name.
PROXY_COUNT = env_int("PROXY_COUNT", env_int("LOGIN_PROXY_COUNT", 0))
if PROXY_COUNT < 0:
    raise ImproperlyConfigured(f"PROXY_COUNT must be 0 or more, not {PROXY_COUNT}")
# One reading of the client for the lockout and the rate limits: DRF's, with
# NUM_PROXIES = PROXY_COUNT below (django-axes's own ipware reading ignored the
# proxies: behind one, a lockout was per username only, so anyone could lock a
# curator out).
AXES_CLIENT_IP_CALLABLE = "wovepaper.throttle.client_of"

ROOT_URLCONF = "wovepaper.urls"
WSGI_APPLICATION = "wovepaper.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

VAR_DIR = Path(os.environ.get("WOVEPAPER_VAR_DIR", BASE_DIR / "var"))
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'wovepaper.sqlite3'}"),
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
        # A kept connection is checked before a request reuses it: one the
        # server dropped (a restart, pg_terminate_backend) is opened again
        # instead of failing that request (bench/faults.py: 3 answers 500).
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded database: write-ahead log and one fsync per checkpoint rather
    # than per commit (https://sqlite.org/wal.html), writers take the lock at BEGIN.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
# The search mode asked when none is: hybrid (words and meaning), keyword or
# semantic (wovepaper.semantic.default_mode). A small machine facing many
# never-seen searches may choose keyword (bench/pages.py).
SEARCH_DEFAULT_MODE = os.environ.get("SEARCH_DEFAULT_MODE", "hybrid")
# HNSW candidate list of a semantic search (pgvector's hnsw.ef_search; its default
# is 40). Larger finds more of the exact nearest papers and costs more.
SEMANTIC_EF_SEARCH = env_int("SEMANTIC_EF_SEARCH", 100)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # pgvector's search parameters for every session, in the connection's
    # startup packet (libpq "options"): no statement a search. Every semantic
    # search filters (hidden papers at least), so the index scan goes on until
    # enough rows pass the filter (pgvector 0.8 "iterative index scans").
    # PostgreSQL keeps them as placeholders until the extension loads.
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    # Added to what DATABASE_URL's own "?options=" asks, never in its place.
    _options["options"] = " ".join(
        part
        for part in (
            _options.get("options", ""),
            f"-c hnsw.ef_search={SEMANTIC_EF_SEARCH}",
            "-c hnsw.iterative_scan=relaxed_order",
            # PostgreSQL's JIT compiles a plan whose estimated cost passes
            # jit_above_cost, and a web query's estimate can (a correlated
            # subquery a row): the curators' proposal search spent 487 of its
            # 542 ms compiling (bench/admin_search.py). DATABASE_JIT=on gives
            # it back, for a server that runs analytics over these tables.
            f"-c jit={'on' if env_bool('DATABASE_JIT', default=False) else 'off'}",
        )
        if part
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            # Reads miss and writes are skipped while Redis is down: pages and
            # the API answer from the database (wovepaper.failsafe_cache).
            "BACKEND": "wovepaper.failsafe_cache.FailOpenRedisCache",
            "LOCATION": REDIS_URL,
            # Seconds a cache call waits on a Redis that stopped answering.
            "OPTIONS": {
                "socket_connect_timeout": env_seconds("CACHE_SOCKET_TIMEOUT", 0.5),
                "socket_timeout": env_seconds("CACHE_SOCKET_TIMEOUT", 0.5),
            },
            # Every key is the database's: two sites sharing one Redis (staging
            # beside production) never answer with each other's researchers,
            # cached pages or cache versions.
            "KEY_PREFIX": os.environ.get(
                "CACHE_KEY_PREFIX", str(DATABASES["default"]["NAME"])
            ),
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- E-mail: notifications to followers; printed to the console unless SMTP is set ---
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend"
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=False)
DEFAULT_FROM_EMAIL = os.environ.get(
    "DEFAULT_FROM_EMAIL", "wovepaper <noreply@localhost>"
)
# The public address of the site, for absolute links in e-mails (no request there).
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000")
# Django's standard checks for every password a reader or curator sets
# (https://docs.djangoproject.com/en/5.2/topics/auth/passwords/#password-validation).
AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": "django.contrib.auth.password_validation."
        "UserAttributeSimilarityValidator"
    },
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# KaTeX's browser build, from npm (package.json; `make install` runs `npm ci`),
# served under static/katex/ with the site's own files: no CDN, and pages work
# offline. Without it the maths of titles and abstracts shows as Unicode text.
KATEX_DIR = BASE_DIR / "node_modules" / "katex" / "dist"
STATICFILES_DIRS = [("katex", KATEX_DIR)] if KATEX_DIR.is_dir() else []
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# LOG_FORMAT=json writes one JSON object a line (python-json-logger), with the
# ``extra`` fields a call passes (harvest run, proposal, record ids) as keys, for
# a log collector; the default is plain text for a terminal.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level"},
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if os.environ.get("LOG_FORMAT") == "json" else "plain",
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# --- Celery ---------------------------------------------------------------------------
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
# Tasks write to the database; the one result the app needs is each matching
# shard's counts, which the run's finishing step (a chord callback) collects: Redis,
# as the broker, unless set (a chord needs a result backend; eagerly none is used).
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", default=not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A task taken by a worker that then dies (kill -9, a lost machine) is handed out
# again by Redis once this many seconds have passed without its ack (kombu's Redis
# transport, "visibility_timeout"). It must exceed the longest task
# (CELERY_TASK_TIME_LIMIT), or a running task is handed to a second worker.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)
}
# How long a matching run waits before trying again when another holds the
# matching lock (seconds; curation.tasks.matching_run_task).
CURATION_MATCHING_RETRY_SECONDS = int(
    os.environ.get("CURATION_MATCHING_RETRY_SECONDS", "30")
)
# Separate queues so a long harvest never holds up matching or a follower's
# notification: run a worker per queue (Procfile), or one worker on all of them
# (``-Q harvest,matching,notifications,celery``; make run).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    "harvest.*": {"queue": "harvest"},
    # The run (its plan), its shards and its finishing step.
    "curation.matching_*": {"queue": "matching"},
    "curation.notify_followers": {"queue": "notifications"},
    "curation.researcher_caches": {"queue": "notifications"},
    "wovepaper.digest_send": {"queue": "notifications"},
    "wovepaper.cache_versions_bump": {"queue": "notifications"},
    "wovepaper.outbox_flush": {"queue": "notifications"},
    # CPU-bound minutes after a large harvest: the general workers' queue, so
    # neither the harvester nor matching waits on it.
    "wovepaper.embeddings_refresh": {"queue": "celery"},
}
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 1800)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 1900)
# The periodic tasks, as first installed: `manage.py schedule_ensure` writes each into
# django-celery-beat's tables if it is not there yet (`--reset` restores these), and
# beat reads the tables (CELERY_BEAT_SCHEDULER), so an operator edits a schedule in the
# admin (Periodic tasks) without a deploy. Times are UTC (Celery's default timezone).
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
PERIODIC_TASKS = {
    # arXiv announces new papers at 20:00 US Eastern (01:00 UTC, 00:00 in summer);
    # the OAI-PMH datestamps are set then. Incremental from the last finished run.
    "harvest-arxiv-daily": {
        "task": "harvest.arxiv_oai",
        "schedule": crontab(hour=2, minute=0),
    },
    # Installed disabled: all of Crossref's or OpenAlex's daily changes are millions
    # of works. An operator sets kwargs {"extra_filter": "..."} in the admin (a
    # prefix, a type, a field) and enables them. The S2 lookup wants S2_API_KEY.
    "harvest-crossref-daily": {
        "task": "harvest.crossref",
        "schedule": crontab(hour=2, minute=30),
        "enabled": False,
    },
    "harvest-openalex-daily": {
        "task": "harvest.openalex",
        "schedule": crontab(hour=2, minute=45),
        "enabled": False,
    },
    "harvest-s2-daily": {
        "task": "harvest.s2_backfill",
        "schedule": crontab(hour=4, minute=0),
        "kwargs": {"limit": 50_000},
        "enabled": False,
    },
    # Author profiles behind the byline slots' OpenAlex and S2 ids (a backfill of
    # the ids with no profile yet); installed disabled like the lookups above.
    "harvest-openalex-authors-daily": {
        "task": "harvest.openalex_authors",
        "schedule": crontab(hour=4, minute=30),
        "kwargs": {"limit": 50_000},
        "enabled": False,
    },
    "harvest-s2-authors-daily": {
        "task": "harvest.s2_authors",
        "schedule": crontab(hour=5, minute=0),
        "kwargs": {"limit": 50_000},
        "enabled": False,
    },
    # Institutions other sources mentioned that ROR has not described (wants
    # ROR_CLIENT_ID: without it ROR allows one request every 6 s).
    "harvest-ror-daily": {
        "task": "harvest.ror_ids",
        "schedule": crontab(hour=5, minute=30),
        "kwargs": {"limit": 10_000},
        "enabled": False,
    },
    # A full matching pass every night (re-clusters pending work in every block); each
    # harvest also queues matching of the blocks it touched.
    "matching-all-blocks": {
        "task": "curation.matching_run",
        "schedule": crontab(hour=3, minute=15),
    },
    # Follow-up tasks (notifications, cache-version bumps) the broker or the
    # cache refused while Redis was down, sent again (wovepaper.outbox).
    "outbox-flush": {
        "task": "wovepaper.outbox_flush",
        "schedule": crontab(minute="*"),
    },
    # Yesterday's new papers to their followers.
    "digest-daily": {
        "task": "wovepaper.digest_send",
        "schedule": crontab(hour=6, minute=0),
    },
}

# --- Rate limits of the public pages (wovepaper.throttle) ---------------------------
# Per anonymous address, per address on /search/ (its costliest page), and per
# signed-in user; "N/second|minute|hour|day". Past it: 429 with Retry-After.
PAGE_ANON_RATE = env_rate("PAGE_ANON_RATE", "300/minute")
PAGE_SEARCH_RATE = env_rate("PAGE_SEARCH_RATE", "60/minute")
PAGE_USER_RATE = env_rate("PAGE_USER_RATE", "1200/minute")

# Confirmation links one reader may ask for again, and password-reset e-mails
# to one address and requests from one client (wovepaper.views.accounts).
EMAIL_CONFIRM_RATE = env_rate("EMAIL_CONFIRM_RATE", "3/hour")
PASSWORD_RESET_ADDRESS_RATE = env_rate("PASSWORD_RESET_ADDRESS_RATE", "3/hour")
PASSWORD_RESET_CLIENT_RATE = env_rate("PASSWORD_RESET_CLIENT_RATE", "10/hour")

# --- REST framework -------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "api.search.BoundedSearchFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.IdCursorPagination",
    "PAGE_SIZE": 25,
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Atomic counters that let requests through while Redis is down
    # (api.throttling); the client as PROXY_COUNT says.
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttling.AnonRateThrottle",
        "api.throttling.UserRateThrottle",
    ],
    "NUM_PROXIES": PROXY_COUNT,
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_rate("API_ANON_RATE", "600/minute"),
        "user": env_rate("API_USER_RATE", "3000/minute"),
    },
    "EXCEPTION_HANDLER": "api.errors.problem_details_handler",
    # DRF's three, JSON's answering a body nested too deep with 400.
    "DEFAULT_PARSER_CLASSES": [
        "api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
# CORS: any origin may read the public API; nothing else crosses origins.
CORS_URLS_REGEX = r"^/(api/|openapi\.json).*$"
CORS_ALLOW_ALL_ORIGINS = True
CORS_ALLOW_METHODS = ("GET", "HEAD", "OPTIONS")
CORS_ALLOW_CREDENTIALS = False

SPECTACULAR_SETTINGS = {
    "TITLE": "wovepaper API",
    "DESCRIPTION": (
        "Papers, researchers and institutions. Only the applied state is "
        "exposed: an authorship's researcher is set once a curator or the "
        "matcher's auto-apply policy applied it, and each such link says which "
        "(`placement`: 'checked by a curator' or 'automatic'; a researcher's "
        "`checked_paper_count` and `placement` sum it up).\n\n"
        "**Conventions.** Lists are cursor-paged (`next`/`previous` links, "
        "`page_size` up to 200), stable under inserts. `fields=a,b` keeps only "
        "those fields. Details send a strong `ETag`; `If-None-Match` answers 304. "
        "A merged-away researcher id answers 301 to its survivor. Errors are "
        "RFC 9457 problem details (`type`, `title`, `status`, `detail`); a "
        "curation conflict (decided already, stale, a concurrent change) is 409. "
        "Anonymous clients are throttled per IP, token holders per user; 429 "
        "carries `Retry-After`.\n\n"
        "**Authentication.** `POST /api/token/` with a username and password "
        "gives a token; send `Authorization: Token <key>`. Following, the feed "
        "and claims need a token; proposals need a curator's.\n\n"
        "**Versioning.** This is version 1, served under `/api/`. Additions "
        "(fields, endpoints, filters) come without notice; a breaking change "
        "ships as `/api/v2/` beside `/api/`, and `/api/` keeps answering, with "
        "a `Deprecation` header and a `Sunset` date at least six months ahead."
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI is served from our own static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- wovepaper ------------------------------------------------------------------------
# The folder of real recorded records (see shared/data/SOURCES.md). Tests and the demo
# read from here; nothing under it is ever copied into the repository.
WOVEPAPER_DATA_DIR = Path(
    os.environ.get("WOVEPAPER_DATA_DIR", BASE_DIR.parent / "shared" / "data")
)
# The sentence-embedding model (all-MiniLM-L6-v2 as ONNX; shared/models/README.md):
# semantic search, similar papers and the matching engine's title evidence
# (wovepaper.embeddings). Read in place, never copied into the repository.
EMBEDDING_MODEL_DIR = Path(
    os.environ.get(
        "EMBEDDING_MODEL_DIR", WOVEPAPER_DATA_DIR.parent / "models" / "all-minilm-l6-v2"
    )
)
# onnxruntime's threads per embedding call; 0: one per CPU the process may use.
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 0)
# Run the model with int8 weights (a copy made once under EMBEDDING_CACHE_DIR) and
# embed at most this many word pieces: 4x the fp32, 256-piece throughput on two
# cores, and better search by meaning (embeddings.model_name; bench/semantic.py).
# EMBEDDING_QUANTIZED=0 and EMBEDDING_MAX_TOKENS=256 embed exactly as the model README.
EMBEDDING_QUANTIZED = env_bool("EMBEDDING_QUANTIZED", True)
EMBEDDING_MAX_TOKENS = env_int("EMBEDDING_MAX_TOKENS", 128)
# Whether matching weighs how alike two papers' titles and abstracts are (the
# title_similarity feature, from the stored embeddings; curation.matching.features):
# the matching run reads the papers' vectors, and evaluate_matching and
# train_matcher embed the labelled sets that print titles (the MEDLINE pairs, the
# ORCID-linked set). Off: the feature is 0.0 everywhere, as for a paper not embedded.
MATCHING_TEXT_EVIDENCE = env_bool("MATCHING_TEXT_EVIDENCE", True)
# Where the embeddings of the labelled sets' papers are kept between runs of
# evaluate_matching and train_matcher (wovepaper.embeddings.embed_cached): the MEDLINE
# pair set's 3,755 articles take about 40 s to embed on two cores. The int8 copy of
# the model is kept here too (embeddings.quantized_model).
EMBEDDING_CACHE_DIR = Path(
    os.environ.get("EMBEDDING_CACHE_DIR", VAR_DIR / "embedding-cache")
)
# Queue the embedding of a harvest run's new and changed papers when it ends
# (wovepaper.tasks.embeddings_refresh_task); `manage.py embed_papers` backfills.
EMBED_AFTER_HARVEST = env_bool("EMBED_AFTER_HARVEST", True)
# Most papers one embedding task embeds before queueing the rest as another task:
# 5,000 take about 200 s on two cores, well inside CELERY_TASK_SOFT_TIME_LIMIT.
EMBED_TASK_MOST = env_int("EMBED_TASK_MOST", 5000)
# Worker processes a harvest from files forks to parse batches ahead of the one it
# writes (harvest.services.prepare); unset: one per CPU; 0: parse in the process.
HARVEST_PREPARE_WORKERS = env_int("HARVEST_PREPARE_WORKERS", None)
# A harvest ANALYZEs the raw record table once the rows it stored reach the table's
# size at the last ANALYZE, and at least this many (harvest.services.planner_stats).
HARVEST_ANALYZE_MIN_ROWS = env_int("HARVEST_ANALYZE_MIN_ROWS", 5000)
# --- live harvesting ------------------------------------------------------------------
# The contact address in every harvest request's User-Agent (Crossref's polite pool and
# arXiv's terms of use ask for one).
HARVEST_CONTACT_EMAIL = os.environ.get("HARVEST_CONTACT_EMAIL", "")
ARXIV_OAI_URL = os.environ.get("ARXIV_OAI_URL", "https://export.arxiv.org/oai2")
ARXIV_API_URL = os.environ.get("ARXIV_API_URL", "https://export.arxiv.org/api/query")
CROSSREF_WORKS_URL = os.environ.get(
    "CROSSREF_WORKS_URL", "https://api.crossref.org/works"
)
OPENALEX_WORKS_URL = os.environ.get(
    "OPENALEX_WORKS_URL", "https://api.openalex.org/works"
)
OPENALEX_API_KEY = os.environ.get("OPENALEX_API_KEY", "")
S2_API_URL = os.environ.get("S2_API_URL", "https://api.semanticscholar.org/graph/v1")
# A paper Semantic Scholar answered null for is asked again after this many days
# (S2 adds papers every week).
S2_RECHECK_DAYS = env_int("S2_RECHECK_DAYS", 30)
ROR_API_URL = os.environ.get("ROR_API_URL", "https://api.ror.org/v2/organizations")
# Not a secret: ROR client ids only tell users apart (ROR docs, "Client ID").
ROR_CLIENT_ID = os.environ.get("ROR_CLIENT_ID", "")
S2_API_KEY = os.environ.get("S2_API_KEY", "")
# A live harvest is cut into windows of this many days, newest first; a first harvest
# with no --from reaches back this many days.
HARVEST_WINDOW_DAYS = env_int("HARVEST_WINDOW_DAYS", 7)
HARVEST_FIRST_DAYS = env_int("HARVEST_FIRST_DAYS", 7)
# How hard each source may be asked (harvest.sources.polite_http.Politeness: seconds
# between requests, timeout, tries, backoff, longest Retry-After waited out).
# arXiv: "no more than 1 request every 3 seconds" (arXiv API terms of use).
HARVEST_POLITENESS = {
    "arxiv": {
        "min_interval": float(os.environ.get("HARVEST_ARXIV_INTERVAL", "3")),
        "timeout": 60.0,
        "max_tries": 6,
        "max_wait": 600.0,
    },
    # Crossref: 10 requests/s in the polite pool (a mailto given), 5 in the public
    # one (Crossref REST API docs, "Rate limits", 2025).
    "crossref": {
        "min_interval": 0.1 if HARVEST_CONTACT_EMAIL else 0.2,
        "timeout": 60.0,
        "max_tries": 6,
    },
    # OpenAlex: at most 10 requests a second (OpenAlex docs, "Rate limits").
    "openalex": {"min_interval": 0.1, "timeout": 60.0, "max_tries": 6},
    # Semantic Scholar: 1 request a second with an API key (S2 API docs, "Rate
    # limits"); the shared pool answers 429 without Retry-After when busy.
    "semanticscholar": {"min_interval": 1.0, "timeout": 60.0, "max_tries": 8},
    # ROR: 2,000 requests per 5 minutes with a client id, 50 without (ROR docs,
    # "Client ID", 2025).
    "ror": {
        "min_interval": 0.15 if ROR_CLIENT_ID else 6.0,
        "timeout": 60.0,
        "max_tries": 6,
    },
}
# Auto-apply policy (curation.deciding.auto_apply): a probability in (0, 1] applies the
# new and attach proposals scored at least that (a new's weakest link) and the
# identifier-proven ones; "identifiers" only the identifier-proven ones; "off"
# leaves every proposal to a curator. Merges and splits always wait.
CURATION_AUTO_APPLY = os.environ.get("CURATION_AUTO_APPLY", "0.995")
# Pairwise score in [0, 1] at or above which an authorship is proposed for attachment to
# an existing researcher (or two researchers for a merge) rather than a new profile.
CURATION_ATTACH_THRESHOLD = float(os.environ.get("CURATION_ATTACH_THRESHOLD", "0.6"))
CURATION_MERGE_THRESHOLD = float(os.environ.get("CURATION_MERGE_THRESHOLD", "0.75"))
# The pairwise model committed with the code (manage.py train_matcher --ship
# writes it): what matching scores with while no model trained on this
# database's curator decisions is active. Empty: the hand-set default weights.
CURATION_SHIPPED_MODEL = os.environ.get(
    "CURATION_SHIPPED_MODEL",
    str(BASE_DIR / "curation" / "matching" / "shipped_model.json"),
)
# How long an incremental matching run may reuse the given-name rarities its
# process last counted (seconds); a full run always counts afresh.
CURATION_RARITY_SECONDS = env_int("CURATION_RARITY_SECONDS", 600)
# Longest a matching run may hold its lock (seconds): past the task time limit, so
# a killed worker's lock expires on its own.
CURATION_MATCHING_LOCK_SECONDS = int(
    os.environ.get("CURATION_MATCHING_LOCK_SECONDS", "2000")
)
# A matching run fans its blocks out in this many shards (a Celery task each,
# several blocks a task: curation.services.matching_plan), on PostgreSQL more when a
# shard would hold over CURATION_MATCHING_SHARD_BLOCKS blocks (each an advisory lock
# while it runs, from a shared table of max_locks_per_transaction x max_connections).
# Run eagerly (one process) a shard is only cost: the demo's run in 32 shards took
# 10.0 s where matching_run took 3.7 s (SQLite; each shard reads on its own).
CURATION_MATCHING_SHARDS = env_int(
    "CURATION_MATCHING_SHARDS", 1 if CELERY_TASK_ALWAYS_EAGER else 32
)
CURATION_MATCHING_SHARD_BLOCKS = env_int("CURATION_MATCHING_SHARD_BLOCKS", 500)
