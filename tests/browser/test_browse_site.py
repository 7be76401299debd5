"""Browsing, a name search among namesakes, a profile's figures and a paper's
LaTeX, in a real headless Chromium.

On real arXiv records: the Del Maestro feeds, the two SDSS papers that print
"Jurek Krzesinski" and "Jurik Krzesinski", and LHCb's 2014 paper (2,831-slot
byline, maths in its title), matched with every proposal applied. Screenshots
go to ``var/screenshots/browse-*.png``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import transaction
from playwright.sync_api import Page, expect

from curation import services
from curation.changes import gathered
from curation.models import Proposal
from harvest.services import harvest_arxiv_files
from wovepaper.models import Paper, Researcher, ResearcherStats

PAPERS = "abs_files/ftp/arxiv/papers"
RECORDS = (
    f"{PAPERS}/0704/0704.0806.abs",  # SDSS: "Jurek Krzesinski"
    f"{PAPERS}/0704/0704.0789.abs",  # SDSS: "Jurik Krzesinski"
    f"{PAPERS}/1411/1411.4413.abs",  # LHCb: 2,831 authors, maths in the title
)


@pytest.fixture
def site(arxiv_dir: Path) -> None:
    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    for record in RECORDS:
        harvest_arxiv_files(root=arxiv_dir / record)
    services.matching_run()
    # One transaction, the caches dropped once (curation.changes.gathered), as
    # automation applies many: one by one, each of LHCb's 2,831 slots dropped
    # its 2,830 co-authors' caches (2 min 16 s of this fixture, now 29 s).
    with transaction.atomic(), gathered():
        for proposal in Proposal.objects.filter(status="pending").order_by("id"):
            services.proposal_apply(proposal=proposal, actor=None)


def test_browse_search_profile_and_latex(
    site, page: Page, js_errors: list[str], shots: Path
):
    # The header leads to the researchers, A to Z by family name.
    page.goto("/")
    page.get_by_role("navigation", name="Browse").get_by_role(
        "link", name="Researchers"
    ).click()
    expect(page).to_have_url("/researchers/")
    listed = ResearcherStats.objects.count()
    expect(page.locator("main > p.muted").first).to_contain_text(f"{listed:,} profiles")
    page.get_by_role("navigation", name="Family name A to Z").get_by_role(
        "link", name="K", exact=True
    ).click()
    under_k = ResearcherStats.objects.filter(letter="K").order_by(
        "sort_name", "researcher_id"
    )
    names = page.locator("ol.people a.person").all_text_contents()
    assert names == [s.researcher.display_name for s in under_k[:50]]
    expect(page.locator("nav.pager")).to_contain_text(
        f"Page 1 of {-(-under_k.count() // 50)}"
    )
    page.screenshot(path=str(shots / "browse-researchers-k.png"), full_page=True)

    # A name search picks the namesake whose name it is, then the other.
    page.locator("#site-q").fill("Jurik Krzesinski")
    page.locator("#site-q").press("Enter")
    people = page.locator("ol.researchers a.person")
    expect(people.first).to_have_text("Jurik Krzesinski")
    expect(people.nth(1)).to_have_text("Jurek Krzesinski")
    page.screenshot(path=str(shots / "browse-search-namesakes.png"), full_page=True)

    # The profile shows its figures and a chart with a bar a year.
    adrian = Researcher.objects.live().get(display_name="Adrian Del Maestro")
    stats = ResearcherStats.objects.get(researcher=adrian)
    page.goto(adrian.get_absolute_url())
    expect(page.locator("#figures")).to_contain_text(f"Papers{stats.paper_count}")
    bars = page.locator("#charts svg.year-chart.papers rect")
    expect(bars).to_have_count(stats.last_year - stats.first_year + 1)
    page.screenshot(path=str(shots / "browse-profile.png"), full_page=True)

    # The LHCb paper: KaTeX renders the title's maths; 50 authors, then all.
    lhcb = Paper.objects.get(arxiv_id="1411.4413")
    page.goto(lhcb.get_absolute_url())
    maths = page.locator("h1 span.math")
    expect(maths).to_have_class("math rendered")
    expect(maths.locator(".katex")).to_have_count(1)
    expect(page.locator("#authors > li")).to_have_count(50)
    total = lhcb.authorships.count()
    page.get_by_role("link", name=f"Show all {total} authors").click()
    expect(page.locator("#authors > li")).to_have_count(total)
    page.goto(lhcb.get_absolute_url())
    page.screenshot(path=str(shots / "browse-paper-latex.png"))

    # The category page lists its papers, newest first.
    page.goto(f"/categories/{lhcb.primary_category}/")
    expect(page.locator("ol.papers .paper-title").first).to_be_visible()
    assert not js_errors
