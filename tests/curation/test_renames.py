"""A profile named after its papers keeps a name they print
(:mod:`curation.edits.renames`): a review that swaps the papers of two
profiles swaps their names, and a paper moved off or detached takes the name
with it; a name a curator chose stays. On the real arXiv records of "Jurik"
and "Jurek Krzesinski" (one SDSS paper each, two profiles once approved)."""

from __future__ import annotations

import pytest

from curation import block_review, edits, services
from curation.history import batch_undo, event_undo
from curation.models import CurationEvent
from harvest.services import harvest_files
from tests.curation.test_demo_duplicates import ARXIV, FILES, _approve_everything
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db

BLOCK = "krzesinski j"


def _jurik_and_jurek(curator) -> tuple[Researcher, Researcher]:
    for name in FILES[:2]:
        harvest_files(source="arxiv", root=ARXIV / name)
    services.matching_run()
    _approve_everything(curator)
    jurik = Researcher.objects.live().get(display_name="Jurik Krzesinski")
    jurek = Researcher.objects.live().get(display_name="Jurek Krzesinski")
    return jurik, jurek


def _names(*researchers: Researcher) -> list[str]:
    return [Researcher.objects.get(pk=r.pk).display_name for r in researchers]


def _swap(jurik, jurek, curator) -> CurationEvent:
    moves = {
        **{a.pk: jurek.pk for a in jurik.authorships.all()},
        **{a.pk: jurik.pk for a in jurek.authorships.all()},
    }
    return block_review.review_apply(
        block_key=BLOCK, review=block_review.Review(moves=moves), actor=curator
    )


def test_a_review_that_swaps_two_profiles_papers_swaps_their_names(curator):
    jurik, jurek = _jurik_and_jurek(curator)

    batch = _swap(jurik, jurek, curator)

    assert _names(jurik, jurek) == ["Jurek Krzesinski", "Jurik Krzesinski"]
    assert sorted(batch.extra["renamed"]) == sorted([jurik.pk, jurek.pk])
    renames = CurationEvent.objects.filter(batch=batch, kind="edited")
    assert renames.count() == 2
    assert all(e.extra["renamed"] == edits.RENAMED for e in renames)
    # Its URL follows the name; the whole review undoes, names and all.
    assert Researcher.objects.get(pk=jurik.pk).slug.startswith("jurek-krzesinski")
    batch_undo(batch=batch, actor=curator)
    assert _names(jurik, jurek) == ["Jurik Krzesinski", "Jurek Krzesinski"]


def test_a_name_a_curator_chose_stays_through_a_swap(curator):
    jurik, jurek = _jurik_and_jurek(curator)
    edits.researcher_update(
        researcher=jurik, actor=curator, changes={"display_name": "Jerzy Krzesinski"}
    )

    batch = _swap(jurik, jurek, curator)

    assert _names(jurik, jurek) == ["Jerzy Krzesinski", "Jurik Krzesinski"]
    assert batch.extra["renamed"] == [jurek.pk]


def test_a_paper_detached_or_moved_off_takes_its_name_with_it(curator):
    jurik, jurek = _jurik_and_jurek(curator)
    merged = edits.researcher_merge(researchers=[jurik, jurek], actor=curator)
    name = merged.display_name
    kept, gone = ("Jurik", "Jurek") if name.startswith("Jurik") else ("Jurek", "Jurik")
    named_after = Authorship.objects.get(researcher=merged, given_name=kept)

    detached = edits.authorship_detach(authorship=named_after, actor=curator)

    assert _names(merged) == [f"{gone} Krzesinski"]
    assert detached.fields[str(merged.pk)]["display_name"] == [
        name,
        f"{gone} Krzesinski",
    ]
    event_undo(event=detached, actor=curator)
    assert _names(merged) == [name]

    # A move keeps a name some of the papers left still print.
    other = Researcher.objects.live().exclude(pk=merged.pk).order_by("pk").first()
    moved = edits.authorship_move(
        authorship=Authorship.objects.get(researcher=merged, given_name=gone),
        to=other,
        actor=curator,
    )
    assert _names(merged) == [name]
    assert "display_name" not in moved.fields.get(str(merged.pk), {})
