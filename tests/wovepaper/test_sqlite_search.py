"""The embedded setup's paper search, on a real SQLite database: FTS5, not
substrings.

The suite's database is PostgreSQL, so this runs ``manage.py`` in a child
process with no ``DATABASE_URL`` (the embedded default: SQLite under a
temporary ``WOVEPAPER_VAR_DIR``), harvests the real Del Maestro feeds there and
reads the searches back as JSON (after matching and applying every proposal,
for the researchers' name search).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]

SEARCHES = """
import json
from curation import services
from curation.models import Proposal
for proposal in Proposal.objects.filter(status="pending").order_by("id"):
    services.proposal_apply(proposal=proposal, actor=None)
from wovepaper.models import Paper
from wovepaper.search import search_results
out = {}
for q in QUERIES:
    r = search_results(
        query=q, category=None, year=None, number=1, size=50, mode="keyword"
    )
    out[q] = [Paper.objects.get(pk=pk).title for pk in r["ids"]]
out["fts_rows"] = len(Paper.objects.raw("SELECT rowid AS id FROM wovepaper_paper_fts"))
from wovepaper.name_search import researchers_ranked
out["people"] = [
    [f.researcher.display_name, f.tier, f.paper_count]
    for f in researchers_ranked(query="Subir Sachdev")
]
# A broad search on a small sample: the page says how its list is ordered.
from django.core.cache import cache
from django.test import Client
from wovepaper import search
search.SEARCH_SAMPLE = 5
cache.clear()  # the searches above cached "maestro"'s head, of every match
out["broad_page"] = Client().get(
    "/search/", {"q": "Maestro", "mode": "keyword"}, HTTP_HOST="127.0.0.1"
).content.decode()
print("RESULT" + json.dumps(out))
"""


def _manage(var: Path, *args: str) -> str:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE", "REDIS_URL"}
    }
    env.update(
        WOVEPAPER_VAR_DIR=str(var),
        WOVEPAPER_DATA_DIR=str(settings.WOVEPAPER_DATA_DIR),
        EMBED_AFTER_HARVEST="0",
    )
    done = subprocess.run(  # noqa: S603 - our own manage.py, fixed arguments
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def found(tmp_path_factory) -> dict:
    var = tmp_path_factory.mktemp("embedded")
    feeds = Path(settings.WOVEPAPER_DATA_DIR) / "arxiv" / "arxivpy_2016_atom"
    _manage(var, "migrate", "--verbosity", "0")
    _manage(var, "harvest", "arxiv", "--dir", str(feeds), "--no-progress")
    _manage(var, "match")
    queries = [
        "pairbreaking sachdev",
        "maestro",
        "maestro -pairbreaking",
        "helium or superfluid",
        "superfluid",
        "superfluids",
        "boson",
        "aestro",
        "-maestro",
    ]
    out = _manage(var, "shell", "-c", f"QUERIES = {queries!r}\n{SEARCHES}")
    return json.loads(out.split("RESULT", 1)[1])


def test_fts5_finds_words_not_substrings(found):
    assert [t[:26] for t in found["pairbreaking sachdev"]] == [
        "Theory of the pairbreaking"
    ]
    # Every bundled paper of the feeds names Del Maestro.
    assert len(found["maestro"]) == found["fts_rows"] == 12
    # A word inside a longer one ("aestro" in "Maestro") is no match, and a
    # search of exclusions alone finds nothing.
    assert found["aestro"] == []
    assert found["-maestro"] == []


def test_broad_search_page_says_its_list_is_the_best_matches(found):
    body = found["broad_page"]
    assert "12 papers found; 5 of them are listed, the best matches first" in body
    assert "title matches first" not in body


def test_name_search_on_sqlite_ranks_the_name_first(found):
    assert found["people"][0][:2] == ["Subir Sachdev", 0]
    assert found["people"][0][2] >= 1


def test_fts5_stems_ranks_and_reads_web_search_syntax(found):
    # Stemmed as PostgreSQL's english configuration: "superfluids" is
    # "superfluid", "boson" finds "bosons" and "bosonic".
    assert found["superfluids"] == found["superfluid"] != []
    assert len(found["boson"]) == 5
    # Title words weigh most: a title match comes first.
    assert "boson" in found["boson"][0].lower()
    assert "superfluid" in found["superfluid"][0].lower()
    # -word excludes; the rest keep their order.
    assert found["maestro -pairbreaking"] == [
        t for t in found["maestro"] if not t.startswith("Theory of the pairbreaking")
    ]
    # or: either word.
    either = set(found["helium or superfluid"])
    assert either > set(found["superfluid"])
    assert any(t.startswith("Helium-4") for t in either)
