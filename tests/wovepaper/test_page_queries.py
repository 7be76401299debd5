"""Page query counts stay flat as a researcher's paper count grows (no N+1)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.messages import constants
from django.contrib.messages.storage.base import Message
from django.contrib.messages.storage.cookie import CookieStorage
from django.core.cache import cache
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from tests.factories import ResearcherFactory
from wovepaper.cache import researchers_changed
from wovepaper.models import Authorship, Institution, Paper, Researcher

pytestmark = pytest.mark.django_db


def _researcher_with(n: int, tag: str):
    """A researcher on ``n`` papers, each with 3 co-authors (one of them curated)."""
    r = ResearcherFactory(display_name=f"Grows {tag}")
    friend = ResearcherFactory(display_name=f"Friend {tag}")
    inst = Institution.objects.create(name=f"Institute {tag}")
    papers = Paper.objects.bulk_create(
        Paper(
            arxiv_id=f"{tag}{i:05d}",
            title=f"Paper {tag} {i}",
            slug=f"paper-{i}",
            published=dt.date(2000, 1, 1) + dt.timedelta(days=i),
            categories=["hep-th", f"cat-{i % 7}"],
            primary_category="hep-th",
        )
        for i in range(n)
    )
    slots = Authorship.objects.bulk_create(
        Authorship(
            paper=p,
            position=pos,
            raw_name=name,
            researcher=who,
            affiliations=[f"Affiliation {p.pk % 5}"],
        )
        for p in papers
        for pos, name, who in (
            (1, "Grows Person", r),
            (2, "Friend Person", friend),
            (3, "Stranger Person", None),
        )
    )
    Authorship.institutions.through.objects.bulk_create(
        Authorship.institutions.through(authorship_id=a.pk, institution_id=inst.pk)
        for a in slots
        if a.researcher_id == r.pk
    )
    return r


def _queries(client, url, **headers) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, **headers)
    assert response.status_code == 200, url
    return len(ctx.captured_queries)


@pytest.mark.parametrize(
    "path",
    ["", "?category=cat-3", "?sort=cited&page=2", "?sort=title&page=3", "coauthors"],
)
def test_researcher_page_queries_flat_from_10_to_1000_papers(client, path):
    small, large = _researcher_with(10, "1001."), _researcher_with(1000, "2002.")

    def url(r):
        if path == "coauthors":
            return f"/researchers/{r.pk}/coauthors.json"
        return r.get_absolute_url() + path

    assert _queries(client, url(small)) == _queries(client, url(large))
    # The page: the researcher, then on PostgreSQL one statement for the
    # summary (with the papers' sort keys, the title order's too), one for
    # the page's rows with their bylines and why each is there
    # (wovepaper.profile_sql) and one for their abstracts. The network: the
    # survivor check, the researcher, co-authors, their profiles, the shared
    # papers, and how many papers of over 100 authors were left out.
    expected = 6 if path == "coauthors" else 4
    assert _queries(client, url(large)) == expected


def test_researcher_markdown_queries_flat(client):
    small, large = _researcher_with(10, "1001."), _researcher_with(1000, "2002.")
    md = {"HTTP_ACCEPT": "text/markdown"}
    assert _queries(client, small.get_absolute_url(), **md) == _queries(
        client, large.get_absolute_url(), **md
    )


def test_cached_researcher_page_skips_the_profile_queries(client):
    r = _researcher_with(100, "3003.")
    cold = _queries(client, r.get_absolute_url())
    with CaptureQueriesContext(connection) as ctx:
        client.get(r.get_absolute_url())
    assert len(ctx.captured_queries) <= 2 < cold


def test_paper_and_institution_pages_queries_flat(client):
    small, large = _researcher_with(10, "1001."), _researcher_with(1000, "2002.")
    for r in (small, large):
        paper = Paper.objects.filter(authorships__researcher=r).first()
        assert _queries(client, paper.get_absolute_url()) <= 6
    inst_small = Institution.objects.get(name="Institute 1001.")
    inst_large = Institution.objects.get(name="Institute 2002.")
    assert _queries(client, inst_small.get_absolute_url()) == _queries(
        client, inst_large.get_absolute_url()
    )


def test_home_page_queries_flat_from_10_to_1000_papers(client):
    _researcher_with(10, "1001.")
    small = _queries(client, "/")
    _researcher_with(1000, "2002.")
    assert _queries(client, "/") == small
    body = client.get("/").content.decode()
    assert body.count('class="paper-title"') == 20  # the newest papers


def test_following_page_queries_flat_as_followed_papers_grow(client):
    from tests.factories import UserFactory
    from wovepaper.models import CategoryFollow, Follow

    user = UserFactory()
    client.force_login(user)
    Follow.objects.create(user=user, researcher=_researcher_with(10, "1001."))
    CategoryFollow.objects.create(user=user, category="cat-1")
    small = _queries(client, "/following/")
    Follow.objects.create(user=user, researcher=_researcher_with(1000, "2002."))
    Follow.objects.create(user=user, researcher=ResearcherFactory())
    CategoryFollow.objects.create(user=user, category="cat-2")
    assert _queries(client, "/following/") == small
    assert _queries(client, "/following/?page=3") == small
    # The page lists the papers (24 of the 1,010 followed), with their bylines.
    body = client.get("/following/?page=3").content.decode()
    assert body.count('class="paper-title"') == 24
    assert "Friend Person" in body


def test_a_stateless_visitor_gets_the_rendered_page_from_the_cache(
    client, django_user_model
):
    r = _researcher_with(30, "4004.")
    url = r.get_absolute_url() + "?sort=oldest&page=2"
    first = client.get(url)
    with CaptureQueriesContext(connection) as ctx:
        again = client.get(url)
    # Only the researcher is read: the page is the one rendered before.
    assert len(ctx.captured_queries) == 1
    assert again.content == first.content
    assert again["Vary"] == "Accept, Cookie"
    assert again["Content-Type"] == first["Content-Type"]
    # Another format, host or query string is another page.
    md = client.get(url, HTTP_ACCEPT="text/markdown")
    assert md["Content-Type"].startswith("text/markdown")
    other_host = client.get(url, HTTP_HOST="127.0.0.1")
    assert b'href="http://127.0.0.1/researchers/' in other_host.content
    assert client.get(r.get_absolute_url()).content != first.content
    # A curation change is shown at once: the researcher's version moved.
    Researcher.objects.filter(pk=r.pk).update(display_name="Renamed Grows")
    researchers_changed([r.pk])
    assert b"Renamed Grows" in client.get(url).content
    # A signed-in reader is never served the visitors' page, nor is one with
    # a message waiting.
    client.force_login(django_user_model.objects.create_user("reader", "", "pw"))
    signed_in = client.get(url)
    assert b'id="follow-button" aria-pressed="false"' in signed_in.content
    client.logout()
    storage = CookieStorage(RequestFactory().get("/"))
    client.cookies[CookieStorage.cookie_name] = storage._encode(
        [Message(constants.INFO, "You are signed out.")]
    )
    assert b"You are signed out." in client.get(url).content
    # ... and the message is not kept for the next visitor.
    client.cookies.clear()
    assert b"You are signed out." not in client.get(url).content


def test_a_page_asked_with_parameters_it_does_not_read_is_not_cached(client):
    r = _researcher_with(5, "5005.")
    junk = r.get_absolute_url() + "?utm_source=x"
    plain = r.get_absolute_url() + "?sort=cited"
    client.get(junk)
    client.get(plain)
    # A write that does not bump the version (as no curation write does):
    # the cached page keeps the old name, a page rendered anew shows the new.
    Researcher.objects.filter(pk=r.pk).update(display_name="Quietly Renamed")
    assert b"Quietly Renamed" in client.get(junk).content
    assert b"Quietly Renamed" not in client.get(plain).content
