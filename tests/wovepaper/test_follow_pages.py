"""Following researchers and fields from the public pages; the Following page."""

from __future__ import annotations

import pytest
from django.test import Client
from lxml import html as lxml_html

from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper.models import CategoryFollow, Follow

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(client):
    user = UserFactory()
    client.force_login(user)
    return user


def _button(client, r):
    doc = lxml_html.fromstring(client.get(r.get_absolute_url()).content)
    return doc.cssselect("#follow-button")[0]


def test_anonymous_follow_asks_to_sign_in(client):
    r = ResearcherFactory()
    AuthorshipFactory(researcher=r)
    assert _button(client, r).get("href").startswith("/accounts/login/?next=")
    response = client.post(f"/researchers/{r.pk}/follow", {"action": "follow"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not Follow.objects.exists()


def test_follow_and_unfollow_from_the_researcher_page(client, reader):
    r = ResearcherFactory()
    AuthorshipFactory(researcher=r)
    button = _button(client, r)
    assert button.text == "Follow"
    assert button.getparent().get("action") == f"/researchers/{r.pk}/follow"
    response = client.post(
        f"/researchers/{r.pk}/follow",
        {"action": "follow", "next": r.get_absolute_url()},
    )
    assert (response.status_code, response["Location"]) == (302, r.get_absolute_url())
    assert Follow.objects.filter(user=reader, researcher=r).count() == 1
    button = _button(client, r)
    assert button.get("aria-pressed") == "true"
    client.post(f"/researchers/{r.pk}/follow", {"action": "follow"})
    assert Follow.objects.filter(user=reader).count() == 1  # idempotent
    client.post(f"/researchers/{r.pk}/follow", {"action": "unfollow"})
    assert not Follow.objects.filter(user=reader).exists()


def test_follow_refuses_bad_requests(client, reader):
    r = ResearcherFactory()
    assert client.get(f"/researchers/{r.pk}/follow").status_code == 405
    assert (
        client.post(f"/researchers/{r.pk}/follow", {"action": "x"}).status_code == 400
    )
    assert client.post(
        "/researchers/999999/follow", {"action": "follow"}
    ).status_code == (404)
    off_site = client.post(
        f"/researchers/{r.pk}/follow",
        {"action": "follow", "next": "https://evil.example/"},
    )
    assert off_site["Location"] == r.get_absolute_url()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(reader)
    assert strict.post(
        f"/researchers/{r.pk}/follow", {"action": "unfollow"}
    ).status_code == (403)
    assert Follow.objects.filter(user=reader, researcher=r).exists()


def test_a_retired_researcher_can_be_unfollowed_not_followed(client, reader):
    r = ResearcherFactory()
    Follow.objects.create(user=reader, researcher=r)
    r.retired = True  # the decision that created it was undone
    r.save()
    assert (
        client.post(f"/researchers/{r.pk}/follow", {"action": "follow"}).status_code
        == 404
    )
    response = client.post(f"/researchers/{r.pk}/follow", {"action": "unfollow"})
    assert response.status_code == 302
    assert response["Location"] == "/following/"
    assert not Follow.objects.filter(user=reader).exists()
    # The API's too: a follow its list still showed could not be deleted.
    Follow.objects.create(user=reader, researcher=r)
    assert client.post(f"/api/researchers/{r.pk}/follow/").status_code == 404
    assert client.delete(f"/api/researchers/{r.pk}/follow/").status_code == 204
    assert not Follow.objects.filter(user=reader).exists()


def test_following_a_merged_away_researcher_follows_the_survivor(client, reader):
    survivor = ResearcherFactory()
    gone = ResearcherFactory(merged_into=survivor)
    client.post(f"/researchers/{gone.pk}/follow", {"action": "follow"})
    assert list(Follow.objects.values_list("researcher_id", flat=True)) == [survivor.pk]


def test_follow_a_category(client, reader):
    PaperFactory(categories=["math.AG"], primary_category="math.AG")
    response = client.post("/categories/math.AG/follow", {"action": "follow"})
    assert response.status_code == 302
    assert list(CategoryFollow.objects.values_list("category", flat=True)) == [
        "math.AG"
    ]
    unknown = client.post("/categories/no.such/follow", {"action": "follow"})
    assert unknown.status_code == 404
    # Any letter case is the category the papers carry: one follow, not two.
    form = client.post(
        "/following/categories", {"category": " math.ag ", "action": "follow"}
    )
    assert form.status_code == 302
    assert list(CategoryFollow.objects.values_list("category", flat=True)) == [
        "math.AG"
    ]
    client.post("/categories/math.AG/follow", {"action": "unfollow"})
    assert not CategoryFollow.objects.exists()


def test_following_page_lists_new_papers_of_what_you_follow(client, reader):
    followed = ResearcherFactory(display_name="Followed Person")
    other = ResearcherFactory(display_name="Other Person")
    mine = AuthorshipFactory(
        researcher=followed, paper=PaperFactory(title="Followed paper")
    ).paper
    AuthorshipFactory(researcher=other, paper=PaperFactory(title="Unfollowed paper"))
    in_field = PaperFactory(
        title="Field paper", categories=["gr-qc"], primary_category="gr-qc"
    )
    pending = AuthorshipFactory(paper=PaperFactory(title="Pending paper"))
    assert pending.researcher_id is None
    Follow.objects.create(user=reader, researcher=followed)
    CategoryFollow.objects.create(user=reader, category="gr-qc")
    doc = lxml_html.fromstring(client.get("/following/").content)
    titles = {a.text for a in doc.cssselect(".papers .paper-title")}
    assert titles == {mine.title, in_field.title}
    assert [a.text for a in doc.cssselect("aside li > a[href^='/researchers/']")] == [
        "Followed Person"
    ]
    assert client.get("/following/", {"page": "99"}).status_code == 200


def test_following_page_needs_sign_in(client):
    response = client.get("/following/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/following/"


def test_a_follow_through_a_merge_shows_on_the_pages_and_unfollows_there(
    client, reader
):
    """A follow of G. Ghisellini, merged into J. L. Bourjaily and split off
    again, leads to the split-off profile in the feed and the API, but the
    Following page said "None yet", the profile's button said Follow, a
    click made a second follow, and Unfollow left the first one feeding the
    digest (new-user re-trial)."""
    from curation import edits

    bourjaily = ResearcherFactory(display_name="Jacob L. Bourjaily")
    AuthorshipFactory(researcher=bourjaily)
    ghisellini = ResearcherFactory(display_name="G. Ghisellini")
    his = [
        AuthorshipFactory(
            researcher=ghisellini, given_name="G.", family_name="Ghisellini"
        ).pk
        for _ in range(2)
    ]
    Follow.objects.create(user=reader, researcher=ghisellini)
    curator = UserFactory()
    edits.researcher_merge(researchers=[bourjaily, ghisellini], actor=curator)
    split_off = edits.researcher_split(
        researcher=bourjaily, authorship_ids=his, actor=curator
    )

    doc = lxml_html.fromstring(client.get("/following/").content)
    assert [a.text for a in doc.cssselect("aside li > a[href^='/researchers/']")] == [
        "G. Ghisellini"
    ]
    assert _button(client, split_off).get("aria-pressed") == "true"
    assert _button(client, bourjaily).get("aria-pressed") == "false"
    client.post(f"/researchers/{split_off.pk}/follow", {"action": "follow"})
    assert Follow.objects.filter(user=reader).count() == 1
    client.post(f"/researchers/{split_off.pk}/follow", {"action": "unfollow"})
    assert not Follow.objects.filter(user=reader).exists()
    assert _button(client, split_off).get("aria-pressed") == "false"
