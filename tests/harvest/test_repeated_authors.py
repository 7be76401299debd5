"""Author arrays that repeat people (issue 49, part 2), on Crossref works we wrote.

The issue's example: "Chidi Eze" deposited three times, two of them with one
ORCID iD, and two different "Anna Berg"s at different universities, give one
Chidi Eze and two Anna Bergs, and the paper is flagged for a curator. The
issue's iD, 0000-0003-1234-5678, fails the ORCID checksum (ISO 7064 11,2), so a
valid one is used (…-5674); the invalid one is checked too: it is no iD, and the
entries still collapse by name and affiliation.
"""

from __future__ import annotations

import json

import pytest

from harvest import services
from harvest.records import AuthorRecord, RawItem
from harvest.sources.crossref import parse_crossref_work
from harvest.sources.openalex import parse_openalex_work
from harvest.sources.repeated_authors import (
    POSSIBLE_REPEATED_AUTHOR,
    collapse_repeated,
)
from wovepaper.models import Authorship, Paper

ORCID = "0000-0003-1234-5674"  # the issue's 0000-0003-1234-5678, check digit fixed
LAGOS = [{"name": "University of Lagos"}]


def _entry(given, family, *, orcid="", affiliation=(), sequence="additional"):
    entry = {"given": given, "family": family, "sequence": sequence}
    entry["affiliation"] = [{"name": a} for a in affiliation]
    if orcid:
        entry["ORCID"] = f"https://orcid.org/{orcid}"
        entry["authenticated-orcid"] = False
    return entry


def _work(authors: list[dict], doi: str = "10.5555/repeated.1") -> dict:
    return {
        "DOI": doi,
        "title": ["A byline the publisher deposited with repeats"],
        "author": authors,
        "issued": {"date-parts": [[2024, 3, 1]]},
        "type": "journal-article",
    }


def _parse(work: dict):
    return parse_crossref_work(
        RawItem(external_id=work["DOI"], payload=json.dumps(work), locator="test")
    )


def _issue_example(orcid: str = ORCID) -> dict:
    return _work(
        [
            _entry("Chidi", "Eze", orcid=orcid, affiliation=["University of Lagos"]),
            _entry("Anna", "Berg", affiliation=["Uppsala University"]),
            _entry("Chidi", "Eze", orcid=orcid, affiliation=["University of Lagos"]),
            _entry("Anna", "Berg", affiliation=["Lund University"]),
            _entry("Chidi", "Eze", affiliation=["University of Lagos"]),
        ]
    )


def test_the_issue_example_gives_one_chidi_eze_and_two_anna_bergs():
    record = _parse(_issue_example())
    assert [(a.raw_name, a.orcid, a.affiliations) for a in record.authors] == [
        ("Chidi Eze", ORCID, ("University of Lagos",)),
        ("Anna Berg", "", ("Uppsala University",)),
        ("Anna Berg", "", ("Lund University",)),
    ]
    assert record.review_flags == (POSSIBLE_REPEATED_AUTHOR,)


def test_an_invalid_id_is_no_id_and_the_same_entries_still_collapse():
    record = _parse(_issue_example("0000-0003-1234-5678"))
    assert [(a.raw_name, a.orcid) for a in record.authors] == [
        ("Chidi Eze", ""),
        ("Anna Berg", ""),
        ("Anna Berg", ""),
    ]


def test_one_id_on_three_entries_keeps_the_fullest_name_and_every_affiliation():
    record = _parse(
        _work(
            [
                _entry("C.", "Eze", orcid=ORCID, affiliation=["University of Lagos"]),
                _entry("Chidi", "Eze", orcid=ORCID),
                _entry("C. O.", "Eze", orcid=ORCID, affiliation=["CERN"]),
            ]
        )
    )
    [eze] = record.authors
    assert (eze.raw_name, eze.given_name, eze.orcid) == ("Chidi Eze", "Chidi", ORCID)
    assert eze.affiliations == ("University of Lagos", "CERN")
    assert record.review_flags == ()


def test_exact_repeats_collapse_without_a_flag():
    entry = _entry("Mei", "Lin", affiliation=["Fudan University"])
    record = _parse(_work([entry, _entry("Jo", "Park"), dict(entry)]))
    assert [a.raw_name for a in record.authors] == ["Mei Lin", "Jo Park"]
    assert record.review_flags == ()


def test_two_ids_are_two_people_even_with_one_name():
    other = "0000-0002-1825-0097"
    record = _parse(
        _work(
            [_entry("Wei", "Zhang", orcid=ORCID), _entry("Wei", "Zhang", orcid=other)]
        )
    )
    assert [a.orcid for a in record.authors] == [ORCID, other]
    assert record.review_flags == ()


def test_one_id_on_two_different_names_is_a_misplaced_id_not_a_repeat():
    # Issue 46's case: the iD of co-author "Wei Tan" deposited on "Dmitri Volkov".
    record = _parse(
        _work(
            [_entry("Wei", "Tan", orcid=ORCID), _entry("Dmitri", "Volkov", orcid=ORCID)]
        )
    )
    assert [a.raw_name for a in record.authors] == ["Wei Tan", "Dmitri Volkov"]


def test_a_same_name_entry_without_affiliations_could_be_another_person():
    record = _parse(
        _work(
            [
                _entry("Anna", "Berg", affiliation=["Uppsala University"]),
                _entry("Anna", "Berg"),
            ]
        )
    )
    assert len(record.authors) == 2
    assert record.review_flags == (POSSIBLE_REPEATED_AUTHOR,)


def test_a_collaboration_named_twice_is_one_slot():
    kept, flagged = collapse_repeated(
        [
            AuthorRecord(raw_name="ATLAS Collaboration", is_collaboration=True),
            AuthorRecord(raw_name="Ana Ruiz", given_name="Ana", family_name="Ruiz"),
            AuthorRecord(raw_name="ATLAS collaboration", is_collaboration=True),
        ]
    )
    assert [a.raw_name for a in kept] == ["ATLAS Collaboration", "Ana Ruiz"]
    assert not flagged


def test_openalex_authorships_repeating_an_id_collapse_too():
    def authorship(name, orcid=""):
        return {
            "author_position": "middle",
            "author": {
                "id": "https://openalex.org/A5000000001",
                "display_name": name,
                "orcid": f"https://orcid.org/{orcid}" if orcid else None,
            },
            "raw_author_name": name,
            "institutions": [],
            "raw_affiliation_strings": ["University of Lagos"],
        }

    work = {
        "id": "https://openalex.org/W4000000001",
        "title": "A byline with a repeat",
        "display_name": "A byline with a repeat",
        "publication_date": "2024-03-01",
        "authorships": [
            authorship("Chidi Eze", ORCID),
            authorship("Chidi O. Eze", ORCID),
            authorship("Anna Berg"),
        ],
    }
    record = parse_openalex_work(
        RawItem(external_id="W4000000001", payload=json.dumps(work), locator="test")
    )
    assert [a.raw_name for a in record.authors] == ["Chidi O. Eze", "Anna Berg"]


@pytest.mark.django_db
def test_harvesting_the_example_stores_three_slots_and_flags_the_paper(
    tmp_path, admin_client
):
    path = tmp_path / "works.json"
    path.write_text(
        json.dumps(
            {
                "status": "ok",
                "message-type": "work-list",
                "message": {
                    "items": [
                        _issue_example(),
                        _work([_entry("Jo", "Park")], doi="10.5555/plain.2"),
                    ]
                },
            }
        )
    )
    run = services.harvest_files(source="crossref", root=path)
    assert (run.records_seen, run.records_failed) == (2, 0)
    paper = Paper.objects.get(doi="10.5555/repeated.1")
    assert list(
        Authorship.objects.filter(paper=paper)
        .order_by("position")
        .values_list("position", "raw_name", "orcid")
    ) == [(1, "Chidi Eze", ORCID), (2, "Anna Berg", ""), (3, "Anna Berg", "")]
    assert paper.review_flags == [POSSIBLE_REPEATED_AUTHOR]
    assert Paper.objects.get(doi="10.5555/plain.2").review_flags == []

    listed = admin_client.get(
        "/admin/wovepaper/paper/", {"review_flag": POSSIBLE_REPEATED_AUTHOR}
    ).content.decode()
    assert "A byline the publisher deposited with repeats" in listed
    assert "1 paper" in listed  # the plain one is not listed

    again = services.harvest_files(source="crossref", root=path)
    assert again.papers_unchanged == 2


def test_two_people_with_one_id_and_different_given_names_stay_two():
    # Jane and John Smith: a publisher's wrong iD on one of them is no repeat.
    record = _parse(
        _work(
            [_entry("Jane", "Smith", orcid=ORCID), _entry("John", "Smith", orcid=ORCID)]
        )
    )
    assert [a.raw_name for a in record.authors] == ["Jane Smith", "John Smith"]


def test_a_long_byline_is_read_in_linear_time():
    import time

    people = [
        AuthorRecord(raw_name=f"G{i} Smith", given_name=f"G{i}", family_name="Smith")
        for i in range(3000)
    ]
    started = time.perf_counter()
    kept, _ = collapse_repeated(people)
    assert len(kept) == 3000
    # 3,000 names of one family: the quadratic version took 10.5 s here.
    assert time.perf_counter() - started < 2.0


def test_openalex_placeholders_are_no_repeat_and_raise_no_flag():
    placeholders = [
        AuthorRecord(
            raw_name="NULL AUTHOR_ID", family_name="AUTHOR_ID", given_name="NULL"
        )
        for _ in range(3)
    ]
    kept, flagged = collapse_repeated(placeholders)
    assert len(kept) == 3
    assert not flagged
