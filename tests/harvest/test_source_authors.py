"""Author profiles of OpenAlex and Semantic Scholar: the parsers on the real recorded
answers, saved answers harvested from files, and live lookups against a local
server (an OpenAlex merge moves the byline slots; unknown ids become tombstones;
a failed lookup resumes where it stopped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from harvest import services
from harvest.models import HarvestRun, RawRecord, SourceAuthor
from harvest.records import RawItem, RecordError
from harvest.sources import openalex
from harvest.sources import semanticscholar as s2
from tests.factories import AuthorshipFactory
from wovepaper.models import Authorship

OA = Path(settings.WOVEPAPER_DATA_DIR) / "openalex" / "openalex_python_entities"
S2 = Path(settings.WOVEPAPER_DATA_DIR) / "semanticscholar" / "semanticscholar_py"
S2_BATCH = S2 / "decoded" / "test_get_authors_return_not_found__0.json"
PRIEM = "A5023888391"


def _item(path: Path, asked: str = "") -> RawItem:
    entry = json.loads(path.read_text())
    return RawItem(
        external_id=asked or openalex.author_id(entry["id"]),
        payload=json.dumps(entry),
        locator=path.name,
    )


def test_openalex_author_current_schema():
    record = openalex.parse_openalex_author(_item(OA / f"{PRIEM}.json"))
    assert (record.external_id, record.name) == (PRIEM, "Jason Priem")
    assert record.orcid == "0000-0001-6187-6610"
    assert record.aliases == ("Priem Jason",)
    assert record.ror_ids[0] == "02nr0ka47"  # last known: OurResearch
    assert len(record.ror_ids) > 1  # then the other affiliations, once each
    assert len(set(record.ror_ids)) == len(record.ror_ids)
    assert (record.works_count, record.merged_into, record.deleted) == (62, "", False)


def test_openalex_author_2022_schema_and_tombstone():
    legacy = openalex.parse_openalex_author(_item(OA / "A-api-response.json"))
    assert (legacy.external_id, legacy.name) == ("A2150889177", "B. P. Abbott")
    assert legacy.ror_ids == ("05dxps055",)  # the single last_known_institution
    assert legacy.aliases == ("Barry P. Abbott", "B.P. Abbott", "Abbott, B.P.")
    assert legacy.works_count == 523
    tombstone = openalex.parse_openalex_author(_item(OA / "A5317838346.json"))
    assert (tombstone.name, tombstone.deleted) == ("Deleted Author", True)


def test_openalex_author_answered_under_another_id_is_a_merge():
    merged = openalex.parse_openalex_author(_item(OA / f"{PRIEM}.json", "A1111111111"))
    assert (merged.external_id, merged.merged_into) == ("A1111111111", PRIEM)
    assert not merged.deleted


def test_s2_author_and_batch_with_null():
    page = s2.s2_authors_read((S2 / "json" / "Author.json").read_text(), "Author")
    [turing] = [s2.parse_s2_author(i) for i in s2.split_s2_authors(page)]
    assert (turing.external_id, turing.name, turing.works_count) == (
        "2262347",
        "A. Turing",
        60,
    )
    assert turing.orcid == ""  # only a DBLP name among its external ids
    batch = s2.s2_authors_read(S2_BATCH.read_text(), "batch")
    assert batch.items[0] is None
    assert [s2.parse_s2_author(i).name for i in s2.split_s2_authors(batch)] == [
        "E. Dijkstra",
        "D. Parnas",
        "I. Sommerville",
    ]


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ('{"authorId": "x1", "name": "A"}', "not a Semantic Scholar author"),
        ("[1, 2]", "an author must be a JSON object"),
    ],
)
def test_broken_s2_authors_are_refused_by_name(payload, problem):
    with pytest.raises(RecordError, match=problem):
        s2.parse_s2_author(RawItem(external_id="x", payload=payload, locator="loc"))


@pytest.mark.django_db
def test_saved_author_answers_harvest_into_profiles(tmp_path):
    for name in (f"{PRIEM}.json", "A-api-response.json", "A5317838346.json"):
        (tmp_path / "openalex" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "openalex" / name).symlink_to(OA / name)
    (tmp_path / "s2").mkdir()
    (tmp_path / "s2" / "Author.json").symlink_to(S2 / "json" / "Author.json")
    (tmp_path / "s2" / "batch.json").symlink_to(S2_BATCH)
    run = services.harvest_files(source="openalex", root=tmp_path / "openalex")
    assert (run.status, run.papers_created, run.records_failed) == ("finished", 3, 0)
    again = services.harvest_files(source="openalex", root=tmp_path / "openalex")
    assert (again.papers_created, again.papers_unchanged) == (0, 3)
    run = services.harvest_files(source="semanticscholar", root=tmp_path / "s2")
    assert (run.papers_created, run.records_failed) == (4, 0)
    assert set(SourceAuthor.objects.values_list("source", "external_id")) == {
        ("openalex", PRIEM),
        ("openalex", "A2150889177"),
        ("openalex", "A5317838346"),
        ("semanticscholar", "2262347"),
        ("semanticscholar", "3234559"),
        ("semanticscholar", "1726629"),
        ("semanticscholar", "1711844"),
    }
    priem = SourceAuthor.objects.get(external_id=PRIEM)
    assert (priem.orcid, priem.raw_record.status) == ("0000-0001-6187-6610", "parsed")
    assert SourceAuthor.objects.get(external_id="A5317838346").deleted


def _quick(settings, source):
    settings.HARVEST_POLITENESS = {
        source: {"min_interval": 0, "max_tries": 2, "backoff_base": 0.01}
    }


@pytest.mark.django_db
def test_openalex_lookup_moves_merged_slots_and_keeps_tombstones(server, settings):
    _quick(settings, "openalex")
    settings.OPENALEX_API_KEY = "oa-key"
    legacy = json.loads((OA / "A-api-response.json").read_text())
    priem = json.loads((OA / f"{PRIEM}.json").read_text())
    for aid in ("A2150889177", PRIEM, "A1111111111", "A9999999999"):
        AuthorshipFactory(openalex_author_id=aid)
    wanted = ["A1111111111", "A2150889177", PRIEM, "A9999999999"]  # ascending
    server.expect_ordered_request(
        "/oa/authors",
        query_string={
            "filter": "openalex:" + "|".join(wanted),
            "per-page": "4",
            "api_key": "oa-key",
        },
    ).respond_with_json({"meta": {"count": 2}, "results": [priem, legacy]})
    # A merged id answers with a redirect to its survivor; an unknown one 404.
    server.expect_ordered_request("/oa/authors/A1111111111").respond_with_data(
        "", status=301, headers={"Location": server.url_for(f"/oa/authors/{PRIEM}")}
    )
    server.expect_ordered_request(f"/oa/authors/{PRIEM}").respond_with_json(priem)
    server.expect_ordered_request("/oa/authors/A9999999999").respond_with_json(
        {"error": "Not Found"}, status=404
    )
    # --url names the works endpoint for every OpenAlex harvest; authors live
    # beside it.
    run = services.harvest_openalex_authors(base_url=server.url_for("/oa/works"))
    server.check_assertions()
    assert run.status == HarvestRun.Status.FINISHED, run.error
    assert (run.records_seen, run.papers_created, run.records_failed) == (4, 4, 0)
    assert run.params["unknown"] == ["A9999999999"]
    merged = SourceAuthor.objects.get(external_id="A1111111111")
    assert (merged.merged_into, merged.name) == (PRIEM, "Jason Priem")
    # The slot that carried the merged id now carries the survivor's.
    assert Authorship.objects.filter(openalex_author_id="A1111111111").count() == 0
    assert Authorship.objects.filter(openalex_author_id=PRIEM).count() == 2
    assert SourceAuthor.objects.get(external_id="A9999999999").deleted
    assert SourceAuthor.objects.get(external_id=PRIEM).ror_ids[0] == "02nr0ka47"
    # Every id now has a profile: a second backfill asks nothing.
    server.clear()
    again = services.harvest_openalex_authors(base_url=server.url_for("/oa"))
    assert (again.status, again.params["asked"]) == ("finished", 0)
    assert len(server.log) == 0


@pytest.mark.django_db
def test_s2_lookup_stores_profiles_and_tombstones_and_resumes(
    server, settings, monkeypatch, django_capture_on_commit_callbacks
):
    _quick(settings, "semanticscholar")
    answer = json.loads(S2_BATCH.read_text())  # null, Dijkstra, Parnas, Sommerville
    ids = ["9999999", "3234559", "1726629", "1711844"]
    monkeypatch.setattr(s2, "AUTHOR_BATCH_MAX", 2)
    path = "/graph/v1/author/batch"
    server.expect_ordered_request(
        path,
        method="POST",
        query_string={"fields": s2.AUTHOR_FIELDS},
        json={"ids": ids[:2]},
    ).respond_with_json(answer[:2])
    for _ in range(2):  # the second batch meets a storm past the retry budget
        server.expect_ordered_request(path, method="POST").respond_with_data(
            "busy", status=503
        )
    run = services.harvest_s2_authors(ids=ids, base_url=server.url_for("/graph/v1"))
    assert run.status == HarvestRun.Status.FAILED
    assert "503" in run.error
    assert (run.cursor, SourceAuthor.objects.count()) == ("2", 2)
    assert SourceAuthor.objects.get(external_id="9999999").deleted
    server.clear()
    server.expect_ordered_request(
        path, method="POST", json={"ids": ids[2:]}
    ).respond_with_json(answer[2:])
    # The operator's resume (admin action) queues the task with the run's id.
    with django_capture_on_commit_callbacks(execute=True):
        services.harvest_run_resume(run=run)
    server.check_assertions()
    resumed = HarvestRun.objects.get(pk=run.pk)
    assert resumed.status == HarvestRun.Status.FINISHED, resumed.error
    assert resumed.params["asked"] == 4
    assert dict(
        SourceAuthor.objects.filter(deleted=False).values_list("external_id", "name")
    ) == {"3234559": "E. Dijkstra", "1726629": "D. Parnas", "1711844": "I. Sommerville"}
    assert RawRecord.objects.filter(source="semanticscholar").count() == 3


@pytest.mark.django_db
def test_harvest_command_looks_up_authors_and_refuses_bad_ids(server, settings, capsys):
    _quick(settings, "semanticscholar")
    answer = json.loads(S2_BATCH.read_text())
    server.expect_ordered_request(
        "/graph/v1/author/batch", method="POST"
    ).respond_with_json(answer[1:2])
    server.expect_ordered_request(
        "/graph/v1/author/batch", method="POST", json={"ids": ["9999999"]}
    ).respond_with_json([None])
    call_command(
        "harvest",
        "semanticscholar",
        "--authors",
        "--ids",
        "https://www.semanticscholar.org/author/3234559",
        "--url",
        server.url_for("/graph/v1"),
        "--no-progress",
    )
    assert SourceAuthor.objects.get(external_id="3234559").name == "E. Dijkstra"
    assert "1 records, 1 created" in capsys.readouterr().out
    call_command(
        "harvest",
        "semanticscholar",
        "--authors",
        "--ids",
        "9999999",
        "--url",
        server.url_for("/graph/v1"),
        "--no-progress",
    )
    out = capsys.readouterr().out
    assert "1 records, 1 created" in out
    assert "not known to semanticscholar (kept as deleted): 9999999" in out
    # The backfill finds every slot's id looked up: it says so.
    call_command("harvest", "semanticscholar", "--authors", "--no-progress")
    assert "nothing to look up" in capsys.readouterr().out
    with pytest.raises(CommandError, match="not an OpenAlex author id"):
        call_command(
            "harvest", "openalex", "--authors", "--ids", "W123", "--no-progress"
        )
    with pytest.raises(CommandError, match="OpenAlex's and Semantic Scholar's"):
        call_command("harvest", "arxiv", "--authors", "--no-progress")
    with pytest.raises(CommandError, match="--ids: .*ROR"):
        call_command("harvest", "ror", "--ids", "../etc/passwd", "--no-progress")


def _priem_as(aid: str) -> dict:
    return {**json.loads((OA / f"{PRIEM}.json").read_text()), "id": aid}


def test_ids_of_other_digits_or_lengths_are_not_openalex_author_ids():
    """A survivor id a lookup could never ask for (Arabic-Indic digits, too
    short, too long) is no author id: the record is refused, nothing moves."""
    for bad in ("A١٢٣٤", "A12", "A123456789012345"):
        assert openalex.author_id(bad) == ""
        with pytest.raises(RecordError, match="not an OpenAlex author"):
            openalex.parse_openalex_author(
                RawItem(
                    external_id="A1004", payload=json.dumps(_priem_as(bad)), locator="x"
                )
            )


def test_profile_lists_are_bounded_and_never_split_strings():
    entry = _priem_as(PRIEM)
    entry["display_name_alternatives"] = [f"Alias {i}" for i in range(100_000)]
    entry["works_count"] = True
    record = openalex.parse_openalex_author(
        RawItem(external_id=PRIEM, payload=json.dumps(entry), locator="x")
    )
    assert len(record.aliases) == 100
    assert record.works_count is None  # true is not a count
    turing = {"authorId": "2262347", "name": "A. Turing", "affiliations": "aff"}
    assert (
        s2.parse_s2_author(
            RawItem(external_id="2262347", payload=json.dumps(turing), locator="x")
        ).affiliations
        == ()
    )


@pytest.mark.django_db
def test_merges_follow_chains_refuse_loops_and_catch_up_late_slots():
    from harvest.records import AuthorProfileRecord
    from harvest.services.authors import merged_slots_move, source_author_upsert

    def merged(old, new):
        return AuthorProfileRecord(
            source="openalex", external_id=old, name="X", merged_into=new
        )

    AuthorshipFactory(openalex_author_id="A1001")
    source_author_upsert(merged("A1001", "A1002"))
    # A1002 is later merged into A1003: A1001's slot and record follow it.
    source_author_upsert(merged("A1002", "A1003"))
    assert SourceAuthor.objects.get(external_id="A1001").merged_into == "A1003"
    assert Authorship.objects.get().openalex_author_id == "A1003"
    # A loop is refused by name and changes nothing.
    with pytest.raises(RecordError, match="merge loop A1003 -> A1001 -> A1003"):
        source_author_upsert(merged("A1003", "A1001"))
    assert Authorship.objects.get().openalex_author_id == "A1003"
    # A slot harvested after the merge was stored still carries the old id:
    # the next lookup run moves it first.
    late = AuthorshipFactory(openalex_author_id="A1002", position=2)
    assert merged_slots_move("openalex") == 1
    late.refresh_from_db()
    assert late.openalex_author_id == "A1003"


@pytest.mark.django_db
def test_an_answer_back_after_a_tombstone_and_wrong_answers(server, settings):
    """S2 answers Dijkstra, then null (a tombstone), then Dijkstra again: the
    profile is back. An entry for another author than the one asked at its
    place is a failed record naming both, and nobody's profile."""
    _quick(settings, "semanticscholar")
    dijkstra = json.loads(S2_BATCH.read_text())[1]
    path = "/graph/v1/author/batch"
    for answer in ([dijkstra], [None], [dijkstra]):
        server.expect_ordered_request(path, method="POST").respond_with_json(answer)
    for _ in range(3):
        services.harvest_s2_authors(
            ids=["3234559"], base_url=server.url_for("/graph/v1")
        )
    profile = SourceAuthor.objects.get(external_id="3234559")
    assert (profile.deleted, profile.name) == (False, "E. Dijkstra")
    server.clear()
    server.expect_request(path, method="POST").respond_with_json([dijkstra])
    run = services.harvest_s2_authors(
        ids=["1000"], base_url=server.url_for("/graph/v1")
    )
    assert (run.records_failed, run.papers_created) == (1, 0)
    failed = RawRecord.objects.get(external_id="1000")
    assert "asked for author 1000, answered '3234559'" in failed.error
    assert not SourceAuthor.objects.filter(external_id="1000").exists()
