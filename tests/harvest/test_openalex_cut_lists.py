"""OpenAlex lists that cut bylines at 100 without saying so (issue 49, part 4).

Current OpenAlex sets ``is_authors_truncated`` on a listed work whose byline it
cut; older list answers and snapshots cut at 100 with no flag at all. The inputs
are the real work W2741809807 (9 authorships) with its byline written out to 100
or 120 people.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from django.conf import settings

from harvest import services
from harvest.records import RawItem, RecordError
from harvest.sources.openalex import CUT_AT, openalex_pages, parse_openalex_work
from harvest.sources.polite_http import PoliteClient, Politeness
from wovepaper.models import Authorship, Paper

DATA = Path(settings.WOVEPAPER_DATA_DIR) / "openalex"
QUICK = Politeness(min_interval=0, timeout=5, max_tries=2, backoff_base=0.01)
WID = "W2741809807"


def _work(authors: int, *, flag: bool | None = None) -> dict:
    """The real work with ``authors`` authorships (the real ones, then more),
    and ``is_authors_truncated`` as given (None: the key is absent, as in older
    answers)."""
    work = json.loads((DATA / "openalex_python_entities" / f"{WID}.json").read_text())
    real = work["authorships"]
    byline = []
    for n in range(authors):
        slot = copy.deepcopy(real[n % len(real)])
        if n >= len(real):
            name = f"Author Number{n}"
            slot["raw_author_name"] = name
            slot["author"] = {
                "id": f"https://openalex.org/A9{n:09d}",
                "display_name": name,
            }
        byline.append(slot)
    work["authorships"] = byline
    work.pop("is_authors_truncated", None)
    if flag is not None:
        work["is_authors_truncated"] = flag
    return work


def _parse(work: dict):
    return parse_openalex_work(RawItem(WID, json.dumps(work), "test#work-0"))


def test_exactly_100_without_a_flag_is_refused_by_name_in_a_saved_list():
    with pytest.raises(RecordError, match=f"{WID}: exactly {CUT_AT} authorships"):
        _parse(_work(CUT_AT))


def test_a_flag_saying_complete_is_believed_and_other_counts_pass():
    assert len(_parse(_work(CUT_AT, flag=False)).authors) == CUT_AT
    assert len(_parse(_work(CUT_AT - 1)).authors) == CUT_AT - 1
    assert len(_parse(_work(CUT_AT + 1)).authors) == CUT_AT + 1


def _list_then_whole(server, listed: dict, whole) -> None:
    asked = {"filter": "from_updated_date:2026-11-01", "per-page": "200"}
    page = {"meta": {"count": 1, "next_cursor": None}, "results": [listed]}
    server.expect_ordered_request(
        "/works", query_string={**asked, "cursor": "*"}
    ).respond_with_json(page)
    single = server.expect_ordered_request(f"/works/{WID}", query_string={})
    if whole is None:
        single.respond_with_data("gone", status=404)
    else:
        single.respond_with_json(whole)


def _pages(server) -> list:
    with PoliteClient("openalex", politeness=QUICK) as client:
        return list(
            openalex_pages(
                client,
                server.url_for("/works"),
                filters={"from_updated_date": "2026-11-01"},
            )
        )


def test_a_listed_work_of_exactly_100_is_fetched_whole(server):
    _list_then_whole(server, _work(CUT_AT), _work(120))
    [page] = _pages(server)
    server.check_assertions()
    assert len(page.items[0]["authorships"]) == 120
    assert len(_parse(page.items[0]).authors) == 120


def test_a_single_work_of_exactly_100_is_stored_complete(server):
    _list_then_whole(server, _work(CUT_AT), _work(CUT_AT))
    [page] = _pages(server)
    assert len(_parse(page.items[0]).authors) == CUT_AT


@pytest.mark.django_db
def test_a_failed_fetch_leaves_the_stored_byline_as_it_was(server, tmp_path):
    saved = tmp_path / "work.json"
    saved.write_text(json.dumps(_work(120, flag=False)))
    services.harvest_files(source="openalex", root=saved)
    paper = Paper.objects.get(openalex_id=WID)
    before = list(
        Authorship.objects.filter(paper=paper).values_list("position", "raw_name")
    )
    assert len(before) == 120

    _list_then_whole(server, _work(CUT_AT), None)  # the single work: 404
    [page] = _pages(server)
    assert len(page.items[0]["authorships"]) == CUT_AT  # the cut list, kept
    with pytest.raises(RecordError, match="exactly 100 authorships"):
        _parse(page.items[0])
    listed = tmp_path / "listed.json"
    listed.write_text(json.dumps(page.items[0]))
    run = services.harvest_files(source="openalex", root=listed)
    assert run.records_failed == 1
    assert (
        list(Authorship.objects.filter(paper=paper).values_list("position", "raw_name"))
        == before
    )
