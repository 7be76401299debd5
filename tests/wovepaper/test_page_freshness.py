"""A researcher page shows a paper's changes at once, whoever writes them.

The page orders, filters and counts the researcher's papers from a cached
summary (wovepaper.profile, cached under the researcher's version), so every
write that changes a paper or removes a researcher's slot must drop it: a
re-harvest (byline, dates, deletion) and the paper admin. Found by a hostile
test of the cached pages.
"""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from lxml import html as lxml_html

from harvest.records import AuthorRecord, PaperRecord
from harvest.services import paper_upsert
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from wovepaper import profile
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db


def _record(**fields) -> PaperRecord:
    return PaperRecord(
        **{
            "source": "arxiv",
            "external_id": "2101.00001",
            "arxiv_id": "2101.00001",
            "title": "Original title",
            "published": dt.date(2021, 1, 1),
            "updated": dt.date(2021, 1, 1),
            "categories": ["hep-th"],
            "authors": [
                AuthorRecord("Ada Lovelace", "Ada", "Lovelace"),
                AuthorRecord("Bob Smith", "Bob", "Smith"),
            ],
            **fields,
        }
    )


def _researcher_with(n: int, name: str):
    r = ResearcherFactory(display_name=name)
    papers = [PaperFactory(title=f"{name} paper {i}") for i in range(n)]
    for p in papers:
        AuthorshipFactory(paper=p, researcher=r)
    return r, papers


def _admin() -> Client:
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("root", "", "pw"))
    return admin


def test_a_reharvest_that_drops_a_researcher_from_the_byline(
    client, django_capture_on_commit_callbacks
):
    paper_upsert(record=_record())
    paper = Paper.objects.get(arxiv_id="2101.00001")
    ada = ResearcherFactory(display_name="Ada Lovelace")
    Authorship.objects.filter(paper=paper, position=1).update(researcher=ada)
    AuthorshipFactory(paper=PaperFactory(title="Other"), researcher=ada)
    before = client.get(ada.get_absolute_url()).content.decode()
    assert "2 papers here" in before
    # The years are the papers' publication years, and say so (a bare
    # "2021." puzzled the new-user trial).
    assert "2 papers here</strong>, published 2021." in before
    assert paper.get_absolute_url() in before

    with django_capture_on_commit_callbacks(execute=True):
        result = paper_upsert(
            record=_record(
                version=2,
                updated=dt.date(2021, 2, 1),
                authors=[AuthorRecord("Bob Smith", "Bob", "Smith")],
            )
        )

    assert result.outcome == "updated"
    after = client.get(ada.get_absolute_url()).content.decode()
    assert "1 paper here" in after
    assert paper.get_absolute_url() not in after


def test_a_paper_hidden_in_the_admin(client, django_capture_on_commit_callbacks):
    r, papers = _researcher_with(3, "Ada Admin")
    assert "3 papers here" in client.get(r.get_absolute_url()).content.decode()
    admin = _admin()
    change = f"/admin/wovepaper/paper/{papers[0].pk}/change/"
    form = next(
        f
        for f in lxml_html.fromstring(admin.get(change).content).forms
        if f.get("id") == "paper_form"
    )
    data = {**dict(form.form_values()), "hidden": "on"}

    with django_capture_on_commit_callbacks(execute=True):
        assert admin.post(change, data).status_code == 302

    after = client.get(r.get_absolute_url()).content.decode()
    assert "2 papers here" in after
    assert papers[0].get_absolute_url() not in after


def test_papers_deleted_in_the_admin(client, django_capture_on_commit_callbacks):
    r, papers = _researcher_with(4, "Ada Delete")
    assert "4 papers here" in client.get(r.get_absolute_url()).content.decode()
    admin = _admin()
    with django_capture_on_commit_callbacks(execute=True):
        one = admin.post(
            f"/admin/wovepaper/paper/{papers[0].pk}/delete/", {"post": "yes"}
        )
    assert one.status_code == 302
    assert "3 papers here" in client.get(r.get_absolute_url()).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        bulk = admin.post(
            "/admin/wovepaper/paper/",
            {
                "action": "delete_selected",
                "_selected_action": [papers[1].pk, papers[2].pk],
                "post": "yes",
            },
        )
    assert bulk.status_code == 302
    assert "1 paper here" in client.get(r.get_absolute_url()).content.decode()


def test_stale_keys_list_the_same_papers_by_both_paths(monkeypatch):
    """Keys read before a paper was hidden: neither path lists it."""
    r, papers = _researcher_with(3, "Ada Keys")
    keys = profile.researcher_paper_keys(r)
    Paper.objects.filter(pk=papers[0].pk).update(hidden=True)
    by_sql = profile.researcher_papers_page(r, keys=keys)
    monkeypatch.setattr(profile, "connection", SimpleNamespace(vendor="sqlite"))
    by_orm = profile.researcher_papers_page(r, keys=keys)
    assert [p["id"] for p in by_sql["papers"]] == [p["id"] for p in by_orm["papers"]]
    assert papers[0].pk not in [p["id"] for p in by_orm["papers"]]


def test_two_slots_of_one_paper_count_it_once():
    r = ResearcherFactory(display_name="Ada Twice")
    paper = PaperFactory(title="Twice", categories=["hep-th"])
    AuthorshipFactory(paper=paper, researcher=r, position=1)
    AuthorshipFactory(paper=paper, researcher=r, position=2)
    summary = profile.researcher_summary(r)
    page = profile.researcher_papers_page(r, keys=summary["papers"])
    assert summary["paper_count"] == page["count"] == 1
    assert summary["categories"] == [("hep-th", 1)]


def test_a_paper_hidden_or_deleted_in_the_admin_leaves_searches_at_once(
    client, django_capture_on_commit_callbacks
):
    from wovepaper.search import search_vectors_refresh

    r, papers = _researcher_with(3, "Zyzzyva Admin")
    search_vectors_refresh(paper_ids=[p.pk for p in papers])
    found = client.get("/search/", {"q": "zyzzyva"}).content.decode()
    assert "3 papers found" in found
    admin = _admin()
    change = f"/admin/wovepaper/paper/{papers[0].pk}/change/"
    form = next(
        f
        for f in lxml_html.fromstring(admin.get(change).content).forms
        if f.get("id") == "paper_form"
    )
    with django_capture_on_commit_callbacks(execute=True):
        data = {**dict(form.form_values()), "hidden": "on"}
        assert admin.post(change, data).status_code == 302

    hidden = client.get("/search/", {"q": "zyzzyva"}).content.decode()
    assert "2 papers found" in hidden
    assert papers[0].get_absolute_url() not in hidden

    with django_capture_on_commit_callbacks(execute=True):
        admin.post(f"/admin/wovepaper/paper/{papers[1].pk}/delete/", {"post": "yes"})
    assert "1 paper found" in client.get("/search/", {"q": "zyzzyva"}).content.decode()
