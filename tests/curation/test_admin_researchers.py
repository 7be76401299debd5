"""The curators' admin of researchers, through the real admin views."""

from __future__ import annotations

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from curation import edits
from curation.models import Constraint, CurationEvent, Proposal
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:wovepaper_researcher_changelist")


def _url(name, *args):
    return reverse(f"admin:wovepaper_researcher_{name}", args=args)


def _two():
    a = ResearcherFactory()
    b = ResearcherFactory(display_name="J. Serre")
    return a, b, [AuthorshipFactory(researcher=a)], [AuthorshipFactory(researcher=b)]


def test_merge_action_shows_confirmation_first_then_merges(client, curator):
    a, b, _, (moved,) = _two()
    client.force_login(curator)
    form = {"action": "merge_selected", ACTION_CHECKBOX_NAME: [b.pk, a.pk]}

    page = client.post(CHANGELIST, form)

    assert page.status_code == 200
    assert "Yes, merge them" in page.content.decode()
    assert Researcher.objects.live().count() == 2  # nothing changed yet

    done = client.post(CHANGELIST, {**form, "post": "yes"}, follow=True)

    assert f"Merged researchers {b.pk} into" in done.content.decode()
    moved.refresh_from_db()
    assert moved.researcher_id == a.pk
    assert Researcher.objects.get(pk=b.pk).merged_into_id == a.pk


def test_merge_action_warns_of_conflicting_orcids_and_refuses(client, curator):
    a = ResearcherFactory(orcid="0000-0002-1825-0097")
    b = ResearcherFactory(orcid="0000-0001-5109-3700")
    client.force_login(curator)
    form = {"action": "merge_selected", ACTION_CHECKBOX_NAME: [a.pk, b.pk]}

    page = client.post(CHANGELIST, form)
    assert "will be refused" in page.content.decode()
    done = client.post(CHANGELIST, {**form, "post": "yes"}, follow=True)

    assert "Nothing merged" in done.content.decode()
    assert not Researcher.objects.filter(merged_into__isnull=False).exists()


def test_split_page_previews_then_splits(client, curator):
    r = ResearcherFactory()
    keep, move = AuthorshipFactory(researcher=r), AuthorshipFactory(researcher=r)
    client.force_login(curator)

    page = client.get(_url("split", r.pk))
    assert page.status_code == 200
    preview = client.post(_url("split", r.pk), {"authorships": [move.pk]})
    assert "Yes, split" in preview.content.decode()
    move.refresh_from_db()
    assert move.researcher_id == r.pk  # the preview changes nothing

    client.post(
        _url("split", r.pk),
        {"authorships": [move.pk], "display_name": "Other Serre", "confirm": "yes"},
    )

    move.refresh_from_db()
    keep.refresh_from_db()
    new = Researcher.objects.get(display_name="Other Serre")
    assert (keep.researcher_id, move.researcher_id) == (r.pk, new.pk)


def test_move_and_detach_pages_confirm_then_act(client, curator):
    a, b, (a1,), _ = _two()
    a2 = AuthorshipFactory(researcher=a)
    client.force_login(curator)

    confirm = client.post(_url("move", a.pk, a1.pk), {"to": b.pk})
    assert "Yes, move it" in confirm.content.decode()
    client.post(_url("move", a.pk, a1.pk), {"to": b.pk, "confirm": "yes"})
    a1.refresh_from_db()
    assert a1.researcher_id == b.pk

    assert "Yes, detach it" in client.get(_url("detach", a.pk, a2.pk)).content.decode()
    client.post(_url("detach", a.pk, a2.pk), {"confirm": "yes"})
    a2.refresh_from_db()
    assert a2.researcher_id is None


def test_move_to_a_missing_researcher_says_so(client, curator):
    a, _, (a1,), _ = _two()
    client.force_login(curator)
    page = client.post(_url("move", a.pk, a1.pk), {"to": "999999"})
    assert "There is no researcher 999999" in page.content.decode()


def test_lock_button_and_edit_form_go_through_the_services(client, curator):
    a, _, _, _ = _two()
    client.force_login(curator)

    client.post(_url("lock", a.pk), {"locked": "1"})
    a.refresh_from_db()
    assert a.locked is True

    client.post(
        _url("change", a.pk),
        {
            "display_name": "J.-P. Serre",
            "orcid": "https://orcid.org/0000-0002-1825-0097",
            "s2_author_id": "",
            "openalex_author_id": "",
            "seen_revision": a.revision,  # as the form shows it after the lock
            "authorships-TOTAL_FORMS": "0",
            "authorships-INITIAL_FORMS": "0",
        },
    )
    a.refresh_from_db()
    assert (a.display_name, a.orcid) == ("J.-P. Serre", "0000-0002-1825-0097")
    assert list(
        CurationEvent.objects.order_by("pk").values_list("kind", flat=True)
    ) == ["locked", "edited"]


def test_edit_form_shows_the_service_error_and_changes_nothing(client, curator):
    holder = ResearcherFactory(orcid="0000-0002-1825-0097")
    a, _, _, _ = _two()
    client.force_login(curator)

    page = client.post(
        _url("change", a.pk),
        {
            "display_name": a.display_name,
            "orcid": "0000-0002-1825-0097",
            "s2_author_id": "",
            "openalex_author_id": "",
            "seen_revision": a.revision,
            "authorships-TOTAL_FORMS": "0",
            "authorships-INITIAL_FORMS": "0",
        },
        follow=True,
    )

    assert f"already belongs to researcher {holder.pk}" in page.content.decode()
    a.refresh_from_db()
    assert a.orcid is None


def _merged_in_admin(client, curator, a, b) -> CurationEvent:
    """Merge ``a`` and ``b`` with the admin's action, as ``curator``; the event."""
    client.force_login(curator)
    client.post(
        CHANGELIST,
        {"action": "merge_selected", ACTION_CHECKBOX_NAME: [a.pk, b.pk], "post": "yes"},
    )
    return CurationEvent.objects.get(kind="merged")


def test_history_lists_events_and_undo_restores(client, curator):
    a, b, _, (b1,) = _two()
    event = _merged_in_admin(client, curator, a, b)

    history = client.get(_url("history", a.pk))
    assert f"researchers merged #{event.pk}" in history.content.decode()
    undo_url = reverse("admin:curation_curationevent_undo", args=[event.pk])
    assert undo_url in history.content.decode()
    confirm = client.get(undo_url)
    text = confirm.content.decode()
    assert f"authorship {b1.pk} ({b1.raw_name} on “{b1.paper.title}”)" in text
    assert f": researcher {a.pk} → researcher {b.pk}" in text
    assert f"researcher {b.pk} is live again" in text
    assert "undo-forbids" not in text  # only an undone attach forbids

    done = client.post(undo_url, {"confirm": "yes"}, follow=True)

    assert "1 authorship(s) moved back" in done.content.decode()
    b1.refresh_from_db()
    assert b1.researcher_id == b.pk
    assert Researcher.objects.get(pk=b.pk).merged_into_id is None


def test_bulk_decision_writes_one_batch_event_linking_each(client, curator):
    r = ResearcherFactory()
    proposals = []
    for i in range(3):
        a = AuthorshipFactory()
        p = Proposal.objects.create(
            kind="attach",
            score=0.9,
            model_version="t",
            fingerprint=f"f{i}",
            researcher=r,
        )
        p.authorships.set([a])
        proposals.append(p)
    proposals[2].authorships.first().delete()  # this one will be stale
    client.force_login(curator)

    page = client.post(
        reverse("admin:curation_proposal_changelist"),
        {"action": "approve_selected", ACTION_CHECKBOX_NAME: [p.pk for p in proposals]},
        follow=True,
    )

    batch = CurationEvent.objects.get(kind="batch")
    assert "2 applied, 1 skipped" in page.content.decode()
    assert f"Audit entry: event {batch.pk}" in page.content.decode()
    linked = batch.batch_events.order_by("pk").values_list("kind", "proposal_id")
    assert list(linked) == [
        ("proposal_applied", proposals[0].pk),
        ("proposal_applied", proposals[1].pk),
        ("proposal_stale", proposals[2].pk),
    ]
    assert batch.extra["done"] == 2


def _split_proposal():
    """A researcher of three authorships and a pending split of the last two."""
    r = ResearcherFactory()
    held = [AuthorshipFactory(researcher=r) for _ in range(3)]
    p = Proposal.objects.create(
        kind="split",
        score=0.99,
        model_version="t",
        fingerprint="split",
        researcher=r,
        researcher_revisions={str(r.pk): r.revision},
    )
    p.authorships.set(held[1:])
    return r, held, p


def test_review_page_shows_both_researchers_and_approves_an_edited_split(
    client, curator
):
    r, (stay, a, b), p = _split_proposal()
    client.force_login(curator)

    page = client.get(reverse("admin:curation_proposal_change", args=[p.pk]))
    text = page.content.decode()
    assert "Approve with this partition" in text
    assert text.count('name="moving"') == 3
    assert text.count("checked") == 2

    client.post(
        reverse("admin:curation_proposal_decide", args=[p.pk]),
        {"decision": "approve", "partition": "edited", "moving": [b.pk]},
    )

    p.refresh_from_db()
    a.refresh_from_db()
    b.refresh_from_db()
    assert p.status == "applied"
    assert a.researcher_id == r.pk
    assert b.researcher_id == p.other_researcher_id != r.pk


def test_an_edited_split_naming_an_unknown_authorship_is_refused_whole(curator):
    from curation import services
    from curation.exceptions import ProposalConflict

    r, (_stay, a, b), p = _split_proposal()

    with pytest.raises(ProposalConflict, match=r"authorships \[999999\] are not"):
        services.proposal_apply(proposal=p, actor=curator, split_ids=[b.pk, 999999])

    p.refresh_from_db()
    assert p.status == "pending"
    assert set(Authorship.objects.filter(researcher=r)) == {_stay, a, b}


def test_staff_outside_curators_are_refused(client):
    staff = UserFactory(is_staff=True)
    a, b, (a1,), _ = _two()
    client.force_login(staff)

    for url in [
        CHANGELIST,
        _url("split", a.pk),
        _url("move", a.pk, a1.pk),
        _url("history", a.pk),
    ]:
        assert client.get(url).status_code == 403, url
    assert (
        client.post(_url("detach", a.pk, a1.pk), {"confirm": "yes"}).status_code == 403
    )
    a1.refresh_from_db()
    assert a1.researcher_id == a.pk
    assert not Constraint.objects.exists()
    assert Authorship.objects.filter(researcher__isnull=True).count() == 0


def test_edit_form_refuses_to_overwrite_a_change_made_since_it_was_opened(
    client, curator
):
    a, _, _, _ = _two()
    client.force_login(curator)
    form = client.get(_url("change", a.pk))
    seen = form.context["adminform"].form["seen_revision"].value()
    assert seen == 0
    # Meanwhile another curator renames it.
    edits.researcher_update(
        researcher=a, actor=UserFactory(), changes={"display_name": "Renamed By B"}
    )

    page = client.post(
        _url("change", a.pk),
        {
            "display_name": a.display_name,
            "orcid": "0000-0003-1234-5674",
            "s2_author_id": "",
            "openalex_author_id": "",
            "seen_revision": seen,
            "authorships-TOTAL_FORMS": "0",
            "authorships-INITIAL_FORMS": "0",
        },
        follow=True,
    )

    assert "changed since you opened it" in page.content.decode()
    a.refresh_from_db()
    assert (a.display_name, a.orcid) == ("Renamed By B", None)


def test_undo_page_says_which_moved_authorships_a_new_version_dropped(client, curator):
    a, b, _, (b1,) = _two()
    event = _merged_in_admin(client, curator, a, b)
    gone = b1.pk
    b1.delete()  # what the byline sync does to a slot a new version drops
    undo_url = reverse("admin:curation_curationevent_undo", args=[event.pk])

    confirm = client.get(undo_url).content.decode()
    done = client.post(undo_url, {"confirm": "yes"}, follow=True).content.decode()
    history = client.get(_url("history", b.pk)).content.decode()

    assert f"authorship {gone} (no longer exists: a newer version" in confirm
    assert (
        f"Of the authorships it moved, 1 no longer exists (a newer version of the "
        f"paper dropped it: {gone}); the undo leaves them out." in confirm
    )
    assert (
        f"0 authorship(s) moved back; 1 no longer exists (a newer version of the "
        f"paper dropped it: {gone})" in done
    )
    assert f"authorships {gone} left out, since a newer version" in history
    assert Researcher.objects.get(pk=b.pk).merged_into_id is None


def test_undo_page_counts_gone_authorships_past_the_moves_it_lists(client, curator):
    a, b = ResearcherFactory(), ResearcherFactory()
    held = [AuthorshipFactory(researcher=b) for _ in range(60)]
    event = _merged_in_admin(client, curator, a, b)
    gone = sorted(x.pk for x in held[-3:])  # moves 58-60: past the 50 listed
    Authorship.objects.filter(pk__in=gone).delete()

    url = reverse("admin:curation_curationevent_undo", args=[event.pk])
    page = client.get(url).content.decode()

    ids = ", ".join(map(str, gone))
    assert f"3 no longer exist (a newer version of the paper dropped them: {ids})" in (
        page
    )
    assert "Yes, undo it" in page


def test_undo_page_of_an_event_with_nothing_left_offers_no_undo(client, curator):
    a = ResearcherFactory()
    row = AuthorshipFactory(researcher=a)
    event = edits.authorship_detach(authorship=row, actor=curator)
    gone = row.pk
    row.delete()
    client.force_login(curator)

    url = reverse("admin:curation_curationevent_undo", args=[event.pk])
    page = client.get(url).content.decode()

    assert f"moved only authorships {gone}, which no longer exist" in page
    assert "Yes, undo it" not in page


def _with_name(given: str, family: str) -> Researcher:
    r = ResearcherFactory(display_name=f"{given} {family}")
    AuthorshipFactory(researcher=r, given_name=given, family_name=family)
    return r


def test_merge_page_warns_when_the_names_cannot_be_one_person(client, curator):
    """Adrian Del Maestro into Jounghun Lee, or Jae-Weon into Jae-Joon Lee, as
    a new user merged them; two spellings of one person are not warned of."""
    del_maestro, lee = (
        _with_name("Adrian", "Del Maestro"),
        _with_name("Jounghun", "Lee"),
    )
    weon, joon = _with_name("Jae-Weon", "Lee"), _with_name("Jae-Joon", "Lee")
    jp, jean = _with_name("J.-P.", "Serre"), _with_name("Jean-Pierre", "Serre")
    client.force_login(curator)

    def page(*chosen):
        form = {
            "action": "merge_selected",
            ACTION_CHECKBOX_NAME: [r.pk for r in chosen],
        }
        return client.post(CHANGELIST, form).content.decode()

    assert (
        f"researchers {del_maestro.pk} (Adrian Del Maestro) and {lee.pk} (Jounghun "
        "Lee) print different family names" in page(del_maestro, lee)
    )
    assert (
        f"researchers {weon.pk} (Jae-Weon Lee) and {joon.pk} (Jae-Joon Lee) print "
        "given names that cannot be one person&#x27;s" in page(weon, joon)
    )
    # What a merge means for later runs (orcid_checks.held_by_merges).
    assert "does not propose splitting these papers apart again" in page(weon, joon)
    assert "merge-name-warnings" not in page(jp, jean)
