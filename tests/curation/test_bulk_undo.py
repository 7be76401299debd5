"""A bulk action undone whole: *Undo all…* on a bulk approve queues
:func:`curation.history.batch_undo` for a worker (a bulk action may hold
10,000 decisions, too many for a web request), which undoes every decision,
latest first, all or none; the batch's page says how it went. Tasks run
eagerly here, as in the embedded setup; on the real Del Maestro records."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation import edits, services
from curation.history import batch_undo_run
from curation.models import CurationEvent, Proposal
from harvest.services import harvest_files
from tests.curation.test_block_review import DEL_MAESTRO
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db


def _placement() -> dict:
    """Where every authorship is, and which profiles are live."""
    return {
        "authorships": dict(Authorship.objects.values_list("pk", "researcher_id")),
        "live": set(Researcher.objects.live().values_list("pk", flat=True)),
    }


def _bulk_approved(client, curator) -> tuple[dict, CurationEvent, list[Proposal]]:
    """The real records matched (everything waits, as in strict mode), then
    every pending proposal approved by one bulk action in the admin."""
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    services.matching_run()
    pending = list(Proposal.objects.filter(status="pending").order_by("pk"))
    assert len(pending) >= 3
    before = _placement()
    client.force_login(curator)
    client.post(
        reverse("admin:curation_proposal_changelist"),
        {"action": "approve_selected", "_selected_action": [p.pk for p in pending]},
    )
    batch = CurationEvent.objects.get(kind="batch")
    assert batch.extra["done"] == len(pending)
    assert _placement() != before
    return before, batch, pending


def _undo_all(client, batch: CurationEvent):
    page = reverse("admin:curation_curationevent_change", args=[batch.pk])
    return client.post(
        reverse("admin:curation_curationevent_undo", args=[batch.pk]),
        {"confirm": "yes", "next": page},
        follow=True,
    )


def test_a_bulk_approve_is_undone_whole_from_its_pages_and_redone(client, curator):
    before, batch, pending = _bulk_approved(client, curator)
    after = _placement()
    progress = client.get(
        reverse("admin:curation_curationevent_progress", args=[batch.pk])
    ).content.decode()
    assert 'id="bulk-undo-all"' in progress
    event_page = reverse("admin:curation_curationevent_change", args=[batch.pk])
    assert "Undo all…" in client.get(event_page).content.decode()
    confirm = client.get(
        reverse("admin:curation_curationevent_undo", args=[batch.pk])
    ).content.decode()
    assert f"Its {len(pending)} changes" in confirm
    assert 'id="undo-by-worker"' in confirm

    answer = _undo_all(client, batch).content.decode()

    assert f"Undid {len(pending)} change(s) of batch {batch.pk}, latest first" in answer
    assert _placement() == before
    assert set(
        Proposal.objects.filter(pk__in=[p.pk for p in pending]).values_list(
            "status", flat=True
        )
    ) == {"reverted"}
    batch.refresh_from_db()
    undo = CurationEvent.objects.get(pk=batch.extra["undo_all"]["undo"])
    assert batch.extra["undo_all"]["state"] == "done"
    assert undo.extra["undoes_batch"] == batch.pk
    assert "undone whole by <a href" in client.get(event_page).content.decode()
    assert "Undo all…" not in client.get(event_page).content.decode()

    # Its undo is a bulk action's batch too: Redo all… does it again.
    undo_page = reverse("admin:curation_curationevent_change", args=[undo.pk])
    assert "Redo all…" in client.get(undo_page).content.decode()
    _undo_all(client, undo)
    assert _placement() == after


def test_an_undo_all_a_later_change_blocks_is_refused_whole_and_said(client, curator):
    _, batch, _ = _bulk_approved(client, curator)
    placed = Authorship.objects.filter(researcher__isnull=False).order_by("pk").first()
    edits.authorship_detach(authorship=placed, actor=curator)  # a later change
    after = _placement()

    answer = _undo_all(client, batch).content.decode()

    assert "Nothing undone: nothing of batch" in answer
    assert _placement() == after  # all or none
    batch.refresh_from_db()
    assert batch.extra["undo_all"]["state"] == "refused"
    page = reverse("admin:curation_curationevent_change", args=[batch.pk])
    assert (
        "refused, nothing undone: nothing of batch" in client.get(page).content.decode()
    )
    assert not CurationEvent.objects.filter(kind="batch").exclude(pk=batch.pk).exists()


def test_a_queued_undo_all_is_not_queued_twice_and_a_redelivery_does_nothing(
    client, curator
):
    _, batch, _ = _bulk_approved(client, curator)
    after = _placement()
    CurationEvent.objects.filter(pk=batch.pk).update(
        extra={**batch.extra, "undo_all": {"state": "queued", "by": curator.pk}}
    )
    confirm = client.get(
        reverse("admin:curation_curationevent_undo", args=[batch.pk])
    ).content.decode()
    assert 'id="undo-queued"' in confirm
    assert 'name="confirm"' not in confirm
    assert "is queued already" in _undo_all(client, batch).content.decode()
    assert _placement() == after

    # The worker's run, then a redelivery of the same task.
    first = batch_undo_run(batch_id=batch.pk, actor_id=curator.pk)
    assert first["state"] == "done"
    assert batch_undo_run(batch_id=batch.pk, actor_id=curator.pk) == first
    assert CurationEvent.objects.filter(kind="batch").count() == 2


def test_an_error_in_the_undo_leaves_it_failed_and_askable_again(
    client, curator, monkeypatch
):
    """A hostile trial: a database error in the undo (a deadlock) left the
    batch "queued" for good, and the admin refused every later ask."""
    from django.db import OperationalError

    from curation.history import batches

    before, batch, _ = _bulk_approved(client, curator)
    after = _placement()
    real = batches.event_undo
    calls = []

    def deadlock_once(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("deadlock detected")
        return real(**kwargs)

    monkeypatch.setattr(batches, "event_undo", deadlock_once)

    answer = _undo_all(client, batch).content.decode()

    assert "Nothing undone: OperationalError: deadlock detected" in answer
    assert _placement() == after  # all or none
    batch.refresh_from_db()
    assert batch.extra["undo_all"]["state"] == "failed"
    assert "Undid" in _undo_all(client, batch).content.decode()
    assert _placement() == before


def test_a_second_undo_all_keeps_the_record_of_the_first(client, curator):
    """A hostile trial: a second ask (a double click, or the button still
    shown because a stale mark of the action is never undone) overwrote
    "undone whole by batch N" with a refusal."""
    harvest_files(source="arxiv", root=DEL_MAESTRO)
    services.matching_run()
    pending = list(Proposal.objects.filter(status="pending").order_by("pk"))
    # One of them stale by the time the action runs: marked, never undone.
    stale = pending[0]
    placed = stale.authorships.first()
    edits.authorship_move(
        authorship=placed,
        to=Researcher.objects.create(display_name="Someone Else", slug="x"),
        actor=curator,
    )
    client.force_login(curator)
    client.post(
        reverse("admin:curation_proposal_changelist"),
        {"action": "approve_selected", "_selected_action": [p.pk for p in pending]},
    )
    batch = CurationEvent.objects.get(kind="batch")
    assert CurationEvent.objects.filter(batch=batch, kind="proposal_stale").exists()
    confirm = client.get(
        reverse("admin:curation_curationevent_undo", args=[batch.pk])
    ).content.decode()
    assert f"Its {len(pending) - 1} changes" in confirm  # the stale mark aside

    _undo_all(client, batch)
    batch.refresh_from_db()
    done = batch.extra["undo_all"]
    page = reverse("admin:curation_curationevent_change", args=[batch.pk])
    assert "Undo all…" not in client.get(page).content.decode()

    again = _undo_all(client, batch).content.decode()

    assert f"was undone whole already, by batch {done['undo']}" in again
    batch.refresh_from_db()
    assert batch.extra["undo_all"] == done


@pytest.mark.parametrize("hand_edited", ["x", ["queued"], 5, {"state": "done"}])
def test_a_hand_edited_undo_record_is_no_error(client, curator, hand_edited):
    before, batch, _ = _bulk_approved(client, curator)
    CurationEvent.objects.filter(pk=batch.pk).update(
        extra={**batch.extra, "undo_all": hand_edited}
    )
    page = reverse("admin:curation_curationevent_change", args=[batch.pk])
    assert client.get(page).status_code == 200
    undo_page = reverse("admin:curation_curationevent_undo", args=[batch.pk])
    assert client.get(undo_page).status_code == 200
    _undo_all(client, batch)
    assert _placement() == before
