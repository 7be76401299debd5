"""A curator reviews a name block in a real headless Chromium (issue 47).

On the real arXiv records of "Adrian Del Maestro" / "A. Del Maestro": the
curator signs in, opens the queue of blocks from the proposals, then the
block's review page, moves two papers from one profile to the other, merges
the two profiles, then undoes the merge from its event. After each step the
database is checked and so is the public researcher page. Screenshots go to
``var/screenshots/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from curation import services
from curation.models import CurationEvent, Proposal
from harvest.services import harvest_arxiv_files
from wovepaper.models import Authorship, Researcher

FEED = "arxivpy_2016_atom/search_query-au_del_maestro.xml"
BLOCK = "maestro a"
USERNAME, PASSWORD = "curator-blocks", "pw-blocks-curator"


@pytest.fixture
def profiles(arxiv_dir: Path, db) -> tuple[Researcher, Researcher]:
    """The block's two profiles, more papers first (its two ``new``
    proposals approved by a curator)."""
    curator = services.curator_ensure(username=USERNAME, password=PASSWORD)
    run = harvest_arxiv_files(root=arxiv_dir / FEED)
    assert run.status == "finished"
    services.matching_run()
    for proposal in Proposal.objects.filter(block_key=BLOCK, status="pending"):
        services.proposal_apply(proposal=proposal, actor=curator)
    two = sorted(
        Researcher.objects.live().filter(block_key=BLOCK),
        key=lambda r: (-r.authorships.count(), r.pk),
    )
    assert len(two) == 2, "the real records give the block two profiles"
    assert two[1].authorships.count() >= 2
    return two[0], two[1]


def _arxiv_ids(researcher_id: int) -> set[str]:
    return set(
        Authorship.objects.filter(researcher_id=researcher_id).values_list(
            "paper__arxiv_id", flat=True
        )
    )


@pytest.mark.django_db(transaction=True)
def test_curator_reviews_a_block_moves_merges_and_undoes(
    profiles, page: Page, shots: Path, js_errors: list[str]
):
    big, small = profiles
    moving = list(
        Authorship.objects.filter(researcher=small)
        .order_by("pk")[:2]
        .values_list("pk", "paper__arxiv_id")
    )

    page.goto("/admin/login/?next=/admin/")
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/admin/$"))

    # From the queue to the block page.
    page.goto("/admin/curation/proposal/?status__exact=pending")
    page.get_by_role("link", name="Review by name block").click()
    expect(page.locator("#block-queue, #block-queue-empty")).to_have_count(1)
    page.goto(f"/admin/curation/proposal/blocks/{BLOCK.replace(' ', '%20')}/")
    dossiers = page.locator(".wp-dossier[data-researcher]")
    expect(dossiers).to_have_count(2)
    page.screenshot(path=shots / "block-01-review.png", full_page=True)

    # Move two of the smaller profile's papers to the bigger one.
    for pk, _ in moving:
        page.locator(f'select[name="move-{pk}"]').select_option(str(big.pk))
    page.get_by_role("button", name="Apply", exact=True).click()
    expect(page.locator("ul.messagelist li")).to_contain_text(
        f"Review of {BLOCK} applied: 2 change(s)"
    )
    assert {arxiv for _, arxiv in moving} <= _arxiv_ids(big.pk)
    public = page.context.new_page()
    public.goto(f"/researchers/{big.pk}")
    for _, arxiv in moving:
        expect(public.locator("#paper-list")).to_contain_text(arxiv)
    public.screenshot(path=shots / "block-02-public-after-move.png", full_page=True)
    page.screenshot(path=shots / "block-03-moved.png", full_page=True)

    # Merge the two profiles: both ticked "one person".
    for researcher in (big, small):
        page.locator(
            f'.wp-dossier[data-researcher="{researcher.pk}"] input[name="one-person"]'
        ).check()
    page.get_by_role("button", name="Apply", exact=True).click()
    expect(page.locator("ul.messagelist li")).to_contain_text("1 change(s)")
    survivor, gone = sorted([big.pk, small.pk])
    assert Researcher.objects.get(pk=gone).merged_into_id == survivor
    expect(page.locator(".wp-dossier[data-researcher]")).to_have_count(1)
    public.goto(f"/researchers/{gone}")
    expect(public).to_have_url(re.compile(rf"/researchers/{survivor}-"))
    public.screenshot(path=shots / "block-04-public-after-merge.png", full_page=True)

    # Undo the merge from its event.
    merged = CurationEvent.objects.get(kind=CurationEvent.Kind.MERGED)
    assert merged.batch is not None
    assert merged.batch.extra["review"] == BLOCK
    page.goto(f"/admin/curation/curationevent/{merged.pk}/undo/")
    page.screenshot(path=shots / "block-05-undo-confirm.png", full_page=True)
    page.get_by_role("button", name="Yes, undo it").click()
    expect(page.locator("ul.messagelist li")).to_contain_text(
        f"Undid event {merged.pk}"
    )
    assert Researcher.objects.get(pk=gone).merged_into_id is None
    public.goto(f"/researchers/{gone}")
    expect(public).to_have_url(re.compile(rf"/researchers/{gone}-"))
    # The moves stay: they were their own events.
    assert {arxiv for _, arxiv in moving} <= _arxiv_ids(big.pk)
    public.screenshot(path=shots / "block-06-public-after-undo.png", full_page=True)
    assert js_errors == []
