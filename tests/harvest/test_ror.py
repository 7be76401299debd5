"""ROR: schema v1 and v2 records into Institutions, on the real recorded records."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from harvest import services
from harvest.models import RawRecord
from harvest.records import NotARecordFile, RawItem, RecordError
from harvest.sources.ror import parse_ror_record, read_ror_file
from wovepaper.models import Institution

ROR = Path(settings.WOVEPAPER_DATA_DIR) / "ror"


def records(name: str) -> dict:
    return {
        r.ror_id: r for r in (parse_ror_record(i) for i in read_ror_file(ROR / name))
    }


def test_v1_and_v2_records_of_the_same_organisations_agree():
    v1 = records("ror_v1_records_from_es_search.json")
    v2 = records("ror_v2_records_from_es_search.json")
    assert len(v1) == len(v2) == 20
    shared = set(v1) & set(v2)
    assert len(shared) == 15
    for rid in shared:
        old, new = v1[rid], v2[rid]
        assert (old.name, old.aliases, old.country_code, old.types) == (
            new.name,
            new.aliases,
            new.country_code,
            new.types,
        ), rid
    anu = v1["019wvm592"]
    assert anu.name == "Australian National University"
    assert anu.aliases == ("ANU",)
    assert anu.country_code == "AU"
    assert anu.types == ("education",)
    assert {
        "type": "child",
        "ror_id": "006a4jj40",
        "label": "Mount Stromlo Observatory",
    } in anu.relationships
    unsw = v1["03r8z3t63"]
    assert unsw.aliases == ("University of New South Wales", "UNSW")


def test_elasticsearch_answers_and_files_without_organisations():
    retrieved = records("ror_api_es_responses/test_data_retrieve_es7_v2.json")
    assert len(retrieved) == 1
    with pytest.raises(NotARecordFile, match="no ROR organisation records"):
        list(read_ror_file(ROR / "affiliation_matching_labeled" / "dataset_names.json"))


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ("[]", "must be a JSON object"),
        ('{"id": "https://ror.org/nonsense", "name": "X"}', "without a ROR id"),
        ('{"id": "https://ror.org/019wvm592", "names": []}', "without a name"),
    ],
)
def test_broken_records_are_refused_naming_the_problem(payload, problem):
    with pytest.raises(RecordError, match=problem):
        parse_ror_record(RawItem("x", payload, "test#org-0"))


@pytest.mark.django_db
def test_harvest_makes_institutions_and_refines_one_openalex_made():
    Institution.objects.create(ror_id="019wvm592", name="ANU (from OpenAlex)")
    run = services.harvest_files(source="ror", root=ROR)
    assert run.records_failed == 0
    assert run.papers_updated >= 1
    anu = Institution.objects.get(ror_id="019wvm592")
    assert anu.name == "Australian National University"
    assert anu.status == "active"
    assert any(r["type"] == "child" for r in anu.relationships)
    assert Institution.objects.count() == len(
        {
            *records("ror_v1_records_from_es_search.json"),
            *records("ror_v2_records_from_es_search.json"),
            *records("ror_api_es_responses/test_data_search_es7.json"),
            *records("ror_api_es_responses/test_data_search_es7_v2.json"),
            *records("ror_api_es_responses/test_data_retrieve_es7.json"),
            *records("ror_api_es_responses/test_data_retrieve_es7_v2.json"),
            *records("ror_api_es_responses/test_data_create_valid.json"),
            *records("ror_api_es_responses/test_update_valid.json"),
        }
    )
    again = services.harvest_files(source="ror", root=ROR)
    assert (again.papers_created, again.papers_updated) == (0, 0)


def _v2_records() -> list[dict]:
    import json

    return json.loads((ROR / "ror_v2_records_from_es_search.json").read_text())


@pytest.mark.django_db
def test_ror_lookup_describes_what_other_sources_only_mentioned(
    server, settings, django_capture_on_commit_callbacks
):
    """Institutions an OpenAlex mention made (no ROR record) are looked up one by
    one, ``Client-Id`` sent; ROR's names replace the mention's; a 404 is a failed
    record naming the id and marks the institution so no later backfill asks;
    a 503 storm fails the run, and the operator's resume asks only the rest."""
    settings.ROR_CLIENT_ID = "client-123"
    settings.HARVEST_POLITENESS = {
        "ror": {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }
    v1 = records("ror_v1_records_from_es_search.json")
    assert len(v1) == 20
    fresh = [r for r in _v2_records() if r["id"].rsplit("/", 1)[-1] not in v1][:3]
    assert len(fresh) == 3
    ids = sorted(r["id"].rsplit("/", 1)[-1] for r in fresh)
    by_id = {r["id"].rsplit("/", 1)[-1]: r for r in fresh}
    for rid in ids:
        Institution.objects.create(ror_id=rid, name=f"mention of {rid}")
    missing = "05dxps055"  # a real ROR id (Caltech), unknown to this server
    Institution.objects.create(ror_id=missing, name="Caltech")
    # 20 that ROR described before (their records parsed from a file): not asked.
    services.harvest_files(
        source="ror", root=ROR / "ror_v1_records_from_es_search.json"
    )
    assert Institution.objects.count() == 24
    wanted = sorted([*ids, missing])
    first, rest = wanted[:2], wanted[2:]
    for rid in first:
        server.expect_ordered_request(
            f"/ror/{rid}", headers={"Client-Id": "client-123"}
        ).respond_with_json(by_id[rid] if rid in by_id else {})
    for _ in range(2):
        server.expect_ordered_request(f"/ror/{rest[0]}").respond_with_data(
            "busy", status=503
        )
    run = services.harvest_ror_ids(base_url=server.url_for("/ror"))
    assert run.status == "failed", run.error
    assert "503" in run.error
    server.clear()
    for rid in rest:
        if rid == missing:
            server.expect_ordered_request(f"/ror/{rid}").respond_with_json(
                {"errors": [f"ROR ID '{rid}' does not exist"]}, status=404
            )
        else:
            server.expect_ordered_request(f"/ror/{rid}").respond_with_json(by_id[rid])
    with django_capture_on_commit_callbacks(execute=True):
        services.harvest_run_resume(run=run)
    server.check_assertions()
    run.refresh_from_db()
    assert run.status == "finished", run.error
    assert (run.papers_updated, run.records_failed) == (3, 1)
    for rid, record in by_id.items():
        institution = Institution.objects.get(ror_id=rid)
        assert institution.status == record["status"] == "active"
        assert institution.name != f"mention of {rid}"
        assert institution.country_code == "AU"
    assert Institution.objects.get(ror_id=missing).status == "unknown"
    failed = RawRecord.objects.get(external_id=missing)
    assert failed.error.endswith(f"ROR answered 404: no organisation {missing}")
    # Nothing is left to describe: a backfill asks nothing.
    server.clear()
    again = services.harvest_ror_ids(base_url=server.url_for("/ror"))
    assert (again.status, again.params["asked"], len(server.log)) == ("finished", 0, 0)


@pytest.mark.django_db
def test_ror_answering_another_record_is_refused_and_a_404_is_undone(server, settings):
    settings.HARVEST_POLITENESS = {
        "ror": {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }
    monash = _v2_records()[0]  # 02bfwt286
    Institution.objects.create(ror_id="05dxps055", name="Caltech")
    Institution.objects.create(ror_id="02bfwt286", name="mention of Monash")
    server.expect_ordered_request("/ror/05dxps055").respond_with_json(monash)
    run = services.harvest_ror_ids(ids=["05dxps055"], base_url=server.url_for("/ror"))
    assert run.records_failed == 1
    assert RawRecord.objects.get(external_id="05dxps055").error.endswith(
        "asked ROR for 05dxps055, answered the record of 02bfwt286"
    )
    assert Institution.objects.get(ror_id="02bfwt286").name == "mention of Monash"
    # 404, then the record again: the institution is ROR's again, not "unknown".
    server.clear()
    server.expect_ordered_request("/ror/02bfwt286").respond_with_json(
        {"errors": ["no"]}, status=404
    )
    for _ in range(2):
        server.expect_ordered_request("/ror/02bfwt286").respond_with_json(monash)
    for _ in range(3):
        services.harvest_ror_ids(ids=["02bfwt286"], base_url=server.url_for("/ror"))
    server.check_assertions()
    monash_row = Institution.objects.get(ror_id="02bfwt286")
    assert (monash_row.name, monash_row.status) == ("Monash University", "active")
