"""OpenAlex: the parser on the real recorded works (current and 2022 schemas), and
cursor paging against a local server, with a truncated byline fetched whole."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import pytest
from django.conf import settings

from harvest import selectors, services
from harvest.models import HarvestRun
from harvest.records import NotARecordFile, RawItem, RecordError
from harvest.sources.openalex import (
    openalex_pages,
    parse_openalex_work,
    read_openalex_file,
    rebuild_abstract,
)
from harvest.sources.polite_http import PoliteClient, Politeness
from wovepaper.models import Paper

DATA = Path(settings.WOVEPAPER_DATA_DIR) / "openalex"
QUICK = Politeness(min_interval=0, timeout=5, max_tries=2, backoff_base=0.01)


def parsed(path: Path) -> list:
    return [parse_openalex_work(item) for item in read_openalex_file(path)]


def test_current_schema_work_with_orcids_author_ids_and_ror_institutions():
    [work] = parsed(DATA / "openalex_python_entities" / "W2741809807.json")
    assert (work.openalex_id, work.doi) == ("W2741809807", "10.7717/peerj.4375")
    assert work.title.startswith("The state of OA: a large-scale analysis")
    assert work.abstract.startswith("Despite growing interest in Open Access (OA)")
    assert work.journal_ref == "PeerJ 6, e4375 (2018)"
    assert (work.published.isoformat(), work.published_precision) == (
        "2018-02-13",
        "day",
    )
    assert work.cited_by_count == 962
    assert len(work.authors) == 9
    first = work.authors[0]
    assert (first.given_name, first.family_name) == ("Heather", "Piwowar")
    assert (first.orcid, first.openalex_author_id) == (
        "0000-0003-1613-5981",
        "A5048491430",
    )
    assert first.affiliations == ("Impactstory, Sanford, NC, USA",)
    assert [i.ror_id for i in first.institutions] == ["05ppvf150"]


def test_the_2022_schema_parses_every_work_with_its_glued_affiliations():
    works = parsed(DATA / "diophila_tu9_works_2022" / "tu9_works_diophila_2022.json")
    assert len(works) == 410
    authors = [a for w in works for a in w.authors]
    assert len(authors) == 4702  # SOURCES.md: 4,702 authorships
    assert sum(1 for a in authors if a.orcid) == 1211
    # Every authorship whose institutions carry a ROR id keeps them (SOURCES.md:
    # 4,241 have institutions; some have none with a ROR id).
    raw = json.loads(
        (DATA / "diophila_tu9_works_2022" / "tu9_works_diophila_2022.json").read_text()
    )
    with_ror = sum(
        1
        for work in raw
        for a in work["authorships"]
        if any(i.get("ror") for i in a.get("institutions") or [])
    )
    assert 0 < with_ror <= 4241
    assert sum(1 for a in authors if a.institutions) == with_ror
    # The legacy single affiliation string, glued as OpenAlex gave it.
    assert any(
        a.affiliations == ("Technische Universität BerlinGermany",) for a in authors
    )
    assert {w.journal_ref != "" for w in works} == {True, False}


def test_a_search_page_parses_and_non_work_files_are_skipped():
    works = parsed(DATA / "peneira_works_page" / "works_search_page1.json")
    assert len(works) == 49
    assert sum(len(w.authors) for w in works) == 164
    assert sum(1 for w in works for a in w.authors if a.orcid) == 120
    with pytest.raises(NotARecordFile, match="not a list of works"):
        list(read_openalex_file(DATA / "openalex_python_entities" / "A5023888391.json"))


def test_abstract_is_rebuilt_from_the_inverted_index():
    assert rebuild_abstract({"b": [1], "a": [0, 2]}) == "a b a"
    assert rebuild_abstract(None) == ""
    assert rebuild_abstract({"a": "zero"}) == ""


def test_a_truncated_byline_in_a_saved_list_is_refused_by_name():
    work = json.loads(
        (DATA / "openalex_python_entities" / "W2741809807.json").read_text()
    )
    work["is_authors_truncated"] = True
    with pytest.raises(RecordError, match="W2741809807: authorships truncated"):
        parse_openalex_work(RawItem("W2741809807", json.dumps(work), "x"))


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ("[]", "a work must be a JSON object"),
        ('{"display_name": "x"}', "work without an OpenAlex id"),
        ('{"id": "W1", "display_name": "x"}', "work without an OpenAlex id"),
        ('{"id": "https://openalex.org/W12", "display_name": " "}', "without a title"),
        ('{"id": "W12", "display_name": "x", "authorships": [1]}', "not a JSON object"),
    ],
)
def test_broken_works_are_refused_naming_the_problem(payload, problem):
    with pytest.raises(RecordError, match=problem):
        parse_openalex_work(RawItem("x", payload, "test#work-0"))


def test_cursor_paging_fetches_a_truncated_work_whole(server):
    page = json.loads(
        (DATA / "peneira_works_page" / "works_search_page1.json").read_text()
    )
    whole = copy.deepcopy(page["results"][3])
    wid = whole["id"].rsplit("/", 1)[1]
    cut = page["results"][3]
    cut["is_authors_truncated"] = True
    cut["authorships"] = cut["authorships"][:1]
    first = {**page, "meta": {**page["meta"], "next_cursor": "IlsxNjA5M"}}
    last = {"meta": {"count": 49, "next_cursor": None}, "results": []}
    asked = {"filter": "from_updated_date:2026-11-01", "per-page": "200"}
    server.expect_ordered_request(
        "/works", query_string={**asked, "cursor": "*", "api_key": "k"}
    ).respond_with_json(first)
    server.expect_ordered_request(
        f"/works/{wid}", query_string={"api_key": "k"}
    ).respond_with_json(whole)
    server.expect_ordered_request(
        "/works", query_string={**asked, "cursor": "IlsxNjA5M", "api_key": "k"}
    ).respond_with_json(last)
    with PoliteClient("openalex", politeness=QUICK) as client:
        pages = list(
            openalex_pages(
                client,
                server.url_for("/works"),
                filters={"from_updated_date": "2026-11-01"},
                api_key="k",
            )
        )
    server.check_assertions()
    assert [len(p.items) for p in pages] == [49, 0]
    # The single work holds every authorship, and says so when it did not.
    assert pages[0].items[3] == {"is_authors_truncated": False, **whole}
    assert len(whole["authorships"]) > 1


@pytest.mark.django_db
def test_an_openalex_institution_makes_or_fills_an_institution_never_overriding():
    from harvest import services
    from wovepaper.models import Institution

    michigan = DATA / "openalex_python_entities" / "I27837315.json"
    run = services.harvest_files(source="openalex", root=michigan)
    assert (run.papers_created, run.records_failed) == (1, 0)
    made = Institution.objects.get(ror_id="00jmfr291")
    assert (made.name, made.country_code, made.types) == (
        "University of Michigan",
        "US",
        ["funder"],
    )
    assert "UMich" in made.aliases
    assert "UM" in made.aliases
    assert {
        "type": "child",
        "ror_id": "02bkkgm47",
        "label": "Center for Complex Particle Systems",
    } in made.relationships

    # ROR's own record came first elsewhere: OpenAlex fills, never replaces.
    Institution.objects.all().delete()
    Institution.objects.create(
        ror_id="00jmfr291", name="University of Michigan–Ann Arbor", types=["education"]
    )
    again = services.harvest_files(source="openalex", root=michigan, reparse=True)
    assert again.papers_updated == 1
    kept = Institution.objects.get(ror_id="00jmfr291")
    assert kept.name == "University of Michigan–Ann Arbor"
    assert kept.types == ["education"]
    assert kept.country_code == "US"  # was empty: filled
    assert "UMich" in kept.aliases


@pytest.mark.django_db
def test_the_entities_folder_harvests_works_institutions_authors_skips_the_rest():
    from harvest import services
    from harvest.models import SourceAuthor

    run = services.harvest_files(
        source="openalex", root=DATA / "openalex_python_entities"
    )
    assert run.records_failed == 0
    # 2 works, 1 institution, 3 author profiles (one a tombstone)
    assert (run.papers_created, run.papers_updated) == (6, 0)
    assert SourceAuthor.objects.filter(deleted=False).count() == 2
    skipped = {f["file"].rsplit("/", 1)[-1] for f in run.files_skipped}
    assert "S137773608.json" in skipped  # a source (journal), not ours
    assert not skipped & {"A5023888391.json", "I27837315.json", "W2741809807.json"}


@pytest.mark.django_db
def test_institutions_lookup_by_ror_id_fills_only_what_is_missing(server, settings):
    """Institutions without a country or a type are asked 50 ROR ids a request;
    OpenAlex's answer fills the empty fields and never renames what ROR named;
    an id OpenAlex does not answer is named."""
    from harvest import services
    from harvest.models import HarvestRun
    from wovepaper.models import Institution

    settings.HARVEST_POLITENESS = {
        "openalex": {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }
    michigan = json.loads(
        (DATA / "openalex_python_entities/I27837315.json").read_text()
    )
    Institution.objects.create(
        ror_id="00jmfr291", name="University of Michigan–Ann Arbor", status="active"
    )
    Institution.objects.create(ror_id="05dxps055", name="Caltech", country_code="US")
    Institution.objects.create(
        ror_id="02bfwt286", name="Monash", country_code="AU", types=["education"]
    )
    server.expect_ordered_request(
        "/oa/institutions",
        query_string={
            "filter": "ror:https://ror.org/00jmfr291|https://ror.org/05dxps055",
            "per-page": "2",
        },
    ).respond_with_json({"meta": {"count": 1}, "results": [michigan]})
    run = services.harvest_openalex_institutions(base_url=server.url_for("/oa/works"))
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert (run.records_seen, run.papers_updated) == (2, 1)
    assert run.params["unknown"] == ["05dxps055"]
    filled = Institution.objects.get(ror_id="00jmfr291")
    assert filled.name == "University of Michigan–Ann Arbor"  # ROR's name stays
    assert (filled.country_code, filled.types) == ("US", [michigan["type"]])


@pytest.mark.django_db
def test_live_openalex_run_walks_its_windows_newest_first_with_the_api_key(
    server, settings
):
    """``harvest_openalex`` over two days in one-day windows: the newer day's
    real works page (49 works) and its empty end, then the older day; every
    request carries ``OPENALEX_API_KEY``; each work is a paper; the run records
    the day it reached for the next incremental run."""
    settings.OPENALEX_API_KEY = "env-key"
    settings.HARVEST_WINDOW_DAYS = 1
    settings.HARVEST_POLITENESS = {"openalex": {"min_interval": 0}}
    page = json.loads(
        (DATA / "peneira_works_page" / "works_search_page1.json").read_text()
    )
    first = {**page, "meta": {**page["meta"], "next_cursor": "IlsxNjA5M"}}
    empty = {"meta": {"count": 0, "next_cursor": None}, "results": []}

    def asked(day: str, cursor: str) -> dict:
        return {
            "filter": f"from_updated_date:{day},to_updated_date:{day}",
            "per-page": "200",
            "cursor": cursor,
            "api_key": "env-key",
        }

    for day, cursor, answer in (
        ("2026-11-02", "*", first),
        ("2026-11-02", "IlsxNjA5M", empty),
        ("2026-11-01", "*", empty),
    ):
        server.expect_ordered_request(
            "/works", query_string=asked(day, cursor)
        ).respond_with_json(answer)

    run = services.harvest_openalex(
        from_date=dt.date(2026, 11, 1),
        until_date=dt.date(2026, 11, 2),
        base_url=server.url_for("/works"),
    )
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert run.params["windows"] == [
        ["2026-11-02", "2026-11-02"],
        ["2026-11-01", "2026-11-01"],
    ]
    assert (run.records_seen, run.records_failed) == (49, 0)
    assert run.papers_created == Paper.objects.count()
    assert set(Paper.objects.values_list("openalex_id", flat=True)) == {
        w["id"].rsplit("/", 1)[1] for w in page["results"]
    }
    assert selectors.live_next_from(source="openalex", mode="openalex", filter="") == (
        dt.date(2026, 11, 2)
    )
