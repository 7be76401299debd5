"""Undo restores the exact prior state; an undo can itself be undone."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation import edits, services
from curation.exceptions import NothingToUndo, UndoConflict
from curation.history import event_undo, researcher_history, undone_merge_pairs
from curation.models import ClaimRequest, Constraint, CurationEvent, Proposal
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db

FIELDS = ("merged_into_id", "retired", "locked", "orcid", "display_name", "slug")


def _state() -> dict:
    """Everything an undo must restore: assignments, researcher fields, constraints."""
    return {
        "assign": dict(Authorship.objects.values_list("pk", "researcher_id")),
        "researchers": {
            r["id"]: r for r in Researcher.objects.values("id", *FIELDS, "claimed_by")
        },
        "constraints": dict(Constraint.objects.values_list("pk", "active")),
    }


def _world():
    a = ResearcherFactory(orcid="0000-0002-1825-0097")
    b = ResearcherFactory(display_name="J. Serre")
    aa = [AuthorshipFactory(researcher=a) for _ in range(3)]
    ba = [AuthorshipFactory(researcher=b) for _ in range(2)]
    return a, b, aa, ba


def _undo_roundtrip(do):
    """Run ``do``, undo it, check the prior state; undo the undo, check after."""
    user = UserFactory()
    before = _state()
    event = do(user)
    after = _state()
    assert after != before

    undo = event_undo(event=event, actor=user)

    restored = _state()
    new_constraints = set(restored["constraints"]) - set(before["constraints"])
    # What the undo records besides: an undone merge's researchers are two
    # people (history.undone_merge_pairs).
    apart = set(Constraint.objects.filter(event=undo).values_list("pk", flat=True))
    assert sorted(
        Constraint.objects.filter(pk__in=apart).values_list(
            "researcher_id", "other_researcher_id"
        )
    ) == undone_merge_pairs(event=event)
    assert all(restored["constraints"][c] for c in apart)
    assert all(not restored["constraints"][c] for c in new_constraints - apart)
    restored["constraints"] = {
        k: v for k, v in restored["constraints"].items() if k in before["constraints"]
    }
    created = set(restored["researchers"]) - set(before["researchers"])
    assert all(restored["researchers"][r]["retired"] for r in created)
    restored["researchers"] = {
        k: v for k, v in restored["researchers"].items() if k in before["researchers"]
    }
    assert restored == before
    assert (undo.kind, undo.undoes_id) == ("undone", event.pk)

    event_undo(event=undo, actor=user)
    again = _state()
    assert not any(again["constraints"].pop(c) for c in apart)
    assert again == after
    return event


def test_undo_merge_restores_assignments_identifiers_and_redirects():
    a, b, _, _ = _world()

    def merge(user):
        edits.researcher_merge(researchers=[b, a], actor=user)
        return CurationEvent.objects.get(kind="merged")

    _undo_roundtrip(merge)


def test_undo_merge_gives_the_orcid_back_to_the_loser():
    a = ResearcherFactory()
    b = ResearcherFactory(orcid="0000-0002-1825-0097")
    AuthorshipFactory(researcher=a)
    AuthorshipFactory(researcher=b)
    user = UserFactory()
    edits.researcher_merge(researchers=[a, b], actor=user)
    a.refresh_from_db()
    assert a.orcid == "0000-0002-1825-0097"

    event_undo(event=CurationEvent.objects.get(kind="merged"), actor=user)

    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.orcid, b.orcid, b.merged_into_id) == (None, "0000-0002-1825-0097", None)


def test_undo_split_retires_the_new_researcher_and_deactivates_constraints():
    a, _, aa, _ = _world()

    def split(user):
        edits.researcher_split(
            researcher=a, authorship_ids=[aa[0].pk], actor=user, display_name="X"
        )
        return CurationEvent.objects.get(kind="split")

    event = _undo_roundtrip(split)
    new = Researcher.objects.get(pk=event.extra["new"])
    assert new.retired is False  # the undo of the undo brought it back
    assert Researcher.objects.live().filter(pk=new.pk).exists()


def test_undo_move_and_detach_and_lock_and_edit():
    a, b, aa, _ = _world()
    _undo_roundtrip(lambda u: edits.authorship_move(authorship=aa[0], to=b, actor=u))
    _undo_roundtrip(lambda u: edits.authorship_detach(authorship=aa[1], actor=u))

    def lock(user):
        edits.researcher_set_locked(researcher=b, locked=True, actor=user)
        return CurationEvent.objects.filter(kind="locked").latest("pk")

    _undo_roundtrip(lock)

    def rename(user):
        edits.researcher_update(
            researcher=a,
            actor=user,
            changes={"display_name": "Jean-Pierre Serre II", "orcid": None},
        )
        return CurationEvent.objects.filter(kind="edited").latest("pk")

    _undo_roundtrip(rename)


def test_undo_of_applied_proposal_marks_it_reverted_then_applied_again():
    r = ResearcherFactory()
    AuthorshipFactory(researcher=r)
    a = AuthorshipFactory()
    p = Proposal.objects.create(
        kind="attach", score=0.9, model_version="t", fingerprint="fp", researcher=r
    )
    p.authorships.set([a])
    user = UserFactory()
    services.proposal_apply(proposal=p, actor=user)
    applied = CurationEvent.objects.get(kind="proposal_applied")

    undo = event_undo(event=applied, actor=user)
    p.refresh_from_db()
    a.refresh_from_db()
    assert (p.status, a.researcher_id) == ("reverted", None)

    event_undo(event=undo, actor=user)
    p.refresh_from_db()
    a.refresh_from_db()
    assert (p.status, a.researcher_id) == ("applied", r.pk)


def test_undo_refused_when_a_later_change_moved_the_authorship():
    a, b, aa, _ = _world()
    user = UserFactory()
    c = ResearcherFactory()
    first = edits.authorship_move(authorship=aa[0], to=b, actor=user)
    edits.authorship_move(authorship=aa[0], to=c, actor=user)
    before = _state()

    with pytest.raises(UndoConflict, match=f"authorship {aa[0].pk} is now on"):
        event_undo(event=first, actor=user)

    assert _state() == before


def test_undo_twice_and_undo_of_a_rejection_are_refused():
    a, b, aa, _ = _world()
    user = UserFactory()
    event = edits.authorship_detach(authorship=aa[0], actor=user)
    undo = event_undo(event=event, actor=user)
    with pytest.raises(NothingToUndo, match=f"already undone by event {undo.pk}"):
        event_undo(event=event, actor=user)

    rejected = CurationEvent.objects.create(kind="proposal_rejected", actor=user)
    with pytest.raises(NothingToUndo, match="changed nothing"):
        event_undo(event=rejected, actor=user)


def test_undo_of_claim_approval_returns_the_claim_to_pending():
    from curation.claims import claim_approve, claim_submit

    r = ResearcherFactory()
    owner, curator = UserFactory(), UserFactory()
    claim = claim_submit(user=owner, researcher=r, orcid="0000-0002-1825-0097")
    claim_approve(claim=claim, actor=curator)

    event_undo(event=CurationEvent.objects.get(kind="claim_approved"), actor=curator)

    r.refresh_from_db()
    claim.refresh_from_db()
    assert (r.claimed_by_id, r.locked, r.orcid) == (None, False, None)
    assert claim.status == ClaimRequest.Status.PENDING


def test_researcher_history_lists_every_event_touching_it_newest_first():
    a, b, aa, _ = _world()
    user = UserFactory()
    moved = edits.authorship_move(authorship=aa[0], to=b, actor=user)
    undo = event_undo(event=moved, actor=user)
    edits.researcher_set_locked(researcher=b, locked=True, actor=user)

    history = list(researcher_history(researcher_id=a.pk))

    assert [e.pk for e in history] == [undo.pk, moved.pk]
    assert len(researcher_history(researcher_id=b.pk)) == 3


def test_undo_refused_when_it_would_put_an_authorship_on_a_merged_researcher():
    user = UserFactory()
    r0, r1 = ResearcherFactory(), ResearcherFactory()
    AuthorshipFactory(researcher=r0)
    a = AuthorshipFactory(researcher=r1)
    AuthorshipFactory(researcher=r1)  # one stays: a profile emptied is retired
    moved = edits.authorship_move(authorship=a, to=r0, actor=user)
    edits.researcher_merge(researchers=[r0, r1], actor=user)
    before = _state()

    with pytest.raises(UndoConflict, match=f"back to researcher {r1.pk}, which is"):
        event_undo(event=moved, actor=user)

    assert _state() == before


def test_undo_refused_when_it_would_retire_a_researcher_holding_later_papers():
    user = UserFactory()
    r0 = ResearcherFactory()
    a, b, c = (AuthorshipFactory(researcher=r0) for _ in range(3))
    new = edits.researcher_split(researcher=r0, authorship_ids=[a.pk], actor=user)
    split = CurationEvent.objects.get(kind="split")
    edits.authorship_move(authorship=c, to=new, actor=user)
    before = _state()

    with pytest.raises(UndoConflict, match=f"researcher {new.pk} would be retired"):
        event_undo(event=split, actor=user)

    assert _state() == before


def test_undo_refused_when_the_orcid_now_belongs_to_another_researcher():
    user = UserFactory()
    r0 = ResearcherFactory(orcid="0000-0002-1825-0097")
    r1 = ResearcherFactory()
    removed = edits.researcher_update(
        researcher=r0, actor=user, changes={"orcid": None}
    )
    edits.researcher_update(
        researcher=r1, actor=user, changes={"orcid": "0000-0002-1825-0097"}
    )
    event = CurationEvent.objects.filter(kind="edited").order_by("pk").first()
    assert removed.pk == r0.pk

    with pytest.raises(UndoConflict, match=f"researcher {r1.pk} holds it now"):
        event_undo(event=event, actor=user)


def _paper_version(arxiv_id: str, version: int, *authors: tuple[str, str]) -> list:
    """Harvest ``version`` of a paper with these ``(given, family)`` authors, as
    a new arXiv version reaches the upsert; its rows by position."""
    import datetime as dt

    from harvest import services as harvest
    from harvest.records import AuthorRecord, PaperRecord

    harvest.paper_upsert(
        record=PaperRecord(
            source="arxiv",
            external_id=f"oai:arXiv.org:{arxiv_id}",
            arxiv_id=arxiv_id,
            title="On the Quenwick bound",
            version=version,
            published=dt.date(2021, 1, 1),
            updated=dt.date(2021, 1, version),
            authors=[AuthorRecord(f"{g} {f}", g, f) for g, f in authors],
        )
    )
    return list(
        Authorship.objects.filter(paper__arxiv_id=arxiv_id).order_by("position")
    )


def _two_quenwicks():
    """Two researchers of one person, each holding one paper's "Quenwick" row."""
    first = _paper_version("2101.00001", 1, ("Zorblat", "Quenwick"), ("A.", "Ames"))[0]
    second = _paper_version("2101.00002", 1, ("Z.", "Quenwick"), ("B.", "Bell"))[0]
    a, b = (ResearcherFactory(display_name="Zorblat Quenwick") for _ in range(2))
    for row, r in ((first, a), (second, b)):
        row.researcher = r
        row.save()
    return a, b, first, second


def test_undo_merge_after_a_new_version_dropped_a_moved_authorship():
    """The row is gone with its byline slot: the rest of the merge is undone and
    the undo names the row, instead of refusing for good."""
    a, b, first, second = _two_quenwicks()
    user = UserFactory()
    edits.researcher_merge(researchers=[a, b], actor=user)
    merge = CurationEvent.objects.get(kind="merged")
    assert Authorship.objects.get(pk=second.pk).researcher_id == a.pk

    # v2 of the second paper no longer lists Quenwick: the harvest deletes the row.
    rows = _paper_version("2101.00002", 2, ("B.", "Bell"))
    assert [r.raw_name for r in rows] == ["B. Bell"]
    assert not Authorship.objects.filter(pk=second.pk).exists()

    undo = event_undo(event=merge, actor=user)

    b.refresh_from_db()
    assert b.merged_into_id is None
    assert Authorship.objects.get(pk=first.pk).researcher_id == a.pk
    assert undo.extra["authorships_gone"] == [second.pk]
    assert undo.moves == []
    assert not Constraint.objects.filter(event=merge, active=True).exists()
    # The undo can be undone: b is merged away again, holding nothing to move.
    event_undo(event=undo, actor=user)
    b.refresh_from_db()
    assert b.merged_into_id == a.pk


def test_undo_split_after_a_new_version_dropped_a_split_off_authorship():
    a, b, first, second = _two_quenwicks()
    third = _paper_version("2101.00003", 1, ("Z.", "Quenwick"))[0]
    for row in (second, third):
        row.researcher = a
        row.save()
    b.retired = True
    b.save()
    user = UserFactory()
    new = edits.researcher_split(
        researcher=a, authorship_ids=[second.pk, third.pk], actor=user
    )
    split = CurationEvent.objects.get(kind="split")
    _paper_version("2101.00003", 2, ("C.", "Cole"))

    undo = event_undo(event=split, actor=user)

    new.refresh_from_db()
    assert new.retired
    assert Authorship.objects.get(pk=second.pk).researcher_id == a.pk
    assert undo.extra["authorships_gone"] == [third.pk]
    assert [m["authorship"] for m in undo.moves] == [second.pk]


def test_undo_still_refuses_when_a_later_change_moved_an_authorship():
    a, b, first, second = _two_quenwicks()
    user = UserFactory()
    edits.researcher_merge(researchers=[a, b], actor=user)
    merge = CurationEvent.objects.get(kind="merged")
    edits.authorship_detach(authorship=Authorship.objects.get(pk=second.pk), actor=user)

    with pytest.raises(UndoConflict, match=f"authorship {second.pk} is now on"):
        event_undo(event=merge, actor=user)
    b.refresh_from_db()
    assert b.merged_into_id == a.pk


def test_undo_of_a_move_whose_only_authorship_is_gone_says_nothing_is_left():
    a, b, first, second = _two_quenwicks()
    user = UserFactory()
    event = edits.authorship_move(
        authorship=Authorship.objects.get(pk=second.pk), to=a, actor=user
    )
    _paper_version("2101.00002", 2, ("B.", "Bell"))

    with pytest.raises(
        NothingToUndo, match=rf"moved only authorships {second.pk}, which"
    ):
        event_undo(event=event, actor=user)
    assert not CurationEvent.objects.filter(kind="undone").exists()


def test_a_name_form_a_new_version_no_longer_prints_leaves_the_variants():
    """Variants are what the researcher's papers print: a row a re-harvest
    deletes takes its form along, a row reprinted brings its new one."""
    a, b, first, second = _two_quenwicks()
    third = _paper_version("2101.00003", 1, ("Zorblat", "Quenwick"))[0]
    edits.researcher_merge(researchers=[a, b], actor=UserFactory())
    a.refresh_from_db()
    assert "Z. Quenwick" in a.name_variants
    third.researcher = a
    third.save()

    _paper_version("2101.00002", 2, ("B.", "Bell"))  # drops "Z. Quenwick"
    _paper_version("2101.00003", 2, ("Zorblat Q.", "Quenwick"))

    a.refresh_from_db()
    assert a.name_variants == ["Zorblat Quenwick", "Zorblat Q. Quenwick"]


def test_undo_of_a_rejected_new_puts_it_back_in_the_queue():
    # A rejected new records no constraint; its undo was refused as changing
    # nothing, and no run proposes that cluster again.
    user = UserFactory()
    a = AuthorshipFactory()
    services.matching_run()
    new = Proposal.objects.get(authorships=a)
    assert new.kind == "new"
    services.proposal_reject(proposal=new, actor=user)
    rejected = CurationEvent.objects.get(kind="proposal_rejected")
    assert rejected.changes_state

    undo = event_undo(event=rejected, actor=user)

    new.refresh_from_db()
    assert new.status == "pending"
    assert undo.changes_state
    event_undo(event=undo, actor=user)
    new.refresh_from_db()
    assert new.status == "rejected"


def test_the_pages_lead_a_curator_to_undo_a_rejected_new(client):
    curator = services.curator_ensure(username="cura", password="pw-cura")
    a = AuthorshipFactory()
    services.matching_run()
    new = Proposal.objects.get(authorships=a)
    services.proposal_reject(proposal=new, actor=curator)
    rejected = CurationEvent.objects.get(kind="proposal_rejected")
    client.force_login(curator)
    # The proposal's page links the event, whose page has the undo.
    page = client.get(reverse("admin:curation_proposal_change", args=[new.pk]))
    event_url = reverse("admin:curation_curationevent_change", args=[rejected.pk])
    assert f'<a href="{event_url}">proposal rejected #{rejected.pk}</a>' in (
        page.content.decode()
    )
    undo_url = reverse("admin:curation_curationevent_undo", args=[rejected.pk])
    text = client.get(undo_url).content.decode()
    assert f"Its decision too: proposal {new.pk} goes back to the queue (pending)." in (
        text
    )
    done = client.post(undo_url, {"confirm": "yes"}, follow=True).content.decode()
    assert f"proposal {new.pk} goes back to the queue (pending)" in done
    new.refresh_from_db()
    assert new.status == "pending"
    # Undoing the undo says it is rejected again.
    undo = CurationEvent.objects.get(kind="undone")
    redo_url = reverse("admin:curation_curationevent_undo", args=[undo.pk])
    redo = client.get(redo_url).content.decode()
    assert f"proposal {new.pk} is rejected again" in redo


def test_a_merge_event_page_shows_the_survivors_side_cut_short(client):
    """A merge records every authorship its survivor held (``extra.kept``);
    its admin page lists the first 20 and the count, not thousands of ids
    (hostile re-trial)."""
    curator = services.curator_ensure(username="cura", password="pw-cura")
    survivor, other = ResearcherFactory(), ResearcherFactory()
    held = [AuthorshipFactory(researcher=survivor).pk for _ in range(25)]
    AuthorshipFactory(researcher=other)
    edits.researcher_merge(researchers=[survivor, other], actor=curator)
    event = CurationEvent.objects.get(kind="merged")
    assert event.extra == {"survivor": survivor.pk, "kept": sorted(held)}
    client.force_login(curator)

    page = client.get(
        reverse("admin:curation_curationevent_change", args=[event.pk])
    ).content.decode()

    shown = page.split("&#x27;kept&#x27;: [", 1)[1].split("]", 1)[0]
    assert shown == ", ".join(map(str, sorted(held)[:20])) + ", &#x27;… 25 in all&#x27;"
