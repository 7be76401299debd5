"""ROR: schema v1 and v2 records into Institutions, on the real recorded records."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from harvest import services
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
