"""Test settings: the real PostgreSQL on loopback, Celery tasks run eagerly.

pytest-django creates its own ``test_<name>`` database from ``DATABASE_URL`` and
drops it afterwards; no other database is touched.
"""

from __future__ import annotations

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/wovepaper")

from .base import *  # noqa: E402, F403
from .base import REST_FRAMEWORK  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
# Most curation tests decide proposals as a curator would, so they need them
# pending: the suite applies only identifier-proven ones, the policy before
# issue 47. tests/curation/test_auto_apply.py runs the shipped default
# (curation.deciding.auto_apply.DEFAULT_THRESHOLD) and strict mode.
CURATION_AUTO_APPLY = "identifiers"
# Tests never reach the internet: a live source not pointed at a local server gets
# "connection refused" from loopback instead.
ARXIV_OAI_URL = "http://127.0.0.1:9/oai2"
ARXIV_API_URL = "http://127.0.0.1:9/api/query"
CROSSREF_WORKS_URL = "http://127.0.0.1:9/works"
OPENALEX_WORKS_URL = "http://127.0.0.1:9/openalex/works"
S2_API_URL = "http://127.0.0.1:9/graph/v1"
ROR_API_URL = "http://127.0.0.1:9/ror/v2/organizations"
REST_FRAMEWORK = {
    **REST_FRAMEWORK,
    "DEFAULT_THROTTLE_RATES": {"anon": "100000/minute", "user": "100000/minute"},
}
# Test clients all come from one address; the rate-limit tests set their own.
PAGE_ANON_RATE = PAGE_SEARCH_RATE = PAGE_USER_RATE = "100000/minute"
# Harvest tests run hundreds of harvests; embedding each run's papers eagerly
# (about 30 abstracts/s on two cores) would multiply the suite's time. The
# semantic tests embed what they need, and tests/wovepaper/test_semantic.py
# turns this on to check the hook.
EMBED_AFTER_HARVEST = False
# Training and evaluation tests load the MEDLINE pairs and the ORCID-linked set again
# and again; embedding their 5,000 texts costs about 3 minutes on a clean clone
# (then the cache, var/embedding-cache, holds them). Tests of the title evidence
# (tests/curation/test_title_similarity.py) turn it on.
MATCHING_TEXT_EVIDENCE = False
