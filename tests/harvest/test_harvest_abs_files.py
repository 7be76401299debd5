"""The 1,192 real arXiv .abs files harvested once: what lands, what is rejected."""

from __future__ import annotations

import datetime as dt

import pytest

from harvest import services
from harvest.models import HarvestRun, RawRecord
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def abs_run(django_db_setup, django_db_blocker):
    """All 1,192 real .abs files harvested once for this module (about 15 s).

    Committed outside the per-test transactions so each test reads it and rolls back
    its own changes; deleted again when the module ends.
    """
    from django.conf import settings

    with django_db_blocker.unblock():
        run = services.harvest_arxiv_files(
            root=settings.WOVEPAPER_DATA_DIR / "arxiv" / "abs_files"
        )
        yield run
        Authorship.objects.all().delete()
        Paper.objects.all().delete()
        RawRecord.objects.all().delete()
        HarvestRun.objects.all().delete()


def _counts():
    return (
        Paper.objects.count(),
        Authorship.objects.count(),
        RawRecord.objects.count(),
    )


def test_harvest_hep_th_abs_files_with_version_history(abs_run):
    run = abs_run
    paper = Paper.objects.get(arxiv_id="hep-th/9709111")
    assert paper.latest_version == 3
    assert [v["version"] for v in paper.versions] == [1, 2, 3]
    assert paper.published == dt.date(1997, 9, 16)
    assert paper.updated == dt.date(1997, 11, 3)
    assert paper.categories == ["hep-th", "hep-ph"]
    assert paper.primary_category == "hep-th"
    assert paper.doi == "10.1088/1126-6708/1997/11/001"
    byline = list(paper.authorships.order_by("position"))
    assert [a.raw_name for a in byline] == [
        "Andrea Brignole",
        "Ferruccio Feruglio",
        "Fabio Zwirner",
    ]
    assert byline[0].affiliations == ["CERN-TH"]
    assert byline[0].block_key == "brignole a"
    assert run.status == "finished"
    assert run.records_failed == 2


def test_harvest_latex_accents_become_unicode(abs_run):
    assert Authorship.objects.filter(family_name="Paczyński").exists()
    assert not Authorship.objects.filter(raw_name__contains="\\").exists()


def test_harvest_collaboration_is_not_a_person(abs_run):
    paper = Paper.objects.get(arxiv_id="0808.4142")
    slots = list(paper.authorships.order_by("position"))
    assert [(a.raw_name, a.is_collaboration) for a in slots] == [
        ("D0 Collaboration", True),
        ("V. Abazov", False),
    ]
    assert slots[0].block_key == ""


def test_harvest_twice_changes_no_counts(abs_run, arxiv_dir):
    first = abs_run
    before = _counts()
    second = services.harvest_arxiv_files(root=arxiv_dir / "abs_files")
    assert _counts() == before
    assert second.papers_created == second.papers_updated == 0
    assert (
        second.papers_unchanged
        == first.papers_created + first.papers_updated + first.papers_unchanged
    )


def test_harvest_bad_files_are_recorded_and_the_rest_lands(abs_run):
    run = abs_run
    failed = {r.external_id: r.error for r in RawRecord.objects.filter(status="failed")}
    assert set(failed) == {
        "file:arxiv/abs_files/ftp/math-ph/papers/0509/0509037.abs",
        "1607.08199v5",
    }
    assert "empty" in failed["file:arxiv/abs_files/ftp/math-ph/papers/0509/0509037.abs"]
    assert (
        "arxiv/abs_files/ftp/arxiv/papers/1607/1607.08199.abs" in failed["1607.08199v5"]
    )
    assert "invalid UTF-8" in failed["1607.08199v5"]
    assert run.records_failed == 2
    assert run.files_skipped == [
        {
            "file": "arxiv/abs_files/reasons.json",
            "reason": "arxiv/abs_files/reasons.json: not a JSON array of recorded "
            "responses",
        }
    ]
    assert Paper.objects.count() > 1000
