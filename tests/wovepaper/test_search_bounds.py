"""Bounded search: exact up to SEARCH_SAMPLE matches, an estimate and a ranked
title-first sample past it, and a statement timeout; on the real Del Maestro feeds.

The real corpus holds a few dozen papers, so the bound is lowered here to make
"Maestro" (every paper of the corpus names him) a broad word.
"""

from __future__ import annotations

import pytest
from django.db import connection

from curation import services as curation_services
from harvest.services import harvest_arxiv_files
from wovepaper import search
from wovepaper.models import Paper

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(arxiv_dir):
    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    curation_services.matching_run()
    return Paper.objects.all()


def _head(query, category=None, year=None):
    return search.search_head(query=query, category=category, year=year)


def test_search_head_is_exact_up_to_the_sample(corpus, monkeypatch):
    ranked = [p.pk for p in search.paper_search(query="luttinger")]
    monkeypatch.setattr(search, "SEARCH_SAMPLE", len(ranked))

    head = _head("luttinger")

    assert head["exact"] is True
    assert head["count"] == len(ranked)
    assert head["ids"] == ranked  # the Python ranking is the SQL one
    counted = {}
    for p in Paper.objects.filter(pk__in=ranked):
        counted[p.primary_category] = counted.get(p.primary_category, 0) + 1
    assert dict(head["categories"]) == counted
    assert [n for _, n in head["categories"]] == sorted(counted.values(), reverse=True)


def test_search_head_past_the_sample_lists_title_matches_first(corpus, monkeypatch):
    matches = list(search.paper_search(query="luttinger"))
    in_title = [p.pk for p in matches if "luttinger" in p.title.lower()]
    elsewhere = [p.pk for p in matches if p.pk not in in_title]
    assert in_title
    assert elsewhere
    monkeypatch.setattr(search, "SEARCH_SAMPLE", len(matches) - 1)

    head = _head("luttinger")

    assert head["exact"] is False
    assert head["count"] >= len(matches)  # the planner's estimate, at least
    assert len(head["ids"]) == len(matches) - 1
    assert head["ids"][: len(in_title)] == [
        pk for pk in (m.pk for m in matches) if pk in in_title
    ]
    assert set(head["ids"][len(in_title) :]) <= set(elsewhere)
    assert head["categories"]
    assert all(n is None for _, n in head["categories"])


def test_search_head_category_filter_narrow_enough_is_exact(corpus, monkeypatch):
    everything = list(search.paper_search(query="Maestro"))
    in_category = [
        p.pk for p in search.paper_search(query="Maestro", category="cond-mat.str-el")
    ]
    assert 0 < len(in_category) < len(everything)
    monkeypatch.setattr(search, "SEARCH_SAMPLE", len(in_category))

    head = _head("Maestro", category="cond-mat.str-el")

    assert head["exact"] is True
    assert head["ids"] == in_category
    assert head["count"] == len(in_category)
    # The category choices still come from every match (without counts: broad).
    assert len(head["categories"]) > 1
    assert all(n is None for _, n in head["categories"])


def test_search_page_says_about_and_lists_the_sample(client, corpus, monkeypatch):
    matches = search.paper_search(query="Maestro").count()
    monkeypatch.setattr(search, "SEARCH_SAMPLE", 5)

    response = client.get("/search/", {"q": "Maestro"})

    body = response.content.decode()
    assert response.status_code == 200
    assert response.context["found_exact"] is False
    assert response.context["page"].paginator.count == 5
    assert len(response.context["papers"]) == 5
    assert "About " in body
    assert "the best 5 are listed" in body
    assert matches > 5


def test_search_over_its_time_budget_is_refused_with_the_reason(
    client, corpus, monkeypatch
):
    def slow(*args, **kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(0.5)")

    monkeypatch.setattr(search, "SEARCH_TIMEOUT_MS", 20)
    monkeypatch.setattr(search, "_search_head", slow)

    response = client.get("/search/", {"q": "Maestro"})

    assert response.status_code == 400
    assert search.SEARCH_TOO_SLOW in response.content.decode()
    # Nothing was cached, and the connection serves the next search.
    monkeypatch.undo()
    again = client.get("/search/", {"q": "Maestro"})
    assert again.status_code == 200
    assert again.context["papers"]
