"""What automation changes drops its researchers' own cached views, not every
list of researchers found by name; a curator's change drops both.

A matching run after a harvest founds profiles in batches; when each batch
dropped the version of every search page, every search went cold at once
while it ran (bench/soak.py, with one Redis for the broker and the cache)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from curation import services
from curation.deciding import auto_apply
from curation.history import event_undo
from curation.models import CurationEvent
from harvest.services import harvest_files
from wovepaper.cache import researcher_version, researchers_version
from wovepaper.models import Researcher

DATA = Path(settings.WOVEPAPER_DATA_DIR)

pytestmark = pytest.mark.django_db


def test_a_matching_run_leaves_name_lists_and_a_curator_undo_drops_them(
    client, curator, settings, django_capture_on_commit_callbacks
):
    settings.CURATION_AUTO_APPLY = str(auto_apply.DEFAULT_THRESHOLD)
    harvest_files(source="arxiv", root=DATA / "arxiv" / "arxivpy_2016_atom")
    lists = researchers_version()
    with django_capture_on_commit_callbacks(execute=True):
        services.matching_run()
    founded = CurationEvent.objects.filter(
        kind="proposal_applied", extra__by="the matcher"
    )
    assert founded.count() >= 10
    event = founded.latest("pk")
    researcher = Researcher.objects.get(pk=event.researchers[0])
    # Each founded profile's own views were dropped; the lists were not.
    assert researcher_version(researcher.pk) > 1
    assert researchers_version() == lists

    page = client.get("/search/", {"q": researcher.display_name, "mode": "keyword"})
    assert researcher.get_absolute_url() in page.content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        event_undo(event=event, actor=curator)
    assert researchers_version() == lists + 1
    # The cached search page is dropped: the retired profile is gone from it.
    page = client.get("/search/", {"q": researcher.display_name, "mode": "keyword"})
    assert researcher.get_absolute_url() not in page.content.decode()
