"""A JSON body nested past Python's recursion limit is a 400 problem, not a 500
(issue 48): 1,000 nested brackets are 2 KB."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from api.parsers import NESTED_TOO_DEEP
from curation.models import Proposal
from tests.factories import ResearcherFactory, UserFactory

pytestmark = pytest.mark.django_db

NESTED = "[" * 1000 + "]" * 1000


def _post(api: APIClient, url: str):
    return api.post(url, NESTED, content_type="application/json")


def test_nested_bodies_are_refused_with_400_problem_json(curator):
    api = APIClient()
    researcher = ResearcherFactory()
    proposal = Proposal.objects.create(
        kind="new", score=0.9, model_version="v-test", fingerprint="fp"
    )
    answers = {"token": _post(api, "/api/token/")}
    api.force_authenticate(UserFactory())
    answers["claim"] = _post(api, f"/api/researchers/{researcher.pk}/claim/")
    api.force_authenticate(curator)
    answers["approve"] = _post(api, f"/api/proposals/{proposal.pk}/approve/")

    for answer in answers.values():
        assert answer.status_code == 400
        assert answer["Content-Type"] == "application/problem+json"
        assert answer.json()["detail"] == NESTED_TOO_DEEP
    proposal.refresh_from_db()
    assert proposal.status == "pending"


def test_a_body_past_the_upload_limit_is_a_problem_too(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    answer = APIClient().post(
        "/api/token/",
        '{"username": "' + "x" * 2000 + '"}',
        content_type="application/json",
    )

    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/problem+json"
