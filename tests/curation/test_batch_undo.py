"""A whole block review (or bulk action) undone in one step
(:func:`curation.history.batch_undo`): every change of it, latest first, or
none; no profile is ever public with no paper in between."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation import block_review, edits
from curation.exceptions import NothingToUndo, UndoConflict
from curation.history import batch_undo, event_undo
from curation.models import CurationEvent
from tests.curation.test_block_review import BLOCK, _del_maestro
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db


def _placement() -> dict:
    """Where every authorship is, and which profiles are live."""
    return {
        "authorships": dict(Authorship.objects.values_list("pk", "researcher_id")),
        "live": set(Researcher.objects.live().values_list("pk", flat=True)),
    }


def _review_emptying(curator):
    """On the real Del Maestro records: a review moving every paper of the
    block's second profile to its first (which retires the second) and
    merging the third, if any, into the first."""
    profiles = _del_maestro(curator)
    keep, other, *rest = profiles
    papers = list(other.authorships.order_by("pk"))
    assert papers, "the real records give the second profile papers"
    before = _placement()
    batch = block_review.review_apply(
        block_key=BLOCK,
        review=block_review.Review(
            moves={a.pk: keep.pk for a in papers},
            merges=[(keep.pk, r.pk) for r in rest[:1]],
        ),
        actor=curator,
    )
    return before, batch, keep, other, papers


def test_a_review_is_undone_and_redone_whole(curator):
    before, batch, keep, other, papers = _review_emptying(curator)
    after = _placement()
    assert other.pk not in after["live"]
    members = list(
        CurationEvent.objects.filter(batch=batch)
        .order_by("-pk")
        .values_list("pk", flat=True)
    )
    assert "retired" in CurationEvent.objects.filter(batch=batch).values_list(
        "kind", flat=True
    )

    undo = batch_undo(batch=batch, actor=curator)

    assert _placement() == before
    assert undo.kind == "batch"
    assert undo.extra["undoes_batch"] == batch.pk
    assert undo.extra["review"] == BLOCK  # so History offers to redo it whole
    undone = CurationEvent.objects.filter(batch=undo).order_by("pk")
    assert [e.undoes_id for e in undone] == members  # latest first
    assert undo.extra["undone"] == [e.pk for e in undone]
    assert set(undo.researchers) >= {keep.pk, other.pk}
    # Undoing the undo does the review again.
    batch_undo(batch=undo, actor=curator)
    assert _placement() == after
    # The review, done again, is undone again; then nothing of it is left.
    batch_undo(batch=batch, actor=curator)
    assert _placement() == before
    with pytest.raises(NothingToUndo, match=f"batch {batch.pk} has no change left"):
        batch_undo(batch=batch, actor=curator)


def test_a_change_that_cannot_be_undone_leaves_all_of_it(client, curator):
    before, batch, keep, other, papers = _review_emptying(curator)
    # A later move of one of the papers the review moved.
    third = Researcher.objects.create(display_name="A. Del Maestro", block_key=BLOCK)
    edits.authorship_move(authorship=papers[0], to=third, actor=curator)
    after = _placement()
    events = CurationEvent.objects.count()

    with pytest.raises(UndoConflict, match=f"nothing of batch {batch.pk} undone"):
        batch_undo(batch=batch, actor=curator)

    assert _placement() == after
    assert CurationEvent.objects.count() == events
    # Its confirmation page says so before the click, and offers none.
    client.force_login(curator)
    page = client.get(
        reverse("admin:curation_curationevent_undo", args=[batch.pk])
    ).content.decode()
    assert "Undoing it now would be refused" in page
    assert f"nothing of batch {batch.pk} undone: cannot undo event" in page
    assert "Yes, undo all of it" not in page
    assert _placement() == after
    assert CurationEvent.objects.count() == events


def test_only_a_finished_batch_is_undone_whole(curator):
    before, batch, keep, other, papers = _review_emptying(curator)
    move = CurationEvent.objects.filter(batch=batch, kind="moved").first()
    with pytest.raises(NothingToUndo, match="not a review or bulk action"):
        batch_undo(batch=move, actor=curator)
    running = CurationEvent.objects.create(
        kind="batch", actor=curator, extra={"state": "running", "verb": "applied"}
    )
    with pytest.raises(NothingToUndo, match="is running"):
        batch_undo(batch=running, actor=curator)


def test_the_admin_undoes_a_review_in_one_click(client, curator):
    before, batch, keep, other, papers = _review_emptying(curator)
    client.force_login(curator)
    url = reverse("admin:curation_curationevent_undo", args=[batch.pk])
    history = client.get(
        reverse("admin:wovepaper_researcher_history", args=[keep.pk])
    ).content.decode()
    assert f'href="{url}?next=' in history
    assert "Undo all…" in history
    page = client.get(url).content.decode()
    assert f"the review of block “{BLOCK}”" in page
    count = CurationEvent.objects.filter(batch=batch).count()
    assert f"Its {count} changes below are undone in one step" in page

    done = client.post(url, {"confirm": "yes"}, follow=True)

    assert f"Undid {count} change(s) of batch {batch.pk}" in done.content.decode()
    assert _placement() == before
    assert client.get(other.get_absolute_url()).status_code == 200


def test_a_change_undone_and_redone_since_is_undone_with_the_rest(curator):
    """Hostile trial: it was passed over, and the review reported undone."""
    before, batch, keep, other, papers = _review_emptying(curator)
    move = CurationEvent.objects.filter(batch=batch, kind="moved").latest("pk")
    retired = CurationEvent.objects.get(batch=batch, kind="retired")
    # Its retirement and one move undone alone, then both done again.
    undo_retired = event_undo(event=retired, actor=curator)
    undo_move = event_undo(event=move, actor=curator)
    event_undo(event=undo_move, actor=curator)
    event_undo(event=undo_retired, actor=curator)

    batch_undo(batch=batch, actor=curator)

    assert _placement() == before


def test_a_change_with_nothing_left_is_passed_over_not_the_whole(curator):
    """Hostile trial: one move whose slot a newer version of its paper
    dropped refused the review's undo for good."""
    before, batch, keep, other, papers = _review_emptying(curator)
    assert len(papers) > 1, "the real records give the profile several papers"
    dropped = papers[0]
    moved = CurationEvent.objects.get(batch=batch, moves__0__authorship=dropped.pk)
    Authorship.objects.filter(pk=dropped.pk).delete()

    undo = batch_undo(batch=batch, actor=curator)

    assert list(undo.extra["passed_over"]) == [str(moved.pk)]
    assert "no longer exist" in undo.extra["passed_over"][str(moved.pk)]
    expected = dict(before["authorships"])
    del expected[dropped.pk]
    assert _placement() == {"authorships": expected, "live": before["live"]}


def test_history_offers_undo_all_of_what_is_in_force_and_names_it(client, curator):
    before, batch, keep, other, papers = _review_emptying(curator)
    client.force_login(curator)

    def offered() -> dict[int, str]:
        """The batches History offers to undo whole, with their buttons."""
        html = client.get(
            reverse("admin:wovepaper_researcher_history", args=[keep.pk])
        ).content.decode()
        found = {}
        for pk in CurationEvent.objects.filter(kind="batch").values_list(
            "pk", flat=True
        ):
            url = reverse("admin:curation_curationevent_undo", args=[pk])
            at = html.find(f'href="{url}?next=')
            if at >= 0:
                found[pk] = html[html.index(">", at) + 1 : html.index("</a>", at)]
        return found

    assert offered() == {batch.pk: "Undo all…"}
    undo = batch_undo(batch=batch, actor=curator)
    assert offered() == {undo.pk: "Redo all…"}
    redo = batch_undo(batch=undo, actor=curator)
    assert (undo.extra["verb"], redo.extra["verb"]) == ("undone", "redone")
    # The review is in force again: by its own row or by its redo's.
    assert offered() == {batch.pk: "Undo all…", redo.pk: "Undo all…"}
    again = batch_undo(batch=batch, actor=curator)
    assert _placement() == before
    assert offered() == {undo.pk: "Redo all…", again.pk: "Redo all…"}
