"""Researchers that score alike against an authorship: the one holding the
most papers is proposed, and the proposal says who else tied.

Real people from ``shared/data``: S2AND Qian-partial holds two "Guoping Liu"
(gold clusters 271 and 270: seven mentions, three printing no affiliation,
and four). A mention printing nothing but the name scores the same against
both; before, the first researcher in id order took it.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.urls import reverse

from curation import names, services
from curation.matching import scoring
from curation.matching.features import AuthorshipView, profile_of
from curation.models import Proposal
from curation.proposing import attach
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory

QIAN = settings.WOVEPAPER_DATA_DIR / "and/s2and/qian_partial"


def _person(cluster: str, first: str) -> list[dict]:
    """The author_info of a Qian gold person's mentions printing this first
    name, in signature order."""
    members = json.loads((QIAN / "clusters.json").read_text())[cluster]
    signatures = json.loads((QIAN / "signatures.json").read_text())
    infos = [signatures[str(s)]["author_info"] for s in members["signature_ids"]]
    return [i for i in infos if i["first"] == first]


def _mention(info: dict, researcher=None):
    return AuthorshipFactory(
        paper=PaperFactory(categories=["cs.SY"], primary_category="cs.SY"),
        given_name=info["first"],
        family_name=info["last"],
        affiliations=info["affiliations"],
        researcher=researcher,
    )


def _researcher(infos: list[dict]):
    r = ResearcherFactory(
        display_name=f"{infos[0]['first']} {infos[0]['last']}",
        block_key=names.block_key(infos[0]["first"], infos[0]["last"]),
    )
    for info in infos:
        _mention(info, r)
    return r


@pytest.fixture
def two_guoping_liu(db):
    """``(other, his, bare)``: the researcher of gold person 270 (created
    first: the lower id), that of gold person 271 holding six of his seven
    mentions, and his seventh, printing nothing but the name, unassigned."""
    his = _person("271", "Guoping")
    other = _person("270", "Guoping")
    assert {(i["first"], i["last"]) for i in his + other} == {("Guoping", "Liu")}
    bare = [i for i in his if not i["affiliations"]]
    assert (len(his), len(bare), len(other)) == (7, 3, 4)
    first = _researcher(other)
    second = _researcher([i for i in his if i is not bare[-1]])
    assert first.pk < second.pk
    return first, second, _mention(bare[-1])


def test_a_tie_goes_to_the_researcher_holding_most_papers(two_guoping_liu):
    other, his, bare = two_guoping_liu
    services.matching_run(block_keys=["liu g"], merges=False)
    p = Proposal.objects.get(authorships=bare)
    assert (p.kind, p.researcher_id) == ("attach", his.pk)
    assert p.evidence["tied"] == {
        "papers": 6,
        "with": [{"researcher": other.pk, "papers": 4}],
        "others": 1,
    }
    assert p.score >= settings.CURATION_ATTACH_THRESHOLD
    # A full run over the same state proposes nothing more.
    assert not services.matching_run().get("proposed_attach")


def test_a_rejected_tied_attach_goes_to_the_next_of_them(two_guoping_liu, curator):
    other, his, bare = two_guoping_liu
    services.matching_run(block_keys=["liu g"], merges=False)
    services.proposal_reject(
        proposal=Proposal.objects.get(authorships=bare), actor=curator
    )
    services.matching_run(block_keys=["liu g"], merges=False)
    p = Proposal.objects.get(authorships=bare, status="pending")
    assert (p.kind, p.researcher_id) == ("attach", other.pk)
    # Alone now: nobody else scored the same.
    assert "tied" not in p.evidence


def test_the_attach_page_says_who_tied(client, curator, two_guoping_liu):
    other, his, bare = two_guoping_liu
    services.matching_run(block_keys=["liu g"], merges=False)
    p = Proposal.objects.get(authorships=bare)
    client.force_login(curator)
    url = reverse("admin:curation_proposal_change", args=[p.pk])
    text = client.get(url).content.decode()
    link = reverse("admin:wovepaper_researcher_change", args=[other.pk])
    assert (
        "<strong>Tied:</strong> 1 other researcher scored the same against this "
        f'authorship: <a href="{link}">researcher #{other.pk}</a> (4 papers). '
        "It is proposed to the one holding the most papers (6 when proposed)"
    ) in text
    # Evidence edited by hand into another shape, or naming the proposal's own
    # researcher as tied, is passed over.
    for tied in (
        "x",
        {**p.evidence["tied"], "with": []},
        {**p.evidence["tied"], "with": [{"researcher": his.pk, "papers": 4}]},
        {**p.evidence["tied"], "with": ["x"]},
        {**p.evidence["tied"], "others": 0},
        {**p.evidence["tied"], "papers": True},
    ):
        Proposal.objects.filter(pk=p.pk).update(evidence={**p.evidence, "tied": tied})
        response = client.get(url)
        assert response.status_code == 200
        assert "Tied:" not in response.content.decode()


def _view(i: int) -> AuthorshipView:
    return AuthorshipView(
        id=i, paper_id=i, given="Guoping", family="Liu", block_key="liu g"
    )


def test_untied_takes_most_papers_then_lowest_id_and_names_the_rest():
    a = _view(1)
    profiles = {
        7: profile_of([_view(10), _view(11)], id=7),
        3: profile_of([_view(12), _view(13)], id=3),
        5: profile_of([_view(14), _view(15), _view(16)], id=5),
        2: profile_of([_view(17)], id=2),
    }
    _, (_, evidence, chosen, _) = attach._attach_candidates(
        [a], list(profiles.values()), set(), scoring.DEFAULT, {}, 0.0
    )[0]
    assert chosen.id == 5
    assert evidence["tied"] == {
        "papers": 3,
        "with": [
            {"researcher": 3, "papers": 2},
            {"researcher": 7, "papers": 2},
            {"researcher": 2, "papers": 1},
        ],
        "others": 3,
    }
    # A cannot-link to the likeliest leaves the next, and the rest tied.
    _, (_, evidence, chosen, _) = attach._attach_candidates(
        [a], list(profiles.values()), {("a", 1, 5)}, scoring.DEFAULT, {}, 0.0
    )[0]
    assert chosen.id == 3
    assert [t["researcher"] for t in evidence["tied"]["with"]] == [7, 2]


def test_at_most_ten_tied_are_named():
    profiles = [profile_of([_view(100 + i)], id=i + 1) for i in range(14)]
    _, (_, evidence, chosen, _) = attach._attach_candidates(
        [_view(1)], profiles, set(), scoring.DEFAULT, {}, 0.0
    )[0]
    assert chosen.id == 1
    assert evidence["tied"]["others"] == 13
    assert [t["researcher"] for t in evidence["tied"]["with"]] == list(range(2, 12))
