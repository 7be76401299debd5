"""Curators' direct edits: each writes the state, one event and its constraints."""

from __future__ import annotations

import pytest

from curation import edits, history
from curation.exceptions import (
    InvalidChange,
    ProposalConflict,
    ResearcherChanged,
    ResearcherConflict,
    ResearcherGone,
)
from curation.models import Constraint, CurationEvent
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db


def _with_papers(n: int, **fields) -> tuple[Researcher, list[Authorship]]:
    r = ResearcherFactory(**fields)
    return r, [AuthorshipFactory(researcher=r) for _ in range(n)]


def _assignment(*authorships: Authorship) -> list[int | None]:
    return [Authorship.objects.get(pk=a.pk).researcher_id for a in authorships]


def test_researcher_merge_survivor_is_lowest_id_and_losers_redirect():
    user = UserFactory()
    a, aa = _with_papers(2)
    b, ba = _with_papers(1, orcid="0000-0002-1825-0097", s2_author_id="123")
    c, ca = _with_papers(3)

    survivor = edits.researcher_merge(researchers=[c, b, a], actor=user)

    assert survivor.pk == a.pk
    assert _assignment(*aa, *ba, *ca) == [a.pk] * 6
    b.refresh_from_db()
    c.refresh_from_db()
    a.refresh_from_db()
    assert b.merged_into_id == a.pk
    assert c.merged_into_id == a.pk
    assert (a.orcid, a.s2_author_id) == ("0000-0002-1825-0097", "123")
    assert b.orcid is None  # the unique iD moved, it is not held twice
    assert list(Researcher.objects.live().values_list("pk", flat=True)) == [a.pk]
    event = CurationEvent.objects.get(kind="merged")
    assert event.actor == user
    assert sorted(event.researchers) == sorted([a.pk, b.pk, c.pk])
    assert {m["authorship"] for m in event.moves} == {x.pk for x in ba + ca}
    assert all(m["after"] == a.pk for m in event.moves)
    assert event.fields[str(b.pk)]["merged_into_id"] == [None, a.pk]
    assert event.fields[str(a.pk)]["orcid"] == [None, "0000-0002-1825-0097"]
    # The curator's merge confirms every paper of the survivor: the four it
    # took in and its own two (issue 47: the survivor's own read "automatic").
    assert set(
        Constraint.objects.filter(
            kind="must_link", researcher=a, event=event
        ).values_list("authorship_id", flat=True)
    ) == {x.pk for x in aa + ba + ca}
    assert (a.revision, b.revision) == (1, 1)


def test_researcher_merge_refuses_different_orcids_and_changes_nothing():
    a, aa = _with_papers(1, orcid="0000-0002-1825-0097")
    b, ba = _with_papers(1, orcid="0000-0001-5109-3700")

    with pytest.raises(ResearcherConflict, match="different orcid values"):
        edits.researcher_merge(researchers=[a, b], actor=UserFactory())

    assert _assignment(*aa, *ba) == [a.pk, b.pk]
    assert not Researcher.objects.filter(merged_into__isnull=False).exists()
    assert not CurationEvent.objects.exists()


def test_researcher_merge_refuses_a_merged_away_researcher():
    user = UserFactory()
    a, _ = _with_papers(1)
    b, _ = _with_papers(1)
    c, _ = _with_papers(1)
    edits.researcher_merge(researchers=[a, b], actor=user)

    with pytest.raises(ResearcherGone, match=f"researcher {b.pk} was merged"):
        edits.researcher_merge(researchers=[b, c], actor=user)


def test_researcher_merge_needs_two():
    a, _ = _with_papers(1)
    with pytest.raises(InvalidChange, match="at least two"):
        edits.researcher_merge(researchers=[a, a], actor=UserFactory())


def test_researcher_merge_retires_an_earlier_cannot_link_between_them():
    user = UserFactory()
    a, _ = _with_papers(1)
    b, _ = _with_papers(1)
    old = CurationEvent.objects.create(kind="proposal_rejected")
    c = Constraint.objects.create(
        kind="cannot_link", researcher=a, other_researcher=b, event=old
    )

    edits.researcher_merge(researchers=[a, b], actor=user)

    c.refresh_from_db()
    assert c.active is False
    assert CurationEvent.objects.get(kind="merged").constraints_off == [c.pk]


def test_researcher_split_moves_chosen_authorships_to_a_new_researcher():
    user = UserFactory()
    r, (a1, a2, a3) = _with_papers(3)

    new = edits.researcher_split(
        researcher=r, authorship_ids=[a2.pk, a3.pk], actor=user, display_name="J. S."
    )

    assert new.pk != r.pk
    assert new.display_name == "J. S."
    assert _assignment(a1, a2, a3) == [r.pk, new.pk, new.pk]
    event = CurationEvent.objects.get(kind="split")
    assert event.extra == {"source": r.pk, "new": new.pk}
    assert event.fields[str(new.pk)]["retired"] == [True, False]
    kinds = set(
        Constraint.objects.filter(event=event).values_list(
            "kind", "researcher_id", "authorship_id", "other_researcher_id"
        )
    )
    assert ("must_link", new.pk, a2.pk, None) in kinds
    assert ("cannot_link", r.pk, a3.pk, None) in kinds
    assert ("cannot_link", r.pk, None, new.pk) in kinds


def test_a_split_that_takes_the_named_person_away_renames_what_stays():
    # A curator merged Anna Pasquali with Adrian Del Maestro (two people of the
    # bundled arXiv records), then split Pasquali's papers off again.
    user = UserFactory()
    r = ResearcherFactory(
        display_name="Anna Pasquali", block_key="pasquali a", slug="anna-pasquali"
    )
    hers = [
        AuthorshipFactory(researcher=r, given_name=g, family_name="Pasquali")
        for g in ("Anna", "A.")
    ]
    his = [
        AuthorshipFactory(researcher=r, given_name=g, family_name="Del Maestro")
        for g in ("Adrian", "A.", "Adrian")
    ]

    new = edits.researcher_split(
        researcher=r, authorship_ids=[a.pk for a in hers], actor=user
    )

    r.refresh_from_db()
    assert _assignment(*his) == [r.pk] * 3
    assert new.display_name == "Anna Pasquali"
    assert (r.display_name, r.slug) == ("Adrian Del Maestro", "adrian-del-maestro")
    assert r.block_key == "maestro a"
    assert r.name_variants == ["A. Del Maestro", "Adrian Del Maestro"]
    event = CurationEvent.objects.get(kind="split")
    assert event.fields[str(r.pk)]["display_name"] == [
        "Anna Pasquali",
        "Adrian Del Maestro",
    ]
    # Undo puts the name back with the papers.
    history.event_undo(event=event, actor=user)
    r.refresh_from_db()
    assert (r.display_name, r.slug, r.block_key) == (
        "Anna Pasquali",
        "anna-pasquali",
        "pasquali a",
    )


def test_a_split_keeps_a_display_name_the_staying_papers_still_print():
    user = UserFactory()
    r, (a1, a2, a3) = _with_papers(3, display_name="Jean-Pierre Serre")
    Authorship.objects.filter(pk=a1.pk).update(given_name="J.-P.")
    edits.researcher_split(researcher=r, authorship_ids=[a2.pk, a3.pk], actor=user)
    r.refresh_from_db()
    assert r.display_name == "Jean-Pierre Serre"


@pytest.mark.parametrize(
    ("pick", "error", "message"),
    [
        (lambda a: [], InvalidChange, "at least one authorship"),
        (lambda a: [x.pk for x in a], InvalidChange, "every authorship"),
    ],
)
def test_researcher_split_refuses_empty_or_everything(pick, error, message):
    r, authorships = _with_papers(2)
    with pytest.raises(error, match=message):
        edits.researcher_split(
            researcher=r, authorship_ids=pick(authorships), actor=UserFactory()
        )
    assert Researcher.objects.count() == 1
    assert not CurationEvent.objects.exists()


def test_researcher_split_refuses_an_authorship_of_someone_else():
    r, (a1, _) = _with_papers(2)
    other, (b1,) = _with_papers(1)
    with pytest.raises(ProposalConflict, match=f"not on researcher {r.pk}"):
        edits.researcher_split(
            researcher=r, authorship_ids=[a1.pk, b1.pk], actor=UserFactory()
        )
    assert _assignment(a1, b1) == [r.pk, other.pk]
    assert Researcher.objects.count() == 2


def test_authorship_move_records_must_and_cannot_link_and_retires_opposites():
    user = UserFactory()
    r, (a1, a2) = _with_papers(2)
    t, _ = _with_papers(1)
    old = CurationEvent.objects.create(kind="proposal_rejected")
    earlier = Constraint.objects.create(
        kind="cannot_link", researcher=t, authorship=a1, event=old
    )

    event = edits.authorship_move(
        authorship=a1, to=t, actor=user, expected_researcher=r.pk
    )

    assert _assignment(a1, a2) == [t.pk, r.pk]
    assert event.kind == "moved"
    assert event.moves == [{"authorship": a1.pk, "before": r.pk, "after": t.pk}]
    assert event.constraints_off == [earlier.pk]
    made = set(
        Constraint.objects.filter(event=event).values_list(
            "kind", "researcher_id", "authorship_id"
        )
    )
    assert made == {("must_link", t.pk, a1.pk), ("cannot_link", r.pk, a1.pk)}


def test_authorship_move_refuses_when_it_moved_since_the_curator_looked():
    r, (a1,) = _with_papers(1)
    t, _ = _with_papers(1)
    u, _ = _with_papers(1)
    edits.authorship_move(authorship=a1, to=u, actor=UserFactory())

    with pytest.raises(ResearcherChanged, match="moved meanwhile"):
        edits.authorship_move(
            authorship=a1, to=t, actor=UserFactory(), expected_researcher=r.pk
        )
    assert _assignment(a1) == [u.pk]


def test_authorship_move_to_its_own_researcher_is_refused():
    r, (a1,) = _with_papers(1)
    with pytest.raises(InvalidChange, match="already on researcher"):
        edits.authorship_move(authorship=a1, to=r, actor=UserFactory())


def test_authorship_detach_unassigns_with_cannot_link():
    r, (a1, a2) = _with_papers(2)

    event = edits.authorship_detach(authorship=a1, actor=UserFactory())

    assert _assignment(a1, a2) == [None, r.pk]
    assert event.moves == [{"authorship": a1.pk, "before": r.pk, "after": None}]
    assert Constraint.objects.get(event=event).kind == "cannot_link"
    with pytest.raises(InvalidChange, match="not assigned"):
        edits.authorship_detach(authorship=a1, actor=UserFactory())


def test_researcher_set_locked_and_unlocked_each_write_an_event():
    user = UserFactory()
    r, _ = _with_papers(1)

    edits.researcher_set_locked(researcher=r, locked=True, actor=user)
    with pytest.raises(InvalidChange, match="already locked"):
        edits.researcher_set_locked(researcher=r, locked=True, actor=user)
    edits.researcher_set_locked(researcher=r, locked=False, actor=user)

    r.refresh_from_db()
    assert r.locked is False
    kinds = list(CurationEvent.objects.order_by("pk").values_list("kind", "fields"))
    assert kinds == [
        ("locked", {str(r.pk): {"locked": [False, True]}}),
        ("unlocked", {str(r.pk): {"locked": [True, False]}}),
    ]


def test_researcher_update_normalises_identifiers_and_renames():
    r, _ = _with_papers(1)

    edits.researcher_update(
        researcher=r,
        actor=UserFactory(),
        changes={
            "display_name": "  Jean-Pierre   Serre ",
            "orcid": "https://orcid.org/0000-0002-1694-233x",
            "openalex_author_id": "https://openalex.org/A5023888391",
        },
    )

    r.refresh_from_db()
    assert r.display_name == "Jean-Pierre Serre"
    assert r.slug == "jean-pierre-serre"
    assert r.orcid == "0000-0002-1694-233X"
    assert r.openalex_author_id == "A5023888391"
    event = CurationEvent.objects.get(kind="edited")
    assert event.fields[str(r.pk)]["orcid"] == [None, "0000-0002-1694-233X"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"orcid": "0000-0002-1825-0098"}, "wrong check digit"),
        ({"orcid": "../etc/passwd"}, "not an ORCID"),
        ({"display_name": "   "}, "display name must be"),
        ({"merged_into_id": 1}, "not editable"),
        ({"s2_author_id": "abc"}, "not a Semantic Scholar"),
    ],
)
def test_researcher_update_refuses_bad_values(changes, message):
    r, _ = _with_papers(1)
    with pytest.raises(InvalidChange, match=message):
        edits.researcher_update(researcher=r, actor=UserFactory(), changes=changes)
    assert not CurationEvent.objects.exists()


def test_researcher_update_refuses_an_orcid_held_by_another_researcher():
    holder = ResearcherFactory(orcid="0000-0002-1825-0097")
    r, _ = _with_papers(1)
    with pytest.raises(ResearcherConflict, match=f"researcher {holder.pk}"):
        edits.researcher_update(
            researcher=r, actor=UserFactory(), changes={"orcid": "0000000218250097"}
        )


def test_researcher_update_refuses_a_stale_form():
    r, _ = _with_papers(1)
    with pytest.raises(ResearcherChanged, match="display_name"):
        edits.researcher_update(
            researcher=r,
            actor=UserFactory(),
            changes={"display_name": "New"},
            expected={"display_name": "what the curator saw earlier"},
        )


def _active(authorship, researcher) -> set[str]:
    return set(
        Constraint.objects.filter(
            authorship=authorship, researcher=researcher, active=True
        ).values_list("kind", flat=True)
    )


def test_split_retires_the_must_link_a_move_made_to_the_source():
    user = UserFactory()
    r0, (b,) = _with_papers(1)
    r1, (a,) = _with_papers(1)
    edits.authorship_move(authorship=a, to=r0, actor=user)

    edits.researcher_split(researcher=r0, authorship_ids=[a.pk], actor=user)

    assert _active(a, r0) == {"cannot_link"}


def test_merge_retires_the_cannot_link_a_move_made_to_the_survivor():
    user = UserFactory()
    r0, (a, _) = _with_papers(2)  # one stays: a profile emptied is retired
    r1, _ = _with_papers(1)
    edits.authorship_move(authorship=a, to=r1, actor=user)

    edits.researcher_merge(researchers=[r0, r1], actor=user)

    assert _active(a, r0) == {"must_link"}


def test_a_split_keeps_a_display_name_a_curator_chose_that_no_paper_prints():
    user = UserFactory()
    r, (a1, a2) = _with_papers(2, display_name="John Tate")
    edits.researcher_split(researcher=r, authorship_ids=[a2.pk], actor=user)
    r.refresh_from_db()
    assert r.display_name == "John Tate"
