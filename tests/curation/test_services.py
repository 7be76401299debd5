"""Applying and rejecting proposals: state, events, constraints, errors."""

from __future__ import annotations

import pytest

from curation import services, transitions
from curation.exceptions import (
    IllegalTransition,
    ProposalNotPending,
    ProposalStale,
    ResearcherLocked,
)
from curation.models import Constraint, CurationEvent, Proposal
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db


def _proposal(
    kind, authorships=(), researcher=None, other=None, score=0.8, proven=False
):
    p = Proposal.objects.create(
        kind=kind,
        score=score,
        evidence={},
        model_version="test",
        fingerprint=services.proposal_fingerprint(
            kind=kind,
            authorship_ids=[a.pk for a in authorships],
            researcher_ids=[r.pk for r in (researcher, other) if r],
        ),
        researcher=researcher,
        other_researcher=other,
        identifier_proven=proven,
    )
    p.authorships.set(authorships)
    return p


def test_proposal_apply_attach_moves_authorship_and_writes_event():
    researcher = ResearcherFactory()
    a = AuthorshipFactory()
    user = UserFactory()
    p = _proposal("attach", [a], researcher)

    services.proposal_apply(proposal=p, actor=user)

    a.refresh_from_db()
    p.refresh_from_db()
    assert a.researcher_id == researcher.pk
    assert p.status == "applied"
    assert p.decided_by == user
    event = CurationEvent.objects.get(proposal=p)
    assert event.kind == "proposal_applied"
    assert event.actor == user
    assert event.moves == [{"authorship": a.pk, "before": None, "after": researcher.pk}]
    assert Constraint.objects.filter(
        kind="must_link", authorship=a, researcher=researcher, event=event
    ).exists()
    researcher.refresh_from_db()
    assert a.raw_name in researcher.name_variants


def test_proposal_apply_new_creates_researcher_with_fullest_name():
    a1 = AuthorshipFactory(given_name="J.-P.")
    a2 = AuthorshipFactory(given_name="Jean-Pierre")
    p = _proposal("new", [a1, a2])

    services.proposal_apply(proposal=p, actor=None)

    a1.refresh_from_db()
    a2.refresh_from_db()
    assert a1.researcher_id == a2.researcher_id is not None
    r = Researcher.objects.get(pk=a1.researcher_id)
    assert r.display_name == "Jean-Pierre Serre"
    assert r.block_key == "serre j"
    assert CurationEvent.objects.get(proposal=p).actor is None


def test_proposal_apply_merge_keeps_lowest_id_and_moves_every_authorship():
    r1, r2 = ResearcherFactory(), ResearcherFactory(orcid="0000-0002-1825-0097")
    kept = AuthorshipFactory(researcher=r1)
    moved = [AuthorshipFactory(researcher=r2), AuthorshipFactory(researcher=r2)]
    p = _proposal("merge", researcher=r1, other=r2)

    services.proposal_apply(proposal=p, actor=UserFactory())

    r1.refresh_from_db()
    r2.refresh_from_db()
    assert r2.merged_into_id == r1.pk
    assert r1.orcid == "0000-0002-1825-0097"
    assert r2.orcid is None
    assert set(
        Authorship.objects.filter(researcher=r1).values_list("pk", flat=True)
    ) == {kept.pk, *(m.pk for m in moved)}
    event = CurationEvent.objects.get(proposal=p)
    assert sorted(m["authorship"] for m in event.moves) == sorted(m.pk for m in moved)
    assert all(m["before"] == r2.pk and m["after"] == r1.pk for m in event.moves)


def test_proposal_apply_twice_raises_not_pending():
    p = _proposal("attach", [AuthorshipFactory()], ResearcherFactory())
    services.proposal_apply(proposal=p, actor=None)
    with pytest.raises(ProposalNotPending, match="not pending"):
        services.proposal_apply(proposal=p, actor=None)
    assert CurationEvent.objects.filter(proposal=p).count() == 1


def test_proposal_apply_stale_when_authorship_taken_meanwhile():
    r1, r2 = ResearcherFactory(), ResearcherFactory()
    a = AuthorshipFactory()
    first = _proposal("attach", [a], r1)
    second = _proposal("attach", [a], r2)
    services.proposal_apply(proposal=first, actor=None)

    with pytest.raises(ProposalStale, match="assigned meanwhile"):
        services.proposal_apply(proposal=second, actor=None)

    second.refresh_from_db()
    a.refresh_from_db()
    assert second.status == "stale"
    assert a.researcher_id == r1.pk
    assert CurationEvent.objects.get(proposal=second).kind == "proposal_stale"


def test_proposal_apply_by_automation_refused_on_locked_researcher():
    # Proven: the authorship prints the researcher's ORCID iD.
    r = ResearcherFactory(locked=True, orcid="0000-0002-1825-0097")
    a = AuthorshipFactory(orcid="0000-0002-1825-0097")
    p = _proposal("attach", [a], r, proven=True)

    with pytest.raises(ResearcherLocked, match="locked"):
        services.proposal_apply(proposal=p, actor=None)

    a.refresh_from_db()
    p.refresh_from_db()
    assert a.researcher_id is None
    assert p.status == "pending"
    assert not CurationEvent.objects.exists()
    # A curator may still apply it.
    services.proposal_apply(proposal=p, actor=UserFactory())
    a.refresh_from_db()
    assert a.researcher_id == r.pk


def test_proposal_reject_attach_records_cannot_link():
    r = ResearcherFactory()
    a = AuthorshipFactory()
    p = _proposal("attach", [a], r)

    services.proposal_reject(proposal=p, actor=UserFactory(), reason="other person")

    p.refresh_from_db()
    assert p.status == "rejected"
    assert p.reason == "other person"
    assert Constraint.objects.filter(
        kind="cannot_link", authorship=a, researcher=r
    ).exists()
    a.refresh_from_db()
    assert a.researcher_id is None


def test_proposal_reject_merge_records_researcher_cannot_link():
    r1, r2 = ResearcherFactory(), ResearcherFactory()
    p = _proposal("merge", researcher=r1, other=r2)
    services.proposal_reject(proposal=p, actor=None)
    assert Constraint.objects.filter(
        kind="cannot_link", researcher=r1, other_researcher=r2
    ).exists()


def test_proposal_reject_after_apply_raises_not_pending():
    p = _proposal("attach", [AuthorshipFactory()], ResearcherFactory())
    services.proposal_apply(proposal=p, actor=None)
    with pytest.raises(ProposalNotPending):
        services.proposal_reject(proposal=p, actor=None)


def test_transition_illegal_from_rejected_to_applied():
    p = _proposal("attach", [AuthorshipFactory()], ResearcherFactory())
    services.proposal_reject(proposal=p, actor=None)
    p.refresh_from_db()
    with pytest.raises(IllegalTransition, match="rejected to applied"):
        transitions.transition(
            proposal=p, new="applied", actor=None, event_kind="proposal_applied"
        )


def test_proposal_apply_new_names_the_created_researcher():
    a = AuthorshipFactory()
    p = _proposal("new", [a])
    services.proposal_apply(proposal=p, actor=None)
    p.refresh_from_db()
    a.refresh_from_db()
    assert p.researcher_id == a.researcher_id is not None


def test_proposal_apply_split_never_empties_the_researcher():
    r = ResearcherFactory()
    rows = [AuthorshipFactory(researcher=r), AuthorshipFactory(researcher=r)]
    p = _proposal("split", rows, r)
    with pytest.raises(ProposalStale, match="every authorship of researcher"):
        services.proposal_apply(proposal=p, actor=UserFactory())
    assert Authorship.objects.filter(researcher=r).count() == 2
    assert Researcher.objects.count() == 1


def test_proposal_apply_merge_stale_when_a_researcher_changed_since_proposed():
    from curation import edits

    a, b, c = ResearcherFactory(), ResearcherFactory(), ResearcherFactory()
    for r in (a, b, c):
        AuthorshipFactory(researcher=r)
    moved = AuthorshipFactory(researcher=b)
    p = _proposal("merge", researcher=a, other=b)
    p.researcher_revisions = {str(a.pk): a.revision, str(b.pk): b.revision}
    p.save()
    edits.authorship_move(authorship=moved, to=c, actor=UserFactory())

    with pytest.raises(ProposalStale, match=f"researcher {b.pk} changed since"):
        services.proposal_apply(proposal=p, actor=UserFactory())

    p.refresh_from_db()
    assert p.status == "stale"
    assert Researcher.objects.get(pk=b.pk).merged_into_id is None
    stale = CurationEvent.objects.get(kind="proposal_stale", proposal=p)
    assert "revision 0 -> 1" in stale.extra["reason"]


def test_matching_run_records_researcher_revisions_on_merge_proposals():
    from curation.models import Proposal as P

    a = ResearcherFactory()
    b = ResearcherFactory()
    AuthorshipFactory(researcher=a)
    AuthorshipFactory(researcher=b)
    Researcher.objects.filter(pk=b.pk).update(revision=4)
    services.matching_run()

    merge = P.objects.filter(kind="merge").first()
    assert merge is not None
    assert merge.researcher_revisions == {str(a.pk): 0, str(b.pk): 4}
