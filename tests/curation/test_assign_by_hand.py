"""A curator gives an unassigned authorship to a researcher by hand, from
the proposal or the paper it is on, and automation keeps it there.

The corpus is the seven real 2007 papers of I. Grabec (0704.0047 and others).
"""

from __future__ import annotations

import math

import pytest
from django.urls import reverse

from curation import edits, services
from curation.models import Constraint, Proposal
from tests.curation.test_over_merged import _grabec
from wovepaper.models import Authorship
from wovepaper.profile import feature_words

pytestmark = pytest.mark.django_db


def _assign_url(authorship: Authorship) -> str:
    return reverse("admin:wovepaper_researcher_assign", args=[authorship.pk])


def test_an_authorship_detached_by_mistake_is_assigned_back_by_hand(
    arxiv_dir, client, curator
):
    researcher, rows = _grabec(arxiv_dir)
    # The curator detaches one paper ("not this person"), then finds it was his.
    slip = min(rows, key=lambda a: a.pk)
    edits.authorship_detach(authorship=slip, actor=curator)
    services.matching_run()
    # The cannot-link keeps it off Grabec: matching proposes a new researcher.
    proposal = Proposal.objects.get(status="pending", authorships=slip)
    assert proposal.kind == "new"

    client.force_login(curator)
    page = client.get(
        reverse("admin:curation_proposal_change", args=[proposal.pk])
    ).content.decode()
    assert f'href="{_assign_url(slip)}"' in page
    choose = client.get(_assign_url(slip)).content.decode()
    assert "on no researcher yet" in choose
    assert f'value="{researcher.pk}"' in choose  # a candidate of its block
    confirm = client.post(_assign_url(slip), {"to": researcher.pk}).content.decode()
    assert "Yes, assign it" in confirm
    slip.refresh_from_db()
    assert slip.researcher_id is None  # the confirmation page changes nothing

    done = client.post(
        _assign_url(slip), {"to": researcher.pk, "confirm": "yes"}, follow=True
    )
    assert "Assigned “I. Grabec”" in done.content.decode()
    slip.refresh_from_db()
    assert slip.researcher_id == researcher.pk
    assert Constraint.objects.filter(
        authorship=slip, researcher=researcher, kind="must_link", active=True
    ).exists()
    assert not Constraint.objects.filter(
        authorship=slip, researcher=researcher, kind="cannot_link", active=True
    ).exists()

    # Automation keeps it there, and the proposal it made no longer applies.
    assert services.matching_run()["made_stale"] == 1
    slip.refresh_from_db()
    assert slip.researcher_id == researcher.pk
    assert not Proposal.objects.filter(
        status="pending", kind__in=["new", "attach"], authorships=slip
    ).exists()
    proposal.refresh_from_db()
    assert proposal.status == "stale"


def test_the_paper_page_links_each_authorship_to_assign_or_move(
    arxiv_dir, client, curator
):
    researcher, rows = _grabec(arxiv_dir)
    on, off = rows[0], rows[1]
    edits.authorship_detach(authorship=off, actor=curator)
    client.force_login(curator)
    for row, link in (
        (off, _assign_url(off)),
        (on, reverse("admin:wovepaper_researcher_move", args=[researcher.pk, on.pk])),
    ):
        page = client.get(reverse("admin:wovepaper_paper_change", args=[row.paper_id]))
        assert f'href="{link}"' in page.content.decode()
    # An assigned authorship's assign page is its move page.
    response = client.get(_assign_url(on))
    assert response["Location"] == reverse(
        "admin:wovepaper_researcher_move", args=[researcher.pk, on.pk]
    )


def test_an_assignment_on_stale_sight_changes_nothing(arxiv_dir, client, curator):
    # Another curator assigned it meanwhile: the page the first saw is stale.
    researcher, rows = _grabec(arxiv_dir)
    slip = rows[0]
    edits.authorship_detach(authorship=slip, actor=curator)
    other = (
        services.proposal_apply(proposal=_new_for(slip), actor=curator).other_researcher
        or Authorship.objects.get(pk=slip.pk).researcher
    )
    client.force_login(curator)
    response = client.post(
        _assign_url(slip), {"to": researcher.pk, "confirm": "yes"}, follow=True
    )
    slip.refresh_from_db()
    assert slip.researcher_id == other.pk
    assert "Nothing changed" in response.content.decode()


def _new_for(authorship: Authorship) -> Proposal:
    services.matching_run()
    return Proposal.objects.get(status="pending", kind="new", authorships=authorship)


@pytest.mark.usefixtures("default_weights")
def test_a_new_proposal_page_says_each_pair_in_words_with_its_score(
    arxiv_dir, client, curator
):
    # Grabec's seven papers, unassigned: matching proposes a new researcher.
    _, rows = _grabec(arxiv_dir)
    Authorship.objects.filter(pk__in=[a.pk for a in rows]).update(researcher=None)
    services.matching_run()
    proposal = Proposal.objects.get(kind="new", authorships=rows[0])
    pairs = proposal.evidence["pairs"]
    members = set(proposal.authorships.values_list("pk", flat=True))
    # Clustered together directly (a block of fewer than pipeline.CHUNK), so
    # every pair of members was scored; the weakest 20 are recorded, lowest
    # first, each naming its two sides.
    assert len(members) >= 2
    assert len(pairs) == min(20, len(members) * (len(members) - 1) // 2)
    scores = [
        1 / (1 + math.exp(-(p["bias"] + sum(p["contributions"].values()))))
        for p in pairs
    ]
    assert scores == sorted(scores)
    for p in pairs:
        left, right = p["between"]
        assert set(left) | set(right) <= members
        assert not set(left) & set(right)
    first = pairs[0]
    assert len(pairs) == 1  # its one pair: labelled "the pair", not "pair 1"
    client.force_login(curator)
    page = client.get(
        reverse("admin:curation_proposal_change", args=[proposal.pk])
    ).content.decode()
    words = feature_words(first["features"], first["contributions"])
    # "I." and "I.": the same printed initials, not "68% similar".
    assert words.startswith("the same initials, with no full given name on both sides")
    (a,), (b,) = first["between"]
    a, b = Authorship.objects.get(pk=a), Authorship.objects.get(pk=b)
    assert (
        f"the pair, score {scores[0]:.2f}, between I. Grabec on {a.paper.arxiv_id} "
        f"and I. Grabec on {b.paper.arxiv_id}: {words} <small>"
    ) in page
