"""Byline slots as COPY text (harvest.services.byline_rows): every value comes
back from PostgreSQL as it went in, whatever characters it holds."""

from __future__ import annotations

import datetime as dt

import pytest

from harvest.services.byline_rows import byline_text, bylines_copy
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db

_HOSTILE = [
    {
        "position": 1,
        "raw_name": "Tab\there, new\nline, CR\r, back\\slash \\N \\t",
        "given_name": "Jean-Pierre\\",
        "family_name": 'O\'Brien "Jr"',
        "suffix": "",
        "name_key": "obrien|jp",
        "block_key": "obrien j",
        "is_collaboration": False,
        "orcid": "0000-0002-1825-0097",
        "affiliations": ['Dept. "Physics"\tLab\nB\\C', "Zürich, 東京"],
        "s2_author_id": "1741101",
        "openalex_author_id": "A5023888391",
    },
    {
        "position": 2,
        "raw_name": "\\N",
        "given_name": "",
        "family_name": "ATLAS Collaboration",
        "name_key": "",
        "block_key": "",
        "is_collaboration": True,
    },
]


def test_hostile_values_come_back_as_they_went_in():
    paper = Paper.objects.create(arxiv_id="3001.00001", title="t", slug="t")
    now = dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    bylines_copy([paper.pk], [byline_text(_HOSTILE)], now)

    first, second = Authorship.objects.filter(paper=paper).order_by("position")
    for field, value in _HOSTILE[0].items():
        assert getattr(first, field) == value, field
    assert first.researcher_id is None
    assert first.created == first.modified == now
    # A value that reads like COPY's NULL marker is text; left-out fields are
    # their defaults.
    assert second.raw_name == "\\N"
    assert second.is_collaboration is True
    assert (second.orcid, second.suffix, second.affiliations) == ("", "", [])


def test_a_paper_with_no_byline_adds_no_slot_and_the_rest_go_in():
    papers = [
        Paper.objects.create(arxiv_id=f"3001.0000{n}", title="t", slug="t")
        for n in (1, 2)
    ]
    assert byline_text([]) == ""
    bylines_copy(
        [p.pk for p in papers], ["", byline_text(_HOSTILE[1:])], dt.datetime.now(dt.UTC)
    )
    assert list(Authorship.objects.values_list("paper_id", "position")) == [
        (papers[1].pk, 2)
    ]


def test_a_json_value_that_is_a_string_goes_in_as_json():
    paper = Paper.objects.create(arxiv_id="3001.00001", title="t", slug="t")
    slot = {**_HOSTILE[1], "affiliations": "CERN\\Geneva\t"}
    bylines_copy([paper.pk], [byline_text([slot])], dt.datetime.now(dt.UTC))
    assert Authorship.objects.get(paper=paper).affiliations == "CERN\\Geneva\t"


def test_a_value_of_a_type_no_slot_holds_is_a_bug_named():
    with pytest.raises(TypeError, match=r"Authorship.raw_name: float"):
        byline_text([{**_HOSTILE[0], "raw_name": 1.5}])
