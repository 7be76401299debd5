"""Paper lists carry at most 100 byline slots a paper, flagged; the detail all."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import PaperFactory, ResearcherFactory
from wovepaper.models import Authorship

pytestmark = pytest.mark.django_db


def _byline(paper, n, researcher=None):
    Authorship.objects.bulk_create(
        Authorship(
            paper=paper,
            position=i,
            raw_name=f"Author {i}",
            researcher=researcher if i == 2 else None,
            affiliations=[f"Lab {i}"],
        )
        for i in range(1, n + 1)
    )


def test_list_cuts_long_bylines_and_says_so():
    r = ResearcherFactory(display_name="Second Author", orcid="0000-0002-1825-0097")
    big, small = PaperFactory(title="Big"), PaperFactory(title="Small")
    _byline(big, 3000, r)
    _byline(small, 3, r)
    api = APIClient()
    listed = {p["title"]: p for p in api.get("/api/papers/").json()["results"]}
    assert [a["position"] for a in listed["Big"]["authorships"]] == list(range(1, 101))
    assert listed["Big"]["authors_truncated"] is True
    assert listed["Small"]["authors_truncated"] is False
    assert listed["Small"]["authorships"][1] == {
        "position": 2,
        "raw_name": "Author 2",
        "given_name": "",
        "family_name": "",
        "suffix": "",
        "is_collaboration": False,
        "orcid": "",
        "affiliations": ["Lab 2"],
        "researcher": {
            "id": r.pk,
            "display_name": "Second Author",
            "orcid": "0000-0002-1825-0097",
            # Placed with no curator's must-link.
            "placement": "automatic",
        },
    }
    # The list's byline has the detail's shape, slot for slot.
    detail = api.get(f"/api/papers/{small.pk}/").json()
    assert detail["authorships"] == listed["Small"]["authorships"]
    full = api.get(f"/api/papers/{big.pk}/").json()
    assert len(full["authorships"]) == 3000
    assert full["authors_truncated"] is False


def test_list_without_byline_fields_reads_no_byline(django_assert_num_queries):
    _byline(PaperFactory(), 5)
    with django_assert_num_queries(1):
        body = APIClient().get("/api/papers/?fields=id,title").json()
    assert set(body["results"][0]) == {"id", "title"}
