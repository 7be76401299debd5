"""Bulk approve and reject as a worker's task with a progress page (issue 47):
the request records the action and returns; the worker decides each proposal,
writing done, skipped and failed on the one ``batch`` event that links every
decision. Here tasks run eagerly, as in the embedded setup; the real worker's
run is tests/integration/test_celery_worker.py's."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation import services
from curation.deciding import bulk
from curation.models import CurationEvent, Proposal
from tests.factories import AuthorshipFactory, ResearcherFactory

pytestmark = pytest.mark.django_db


def _attaches(count: int) -> list[Proposal]:
    researcher = ResearcherFactory()
    made = []
    for n in range(count):
        proposal = Proposal.objects.create(
            kind="attach",
            score=0.9,
            model_version="t",
            fingerprint=f"bulk-{n}",
            researcher=researcher,
        )
        proposal.authorships.set([AuthorshipFactory()])
        made.append(proposal)
    return made


def test_the_action_answers_with_its_progress_page(client, curator):
    proposals = _attaches(3)
    proposals[1].authorships.first().delete()  # stale: skipped with its reason
    client.force_login(curator)
    response = client.post(
        reverse("admin:curation_proposal_changelist"),
        {"action": "approve_selected", "_selected_action": [p.pk for p in proposals]},
    )
    batch = CurationEvent.objects.get(kind="batch")
    progress = reverse("admin:curation_curationevent_progress", args=[batch.pk])
    assert response.status_code == 302
    assert response["Location"] == progress
    page = client.get(progress).content.decode()
    assert "2 applied, 1 skipped, 0 failed. Audit entry: event" in page
    assert 'data-state="done"' in page
    assert 'http-equiv="refresh"' not in page  # done: it stops reloading
    assert f"proposal {proposals[1].pk} is stale" in page
    assert batch.extra["total"] == 3


def test_a_running_action_reloads_its_page(client, curator):
    batch = bulk._batch_event([1, 2], True, curator, "")
    client.force_login(curator)
    page = client.get(
        reverse("admin:curation_curationevent_progress", args=[batch.pk])
    ).content.decode()
    assert 'data-state="queued"' in page
    assert 'http-equiv="refresh" content="2"' in page
    assert "Waiting for a worker" in page


def test_the_progress_page_needs_the_view_permission(client):
    from tests.factories import UserFactory

    batch = bulk._batch_event([1], True, None, "")
    client.force_login(UserFactory(is_staff=True))
    response = client.get(
        reverse("admin:curation_curationevent_progress", args=[batch.pk])
    )
    assert response.status_code == 403


def test_a_redelivered_task_goes_on_where_the_batch_stopped(curator, monkeypatch):
    """A worker killed mid-batch: the redelivery counts what the batch
    decided already as done, decides the rest, and decides nothing twice."""
    proposals = _attaches(4)
    batch = bulk._batch_event([p.pk for p in proposals], True, curator, "")
    # The first delivery decided two before it died.
    for proposal in proposals[:2]:
        services.proposal_apply(proposal=proposal, actor=curator, batch=batch)

    extra = services.bulk_decide_run(batch_id=batch.pk)

    assert (extra["state"], extra["done"], extra["skipped"]) == ("done", 4, [])
    applied = CurationEvent.objects.filter(batch=batch, kind="proposal_applied")
    assert sorted(applied.values_list("proposal_id", flat=True)) == sorted(
        p.pk for p in proposals
    )
    # A finished batch is left as it is.
    assert services.bulk_decide_run(batch_id=batch.pk) == extra
    assert applied.count() == 4


def test_a_bulk_reject_keeps_its_reason_on_each_proposal(curator):
    proposals = _attaches(2)
    batch, done, skipped = services.proposals_decide(
        proposals=proposals, approve=False, actor=curator, reason="not them"
    )
    assert (done, skipped) == (2, [])
    assert set(Proposal.objects.values_list("status", "reason")) == {
        ("rejected", "not them")
    }
    assert batch.extra["verb"] == "rejected"


def test_an_empty_selection_records_no_batch(client, curator):
    client.force_login(curator)
    response = client.post(
        reverse("admin:curation_proposal_changelist"),
        {"action": "approve_selected", "_selected_action": ["999999999"]},
    )
    assert response.status_code == 302
    assert not CurationEvent.objects.filter(kind="batch").exists()


def test_its_curator_follows_the_progress_without_the_event_log_permission(client):
    from django.contrib.auth.models import Permission

    from tests.factories import UserFactory

    decider = UserFactory(is_staff=True)
    decider.user_permissions.set(
        Permission.objects.filter(
            codename__in=["view_proposal", "decide_proposal"],
            content_type__app_label="curation",
        )
    )
    proposals = _attaches(2)
    client.force_login(decider)
    response = client.post(
        reverse("admin:curation_proposal_changelist"),
        {"action": "approve_selected", "_selected_action": [p.pk for p in proposals]},
    )
    assert client.get(response["Location"]).status_code == 200


def test_a_block_reviews_batch_is_no_bulk_action_to_run(curator):
    batch = CurationEvent.objects.create(
        kind="batch", actor=curator, extra={"review": "maestro a", "verb": "reviewed"}
    )
    assert services.bulk_decide_run(batch_id=batch.pk) == batch.extra
    batch.refresh_from_db()
    assert batch.extra == {"review": "maestro a", "verb": "reviewed"}
