"""Rows edited by hand (a number for an affiliation list, numbers among a
paper's categories) cost that row's evidence, not a matching run, a dossier or
a profile; the admin refuses to store them.

The corpus is the seven real 2007 papers of I. Grabec and his co-authors.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from curation import selectors, services
from curation.models import Proposal
from tests.curation.test_over_merged import _grabec
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db


def _corrupt(rows):
    first, second, third = sorted(rows, key=lambda a: a.pk)[:3]
    # Not what a harvest stores: values written straight into the database.
    Authorship.objects.filter(pk=first.pk).update(affiliations=5)
    Authorship.objects.filter(pk=second.pk).update(affiliations=[{"a": 1}, None])
    Paper.objects.filter(pk=second.paper_id).update(categories=[5, None, "cs.NE"])
    Paper.objects.filter(pk=third.paper_id).update(categories=7)


def test_a_matching_run_proposes_for_every_authorship_despite_hand_edited_rows(
    arxiv_dir,
):
    researcher, rows = _grabec(arxiv_dir)
    _corrupt(rows)
    services.matching_run()
    unassigned = Authorship.objects.filter(
        researcher=None, is_collaboration=False
    ).exclude(block_key="")
    proposed = set(
        Proposal.objects.filter(
            status="pending", kind__in=["new", "attach"]
        ).values_list("authorships", flat=True)
    )
    assert unassigned.exists()
    assert set(unassigned.values_list("pk", flat=True)) <= proposed


def test_the_dossier_and_the_profile_read_past_hand_edited_rows(arxiv_dir, client):
    researcher, rows = _grabec(arxiv_dir)
    _corrupt(rows)
    dossier = selectors.researcher_dossier(researcher)
    assert dossier.paper_count == 7
    # The string among the edited categories still counts; the numbers do not.
    assert ("cs.NE", 2) in dossier.categories
    assert all(isinstance(name, str) for name, _ in dossier.categories)
    response = client.get(researcher.get_absolute_url(), follow=True)
    assert response.status_code == 200
    assert b"cs.NE" in response.content


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (5, "must be a JSON list of strings, not int"),
        ([5, None], "item 1 is int 5, not a string"),
        (["hep-th", ["nested"]], "item 2 is list ['nested'], not a string"),
    ],
)
def test_a_list_that_is_not_of_strings_fails_validation(arxiv_dir, value, message):
    _, rows = _grabec(arxiv_dir)
    paper = rows[0].paper
    paper.categories = value
    with pytest.raises(ValidationError) as raised:
        paper.full_clean()
    assert raised.value.message_dict["categories"] == [message]
    authorship = rows[0]
    authorship.affiliations = value
    with pytest.raises(ValidationError) as raised:
        authorship.full_clean()
    assert raised.value.message_dict["affiliations"] == [message]


def test_a_paper_page_and_feed_show_what_strings_a_hand_edited_row_holds(
    arxiv_dir, client
):
    researcher, rows = _grabec(arxiv_dir)
    _corrupt(rows)
    first, second, third = sorted(rows, key=lambda a: a.pk)[:3]
    # A bare number of categories: no categories shown, the page still served.
    page = client.get(Paper.objects.get(pk=third.paper_id).get_absolute_url())
    assert page.status_code == 200
    assert b"<dt>Categories</dt>" not in page.content
    markdown = client.get(
        Paper.objects.get(pk=third.paper_id).get_absolute_url(),
        HTTP_ACCEPT="text/markdown",
    )
    assert markdown.status_code == 200
    assert "Categories:" not in markdown.content.decode()
    # Numbers among the categories, and affiliations of a number and of an
    # object and a null: the strings are shown, never Python's spelling.
    page = client.get(Paper.objects.get(pk=second.paper_id).get_absolute_url())
    assert page.status_code == 200
    html = page.content.decode()
    assert "<span>cs.NE" in html
    assert "None" not in html
    assert "{&#x27;a&#x27;" not in html
    assert '"keywords": ["cs.NE"]' in html
    feed = client.get(f"/researchers/{researcher.pk}/feed.rss")
    assert feed.status_code == 200
    assert b"<category>cs.NE</category>" in feed.content
    assert b"<category>5</category>" not in feed.content


def test_a_model_switch_passes_over_an_attach_whose_evidence_was_edited(arxiv_dir):
    # Its stored features cannot be scored again: it keeps what it was given.
    from curation.models import MatcherModel

    researcher, rows = _grabec(arxiv_dir)
    Authorship.objects.filter(pk=rows[0].pk).update(researcher=None)
    services.matching_run()
    attach = Proposal.objects.get(status="pending", kind="attach")
    for evidence in ([1], {"features": {"name": "x"}}):
        Proposal.objects.filter(pk=attach.pk).update(evidence=evidence)
        MatcherModel.objects.update_or_create(
            version="logreg-strict",
            defaults={"bias": -20.0, "weights": {}, "threshold": 0.5, "active": True},
        )
        services.matching_run()
        attach.refresh_from_db()
        assert attach.status == "pending"
