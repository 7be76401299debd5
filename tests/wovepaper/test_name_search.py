"""Name search ranks people by how their name matches, then by activity."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from curation import names
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper.models import Institution, Researcher, ResearcherStats
from wovepaper.name_search import (
    COMPATIBLE,
    EXACT,
    SIMILAR,
    SURNAME,
    name_tier,
    researchers_ranked,
)
from wovepaper.stats import researcher_stats_refresh

pytestmark = pytest.mark.django_db


def _person(given: str, family: str, papers: int, *, variants=()) -> Researcher:
    name = f"{given} {family}"
    r = ResearcherFactory(
        display_name=name,
        name_variants=[name, *variants],
        block_key=names.block_key(given, family),
    )
    for _ in range(papers):
        AuthorshipFactory(
            paper=PaperFactory(), researcher=r, given_name=given, family_name=family
        )
    return r


@pytest.fixture
def namesakes(db):
    """The issue's case: "Li" listed Anna Pasquali and G. Ghisellini above Hai-Bo
    Li, who has fewer papers."""
    people = {
        "pasquali": _person("Anna", "Pasquali", 9),
        "ghisellini": _person("G.", "Ghisellini", 7),
        "haibo": _person("Hai-Bo", "Li", 2, variants=["H.-B. Li"]),
        "hli": _person("H.", "Li", 1),
        "jli": _person("Jun", "Li", 4),
    }
    researcher_stats_refresh()
    return people


def test_name_tiers():
    r = Researcher(display_name="Hai-Bo Li", name_variants=["Li, Hai-Bo", "H.-B. Li"])
    assert name_tier("Hai-Bo Li", r) == EXACT
    assert name_tier("li, hai-bo", r) == EXACT
    assert name_tier("H. Li", r) == COMPATIBLE
    assert name_tier("Li", r) == SURNAME
    assert name_tier("Wei Li", r) == SURNAME
    assert name_tier("Pasquali", r) == SIMILAR
    pasquali = Researcher(display_name="Anna Pasquali", name_variants=[])
    assert name_tier("Li", pasquali) == SIMILAR


@pytest.mark.parametrize(
    ("query", "first"),
    [("Li", "jli"), ("Hai-Bo Li", "haibo"), ("H. Li", "hli"), ("H.-B. Li", "haibo")],
)
def test_ranked_name_search_puts_the_name_before_activity(namesakes, query, first):
    found = researchers_ranked(query=query)
    assert found[0].researcher == namesakes[first]
    tiers = [f.tier for f in found]
    assert tiers == sorted(tiers)
    # Surname matches all come before names that only contain the text.
    shown = [f.researcher for f in found]
    if query == "Li":
        assert shown[:3] == [namesakes["jli"], namesakes["haibo"], namesakes["hli"]]
        # PostgreSQL's trigram match leaves "Pasquali" out; SQLite's substring
        # match finds it, and then it must come after every Li.
        assert namesakes["pasquali"] not in shown[:3]


def test_search_page_tells_namesakes_apart_and_links_all(
    client, namesakes, monkeypatch
):
    from wovepaper.views import search as search_view

    monkeypatch.setattr(search_view, "RESEARCHER_COUNT", 2)
    doc = lxml_html.fromstring(client.get("/search/?q=Li&mode=keyword").content)
    items = doc.cssselect("ol.researchers > li")
    assert [li.cssselect("a")[0].text_content() for li in items] == [
        "Jun Li",
        "Hai-Bo Li",
    ]
    meta = items[1].cssselect(".meta")[0].text_content()
    stats = ResearcherStats.objects.get(researcher=namesakes["haibo"])
    assert "hep-th" in meta
    assert str(stats.first_year) in meta
    assert "2 papers" in meta
    more = doc.cssselect("#all-researchers")[0]
    assert more.get("href") == "/researchers/?q=Li"
    listed = lxml_html.fromstring(client.get(more.get("href")).content)
    names = [a.text_content() for a in listed.cssselect("ol.people a.person")]
    assert names[:3] == ["Jun Li", "Hai-Bo Li", "H. Li"]


def test_search_lists_institutions(client, namesakes):
    Institution.objects.create(name="Utrecht University", country_code="NL")
    Institution.objects.create(
        name="University Medical Center", aliases=["UMC Utrecht"], country_code="NL"
    )
    doc = lxml_html.fromstring(client.get("/search/?q=Utrecht&mode=keyword").content)
    assert [a.text_content() for a in doc.cssselect("ul.institutions a")] == [
        "Utrecht University",
        "University Medical Center",
    ]
