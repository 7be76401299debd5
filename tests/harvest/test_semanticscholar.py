"""Semantic Scholar: the parser on the real recorded answers, the batch lookup with
its nulls and bulk-search tokens against a local server, and the S2 backfill."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from harvest import services
from harvest.models import HarvestRun, RawRecord
from harvest.records import RawItem, RecordError
from harvest.sources.polite_http import PoliteClient, Politeness
from harvest.sources.semanticscholar import (
    PAPER_FIELDS,
    parse_s2_paper,
    s2_bulk_pages,
    s2_page_read,
    s2_paper_id_normalise,
    split_s2_page,
)
from tests.factories import PaperFactory
from wovepaper.models import Paper

S2 = Path(settings.WOVEPAPER_DATA_DIR) / "semanticscholar" / "semanticscholar_py"
BATCH = S2 / "decoded" / "test_get_papers_return_not_found__0.json"
# The real answer for CorpusId:211530585 (unknown: null), CorpusId:470667, the DOI
# 10.2139/ssrn.2250500 and a paperId (the request body is in its cassette).
NOT_FOUND = S2 / "decoded" / "test_get_papers_not_found_warning__0.json"
SHA = "0f40b1f08821e22e859c6050916cec3667778613"
QUICK = Politeness(min_interval=0, timeout=5, max_tries=3, backoff_base=0.01)


def test_a_full_paper_with_external_ids_and_author_ids():
    page = s2_page_read((S2 / "json" / "Paper.json").read_text(), "Paper.json")
    [paper] = [parse_s2_paper(i) for i in split_s2_page(page)]
    assert paper.s2_id == "2d5673caa9e6af3a7b82a43f19ee920992db07ad"
    assert paper.doi == "10.1093/mind/lix.236.433"
    assert paper.title == "Computing Machinery and Intelligence"
    assert (paper.published.isoformat(), paper.published_precision) == (
        "1950-10-01",
        "day",
    )
    assert paper.cited_by_count == 10059
    [turing] = paper.authors
    assert (turing.family_name, turing.s2_author_id) == ("Turing", "2262347")


def test_a_batch_answer_keeps_its_nulls_out():
    page = s2_page_read(BATCH.read_text(), "batch")
    assert page.items[0] is None
    papers = [parse_s2_paper(i) for i in split_s2_page(page)]
    assert [p.doi for p in papers] == [
        "10.2139/ssrn.288970",
        "10.2139/ssrn.2250500",
        "10.1257/rct.1355",
    ]
    assert papers[2].published_precision == "year"  # no publicationDate, year 2023


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ("[]", "must be a JSON object"),
        ('{"title": "x"}', "without a paperId"),
        ('{"paperId": "abc", "title": null}', "without a title"),
    ],
)
def test_broken_papers_are_refused_naming_the_problem(payload, problem):
    with pytest.raises(RecordError, match=problem):
        parse_s2_paper(RawItem("x", payload, "test#paper-0"))


def test_bulk_search_follows_its_token_to_the_end(server):
    first = json.loads(
        (
            S2 / "decoded" / "test_search_paper_bulk_retrieval_next_page__0.json"
        ).read_text()
    )
    second = json.loads(
        (
            S2 / "decoded" / "test_search_paper_bulk_retrieval_next_page__1.json"
        ).read_text()
    )
    last = {**second, "token": None}
    asked = {"query": "kubernetes", "fields": PAPER_FIELDS, "year": "2020-"}
    server.expect_ordered_request(
        "/graph/v1/paper/search/bulk", query_string=asked
    ).respond_with_json(first)
    server.expect_ordered_request(
        "/graph/v1/paper/search/bulk", query_string={**asked, "token": first["token"]}
    ).respond_with_json(last)
    with PoliteClient("semanticscholar", politeness=QUICK) as client:
        pages = list(
            s2_bulk_pages(
                client,
                server.url_for("/graph/v1"),
                query="kubernetes",
                params={"year": "2020-"},
            )
        )
    server.check_assertions()
    assert [len(p.items) for p in pages] == [1000, 1000]


@pytest.mark.django_db
def test_backfill_asks_in_batches_and_fills_s2_ids_past_429s(server, settings):
    settings.HARVEST_POLITENESS = {
        "semanticscholar": {"min_interval": 0, "max_tries": 4, "backoff_base": 0.01}
    }
    settings.S2_API_KEY = "test-key"
    dois = ["10.2139/ssrn.288970", "10.2139/ssrn.2250500", "10.1257/rct.1355"]
    papers = [PaperFactory(doi=doi, arxiv_id=None) for doi in dois]
    unknown = PaperFactory(arxiv_id="2401.99999", doi=None)
    asked_ids = [f"ARXIV:{unknown.arxiv_id}"] + [f"DOI:{p.doi}" for p in papers[::-1]]
    answer = json.loads(BATCH.read_text())  # null first, then the three papers
    path = "/graph/v1/paper/batch"
    # The shared pool's 429 carries no Retry-After: backed off, then answered.
    server.expect_ordered_request(path, method="POST").respond_with_data(
        "Too Many Requests", status=429
    )
    server.expect_ordered_request(
        path,
        method="POST",
        query_string={"fields": PAPER_FIELDS},
        json={"ids": asked_ids},
        headers={"x-api-key": "test-key"},
    ).respond_with_json([answer[0], *answer[1:][::-1]])
    run = services.harvest_s2_backfill(base_url=server.url_for("/graph/v1"))
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert run.papers_updated == 3
    for paper, item in zip(papers, answer[1:], strict=True):
        paper.refresh_from_db()
        assert paper.s2_id == item["paperId"]
        assert paper.cited_by_count == item["citationCount"]
    missed = Paper.objects.get(pk=unknown.pk)
    assert missed.s2_id is None
    assert missed.s2_not_found_at is not None
    # A second run asks nothing: S2 said it does not know the last one.
    server.clear()
    again = services.harvest_s2_backfill(base_url=server.url_for("/graph/v1"))
    assert (again.status, again.params["asked"], len(server.log)) == ("finished", 0, 0)
    # S2_RECHECK_DAYS later it is asked again.
    Paper.objects.filter(pk=unknown.pk).update(
        s2_not_found_at=missed.s2_not_found_at
        - timedelta(days=settings.S2_RECHECK_DAYS + 1)
    )
    server.expect_ordered_request(
        path, method="POST", json={"ids": [f"ARXIV:{unknown.arxiv_id}"]}
    ).respond_with_json([None])
    later = services.harvest_s2_backfill(base_url=server.url_for("/graph/v1"))
    server.check_assertions()
    assert (later.status, later.params["asked"]) == ("finished", 1)


@pytest.mark.django_db
def test_an_authors_papers_are_paged_by_offset_and_resume_after_a_failure(
    server, settings
):
    """The real nine pages of /author/1723755/papers (875 papers, offsets 0 to
    800): a 503 storm at offset 400 fails the run after four pages; the resume
    asks from 400 on and ends with every paper once."""
    from django.core.management import CommandError, call_command

    settings.HARVEST_POLITENESS = {
        "semanticscholar": {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }
    pages = [
        json.loads((S2 / "decoded" / f"test_get_author_papers__{i}.json").read_text())
        for i in range(9)
    ]
    path = "/graph/v1/author/1723755/papers"

    def expect(offset, answer, status=200):
        server.expect_ordered_request(
            path,
            query_string={
                "fields": PAPER_FIELDS,
                "offset": str(offset),
                "limit": "100",
            },
        ).respond_with_json(answer, status=status)

    for page in pages[:4]:
        expect(page["offset"], page)
    for _ in range(2):
        expect(400, {"message": "busy"}, status=503)
    with pytest.raises(CommandError, match="--resume"):
        call_command(
            "harvest",
            "semanticscholar",
            "--author-papers",
            "https://www.semanticscholar.org/author/1723755",
            "--url",
            server.url_for("/graph/v1"),
            "--no-progress",
        )
    run = HarvestRun.objects.get()
    assert (run.status, run.cursor, Paper.objects.count()) == ("failed", "400", 400)
    server.clear()
    for page in pages[4:]:
        expect(page["offset"], page)
    call_command("harvest", "semanticscholar", "--resume", str(run.pk), "--no-progress")
    server.check_assertions()
    run.refresh_from_db()
    assert (run.status, run.papers_created) == ("finished", 875)
    every = {p["paperId"] for page in pages for p in page["data"]}
    assert len(every) == 875
    assert set(Paper.objects.values_list("s2_id", flat=True)) == every
    with pytest.raises(CommandError, match="is not a Semantic Scholar author id"):
        call_command("harvest", "semanticscholar", "--author-papers", "../x")


@pytest.mark.parametrize(
    ("typed", "asked"),
    [
        ("CorpusId:211530585", "CorpusId:211530585"),
        ("corpusid:470667", "CorpusId:470667"),
        ("10.2139/SSRN.2250500", "DOI:10.2139/ssrn.2250500"),
        ("https://doi.org/10.1257/rct.1355", "DOI:10.1257/rct.1355"),
        ("doi:10.1257/rct.1355", "DOI:10.1257/rct.1355"),
        ("0F40B1F08821E22E859C6050916CEC3667778613", SHA),
        (f"https://www.semanticscholar.org/paper/A-Title/{SHA}", SHA),
        ("arXiv:2201.05500v2", "ARXIV:2201.05500"),
        ("hep-th/9901001", "ARXIV:hep-th/9901001"),
        ("PMID:19872477", "PMID:19872477"),
    ],
)
def test_paper_ids_are_read_in_every_form_the_api_takes(typed, asked):
    assert s2_paper_id_normalise(typed) == asked


@pytest.mark.parametrize(
    ("typed", "problem"),
    [
        ("", "is not a Semantic Scholar paper id"),
        ("a paper", "is not a Semantic Scholar paper id"),
        ("CorpusId:abc", "a CorpusId is a number"),
        ("DOI:nope", "is not a DOI"),
        ("ARXIV:1234", "is not an arXiv id"),
    ],
)
def test_a_paper_id_of_no_known_form_is_refused_naming_it(typed, problem):
    with pytest.raises(ValueError, match=problem):
        s2_paper_id_normalise(typed)


@pytest.mark.django_db
def test_papers_looked_up_by_id_are_stored_and_the_unknown_one_named(server, settings):
    """The real batch answer for four ids (a null for the unknown CorpusId),
    asked through the command: three papers stored, the fourth id named."""
    settings.HARVEST_POLITENESS = {"semanticscholar": {"min_interval": 0}}
    settings.S2_API_KEY = "test-key"
    answer = json.loads(NOT_FOUND.read_text())
    typed = [
        "corpusid:211530585",
        "CorpusId:470667",
        "https://doi.org/10.2139/ssrn.2250500",
        SHA,
    ]
    asked = ["CorpusId:211530585", "CorpusId:470667", "DOI:10.2139/ssrn.2250500", SHA]
    server.expect_ordered_request(
        "/graph/v1/paper/batch",
        method="POST",
        query_string={"fields": PAPER_FIELDS},
        json={"ids": asked},
        headers={"x-api-key": "test-key"},
    ).respond_with_json(answer)
    out = StringIO()
    call_command(
        "harvest",
        "semanticscholar",
        "--ids",
        ",".join(typed),
        "--url",
        server.url_for("/graph/v1"),
        "--no-progress",
        stdout=out,
    )
    server.check_assertions()
    run = HarvestRun.objects.get()
    assert (run.status, run.params["mode"], run.papers_created) == (
        "finished",
        "s2-papers",
        3,
    )
    assert run.params["missing"] == ["CorpusId:211530585"]
    assert "not known to semanticscholar: CorpusId:211530585" in out.getvalue()
    assert set(Paper.objects.values_list("s2_id", flat=True)) == {
        entry["paperId"] for entry in answer if entry
    }


@pytest.mark.django_db
def test_a_paper_lookup_resumes_at_the_batch_that_did_not_land(
    server, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.HARVEST_POLITENESS = {
        "semanticscholar": {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }
    answer = json.loads(NOT_FOUND.read_text())
    ids = ["CorpusId:211530585", "CorpusId:470667", "DOI:10.2139/ssrn.2250500", SHA]
    path = "/graph/v1/paper/batch"
    server.expect_ordered_request(
        path, method="POST", json={"ids": ids[:2]}
    ).respond_with_json(answer[:2])
    for _ in range(2):
        server.expect_ordered_request(path, method="POST").respond_with_data(
            "Service Unavailable", status=503
        )
    # Two ids a batch, so that four make two batches.
    monkeypatch.setattr("harvest.sources.semanticscholar.BATCH_MAX", 2)
    run = services.harvest_s2_papers(ids=ids, base_url=server.url_for("/graph/v1"))
    assert run.status == HarvestRun.Status.FAILED
    assert "failed 2 times" in run.error
    assert (run.cursor, run.papers_created) == ("2", 1)
    server.clear()
    server.expect_ordered_request(
        path, method="POST", json={"ids": ids[2:]}
    ).respond_with_json(answer[2:])
    # The operator's resume (admin action) queues the task with the run's id.
    with django_capture_on_commit_callbacks(execute=True):
        services.harvest_run_resume(run=run)
    resumed = HarvestRun.objects.get(pk=run.pk)
    server.check_assertions()
    assert (resumed.status, resumed.papers_created) == ("finished", 3)
    assert resumed.params["missing"] == ["CorpusId:211530585"]
    assert Paper.objects.count() == 3


@pytest.mark.django_db
def test_a_batch_entry_that_is_no_paper_fails_naming_the_id_it_answered(
    server, settings
):
    settings.HARVEST_POLITENESS = {"semanticscholar": {"min_interval": 0}}
    answer = json.loads(NOT_FOUND.read_text())
    ids = ["CorpusId:470667", "URL:https://example.org/x", "CorpusId:211530585"]
    server.expect_ordered_request(
        "/graph/v1/paper/batch", method="POST"
    ).respond_with_json([answer[1], ["not", "a", "paper"], None])
    run = services.harvest_s2_papers(ids=ids, base_url=server.url_for("/graph/v1"))
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert (run.papers_created, run.records_failed) == (1, 1)
    assert run.params["missing"] == ["CorpusId:211530585"]
    (failed,) = RawRecord.objects.filter(status=RawRecord.Status.FAILED)
    place = server.url_for("/graph/v1/paper/batch") + "#URL:https://example.org/x"
    assert failed.external_id == place
    assert failed.problem == f"{place}: a paper must be a JSON object"
