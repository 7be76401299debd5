"""The cached researcher detail never outlives a curation change."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from curation import edits
from curation.history import event_undo
from curation.models import CurationEvent
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def api():
    return APIClient()


def test_researcher_detail_is_cached_then_invalidated_by_merge_and_undo(api):
    a, b = ResearcherFactory(), ResearcherFactory(orcid="0000-0002-1825-0097")
    AuthorshipFactory(researcher=a)
    AuthorshipFactory(researcher=b)
    url_a, url_b = f"/api/researchers/{a.pk}/", f"/api/researchers/{b.pk}/"
    assert api.get(url_a).json()["paper_count"] == 1
    assert api.get(url_b).status_code == 200

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as cached:
        assert api.get(url_a).json()["paper_count"] == 1
    assert len(cached) == 0  # served from the cache

    user = UserFactory()
    edits.researcher_merge(researchers=[a, b], actor=user)

    after = api.get(url_a).json()
    assert (after["paper_count"], after["orcid"]) == (2, "0000-0002-1825-0097")
    gone = api.get(url_b + "?fields=id")
    assert gone.status_code == 301  # merged away: the URL moves to the survivor
    assert gone["Location"] == f"{url_a}?fields=id"
    papers = api.get(f"/api/researchers/{b.pk}/papers/")
    assert papers["Location"] == f"/api/researchers/{a.pk}/papers/"

    event_undo(event=CurationEvent.objects.get(kind="merged"), actor=user)

    assert api.get(url_a).json()["paper_count"] == 1
    assert api.get(url_b).json()["orcid"] == "0000-0002-1825-0097"


def test_cached_detail_keeps_each_field_selection_apart(api):
    r = ResearcherFactory()
    full = api.get(f"/api/researchers/{r.pk}/").json()
    sparse = api.get(f"/api/researchers/{r.pk}/?fields=id").json()
    again = api.get(f"/api/researchers/{r.pk}/").json()
    assert sparse == {"id": r.pk}
    assert again == full
    assert "display_name" in full


def test_search_page_researchers_are_cached_until_a_curation_change(client):
    """The researchers a search names are cached with its head, and a merge
    shows at once: the merged-away profile leaves the list."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    a = ResearcherFactory(display_name="Ada Lovelace")
    b = ResearcherFactory(display_name="Ada Lovelace")
    AuthorshipFactory(researcher=a)
    AuthorshipFactory(researcher=b)

    def named():
        # A parameter the page does not read keeps the whole page out of the
        # cache (wovepaper.views.page_cache), so the researchers are read.
        page = client.get("/search/", {"q": "Ada Lovelace", "ref": "test"})
        return {found.researcher.pk for found in page.context["researchers"]}

    assert named() == {a.pk, b.pk}
    with CaptureQueriesContext(connection) as again:
        assert named() == {a.pk, b.pk}
    assert not [q for q in again if "wovepaper_researcher" in q["sql"]]
    edits.researcher_merge(researchers=[a, b], actor=UserFactory())
    assert named() == {a.pk}


def test_a_retired_researcher_answers_410_naming_where_its_papers_went(api):
    r = ResearcherFactory(display_name="Ada Split")
    AuthorshipFactory(researcher=r)  # stays with r
    moving = AuthorshipFactory(researcher=r)
    user = UserFactory()
    new = edits.researcher_split(researcher=r, authorship_ids=[moving.pk], actor=user)
    url = f"/api/researchers/{new.pk}/"
    assert api.get(url).json()["paper_count"] == 1  # cached while it is live

    event_undo(event=CurationEvent.objects.get(kind="split"), actor=user)

    gone = api.get(url)
    assert gone.status_code == 410
    assert gone["Content-Type"] == "application/problem+json"
    body = gone.json()
    assert body["type"].endswith("/researcher-retired")
    assert f"researcher {new.pk} was retired" in body["detail"]
    assert body["holders"] == [
        {
            "id": r.pk,
            "name": "Ada Split",
            "papers": 1,
            "url": f"http://testserver/api/researchers/{r.pk}/",
        }
    ]
    for part in ("papers", "coauthors"):
        answer = api.get(f"{url}{part}/")
        assert answer.status_code == 410
        assert answer.json()["holders"] == body["holders"]
    assert api.get(f"/api/researchers/{r.pk}/").json()["paper_count"] == 2
    assert api.get("/api/researchers/987654321/").status_code == 404


def _retired_split(name="Ada Split"):
    """A researcher, the researcher split off it, retired by undoing the split."""
    r = ResearcherFactory(display_name=name)
    AuthorshipFactory(researcher=r)
    moving = AuthorshipFactory(researcher=r)
    user = UserFactory()
    new = edits.researcher_split(researcher=r, authorship_ids=[moving.pk], actor=user)
    event_undo(event=CurationEvent.objects.get(kind="split"), actor=user)
    return r, new, moving


def test_a_hand_edited_move_is_passed_over_when_naming_the_holders(api):
    r, new, moving = _retired_split()
    event = CurationEvent.objects.filter(moves__contains=[{"before": new.pk}]).get()
    good = {"authorship": moving.pk, "before": new.pk, "after": r.pk}
    for moves in (
        [good, 7],
        [good, {"before": new.pk, "after": None}],
        [good, {"authorship": "abc", "before": new.pk}],
        [good, {"authorship": [1], "before": new.pk}],
        [good, {"authorship": 2**70, "before": new.pk}],
    ):
        CurationEvent.objects.filter(pk=event.pk).update(moves=moves)
        gone = api.get(f"/api/researchers/{new.pk}/")
        assert gone.status_code == 410, moves
        assert [h["id"] for h in gone.json()["holders"]] == [r.pk]
    CurationEvent.objects.filter(pk=event.pk).update(moves={"not": "a list"})
    assert api.get(f"/api/researchers/{new.pk}/").json()["holders"] == []


def test_holders_count_no_hidden_paper_and_say_when_no_one_holds_them(api):
    r, new, moving = _retired_split()
    moving.paper.hidden = True
    moving.paper.save()
    body = api.get(f"/api/researchers/{new.pk}/").json()
    assert body["holders"] == []
    assert body["detail"].endswith(
        "undone, and none of its papers is on a researcher at the moment"
    )
    for accept in ("text/html", "text/markdown"):
        page = api.get(f"/researchers/{new.pk}", HTTP_ACCEPT=accept)
        assert page.status_code == 410
        assert "None of its papers is on a profile at the moment." in (
            page.content.decode()
        )


def test_a_researcher_id_in_other_digits_is_no_id(api):
    r = ResearcherFactory()
    assert api.get(f"/api/researchers/{r.pk}/").status_code == 200
    fullwidth = str(r.pk).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    assert api.get(f"/api/researchers/{fullwidth}/").status_code == 404
