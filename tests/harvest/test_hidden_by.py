"""A paper a curator hid stays hidden through re-harvests; one its source
deleted is shown again when the source has it again.

Found by a hostile trial: a curator hid a paper in the admin and the next
harvest of its record showed it again (``hidden`` meant both, and a record
read again un-hid it). Real record: hep-th/9709111 v3 (three authors, CERN-TH).
"""

from __future__ import annotations

import dataclasses

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from lxml import html as lxml_html

from harvest.services import paper_upsert
from harvest.sources.arxiv_abs import parse_abs, read_abs_file
from wovepaper.models import Paper

pytestmark = pytest.mark.django_db

ABS = "arxiv/abs_files/ftp/hep-th/papers/9709/9709111.abs"


@pytest.fixture
def record():
    """The real hep-th/9709111 record (v3, as arXiv's ftp tree holds it)."""
    return parse_abs(read_abs_file(settings.WOVEPAPER_DATA_DIR / ABS))


def _admin() -> Client:
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("root", "", "pw"))
    return admin


def _post_hidden(admin: Client, paper: Paper, hidden: bool):
    change = f"/admin/wovepaper/paper/{paper.pk}/change/"
    form = next(
        f
        for f in lxml_html.fromstring(admin.get(change).content).forms
        if f.get("id") == "paper_form"
    )
    data = dict(form.form_values())
    data.pop("hidden", None)
    if hidden:
        data["hidden"] = "on"
    return admin.post(change, data)


def test_a_paper_hidden_by_a_curator_stays_hidden_when_harvested_again(client, record):
    paper = paper_upsert(record=record).paper
    admin = _admin()
    assert _post_hidden(admin, paper, True).status_code == 302
    paper.refresh_from_db()
    assert (paper.hidden, paper.hidden_by) == (True, "curator")

    again = paper_upsert(record=record)

    paper.refresh_from_db()
    assert again.outcome == "unchanged"
    assert (paper.hidden, paper.hidden_by) == (True, "curator")
    assert client.get(paper.get_absolute_url()).status_code == 404
    # A newer version brings its text, and the paper stays hidden still.
    newer = paper_upsert(
        record=dataclasses.replace(record, version=4, title="A fourth version")
    )
    paper.refresh_from_db()
    assert newer.outcome == "updated"
    assert paper.title == "A fourth version"
    assert (paper.hidden, paper.hidden_by) == (True, "curator")
    # Its source deleting it then keeps the curator's reason.
    paper_upsert(record=dataclasses.replace(record, deleted=True))
    paper.refresh_from_db()
    assert (paper.hidden, paper.hidden_by) == (True, "curator")


def test_a_paper_deleted_at_its_source_is_shown_when_the_source_has_it_again(
    client, record
):
    paper = paper_upsert(record=record).paper

    gone = paper_upsert(record=dataclasses.replace(record, deleted=True))

    paper.refresh_from_db()
    assert gone.outcome == "updated"
    assert (paper.hidden, paper.hidden_by) == (True, "source")
    assert client.get(paper.get_absolute_url()).status_code == 404

    back = paper_upsert(record=record)

    paper.refresh_from_db()
    assert back.outcome == "updated"
    assert (paper.hidden, paper.hidden_by) == (False, "")
    assert client.get(paper.get_absolute_url()).status_code == 200


def test_a_curator_shows_a_paper_its_source_deleted(record):
    """Clearing ``hidden`` in the admin shows it; who hid it is cleared."""
    paper = paper_upsert(record=record).paper
    paper_upsert(record=dataclasses.replace(record, deleted=True))
    paper.refresh_from_db()
    assert paper.hidden_by == "source"

    assert _post_hidden(_admin(), paper, False).status_code == 302

    paper.refresh_from_db()
    assert (paper.hidden, paper.hidden_by) == (False, "")


def test_saving_a_hidden_paper_unchanged_keeps_who_hid_it(record):
    """An admin save that leaves ``hidden`` as it was (a title edited) does
    not make the source's deletion a curator's."""
    paper = paper_upsert(record=record).paper
    paper_upsert(record=dataclasses.replace(record, deleted=True))
    paper.refresh_from_db()

    assert _post_hidden(_admin(), paper, True).status_code == 302

    paper.refresh_from_db()
    assert (paper.hidden, paper.hidden_by) == (True, "source")
    paper_upsert(record=record)
    paper.refresh_from_db()
    assert paper.hidden is False
