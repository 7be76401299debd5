"""What a source does to a curated profile is in the profile's History.

A new version of a record that no longer prints a curated slot takes its
paper off the researcher, with no curator acting (its curation is kept as a
DepartedSlot and comes back with the slot). Stop-43 note: this reached the
log only, so a curator who had locked the profile saw a paper vanish from
its page and its History said nothing. Real record: hep-th/9709111 (Fabio
Zwirner, printed "F." and "Franco" by later versions).
"""

from __future__ import annotations

import dataclasses

import pytest
from django.conf import settings
from django.urls import reverse

from curation import edits, services
from curation.exceptions import NothingToUndo
from curation.history import event_undo, researcher_history
from curation.models import CurationEvent
from harvest.services import paper_upsert
from harvest.sources.arxiv_abs import parse_abs, read_abs_file
from tests.factories import ResearcherFactory
from wovepaper.models import Authorship

pytestmark = pytest.mark.django_db

ABS = "arxiv/abs_files/ftp/hep-th/papers/9709/9709111.abs"


@pytest.fixture
def record():
    return parse_abs(read_abs_file(settings.WOVEPAPER_DATA_DIR / ABS))


def _printed(record, version: int, given: str | None):
    """The record with Zwirner printed as ``given`` (None: dropped)."""
    authors = [
        dataclasses.replace(a, given_name=given, raw_name=f"{given} Zwirner")
        if a.family_name == "Zwirner"
        else a
        for a in record.authors
        if a.family_name != "Zwirner" or given is not None
    ]
    return dataclasses.replace(record, version=version, authors=authors)


@pytest.fixture
def fabio(record):
    """The locked Fabio Zwirner, holding his slot of hep-th/9709111 by a
    curator's move: ``(researcher, authorship id, curator)``."""
    paper = paper_upsert(record=record).paper
    fabio = ResearcherFactory(display_name="Fabio Zwirner", block_key="zwirner|f")
    curator = services.curator_ensure(username="cura", password="pw-cura")
    row = paper.authorships.get(family_name="Zwirner")
    edits.authorship_move(authorship=row, to=fabio, actor=curator)
    edits.researcher_set_locked(researcher=fabio, locked=True, actor=curator)
    return fabio, row.pk, curator


def _source_events(researcher):
    return list(
        researcher_history(researcher_id=researcher.pk)
        .filter(kind=CurationEvent.Kind.SOURCE)
        .order_by("pk")
    )


@pytest.mark.parametrize("given", [None, "Franco"])
def test_a_slot_the_source_drops_is_in_the_history_and_its_return_too(
    record, fabio, given
):
    """Dropped from the byline, or printed as another person ("Franco" is not
    the Fabio the profile is known by): either way the paper leaves."""
    fabio, row, curator = fabio
    paper_upsert(record=_printed(record, 4, given))

    (left,) = _source_events(fabio)
    assert left.actor is None
    assert left.researchers == [fabio.pk]
    assert left.moves == [{"authorship": row, "before": fabio.pk, "after": None}]
    assert left.extra["record"] == "arXiv:hep-th/9709111"
    assert left.extra["reason"].startswith(
        "a new version of arXiv:hep-th/9709111 no longer prints “Fabio Zwirner” "
        "there: the paper left the profile"
    )
    assert not fabio.authorships.exists()

    paper_upsert(record=_printed(record, 5, "Fabio"))

    left, back = _source_events(fabio)
    assert back.moves == [{"authorship": row, "before": None, "after": fabio.pk}]
    assert back.extra["reason"].startswith(
        "a new version of arXiv:hep-th/9709111 prints “Fabio Zwirner” again"
    )
    assert list(fabio.authorships.values_list("pk", flat=True)) == [row]


def test_a_change_of_the_source_is_not_undone_by_a_curator(client, record, fabio):
    fabio, row, curator = fabio
    paper_upsert(record=_printed(record, 4, None))
    (left,) = _source_events(fabio)

    with pytest.raises(NothingToUndo, match="a change its source made"):
        event_undo(event=left, actor=curator)

    client.force_login(curator)
    page = client.get(
        reverse("admin:wovepaper_researcher_history", args=[fabio.pk])
    ).content.decode()
    line = page.split(f"changed by its source #{left.pk}", 1)
    assert len(line) == 2, page
    row_html = line[0].rsplit("<tr>", 1)[1] + line[1].split("</tr>", 1)[0]
    assert "<td>the source</td>" in row_html
    assert "no longer prints" in row_html
    assert "Undo…" not in row_html


def test_versions_that_keep_curated_slots_write_no_source_event(record, fabio):
    fabio, row, _ = fabio
    paper_upsert(record=_printed(record, 4, "F."))  # "F." fits Fabio: stays
    paper_upsert(record=_printed(record, 5, "Fabio"))
    assert _source_events(fabio) == []
    assert list(fabio.authorships.values_list("pk", flat=True)) == [row]


def test_each_researcher_reads_its_own_slots(record, fabio):
    """Hostile trial: one event a record named the first 20 slots of every
    researcher, so in a long byline a researcher's History never named its
    own (and counted the others' papers as moved)."""
    fabio, row, curator = fabio
    paper = Authorship.objects.get(pk=row).paper
    andrea = ResearcherFactory(display_name="Andrea Brignole")
    edits.authorship_move(
        authorship=paper.authorships.get(family_name="Brignole"),
        to=andrea,
        actor=curator,
    )
    authors = [
        a for a in record.authors if a.family_name not in ("Zwirner", "Brignole")
    ]
    paper_upsert(record=dataclasses.replace(record, version=4, authors=authors))

    for researcher, name in ((fabio, "Fabio Zwirner"), (andrea, "Andrea Brignole")):
        (left,) = _source_events(researcher)
        assert left.researchers == [researcher.pk]
        assert len(left.moves) == 1
        assert f"no longer prints “{name}” there" in left.extra["reason"]


def test_the_undo_page_of_a_source_event_offers_no_undo(client, record, fabio):
    """Hostile trial: the page offered "Yes, undo it" (the POST refused)."""
    fabio, _, curator = fabio
    paper_upsert(record=_printed(record, 4, None))
    (left,) = _source_events(fabio)
    client.force_login(curator)

    response = client.get(
        reverse("admin:curation_curationevent_undo", args=[left.pk]), follow=True
    )

    page = response.content.decode()
    assert "Yes, undo it" not in page
    assert "a change its source made" in page
    assert not CurationEvent.objects.filter(kind="undone").exists()
    # The log's list and the event's own page say who acted (new-user trial:
    # "-").
    listed = client.get(
        reverse("admin:curation_curationevent_changelist") + "?kind=source"
    ).content.decode()
    assert '<td class="field-who">the source</td>' in listed
    shown = client.get(
        reverse("admin:curation_curationevent_change", args=[left.pk])
    ).content.decode()
    assert '<div class="readonly">the source</div>' in shown


def test_a_merge_undone_while_the_slot_was_away_sends_it_back_to_its_researcher(
    record,
):
    """Hostile trial: Zwirner's profile merged into another, his slot dropped,
    the merge undone meanwhile (it could not reach the row): the slot came
    back to the survivor with a must-link to him only."""
    paper = paper_upsert(record=record).paper
    survivor = ResearcherFactory(display_name="F. Zwirner")  # the lower id
    zwirner = ResearcherFactory(display_name="Fabio Zwirner")
    curator = services.curator_ensure(username="cura", password="pw-cura")
    row = paper.authorships.get(family_name="Zwirner").pk
    edits.authorship_move(
        authorship=Authorship.objects.get(pk=row), to=zwirner, actor=curator
    )
    edits.researcher_merge(researchers=[survivor, zwirner], actor=curator)
    paper_upsert(record=_printed(record, 4, None))
    undo = event_undo(event=CurationEvent.objects.get(kind="merged"), actor=curator)
    assert undo.extra["authorships_gone"] == [row]

    paper_upsert(record=_printed(record, 5, "Fabio"))

    back = Authorship.objects.get(pk=row)
    assert back.researcher_id == zwirner.pk
    assert list(
        back.constraints.filter(kind="must_link", active=True).values_list(
            "researcher_id", flat=True
        )
    ) == [zwirner.pk]
    (returned,) = [e for e in _source_events(zwirner) if e.moves[0]["after"]]
    assert returned.moves == [{"authorship": row, "before": None, "after": zwirner.pk}]


def test_a_record_its_source_deleted_and_sent_again_is_in_the_history(record, fabio):
    """Hostile trial: a deleted record hid the paper, and every profile holding
    it lost it from its pages at once, with nothing in their History."""
    fabio, row, _ = fabio
    paper_upsert(record=dataclasses.replace(record, version=4, deleted=True))

    (hidden,) = _source_events(fabio)
    assert hidden.moves == []
    assert hidden.extra["reason"] == (
        "the source deleted arXiv:hep-th/9709111: the paper is hidden, off the "
        "profile's pages, and shows again if the source sends the record again"
    )
    # Its slot stays assigned: nothing moved.
    assert list(fabio.authorships.values_list("pk", flat=True)) == [row]

    paper_upsert(record=dataclasses.replace(record, version=5))

    hidden, shown = _source_events(fabio)
    assert shown.extra["reason"] == (
        "the source sent arXiv:hep-th/9709111 again: the paper shows on the "
        "profile again"
    )
    # A deletion sent twice is one event.
    paper_upsert(record=dataclasses.replace(record, version=6, deleted=True))
    paper_upsert(record=dataclasses.replace(record, version=6, deleted=True))
    assert len(_source_events(fabio)) == 3
