"""A search's head from the PostgreSQL function equals the ORM path's.

wovepaper.search.search_head reads through wovepaper.search_sql on PostgreSQL;
the ORM path (wovepaper.search._search_head) serves SQLite. Both run here on the
same real records (arXiv papers and an OpenAlex works page), one paper hidden,
with a small sample and count cap so that every branch runs: exact, broad with
an exact count, broad past the cap (estimate or "more"), category and year
filters.
"""

from __future__ import annotations

import pytest
from django.db import connection

from harvest.services import harvest_arxiv_files, harvest_files
from wovepaper import search
from wovepaper.models import Paper

pytestmark = pytest.mark.django_db

SAMPLE, CAP = 6, 12


@pytest.fixture
def corpus(arxiv_dir, monkeypatch):
    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    harvest_files(
        source="openalex", root=arxiv_dir.parent / "openalex" / "peneira_works_page"
    )
    Paper.objects.filter(pk=Paper.objects.order_by("id").values("pk")[:1]).update(
        hidden=True
    )
    # Statistics, so the planner's estimates (the "about" totals) are of the
    # rows there are.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE wovepaper_paper")
    monkeypatch.setattr(search, "SEARCH_SAMPLE", SAMPLE)
    monkeypatch.setattr(search, "COUNT_CAP", CAP)
    return Paper.objects.filter(hidden=False)


def _orm_head(query: str, category: str | None, year: int | None) -> dict:
    everything, ranked_by = search._paper_matches(query=query, category=None, year=year)
    return search._search_head(everything, ranked_by, category=category, year=year)


def _cases(papers) -> list[tuple[str, str | None, int | None]]:
    """Queries from the corpus's own words, with its commonest category and year."""
    categories = [c for p in papers for c in p.categories]
    category = max(set(categories), key=lambda c: (categories.count(c), c))
    cross = min(set(categories), key=lambda c: (categories.count(c), c))
    years = [p.published.year for p in papers if p.published]
    year = max(set(years), key=years.count)
    queries = [
        "quantum",
        "the model",
        "spin",
        "field theory",
        '"phase transition"',
        "quantum -spin",
        "temperature or magnetic",
        "pairbreaking",
        "Sachdev",
        "zzzunfound",
        "model or theory or quantum or field",
        "public health",
        "health",
        "machine learning",
    ]
    return [
        (q, c, y)
        for q in queries
        for c, y in ((None, None), (category, None), (cross, None), (None, year))
    ]


def test_the_function_gives_the_orm_head_on_every_branch(corpus, monkeypatch):
    seen = set()
    for cap, (query, category, year) in [
        (cap, case) for cap in (CAP, 3 * CAP) for case in _cases(corpus)
    ]:
        monkeypatch.setattr(search, "COUNT_CAP", cap)
        got = search.search_head(query=query, category=category, year=year)
        want = _orm_head(query, category, year)
        assert got == want, (query, category, year)
        broad = bool(got["categories"]) and got["categories"][0][1] is None
        seen.add((got["count_is"], broad))
        assert len(got["ids"]) <= SAMPLE
        assert len(set(got["ids"])) == len(got["ids"])
    # Every branch ran: narrow exact, broad counted, broad past the cap.
    assert ("exact", False) in seen
    assert ("exact", True) in seen
    assert ("about", True) in seen
    assert ("more", True) in seen


def test_broad_head_lists_title_matches_first(corpus):
    head = search.search_head(query="quantum", category=None, year=None)
    assert head["count"] > SAMPLE
    titles = dict(Paper.objects.filter(pk__in=head["ids"]).values_list("pk", "title"))
    in_title = ["quantum" in titles[pk].lower() for pk in head["ids"]]
    assert in_title == sorted(in_title, reverse=True)
    assert any(in_title)


def test_hidden_paper_is_never_in_a_head(corpus):
    hidden = Paper.objects.get(hidden=True)
    word = next(w for w in hidden.title.split() if len(w) > 6 and w.isalpha())
    head = search.search_head(query=word, category=None, year=None)
    assert hidden.pk not in head["ids"]


def test_unreadable_and_slow_searches_are_refused_by_the_function(corpus, monkeypatch):
    monkeypatch.setattr(search, "SEARCH_TIMEOUT_MS", 1)
    with pytest.raises(search.SearchQueryError, match="took too long"):
        search.search_head(query="quantum or spin or model", category=None, year=None)
