"""matching_run on hand-made bylines: what it proposes, applies, never repeats."""

from __future__ import annotations

import pytest
from django.test import override_settings

from curation import services
from curation.exceptions import ProposalStale
from curation.models import Constraint, CurationEvent, Proposal
from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

ORCID = "0000-0002-1825-0097"


def _byline(*people, categories=("hep-th",)):
    """One paper whose authors are (given, family[, orcid]) tuples; returns its rows."""
    paper = PaperFactory(categories=list(categories), primary_category=categories[0])
    rows = []
    for pos, person in enumerate(people, start=1):
        given, family, *orcid = person
        rows.append(
            AuthorshipFactory(
                paper=paper,
                position=pos,
                given_name=given,
                family_name=family,
                orcid=orcid[0] if orcid else "",
            )
        )
    return rows


def _researcher_with(rows, **kwargs):
    r = ResearcherFactory(**kwargs)
    for row in rows:
        row.researcher = r
        row.save()
    return r


def test_matching_run_proposes_attach_for_same_name_and_shared_coauthor():
    older = _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))
    r = _researcher_with([older[0]])
    newer = _byline(("J.-P.", "Serre"), ("Armand", "Borel"))

    counts = services.matching_run()

    p = Proposal.objects.get(kind="attach")
    assert p.researcher == r
    assert list(p.authorships.all()) == [newer[0]]
    assert p.evidence["features"]["coauthors"] == 1.0
    assert p.score >= 0.9
    assert p.status == "pending"
    assert not p.identifier_proven
    assert counts["proposed_attach"] == 1


def test_matching_run_proposes_new_for_an_unknown_person():
    (row,) = _byline(("Maryam", "Mirzakhani"))
    services.matching_run()
    p = Proposal.objects.get(authorships=row)
    assert p.kind == "new"
    assert p.status == "pending"


def test_matching_run_clusters_two_papers_of_one_person_into_one_new_proposal():
    a = _byline(("Maryam", "Mirzakhani"), ("Alex", "Eskin"))[0]
    b = _byline(("Maryam", "Mirzakhani"), ("Alex", "Eskin"))[0]
    services.matching_run()
    p = Proposal.objects.get(kind="new", authorships=a)
    assert set(p.authorships.all()) == {a, b}


def test_matching_run_never_clusters_two_slots_of_one_paper():
    rows = _byline(("J.", "Smith"), ("J.", "Smith"))
    services.matching_run()
    proposals = [Proposal.objects.get(authorships=row) for row in rows]
    assert proposals[0].pk != proposals[1].pk


def test_matching_run_auto_applies_orcid_proven_attach():
    older = _byline(("Jean-Pierre", "Serre", ORCID))
    r = _researcher_with(older, orcid=ORCID)
    (row,) = _byline(("J.-P.", "Serre", ORCID), categories=("math.AG",))

    counts = services.matching_run()

    row.refresh_from_db()
    assert row.researcher_id == r.pk
    p = Proposal.objects.get(authorships=row)
    assert p.status == "applied"
    assert p.identifier_proven
    assert CurationEvent.objects.get(proposal=p).actor is None
    assert counts["auto_applied"] == 1


def test_an_incremental_run_auto_applies_what_it_proposed():
    older = _byline(("Jean-Pierre", "Serre", ORCID))
    r = _researcher_with(older, orcid=ORCID)
    (row,) = _byline(("J.-P.", "Serre", ORCID), categories=("math.AG",))

    counts = services.matching_run(block_keys=[row.block_key], merges=False)

    row.refresh_from_db()
    assert row.researcher_id == r.pk
    assert counts["auto_applied"] == 1


def test_matching_run_orcid_with_contradicting_names_waits_for_a_curator():
    r = _researcher_with(_byline(("Jean-Pierre", "Serre", ORCID)), orcid=ORCID)
    (row,) = _byline(("Jacques", "Serre", ORCID))
    services.matching_run()
    p = Proposal.objects.get(authorships=row)
    assert p.kind == "attach"
    assert p.researcher == r
    assert p.status == "pending"
    assert not p.identifier_proven
    assert p.evidence["flag"] == "ORCID agrees but the names do not"


@override_settings(CURATION_AUTO_APPLY="none")
def test_matching_run_policy_none_applies_nothing():
    _researcher_with(_byline(("Jean-Pierre", "Serre", ORCID)), orcid=ORCID)
    (row,) = _byline(("Jean-Pierre", "Serre", ORCID))
    services.matching_run()
    row.refresh_from_db()
    assert row.researcher_id is None
    assert Proposal.objects.get(authorships=row).status == "pending"


def test_matching_run_never_touches_a_locked_researcher():
    r = _researcher_with(
        _byline(("Jean-Pierre", "Serre", ORCID)), orcid=ORCID, locked=True
    )
    (row,) = _byline(("Jean-Pierre", "Serre", ORCID))
    services.matching_run()
    row.refresh_from_db()
    assert row.researcher_id is None
    p = Proposal.objects.get(authorships=row)
    assert p.researcher == r
    assert p.status == "pending"


def test_matching_run_twice_proposes_nothing_new():
    _byline(("Maryam", "Mirzakhani"))
    _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))
    services.matching_run()
    before = Proposal.objects.count()
    counts = services.matching_run()
    assert Proposal.objects.count() == before
    assert not any(k.startswith("proposed_") for k in counts)


def test_matching_run_does_not_repropose_a_rejected_attach():
    older = _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))
    r = _researcher_with([older[0]])
    newer = _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))
    services.matching_run()
    p = Proposal.objects.get(kind="attach")
    services.proposal_reject(proposal=p, actor=UserFactory())
    assert Constraint.objects.filter(
        kind="cannot_link", authorship=newer[0], researcher=r
    ).exists()

    services.matching_run()

    assert not Proposal.objects.filter(
        kind="attach", status="pending", researcher=r
    ).exists()
    # The authorship is offered as a new person instead, never to r again.
    assert Proposal.objects.get(authorships=newer[0], status="pending").kind == "new"


def test_matching_run_proposes_merge_of_two_profiles_of_one_person():
    a = _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))
    b = _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))
    r1, r2 = _researcher_with([a[0]]), _researcher_with([b[0]])
    services.matching_run()
    p = Proposal.objects.get(kind="merge")
    assert (p.researcher, p.other_researcher) == (r1, r2)


def test_matching_run_skips_collaborations():
    paper = PaperFactory()
    AuthorshipFactory(
        paper=paper,
        position=1,
        given_name="",
        family_name="ATLAS",
        raw_name="ATLAS Collaboration",
        is_collaboration=True,
        block_key="",
        name_key="",
    )
    services.matching_run()
    assert not Proposal.objects.exists()


def test_matching_run_supersedes_a_pending_cluster_that_grew():
    a = _byline(("Maryam", "Mirzakhani"), ("Alex", "Eskin"))[0]
    b = _byline(("Maryam", "Mirzakhani"), ("Alex", "Eskin"))[0]
    services.matching_run()
    first = Proposal.objects.get(kind="new", authorships=a)
    assert set(first.authorships.all()) == {a, b}

    c = _byline(("Maryam", "Mirzakhani"), ("Alex", "Eskin"))[0]
    services.matching_run()

    first.refresh_from_db()
    assert first.status == "stale"
    # The co-author's pending cluster grew too, and was superseded the same way.
    assert Proposal.objects.filter(status="stale").count() == 2
    event = CurationEvent.objects.get(proposal=first)
    assert event.kind == "proposal_stale"
    assert event.actor is None
    assert "superseded" in event.extra["reason"]
    grown = Proposal.objects.get(kind="new", status="pending", authorships=a)
    assert set(grown.authorships.all()) == {a, b, c}


def test_matching_run_leaves_an_unchanged_pending_cluster_alone():
    _byline(("Maryam", "Mirzakhani"), ("Alex", "Eskin"))
    _byline(("Maryam", "Mirzakhani"), ("Alex", "Eskin"))
    services.matching_run()
    services.matching_run()
    assert Proposal.objects.filter(status="pending").count() == 2  # both authors
    assert not Proposal.objects.filter(status="stale").exists()
    assert not CurationEvent.objects.exists()


@pytest.mark.usefixtures("default_weights")
def test_matching_run_joins_a_rare_full_name_but_not_a_common_one():
    for n in range(20):
        _byline(("Wei", "Wang"), categories=(f"cat.{n}",))
    rare = [
        _byline(("Shang-Yung", "Wang"), categories=(f"other.{n}",))[0] for n in range(2)
    ]

    services.matching_run()

    joined = Proposal.objects.get(kind="new", authorships=rare[0])
    assert set(joined.authorships.all()) == set(rare)
    wei = Proposal.objects.filter(kind="new", block_key="wang w").exclude(pk=joined.pk)
    assert wei.count() == 20  # no evidence beyond a common name: kept apart


def test_matching_run_is_deterministic():
    for n in range(6):
        _byline(
            ("Maryam", "Mirzakhani"),
            ("Alex", "Eskin"),
            categories=("math.DS",) if n % 2 else ("math.GT",),
        )
        _byline(("M.", "Mirzakhani"), categories=(f"math.{n}",))

    def proposed():
        return sorted(
            (
                p.kind,
                tuple(sorted(p.authorships.values_list("pk", flat=True))),
                round(p.score, 6),
            )
            for p in Proposal.objects.all()
        )

    services.matching_run()
    first = proposed()
    Proposal.objects.all().delete()
    services.matching_run()
    assert proposed() == first


ORCID_B = "0000-0001-5109-3700"


def _two_orcid_researcher():
    rows = [
        _byline(("Jean-Pierre", "Serre", ORCID), categories=("math.AG",))[0],
        _byline(("J.-P.", "Serre", ORCID), categories=("math.AG",))[0],
        _byline(("Jean-Pierre", "Serre", ORCID_B), categories=("hep-th",))[0],
    ]
    return _researcher_with(rows, orcid=ORCID), rows


def test_matching_run_proposes_split_of_a_researcher_with_two_orcids():
    r, rows = _two_orcid_researcher()
    services.matching_run()
    split = Proposal.objects.get(kind="split")
    assert split.researcher == r
    assert list(split.authorships.all()) == [rows[2]]
    assert split.status == "pending"  # never applied by the identifier policy
    assert split.evidence["orcids"] == {ORCID: 2, ORCID_B: 1}


def test_applied_split_survives_later_matching_runs():
    r, rows = _two_orcid_researcher()
    services.matching_run()
    split = Proposal.objects.get(kind="split")
    services.proposal_apply(proposal=split, actor=UserFactory())

    split.refresh_from_db()
    new = split.other_researcher
    assert new.orcid == ORCID_B
    rows[2].refresh_from_db()
    assert rows[2].researcher_id == new.pk
    assert Constraint.objects.filter(
        kind="cannot_link", researcher=r, authorship=rows[2]
    ).exists()
    assert Constraint.objects.filter(
        kind="cannot_link", researcher=r, other_researcher=new
    ).exists()

    services.matching_run()
    services.matching_run()

    assert not Proposal.objects.filter(kind="merge").exists()
    assert not Proposal.objects.filter(status="pending").exists()
    rows[2].refresh_from_db()
    assert rows[2].researcher_id == new.pk


def test_split_is_stale_when_its_authorship_moved_meanwhile():
    r, rows = _two_orcid_researcher()
    services.matching_run()
    split = Proposal.objects.get(kind="split")
    other = ResearcherFactory()
    rows[2].researcher = other
    rows[2].save()
    with pytest.raises(ProposalStale, match="left researcher"):
        services.proposal_apply(proposal=split, actor=UserFactory())


def test_matching_run_applies_a_proven_proposal_an_interrupted_run_left_pending():
    r = _researcher_with(_byline(("Jean-Pierre", "Serre", ORCID)), orcid=ORCID)
    (row,) = _byline(("J.-P.", "Serre", ORCID), categories=("math.AG",))
    # A run that saved its proposals and died before applying them.
    with override_settings(CURATION_AUTO_APPLY="none"):
        services.matching_run()
    left = Proposal.objects.get(authorships=row)
    assert left.status == "pending"
    assert left.identifier_proven

    # An incremental run applies only what it proposes; the full run, leftovers.
    assert services.matching_run(block_keys=[row.block_key]).get("auto_applied") is None
    counts = services.matching_run()

    left.refresh_from_db()
    row.refresh_from_db()
    assert left.status == "applied"
    assert row.researcher_id == r.pk
    assert counts["auto_applied"] == 1
    assert Proposal.objects.filter(authorships=row).count() == 1
