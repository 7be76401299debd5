"""A curated slot that a version drops and a later one prints again gets its
curation back: its researcher and the curator's constraints.

Found by a hostile trial (D11): a curator rejected an attach, a re-harvest
dropped the author from the byline (the slot and its cannot-link were
deleted), the next printed them again, and the rejected attach came back to
the queue. Real record: hep-th/9709111 v3 (Brignole, Feruglio, Zwirner).
"""

from __future__ import annotations

import dataclasses

import pytest
from django.conf import settings

from curation import edits, history, services
from curation.models import Constraint, CurationEvent, Proposal
from harvest.models import DepartedSlot
from harvest.services import paper_upsert
from harvest.sources.arxiv_abs import parse_abs, read_abs_file
from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db

ABS = "arxiv/abs_files/ftp/hep-th/papers/9709/9709111.abs"


@pytest.fixture
def record():
    """The real hep-th/9709111 record (v3)."""
    return parse_abs(read_abs_file(settings.WOVEPAPER_DATA_DIR / ABS))


def _without(record, family: str, version: int):
    return dataclasses.replace(
        record,
        version=version,
        authors=[a for a in record.authors if a.family_name != family],
    )


def _slot(paper, family: str) -> Authorship:
    return paper.authorships.get(family_name=family)


def _feruglio_elsewhere() -> Researcher:
    """A Ferruccio Feruglio with three papers co-authored with Brignole: the
    matcher attaches the real slot to him."""
    f = ResearcherFactory(display_name="Ferruccio Feruglio", block_key="feruglio|f")
    for _ in range(3):
        paper = PaperFactory()
        AuthorshipFactory(
            paper=paper,
            researcher=f,
            given_name="Ferruccio",
            family_name="Feruglio",
            affiliations=["CERN-TH"],
        )
        AuthorshipFactory(
            paper=paper, position=2, given_name="Andrea", family_name="Brignole"
        )
    return f


def _rejected_feruglio(record):
    """The real paper harvested, its Feruglio slot proposed to the
    Feruglio elsewhere and the attach rejected: ``(paper, researcher,
    curator)``."""
    paper = paper_upsert(record=record).paper
    f = _feruglio_elsewhere()
    services.matching_run()
    attach = Proposal.objects.get(kind="attach", researcher=f)
    curator = UserFactory()
    services.proposal_reject(proposal=attach, actor=curator)
    return paper, f, curator


def test_a_rejected_attach_stays_rejected_when_the_author_leaves_and_returns(
    record,
):
    paper = paper_upsert(record=record).paper
    f = _feruglio_elsewhere()
    services.matching_run()
    attach = Proposal.objects.get(
        kind="attach", researcher=f, authorships=_slot(paper, "Feruglio")
    )
    curator = UserFactory()
    services.proposal_reject(proposal=attach, actor=curator)
    cannot = Constraint.objects.get(
        kind="cannot_link", researcher=f, authorship=_slot(paper, "Feruglio")
    )

    paper_upsert(record=_without(record, "Feruglio", 4))
    assert not paper.authorships.filter(family_name="Feruglio").exists()
    assert DepartedSlot.objects.get(paper=paper).constraints[0]["id"] == cannot.pk
    paper_upsert(record=dataclasses.replace(record, version=5))

    back = _slot(paper, "Feruglio")
    assert back.position == 2
    restored = Constraint.objects.get(pk=cannot.pk)
    assert (restored.authorship_id, restored.kind, restored.active) == (
        back.pk,
        "cannot_link",
        True,
    )
    assert restored.event_id == cannot.event_id
    assert not DepartedSlot.objects.exists()
    services.matching_run()
    assert not Proposal.objects.filter(
        kind="attach", researcher=f, authorships=back, status="pending"
    ).exists()


def test_a_curated_slot_returns_to_its_researcher_and_its_survivor(record):
    paper = paper_upsert(record=record).paper
    # A merge keeps the lowest id: the survivor is made first.
    survivor = ResearcherFactory(display_name="Fabio Zwirner")
    AuthorshipFactory(researcher=survivor, given_name="Fabio", family_name="Zwirner")
    zwirner = ResearcherFactory(display_name="Fabio Zwirner")
    curator = UserFactory()
    edits.authorship_move(authorship=_slot(paper, "Zwirner"), to=zwirner, actor=curator)
    paper_upsert(record=_without(record, "Zwirner", 4))
    assert not zwirner.authorships.exists()
    # Merged away while the slot was gone: it comes back to the survivor.
    edits.researcher_merge(researchers=[survivor, zwirner], actor=curator)
    revision = Researcher.objects.get(pk=survivor.pk).revision

    paper_upsert(record=dataclasses.replace(record, version=5))

    back = _slot(paper, "Zwirner")
    assert (back.position, back.researcher_id) == (3, survivor.pk)
    assert back.constraints.get(kind="must_link").researcher_id == zwirner.pk
    # Matching reads the survivor's profile again.
    assert Researcher.objects.get(pk=survivor.pk).revision == revision + 1


def test_an_undo_while_the_slot_was_away_holds_when_it_returns(record):
    """The rejection is undone while the author is off the byline: the
    cannot-link comes back inactive, so the attach may be proposed again."""
    paper, f, curator = _rejected_feruglio(record)
    paper_upsert(record=_without(record, "Feruglio", 4))
    history.event_undo(
        event=CurationEvent.objects.get(kind="proposal_rejected"), actor=curator
    )

    paper_upsert(record=dataclasses.replace(record, version=5))

    back = _slot(paper, "Feruglio")
    assert list(back.constraints.values_list("active", flat=True)) == [False]
    services.matching_run()
    assert Proposal.objects.filter(
        kind="attach", researcher=f, authorships=back, status="pending"
    ).exists()


def test_another_person_in_the_slot_does_not_take_its_curation(record):
    """A later version printing another given name under the same family
    name is not the departed person: nothing comes back."""
    paper = paper_upsert(record=record).paper
    zwirner = ResearcherFactory(display_name="Fabio Zwirner")
    edits.authorship_move(
        authorship=_slot(paper, "Zwirner"), to=zwirner, actor=UserFactory()
    )
    paper_upsert(record=_without(record, "Zwirner", 4))
    other = dataclasses.replace(
        record.authors[2], raw_name="Giulia Zwirner", given_name="Giulia"
    )
    paper_upsert(
        record=dataclasses.replace(
            record, version=5, authors=[*record.authors[:2], other]
        )
    )

    slot = _slot(paper, "Zwirner")
    assert slot.researcher_id is None
    assert not slot.constraints.exists()
    assert DepartedSlot.objects.filter(paper=paper).count() == 1


def _zwirner_printed(record, version: int, given: str):
    zwirner = dataclasses.replace(
        record.authors[2], raw_name=f"{given} Zwirner", given_name=given
    )
    return dataclasses.replace(
        record, version=version, authors=[*record.authors[:2], zwirner]
    )


def test_a_slot_printed_by_initials_does_not_follow_another_given_name(record):
    """A curated slot printed "F. Zwirner" fits any F.; a later version
    printing "Franco Zwirner" there is not the Fabio its researcher is known
    as. The row followed the new name, still on the locked Fabio, and
    "Franco Zwirner" became one of his name variants (hostile trial: "A. G.
    Hoekstra" of Alfons printed "Anna Hoekstra"). Now the row departs, and
    comes back when the source prints Fabio again."""
    paper = paper_upsert(record=record).paper
    fabio = ResearcherFactory(display_name="Fabio Zwirner", block_key="zwirner|f")
    curator = UserFactory()
    row = _slot(paper, "Zwirner")
    edits.authorship_move(authorship=row, to=fabio, actor=curator)
    edits.researcher_set_locked(researcher=fabio, locked=True, actor=curator)
    paper_upsert(record=_zwirner_printed(record, 4, "F."))
    assert Authorship.objects.get(pk=row.pk).researcher_id == fabio.pk

    paper_upsert(record=_zwirner_printed(record, 5, "Franco"))

    franco = _slot(paper, "Zwirner")
    assert (franco.given_name, franco.researcher_id) == ("Franco", None)
    assert franco.pk != row.pk
    assert DepartedSlot.objects.get(paper=paper).authorship_id == row.pk
    fabio.refresh_from_db()
    assert "Franco Zwirner" not in fabio.name_variants
    assert not fabio.authorships.exists()

    paper_upsert(record=_zwirner_printed(record, 6, "Fabio"))

    back = _slot(paper, "Zwirner")
    assert (back.pk, back.researcher_id) == (row.pk, fabio.pk)


def test_a_slot_printed_by_initials_follows_the_full_name_it_is_known_by(record):
    paper = paper_upsert(record=record).paper
    fabio = ResearcherFactory(display_name="Fabio Zwirner", block_key="zwirner|f")
    row = _slot(paper, "Zwirner")
    edits.authorship_move(authorship=row, to=fabio, actor=UserFactory())
    paper_upsert(record=_zwirner_printed(record, 4, "F."))

    paper_upsert(record=_zwirner_printed(record, 5, "Fabio"))

    assert _slot(paper, "Zwirner").pk == row.pk
    assert Authorship.objects.get(pk=row.pk).researcher_id == fabio.pk
    assert not DepartedSlot.objects.exists()


@pytest.mark.parametrize(
    ("known", "initials", "printed"),
    [
        ("Yury", "Y.", "Yuri"),
        ("Juergen", "J.", "Jürgen"),
        ("Aleksandr", "A.", "Alexander"),
        ("Christopher", "C.", "Chris"),
    ],
)
def test_a_slot_printed_by_initials_follows_its_name_written_another_way(
    record, known, initials, printed
):
    """A locked researcher known as "Yury Zwirner" whose slot printed
    "Y. Zwirner" lost the paper when a version printed "Yuri" (re-trial of
    the fix above): a respelling or a short form of a name it is known by
    keeps the row."""
    paper = paper_upsert(record=_zwirner_printed(record, 4, initials)).paper
    r = ResearcherFactory(display_name=f"{known} Zwirner", block_key="zwirner|x")
    curator = UserFactory()
    row = _slot(paper, "Zwirner")
    edits.authorship_move(authorship=row, to=r, actor=curator)
    edits.researcher_set_locked(researcher=r, locked=True, actor=curator)

    paper_upsert(record=_zwirner_printed(record, 5, printed))

    kept = _slot(paper, "Zwirner")
    assert (kept.pk, kept.given_name, kept.researcher_id) == (row.pk, printed, r.pk)
    assert not DepartedSlot.objects.exists()


def test_an_uncurated_slot_is_not_kept(record):
    paper = paper_upsert(record=record).paper
    paper_upsert(record=_without(record, "Zwirner", 4))
    assert paper.authorships.count() == 2
    assert not DepartedSlot.objects.exists()


@pytest.mark.parametrize(
    "garbage",
    [
        5,
        [5],
        [{"id": "x"}],
        [{"id": 10**30, "kind": "cannot_link", "researcher": 1, "event": 1}],
        [{"id": 99, "kind": "maybe", "researcher": 1, "event": 1, "active": True}],
    ],
)
def test_a_departed_slot_edited_by_hand_costs_its_constraints_not_the_harvest(
    record, garbage, caplog
):
    paper = paper_upsert(record=record).paper
    zwirner = ResearcherFactory(display_name="Fabio Zwirner")
    edits.authorship_move(
        authorship=_slot(paper, "Zwirner"), to=zwirner, actor=UserFactory()
    )
    paper_upsert(record=_without(record, "Zwirner", 4))
    DepartedSlot.objects.update(constraints=garbage)

    with caplog.at_level("WARNING", logger="harvest.services.upsert"):
        paper_upsert(record=dataclasses.replace(record, version=5))

    back = _slot(paper, "Zwirner")
    assert back.researcher_id == zwirner.pk
    assert not back.constraints.exists()
    if isinstance(garbage, list):
        assert "cannot be read; left out" in caplog.text


def test_a_redo_while_the_slot_was_away_holds_when_it_returns(record):
    """Reject, undo the rejection, the author leaves, the undo is undone (the
    rejection stands again) while away: the cannot-link comes back active
    (re-trial: it came back inactive and the attach was proposed again)."""
    paper, f, curator = _rejected_feruglio(record)
    undo = history.event_undo(
        event=CurationEvent.objects.get(kind="proposal_rejected"), actor=curator
    )
    paper_upsert(record=_without(record, "Feruglio", 4))
    history.event_undo(event=undo, actor=curator)

    paper_upsert(record=dataclasses.replace(record, version=5))

    back = _slot(paper, "Feruglio")
    assert list(back.constraints.values_list("kind", "active")) == [
        ("cannot_link", True)
    ]
    services.matching_run()
    assert not Proposal.objects.filter(
        kind="attach", researcher=f, authorships=back, status="pending"
    ).exists()


def test_the_returned_row_is_the_one_its_events_moved(record):
    """It comes back under its own id, so undoing the move that put it on its
    researcher still takes it off (re-trial: the undo said it no longer
    existed and left the paper on the researcher)."""
    paper = paper_upsert(record=record).paper
    zwirner = ResearcherFactory(display_name="Fabio Zwirner")
    curator = UserFactory()
    slot = _slot(paper, "Zwirner")
    move = edits.authorship_move(authorship=slot, to=zwirner, actor=curator)
    paper_upsert(record=_without(record, "Zwirner", 4))
    paper_upsert(record=dataclasses.replace(record, version=5))
    assert _slot(paper, "Zwirner").pk == slot.pk

    history.event_undo(event=move, actor=curator)

    back = Authorship.objects.get(pk=slot.pk)
    assert back.researcher_id is None
    assert not back.constraints.filter(active=True).exists()


def test_a_researcher_holding_another_slot_of_the_paper_by_then_gets_no_second(
    record,
):
    """While Zwirner's slot was away a curator put the paper's first author
    on the same profile: the returning slot comes back unassigned, keeping
    its constraints (re-trial: one researcher held two slots of a paper)."""
    paper = paper_upsert(record=record).paper
    zwirner = ResearcherFactory(display_name="Fabio Zwirner")
    curator = UserFactory()
    edits.authorship_move(authorship=_slot(paper, "Zwirner"), to=zwirner, actor=curator)
    paper_upsert(record=_without(record, "Zwirner", 4))
    edits.authorship_move(
        authorship=_slot(paper, "Brignole"), to=zwirner, actor=curator
    )

    paper_upsert(record=dataclasses.replace(record, version=5))

    back = _slot(paper, "Zwirner")
    assert back.researcher_id is None
    assert back.constraints.get(kind="must_link").researcher_id == zwirner.pk
    assert paper.authorships.filter(researcher=zwirner).count() == 1
    # Its History says why the paper did not come back (hostile trial: the
    # last word was that it would).
    last = history.researcher_history(researcher_id=zwirner.pk).first()
    assert last.kind == CurationEvent.Kind.SOURCE
    assert last.moves == []
    assert last.extra["reason"] == (
        "a new version of arXiv:hep-th/9709111 prints “Fabio Zwirner” again, but "
        f"the paper did not come back to the profile: researcher {zwirner.pk} "
        f"holds another slot of the paper by now; authorship {back.pk} is on no "
        "researcher"
    )
