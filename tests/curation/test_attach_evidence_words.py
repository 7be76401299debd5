"""An attach proposal's page says its evidence in words, its numbers rounded."""

from __future__ import annotations

from html import escape as html_escape

import pytest
from django.urls import reverse

from curation.models import Proposal
from tests.wovepaper.test_feeds import curated_corpus
from wovepaper.profile import feature_words

# Inputs built around the hand-set default weights' scores: the rules are
# under test here, not the model (tests/conftest.py, default_weights).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("default_weights")]


def test_a_pending_attach_reads_in_words_with_values_to_three_places(
    client, curator, arxiv_dir
):
    # Adrian Del Maestro's profile, curated; his single-author 1201.4869,
    # harvested after, waits as an attach (real 2016 arXiv feeds).
    researcher = curated_corpus(arxiv_dir)
    attach = Proposal.objects.get(
        status="pending", kind="attach", researcher=researcher
    )
    features = attach.evidence["features"]
    client.force_login(curator)
    page = " ".join(
        client.get(reverse("admin:curation_proposal_change", args=[attach.pk]))
        .content.decode()
        .split()
    )
    words = feature_words(features, attach.evidence["contributions"])
    assert words
    assert f"<p>In words: {html_escape(words)}.</p>" in page
    long_floats = [
        v for v in features.values() if isinstance(v, float) and v != round(v, 3)
    ]
    assert long_floats, "the real evidence holds a value past 3 places"
    for value in long_floats:
        assert f"<td>{value}</td>" not in page
        assert f"<td>{round(value, 3)}</td>" in page
