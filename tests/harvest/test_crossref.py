"""Crossref: the parser on the real recorded answers, and cursor paging against a
local server replaying them.

The recorded answers are habanero's real api.crossref.org exchanges (decoded, read in
place). One paper across sources is tests/harvest/test_cross_source.py.
"""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from harvest import services
from harvest.models import HarvestRun, RawRecord
from harvest.records import NotARecordFile, RawItem, RecordError
from harvest.sources.crossref import (
    crossref_pages,
    crossref_work,
    markup_to_text,
    parse_crossref_work,
    read_crossref_file,
)
from harvest.sources.polite_http import (
    PoliteClient,
    Politeness,
    SourceRefused,
    user_agent,
)
from wovepaper.models import Paper

DECODED = Path(settings.WOVEPAPER_DATA_DIR) / "crossref" / "habanero_decoded"
KANG = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "crossref"
    / "kang_2007_work.json"
)
KANG_ABS = "abs_files/ftp/arxiv/papers/0704/0704.0932.abs"
QUICK = Politeness(min_interval=0, timeout=5, max_tries=2, backoff_base=0.01)
SHA_UPPER = "0F40B1F08821E22E859C6050916CEC3667778613"


def works(name: str) -> list:
    return [parse_crossref_work(item) for item in read_crossref_file(DECODED / name)]


def test_markup_is_removed_without_gluing_words():
    jats = (
        "<jats:title>Abstract</jats:title><jats:p>H<jats:sub>2</jats:sub>O is "
        "<jats:italic>wet</jats:italic>.</jats:p><jats:p>Second&#x00A0;one.</jats:p>"
    )
    assert markup_to_text(jats) == "H2O is wet.\nSecond one."
    assert (
        markup_to_text(
            "<jats:sec><jats:title>Methods</jats:title><jats:p>We</jats:p></jats:sec>"
        )
        == "Methods\nWe"
    )
    assert markup_to_text("a<br/>b") == "a\nb"
    assert markup_to_text("&lt;script&gt;x&lt;/script&gt;") == "<script>x</script>"


def test_every_recorded_work_parses_or_is_refused_by_name():
    parsed, refused, skipped = [], [], []
    for path in sorted(DECODED.glob("*.json")):
        try:
            for item in read_crossref_file(path):
                try:
                    parsed.append(parse_crossref_work(item))
                except RecordError as exc:
                    refused.append(str(exc))
        except NotARecordFile:
            skipped.append(path.name)
    assert len({r.doi for r in parsed}) == 502
    # Figures, tables and issues deposited without a title are refused by DOI.
    assert refused
    assert all(": work without a title" in e for e in refused)
    assert all(e.startswith("doi:10.") for e in refused)
    assert "test-types__test_types__0.json" in skipped
    orcids = {a.orcid for r in parsed for a in r.authors if a.orcid}
    assert all(len(o) == 19 and o[4] == "-" for o in orcids)
    # SOURCES.md counts 292 ORCID-bearing author entries over the unique works.
    unique = {r.doi: r for r in parsed}
    assert sum(1 for r in unique.values() for a in r.authors if a.orcid) == 292


def test_a_work_with_a_jats_abstract_and_orcids():
    [work] = works("test-works__test_works_with_many_ids__1.json")
    assert work.doi == "10.1002/jor.1100150407"
    assert work.source == "crossref"
    assert work.abstract
    assert "jats" not in work.abstract
    assert work.abstract.startswith("Twenty-two beagles".replace("-", "\u2010"))
    assert work.published_precision in {"day", "month", "year"}
    assert work.authors
    assert all(a.family_name for a in work.authors)


def test_name_only_authors_are_organisations_and_dates_keep_their_precision():
    records = [r for path in sorted(DECODED.glob("*.json")) for r in _parsed(path)]
    org = next(
        a
        for r in records
        for a in r.authors
        if a.raw_name == "Concrete Technology Associates"
    )
    assert org.is_collaboration
    assert not org.family_name
    precisions = {r.published_precision for r in records}
    assert precisions == {"day", "month", "year"}
    year_only = next(r for r in records if r.published_precision == "year")
    assert (year_only.published.month, year_only.published.day) == (1, 1)


def _parsed(path: Path) -> list:
    out = []
    try:
        for item in read_crossref_file(path):
            try:
                out.append(parse_crossref_work(item))
            except RecordError:
                pass
    except NotARecordFile:
        pass
    return out


def test_orcid_as_url_or_bare_is_one_id_and_a_bad_one_is_dropped():
    base = json.loads(KANG.read_text())["message"]
    item = RawItem("doi:x", json.dumps(base), "kang")
    assert [a.orcid for a in parse_crossref_work(item).authors] == [
        "0000-0003-1234-5674",
        "0000-0001-5555-4447",
        "0000-0002-1825-0097",
    ]
    base["author"][0]["ORCID"] = "https://orcid.org/0000-0003-1234-5675"
    item = RawItem("doi:x", json.dumps(base), "kang")
    assert parse_crossref_work(item).authors[0].orcid == ""


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ("[1, 2]", "a work must be a JSON object"),
        ('{"title": ["x"]}', "work without a DOI"),
        (
            '{"DOI": "10.1234/x", "title": ["x"], '
            '"issued": {"date-parts": [[2019, 13]]}}',
            r"issued date \[2019, 13\] is not a date",
        ),
        (
            '{"DOI": "10.1234/x", "title": ["x"], "author": ["Smith"]}',
            "an author is not a JSON object",
        ),
        ('{"DOI": "10.1234/x"', "not JSON"),
        (
            '{"DOI": "10.1234/../../x", "title": ["x"]}',
            "'10.1234/../../x' is not a DOI",
        ),
        ('{"DOI": "10.1234/a b", "title": ["x"]}', "'10.1234/a b' is not a DOI"),
    ],
)
def test_broken_works_are_refused_naming_the_problem(payload, problem):
    with pytest.raises(RecordError, match=problem):
        parse_crossref_work(RawItem("doi:10.1234/x", payload, "test#item-0"))


@pytest.mark.django_db
def test_cursor_paging_follows_next_cursor_through_a_short_page_to_an_empty_one(
    server,
):
    pages = [
        json.loads((DECODED / f"test-cursor__test_cursor_max__{n}.json").read_text())
        for n in range(3)
    ]
    short = json.loads(
        (
            DECODED / "test-workscontainer__test_workscontainer_with_cursor__0.json"
        ).read_text()
    )
    empty = (
        DECODED / "test-prefixes__test_prefixes_mixed_ids_works_warn__2.json"
    ).read_text()
    assert json.loads(empty)["message"]["items"] == []
    cursor = pages[0]["message"]["next-cursor"]
    # Crossref hands back the same cursor value from page to page.
    assert pages[1]["message"]["next-cursor"] == cursor
    filters = "from-index-date:2026-11-01,until-index-date:2026-11-07"
    asked = {"rows": "1000", "filter": filters}
    # Each page is asked with the cursor the page before it handed out.
    answers = [pages[0], pages[1], short, pages[2], json.loads(empty)]
    asked_with = "*"
    for body in answers:
        server.expect_ordered_request(
            "/works", query_string={**asked, "cursor": asked_with}
        ).respond_with_json(body)
        asked_with = body["message"].get("next-cursor", "")

    with PoliteClient("crossref", politeness=QUICK) as client:
        walked = list(
            crossref_pages(
                client,
                server.url_for("/works"),
                filters={
                    "from-index-date": "2026-11-01",
                    "until-index-date": "2026-11-07",
                },
            )
        )
    server.check_assertions()
    assert [len(p.items) for p in walked] == [20, 20, 5, 20, 0]


@pytest.mark.django_db
def test_live_crossref_run_resumes_with_a_fresh_cursor_when_its_cursor_expired(
    server, settings
):
    settings.HARVEST_WINDOW_DAYS = 7
    first = json.loads((DECODED / "test-cursor__test_cursor_max__0.json").read_text())
    second = json.loads((DECODED / "test-cursor__test_cursor_max__1.json").read_text())
    empty = json.loads(
        (
            DECODED / "test-prefixes__test_prefixes_mixed_ids_works_warn__2.json"
        ).read_text()
    )
    expired = (
        DECODED / "test-cursor__test_cursor_fails_cursor_value__0.json"
    ).read_text()
    cursor = first["message"]["next-cursor"]
    asked = {
        "rows": "1000",
        "filter": "from-index-date:2026-11-01,until-index-date:2026-11-07",
    }
    server.expect_ordered_request(
        "/works", query_string={**asked, "cursor": "*"}
    ).respond_with_json(first)
    for _ in range(2):
        server.expect_ordered_request(
            "/works", query_string={**asked, "cursor": cursor}
        ).respond_with_data("busy", status=503)
    with PoliteClient("crossref", politeness=QUICK) as client:
        import datetime as dt

        run = services.harvest_crossref(
            from_date=dt.date(2026, 11, 1),
            until_date=dt.date(2026, 11, 7),
            base_url=server.url_for("/works"),
            client=client,
        )
        assert run.status == HarvestRun.Status.FAILED
        assert json.loads(run.cursor) == {"window": 0, "position": cursor}
        landed = Paper.objects.count()
        assert landed == 20 - 0  # the first page's works, every one with a title

        # Hours later the cursor has expired: Crossref refuses it; the window
        # starts again from "*" and nothing is stored twice.
        server.clear()
        server.expect_ordered_request(
            "/works", query_string={**asked, "cursor": cursor}
        ).respond_with_data(expired, status=404, content_type="application/json")
        server.expect_ordered_request(
            "/works", query_string={**asked, "cursor": "*"}
        ).respond_with_json(first)
        server.expect_ordered_request(
            "/works", query_string={**asked, "cursor": cursor}
        ).respond_with_json(second)
        server.expect_ordered_request(
            "/works", query_string={**asked, "cursor": cursor}
        ).respond_with_json(empty)
        run = services.harvest_crossref(run=run, client=client)
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    dois = {
        w["DOI"].lower() for w in first["message"]["items"] + second["message"]["items"]
    }
    assert set(Paper.objects.values_list("doi", flat=True)) <= dois
    assert RawRecord.objects.count() == len(dois)
    assert run.papers_unchanged == 20  # the first page again: stored, not re-parsed


@pytest.mark.django_db
def test_an_extra_filter_narrows_the_list_and_makes_it_a_list_of_its_own(server):
    empty = json.loads(
        (
            DECODED / "test-prefixes__test_prefixes_mixed_ids_works_warn__2.json"
        ).read_text()
    )
    asked = {
        "rows": "1000",
        "cursor": "*",
        "filter": "from-index-date:2026-11-01,until-index-date:2026-11-07,"
        "type:journal-article,prefix:10.1103",
    }
    server.expect_ordered_request("/works", query_string=asked).respond_with_json(empty)
    import datetime as dt

    with PoliteClient("crossref", politeness=QUICK) as client:
        run = services.harvest_crossref(
            from_date=dt.date(2026, 11, 1),
            until_date=dt.date(2026, 11, 7),
            extra_filter="type:journal-article, prefix:10.1103",
            base_url=server.url_for("/works"),
            client=client,
        )
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    from harvest import selectors

    base = server.url_for("/works")
    assert selectors.live_next_from(
        source="crossref",
        mode="crossref",
        base_url=base,
        filter="type:journal-article, prefix:10.1103",
    ) == dt.date(2026, 11, 7)
    assert (
        selectors.live_next_from(
            source="crossref", mode="crossref", base_url=base, filter=""
        )
        is None
    )
    with pytest.raises(ValueError, match="'prefix' is not name:value"):
        services.filters_parse("type:x,prefix")


def test_a_cursor_that_never_ends_is_stopped_past_the_announced_total(server):
    page = json.loads((DECODED / "test-cursor__test_cursor_max__1.json").read_text())
    assert page["message"]["total-results"] == 454
    server.expect_request("/works").respond_with_json(page)  # the same page, forever
    walked = []

    def walk() -> None:
        with PoliteClient("crossref", politeness=QUICK) as client:
            for p in crossref_pages(
                client, server.url_for("/works"), filters={}, rows=20
            ):
                walked.append(len(p.items))

    with pytest.raises(SourceRefused, match="more than the 454 the list announced"):
        walk()
    assert 454 < sum(walked) <= 454 * 1.5 + 20 + 20


@pytest.mark.django_db
def test_a_month_only_date_keeps_its_precision_on_the_page_and_in_the_api(client):
    kang = Path(__file__).resolve().parents[1] / "fixtures" / "crossref"
    run = services.harvest_files(source="crossref", root=kang / "kang_2007_work.json")
    assert run.papers_created == 1
    paper = Paper.objects.get()
    assert (paper.published.isoformat(), paper.published_precision) == (
        "2007-10-01",
        "month",
    )
    page = client.get(paper.get_absolute_url()).content.decode()
    assert "<dt>Published</dt><dd>2007-10</dd>" in page
    api = client.get(f"/api/papers/{paper.pk}/").json()
    assert (api["published"], api["published_precision"]) == ("2007-10-01", "month")


def _work_answer(name: str) -> dict:
    return json.loads((DECODED / name).read_text())


@pytest.mark.django_db
def test_dois_looked_up_one_by_one_are_stored_and_the_unknown_one_named(
    server, settings
):
    """The real answers of habanero's mixed-ids test: a work, 404 "Resource not
    found." for a DOI Crossref does not know, another work; asked through the
    command, with DOIs typed as resolver URLs, in capitals, and one twice."""
    settings.HARVEST_POLITENESS = {
        "crossref": {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }
    first = _work_answer("test-works__test_works_mixed_ids_warn__0.json")
    second = _work_answer("test-works__test_works_mixed_ids_warn__2.json")
    not_found = (DECODED / "test-works__test_works_mixed_ids_warn__1.txt").read_text()
    assert not_found.startswith("Resource not found.")
    server.expect_ordered_request(
        "/works/10.1371/journal.pone.0033693",
        headers={"User-Agent": user_agent()},
    ).respond_with_json(first)
    server.expect_ordered_request("/works/10.1371/notarealdoi").respond_with_data(
        not_found, status=404, content_type="text/plain"
    )
    server.expect_ordered_request(
        "/works/10.1371/journal.pone.0020476"
    ).respond_with_json(second)
    out = StringIO()
    call_command(
        "harvest",
        "crossref",
        "--ids",
        "https://doi.org/10.1371/JOURNAL.PONE.0033693, 10.1371/notarealdoi,"
        "doi:10.1371/journal.pone.0020476",
        "--url",
        server.url_for("/works"),
        "--no-progress",
        stdout=out,
    )
    server.check_assertions()
    run = HarvestRun.objects.get()
    assert (run.status, run.params["mode"], run.papers_created) == (
        "finished",
        "crossref-dois",
        2,
    )
    assert run.params["missing"] == ["10.1371/notarealdoi"]
    assert "not known to crossref: 10.1371/notarealdoi" in out.getvalue()
    assert set(Paper.objects.values_list("doi", flat=True)) == {
        "10.1371/journal.pone.0033693",
        "10.1371/journal.pone.0020476",
    }


@pytest.mark.django_db
def test_a_bad_answer_for_one_doi_costs_that_doi_alone(server, settings):
    """Each DOI's answer stands alone: one Crossref calls bad (its real HTTP 400
    validation failure), an HTML page, another DOI's work and a work list are
    each a failed record naming the DOI and the problem, and the DOIs around
    them are stored."""
    settings.HARVEST_POLITENESS = {
        "crossref": {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }
    refused = _work_answer(
        "test-works__test_works_query_filters_not_allowed_with_dois__0.json"
    )
    other = _work_answer("test-works__test_works_with_many_ids__2.json")
    listed = _work_answer("test-cursor__test_cursor_max__0.json")
    answers = {
        "10.1371/journal.pone.0033693": lambda r: r.respond_with_json(
            _work_answer("test-works__test_works_mixed_ids_warn__0.json")
        ),
        "10.5555/refused": lambda r: r.respond_with_json(refused, status=400),
        "10.5555/html": lambda r: r.respond_with_data(
            "<html><body>hello</body></html>", content_type="text/html"
        ),
        "10.5555/other": lambda r: r.respond_with_json(other),
        "10.5555/listed": lambda r: r.respond_with_json(listed),
        "10.1371/journal.pone.0020476": lambda r: r.respond_with_json(
            _work_answer("test-works__test_works_mixed_ids_warn__2.json")
        ),
    }
    for doi, answer in answers.items():
        answer(server.expect_ordered_request(f"/works/{doi}"))

    run = services.harvest_crossref_dois(
        dois=list(answers), base_url=server.url_for("/works")
    )

    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert (run.papers_created, run.records_failed, run.params["missing"]) == (
        2,
        4,
        [],
    )
    problems = {
        raw.external_id: raw.problem
        for raw in RawRecord.objects.filter(status=RawRecord.Status.FAILED)
    }
    assert problems == {
        "doi:10.5555/refused": problems["doi:10.5555/refused"],
        "doi:10.5555/html": "doi:10.5555/html: "
        + server.url_for("/works/10.5555/html")
        + ": not a JSON answer: '<html><body>hello</body></html>'",
        "doi:10.5555/other": "doi:10.5555/other: asked for 10.5555/other, "
        f"Crossref answered {other['message']['DOI'].lower()}",
        "doi:10.5555/listed": "doi:10.5555/listed: asked for 10.5555/listed, "
        "Crossref answered "
        + ", ".join(w["DOI"].lower() for w in listed["message"]["items"][:3])
        + " ...",
    }
    # Crossref's own words, on one line.
    assert problems["doi:10.5555/refused"].startswith(
        'doi:10.5555/refused: Crossref refused it: { "status": "failed", '
    )
    assert (
        "This route does not support field query parameters"
        in (problems["doi:10.5555/refused"])
    )
    assert not Paper.objects.filter(doi__startswith="10.5555/").exists()


@pytest.mark.django_db
def test_an_unavailable_crossref_fails_the_lookup_and_its_resume_asks_from_that_doi(
    server, settings, django_capture_on_commit_callbacks
):
    settings.HARVEST_POLITENESS = {
        "crossref": {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }
    first = _work_answer("test-works__test_works_mixed_ids_warn__0.json")
    dois = ["10.1371/journal.pone.0033693", "10.1371/journal.pone.0020476"]
    server.expect_ordered_request(f"/works/{dois[0]}").respond_with_json(first)
    for _ in range(2):
        server.expect_ordered_request(f"/works/{dois[1]}").respond_with_data(
            "Service Unavailable", status=503
        )
    run = services.harvest_crossref_dois(dois=dois, base_url=server.url_for("/works"))
    assert run.status == HarvestRun.Status.FAILED
    assert f"/works/{dois[1]} failed 2 times; last: HTTP 503" in run.error
    assert (run.cursor, run.papers_created) == ("1", 1)
    server.clear()
    server.expect_ordered_request(f"/works/{dois[1]}").respond_with_json(
        _work_answer("test-works__test_works_mixed_ids_warn__2.json")
    )
    # The operator's resume (admin action) queues the task with the run's id.
    with django_capture_on_commit_callbacks(execute=True):
        services.harvest_run_resume(run=run)
    server.check_assertions()
    resumed = HarvestRun.objects.get(pk=run.pk)
    assert (resumed.status, resumed.papers_created, resumed.cursor) == (
        "finished",
        2,
        "2",
    )
    assert Paper.objects.count() == 2
    # A re-run (admin action) asks the same DOIs again, in a run of its own.
    server.clear()
    for doi, name in zip(dois, ("0.json", "2.json"), strict=True):
        server.expect_ordered_request(f"/works/{doi}").respond_with_json(
            _work_answer(f"test-works__test_works_mixed_ids_warn__{name}")
        )
    services.harvest_run_repeat(run=resumed)
    server.check_assertions()
    again = HarvestRun.objects.exclude(pk=run.pk).get()
    assert (again.params["mode"], again.params["ids"]) == ("crossref-dois", dois)
    assert (again.status, again.papers_unchanged) == ("finished", 2)


def test_a_doi_with_characters_a_path_cannot_hold_is_percent_encoded(server):
    doi = "10.1002/(sici)1097-4636(199706)35:4<481::aid-jbm8>3.0.co;2-f"
    server.expect_ordered_request(
        "/works/10.1002/(sici)1097-4636(199706)35:4<481::aid-jbm8>3.0.co;2-f"
    ).respond_with_data("Resource not found.", status=404)
    with PoliteClient("crossref", politeness=QUICK) as client:
        assert crossref_work(client, server.url_for("/works"), doi) is None
    server.check_assertions()
    # As it went on the wire (the server's own view of the path is decoded).
    sent = server.log[0][0].environ["REQUEST_URI"]
    assert sent == (
        "/works/10.1002/%28sici%291097-4636%28199706%2935%3A4%3C481%3A%3Aaid-jbm8"
        "%3E3.0.co%3B2-f"
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "source", ["crossref", "openalex", "semanticscholar"], ids=lambda s: s
)
def test_a_record_that_is_not_a_json_object_is_kept_failed_and_the_rest_stored(
    tmp_path, source
):
    """A real list answer with two of its records replaced by JSON that is not an
    object (an array, a number): each is a raw record failed with its error, the
    run goes on and stores every other record."""
    data = Path(settings.WOVEPAPER_DATA_DIR)
    if source == "crossref":
        answer = json.loads(
            (DECODED / "test-cursor__test_cursor_max__0.json").read_text()
        )
        items = answer["message"]["items"]
    elif source == "openalex":
        answer = json.loads(
            (data / "openalex/peneira_works_page/works_search_page1.json").read_text()
        )
        items = answer["results"]
    else:
        answer = json.loads(
            (
                data / "semanticscholar/semanticscholar_py/decoded"
                "/test_get_papers_return_not_found__0.json"
            ).read_text()
        )
        items = answer
    good = len(items) - 2 - sum(1 for i in items if i is None)
    items[1] = ["not", "an", "object"]
    items[-1] = 42
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(answer))

    run = services.harvest_files(source=source, root=path)

    assert run.status == HarvestRun.Status.FINISHED
    assert run.records_failed == 2
    assert run.papers_created == Paper.objects.count() == good
    failed = RawRecord.objects.filter(status=RawRecord.Status.FAILED)
    assert sorted(
        (json.loads(p) for p in failed.values_list("payload", flat=True)), key=str
    ) == [42, ["not", "an", "object"]]
    for locator, error in failed.values_list("locator", "error"):
        assert error.startswith(locator)
        assert re.search(r"must be a JSON object$", error), error


def test_ids_typed_for_a_lookup_are_split_where_another_id_starts():
    from harvest.management.commands.harvest import _PAPER_LOOKUPS, _lookup_ids

    crossref, s2 = _PAPER_LOOKUPS["crossref"], _PAPER_LOOKUPS["semanticscholar"]
    typed = "10.1000/a,b, https://doi.org/10.1000/C,doi:10.1000/d,,, 10.1000/c ,"
    assert _lookup_ids(typed, crossref) == ["10.1000/a,b", "10.1000/c", "10.1000/d"]
    assert _lookup_ids(
        f"DOI:10.1000/a,b,CorpusId:1,{SHA_UPPER},2201.05500,hep-th/9901001", s2
    ) == [
        "DOI:10.1000/a,b",
        "CorpusId:1",
        SHA_UPPER.lower(),
        "ARXIV:2201.05500",
        "ARXIV:hep-th/9901001",
    ]
    assert _lookup_ids(",,, ,", crossref) == []
    # A comma that starts no id belongs to the suffix before it, and a suffix
    # holds no space.
    with pytest.raises(ValueError, match="'10.1000/a, nope' is not a DOI"):
        _lookup_ids("10.1000/a, nope", crossref)
    for odd in ("10.5555/./g", "10.5555/.", "10.１２３４/x", "10.5555/" + "x" * 300):
        with pytest.raises(ValueError, match="is not a DOI"):
            _lookup_ids(odd, crossref)


@pytest.mark.django_db
def test_the_command_refuses_ids_it_cannot_look_up_and_options_it_would_ignore(
    tmp_path,
):
    refusals = [
        (["openalex", "--ids", "W2741809807"], "--ids names papers of arxiv, crossref"),
        (["crossref", "--ids", "x"], r"--ids: 'x' is not a DOI"),
        (["crossref", "--ids", ",,,"], "--ids names no DOI"),
        (
            ["crossref", "--ids", "10.1000/a", "--file", str(tmp_path)],
            "--ids looks records up live; --file and --dir read saved ones",
        ),
        (
            [
                "crossref",
                "--ids",
                "10.1000/a",
                "--from",
                "2026-11-01",
                "--filter",
                "x:y",
            ],
            "--from, --filter cannot go with --ids: --ids asks for those ids alone",
        ),
        (
            ["semanticscholar", "--ids", "CorpusId:1", "--until", "2026-11-01"],
            "--until cannot go with --ids",
        ),
        (
            ["crossref", "--resume", "1", "--ids", "10.1000/a"],
            "--ids cannot go with --resume: a resumed run asks what it asked",
        ),
    ]
    for argv, problem in refusals:
        with pytest.raises(CommandError, match=problem):
            call_command("harvest", *argv, "--no-progress")
    assert not HarvestRun.objects.exists()


@pytest.mark.django_db
def test_ids_are_read_from_a_file_one_a_line(server, settings, tmp_path):
    settings.HARVEST_POLITENESS = {"crossref": {"min_interval": 0}}
    listed = tmp_path / "dois.txt"
    listed.write_text(
        "# DOIs to refresh\n10.1371/journal.pone.0033693\n\n10.1371/notarealdoi\n"
    )
    server.expect_ordered_request(
        "/works/10.1371/journal.pone.0033693"
    ).respond_with_json(_work_answer("test-works__test_works_mixed_ids_warn__0.json"))
    server.expect_ordered_request("/works/10.1371/notarealdoi").respond_with_data(
        "Resource not found.", status=404
    )
    call_command(
        "harvest",
        "crossref",
        "--ids",
        f"@{listed}",
        "--url",
        server.url_for("/works"),
        "--no-progress",
    )
    server.check_assertions()
    run = HarvestRun.objects.get()
    assert run.params["ids"] == ["10.1371/journal.pone.0033693", "10.1371/notarealdoi"]
    assert (run.papers_created, run.params["missing"]) == (1, ["10.1371/notarealdoi"])
    with pytest.raises(CommandError, match="nowhere.txt: cannot read ids"):
        call_command("harvest", "crossref", "--ids", f"@{tmp_path / 'nowhere.txt'}")
