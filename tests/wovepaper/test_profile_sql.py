"""The researcher page's PostgreSQL statements give what the ORM path gives.

wovepaper.profile reads through wovepaper.profile_sql on PostgreSQL and through
the ORM elsewhere (the embedded SQLite demo). Both paths run here on the same
real records: arXiv papers and an OpenAlex works page (institutions, ORCIDs),
matched and applied, some by a curator, one paper hidden, one profile split.
"""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import pytest
from django.db import connection
from django.db.models import F

from curation import edits, services
from curation.models import Proposal
from wovepaper import profile
from wovepaper.models import Paper, Researcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def curated(arxiv_dir, curator, django_capture_on_commit_callbacks):
    """Real papers from two sources, matched; half the proposals applied by a
    curator, half by the identifier policy's path (no actor); then the biggest
    profile split, one of its papers hidden and one of its slots detached; the
    second biggest split by an approved split proposal."""
    from harvest.services import harvest_arxiv_files, harvest_files

    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    harvest_files(
        source="openalex", root=arxiv_dir.parent / "openalex" / "peneira_works_page"
    )
    services.matching_run()
    with django_capture_on_commit_callbacks(execute=True):
        for n, p in enumerate(Proposal.objects.filter(status="pending").order_by("id")):
            services.proposal_apply(proposal=p, actor=curator if n % 2 else None)
    biggest, second = sorted(
        Researcher.objects.live(), key=lambda r: (-r.authorships.count(), r.pk)
    )[:2]
    moving = list(biggest.authorships.order_by("id").values_list("id", flat=True)[:2])
    with django_capture_on_commit_callbacks(execute=True):
        edits.researcher_split(researcher=biggest, authorship_ids=moving, actor=curator)
        # The second biggest split by an approved split proposal.
        proposal = Proposal.objects.create(
            kind="split", score=0.9, model_version="test", researcher=second
        )
        proposal.authorships.set([second.authorships.order_by("id").first()])
        services.proposal_apply(proposal=proposal, actor=curator)
    Paper.objects.filter(
        pk=biggest.authorships.order_by("-id").values("paper_id")[:1]
    ).update(hidden=True)
    # One slot of a co-authored paper unmatched: its authors' positions go
    # uncounted in the histogram.
    with django_capture_on_commit_callbacks(execute=True):
        edits.authorship_detach(
            authorship=biggest.authorships.order_by("id").first(), actor=curator
        )
    return Researcher.objects.live().order_by("id")


def _orm(monkeypatch):
    """Make wovepaper.profile take its ORM path (as on SQLite)."""
    monkeypatch.setattr(profile, "connection", SimpleNamespace(vendor="sqlite"))


def test_summary_is_the_same_by_both_paths(curated, monkeypatch):
    assert connection.vendor == "postgresql"
    by_sql = {r.pk: profile.researcher_summary(r) for r in curated}
    _orm(monkeypatch)
    by_orm = {r.pk: profile.researcher_summary(r) for r in curated}
    assert by_sql == by_orm
    # The records exercise every part of the summary.
    summaries = list(by_sql.values())
    assert len(summaries) > 50
    for part in ("institutions", "split_into", "identifiers", "affiliations"):
        assert any(s[part] for s in summaries), part
    assert any(s["histogram"].counted for s in summaries)
    assert any(s["histogram"].counted < s["histogram"].total for s in summaries)


def test_an_approved_split_proposal_is_a_split_on_the_page(curated, monkeypatch):
    """The page said "Part of this profile was split off" after the admin's
    Split, not after an approved split proposal (new-user trial)."""
    proposal = Proposal.objects.get(kind="split", status="applied")
    split_off = proposal.other_researcher
    for _ in ("sql", "orm"):
        summary = profile.researcher_summary(proposal.researcher)
        assert [s["id"] for s in summary["split_into"]] == [split_off.pk]
        _orm(monkeypatch)


def test_papers_pages_are_the_same_by_both_paths(curated, monkeypatch):
    # Pages of two papers, so a profile has several and every sort shows;
    # each page of each profile, and the one after its last (empty).
    monkeypatch.setattr(profile, "PAGE_SIZE", 2)
    asked = [
        (r, category, sort, number)
        for r in curated
        for category in (
            "",
            *[c for c, _ in profile.researcher_summary(r)["categories"]][:2],
        )
        for sort in profile.SORTS
        for number in range(1, 2 + math.ceil(r.authorships.count() / 2))
    ]
    by_sql = [
        profile.researcher_papers_page(r, category=c, sort=s, number=n)
        for r, c, s, n in asked
    ]
    _orm(monkeypatch)
    by_orm = [
        profile.researcher_papers_page(r, category=c, sort=s, number=n)
        for r, c, s, n in asked
    ]
    assert by_sql == by_orm
    assert sum(len(p["papers"]) for p in by_sql) > 1000
    # "<who> on <date>: <evidence> (score s)." or the direct placement.
    whys = {re.split(r" on \d|:", row["why"])[0] for p in by_sql for row in p["papers"]}
    assert whys == {
        "A curator approved the match",
        "Placed automatically by the matcher, sure of it",
        "A curator placed this paper on the profile directly (a merge, a move or a "
        "confirmed claim).",
    }
    # A profile a `new` proposal started says what joined its papers.
    joined = [
        row["why"] for p in by_sql for row in p["papers"] if "joined by" in row["why"]
    ]
    assert joined
    assert all(
        re.search(r"this paper and \d+ others? started a new one", w) for w in joined
    )
    # The orders are the database's: titles in its collation, not Python's.
    monkeypatch.setattr(profile, "PAGE_SIZE", 10**6)
    for r in curated:
        visible = Paper.objects.filter(authorships__researcher=r, hidden=False)
        for sort, order in (
            ("title", ("title", "id")),
            ("oldest", (F("published").asc(nulls_first=True), "id")),
        ):
            listed = profile.researcher_papers_page(r, sort=sort)["papers"]
            assert [p["id"] for p in listed] == list(
                visible.order_by(*order).values_list("id", flat=True)
            )


def test_search_rows_are_the_same_by_both_paths(curated, monkeypatch):
    # Short bylines of three names, so long ones say "and N more".
    monkeypatch.setattr(profile, "BYLINE_SHOWN", 3)
    ids = list(Paper.objects.order_by("-id").values_list("id", flat=True))
    ids = ids[::2] + ids[1::2] + [10**9]  # any order; an unknown id is left out
    by_sql = profile.paper_rows_by_id(ids)
    _orm(monkeypatch)
    by_orm = profile.paper_rows_by_id(ids)
    assert by_sql == by_orm
    assert len(by_sql) == Paper.objects.filter(hidden=False).count()
    assert any(row["more"] for row in by_sql)
