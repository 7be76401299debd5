"""One read of a block's researchers: remembered profiles, conflicts, commits."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from curation import selectors, services
from curation.matching.features import full_given_key
from curation.models import Proposal
from tests.curation.test_matching_run import (
    ORCID,
    ORCID_B,
    _byline,
    _researcher_with,
    _two_orcid_researcher,
)
from tests.factories import UserFactory
from wovepaper.models import Researcher

pytestmark = pytest.mark.django_db

BLOCK = ["serre j"]


def _serre():
    rows = [
        _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))[0],
        _byline(("J.-P.", "Serre"), ("Armand", "Borel"))[0],
    ]
    return _researcher_with(rows), rows


def _profile(snapshot):
    (profile,) = snapshot.profiles["serre j"]
    return profile


def test_remembered_profiles_are_reused_until_a_curator_changes_the_researcher(
    django_assert_num_queries,
):
    r, rows = _serre()
    rarities = selectors.corpus_given_rarities()
    first = selectors.researcher_snapshot(BLOCK, rarities, remembered=True)
    assert _profile(first).paper_ids == {row.paper_id for row in rows}

    # Unchanged: one row read per researcher, nothing else.
    with django_assert_num_queries(1):
        again = selectors.researcher_snapshot(BLOCK, rarities, remembered=True)
    assert again.profiles == first.profiles

    # A curator attaches another paper: the revision moves, the profile is read anew.
    newer = _byline(("Jean-Pierre", "Serre"), ("Pierre", "Deligne"))[0]
    services.matching_run(block_keys=BLOCK)
    attach = Proposal.objects.get(kind="attach", authorships=newer)
    services.proposal_apply(proposal=attach, actor=UserFactory())
    r.refresh_from_db()

    after = _profile(selectors.researcher_snapshot(BLOCK, rarities, remembered=True))
    assert newer.paper_id in after.paper_ids
    assert "deligne|p" in after.coauthor_keys
    assert after.revision == r.revision > _profile(first).revision


def test_an_unremembered_or_new_rarity_read_builds_profiles_again(
    django_assert_num_queries,
):
    _serre()
    table = selectors.corpus_given_rarities()
    selectors.researcher_snapshot(BLOCK, table, remembered=True)
    # Researchers, their authorships, the co-author keys of their papers.
    with django_assert_num_queries(3):
        selectors.researcher_snapshot(BLOCK, table)
    _byline(("Jean-Pierre", "Serre"))  # the name grows commoner
    fresh = selectors.corpus_given_rarities()
    with django_assert_num_queries(3):
        snapshot = selectors.researcher_snapshot(BLOCK, fresh, remembered=True)
    key = full_given_key("Jean-Pierre")
    assert fresh[key] < table[key]
    assert _profile(snapshot).given_rarity == fresh[key]


def test_snapshot_orcid_conflicts_are_those_the_database_query_finds():
    r, _ = _two_orcid_researcher()
    _serre()  # one ORCID-less researcher in the same block: no conflict

    snapshot = selectors.researcher_snapshot(BLOCK, remembered=True)
    assert snapshot.orcid_conflicts == selectors.orcid_conflicts(BLOCK)
    (conflict,) = snapshot.orcid_conflicts
    assert conflict.researcher_id == r.pk
    assert set(conflict.by_orcid) == {ORCID, ORCID_B}

    services.matching_run(block_keys=BLOCK, merges=False)
    assert Proposal.objects.get(kind="split").researcher == r


def test_a_proposal_records_the_revisions_its_run_read():
    r, _ = _serre()
    r.revision = 7
    r.save()
    newer = _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))[0]
    services.matching_run(block_keys=BLOCK)
    attach = Proposal.objects.get(kind="attach", authorships=newer)
    assert attach.researcher_revisions == {str(r.pk): 7}


@pytest.mark.django_db(transaction=True)
def test_proposals_commit_asynchronously_and_the_connection_stays_synchronous():
    _serre()
    _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))
    with CaptureQueriesContext(connection) as ctx:
        services.matching_run(block_keys=BLOCK)
    assert Proposal.objects.filter(kind="attach").count() == 1
    assert any(
        q["sql"] == "SET LOCAL synchronous_commit TO OFF" for q in ctx.captured_queries
    )
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"


def test_a_reharvest_that_drops_or_enriches_an_assigned_authorship_is_seen(arxiv_dir):
    """The harvest deletes an assigned row whose name left the byline, or gives
    it an ORCID iD: the researcher's revision moves, so the remembered profile
    is read again (a stale one named a deleted authorship and failed the run)."""
    from dataclasses import replace

    from harvest.records import RawItem
    from harvest.services import files, upsert
    from harvest.sources.arxiv_abs import parse_abs
    from wovepaper.models import Authorship, Paper

    folder = arxiv_dir / "abs_files/ftp/arxiv/papers/0704"
    for n in ("0047", "0050", "0089", "0107"):
        files.harvest_arxiv_files(root=folder / f"0704.{n}.abs")
    rows = list(Authorship.objects.filter(family_name="Grabec").order_by("id"))
    block = [rows[0].block_key]
    r = _researcher_with(rows, display_name="I. Grabec", block_key=block[0])
    services.matching_run(block_keys=block)
    before = Researcher.objects.get(pk=r.pk).revision

    path = folder / "0704.0047.abs"
    record = parse_abs(RawItem("0704.0047", path.read_text(), str(path)))
    paper = Paper.objects.get(arxiv_id="0704.0047")
    others = tuple(a for a in record.authors if a.family_name != "Grabec")
    assert len(others) == len(record.authors) - 1
    upsert._byline_sync(paper=paper, authors=list(others))
    assert not Authorship.objects.filter(pk=rows[0].pk).exists()
    assert Researcher.objects.get(pk=r.pk).revision == before + 1

    services.matching_run(block_keys=block)  # no longer fails
    rarities = selectors.corpus_given_rarities(remembered=True)
    snapshot = selectors.researcher_snapshot(block, rarities, remembered=True)
    (profile,) = snapshot.profiles[block[0]]
    assert paper.pk not in profile.paper_ids

    grabec = next(a for a in record.authors if a.family_name == "Grabec")
    other = Paper.objects.get(arxiv_id="0704.0050")
    upsert._byline_enrich(paper=other, authors=[replace(grabec, orcid=ORCID_B)])
    assert Researcher.objects.get(pk=r.pk).revision == before + 2
    snapshot = selectors.researcher_snapshot(block, rarities, remembered=True)
    assert _profile_of(snapshot, block).orcid == ORCID_B


def _profile_of(snapshot, block):
    (profile,) = snapshot.profiles[block[0]]
    return profile


@pytest.mark.django_db(transaction=True)
def test_a_caller_with_autocommit_off_keeps_synchronous_commits():
    from django.db import transaction

    _serre()
    _byline(("Jean-Pierre", "Serre"), ("Armand", "Borel"))
    transaction.set_autocommit(False)
    try:
        services.matching_run(block_keys=BLOCK)
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "on"
        transaction.commit()
    finally:
        transaction.set_autocommit(True)
