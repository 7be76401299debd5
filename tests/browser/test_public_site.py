"""A researcher's visit to the public site in a real headless Chromium, phone-sized.

On real arXiv records (the Del Maestro feeds) with every proposal applied: find a
researcher through search, open the profile, see the co-author network drawn,
filter the papers by a field, sign in and follow the researcher by keyboard. The
database is checked after each step, the page never scrolls sideways at 390 px,
and screenshots go to ``var/screenshots/public-*.png``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db.models import Count
from playwright.sync_api import Page, expect

from curation import services
from curation.models import Proposal
from harvest.services import harvest_arxiv_files
from wovepaper.models import Follow, Paper, Researcher

USERNAME, PASSWORD = "reader-browser", "pw-browser-reader"
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def viewport() -> dict:
    return PHONE


@pytest.fixture
def site(arxiv_dir: Path) -> Researcher:
    """Harvest the Del Maestro feeds, match, apply every proposal.

    Returns:
        The live researcher with the most papers who has curated co-authors.
    """
    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    services.matching_run()
    for proposal in Proposal.objects.filter(status="pending").order_by("id"):
        services.proposal_apply(proposal=proposal, actor=None)
    get_user_model().objects.create_user(USERNAME, password=PASSWORD)
    return (
        Researcher.objects.live()
        .annotate(n=Count("authorships", distinct=True))
        .filter(authorships__paper__authorships__researcher__isnull=False)
        .exclude(n__lt=2)
        .order_by("-n", "id")
        .first()
    )


def _fits_phone(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{page.url} scrolls sideways: {width}px"


def _tab_to(page: Page, selector: str, limit: int = 80) -> None:
    """Press Tab until ``selector`` has the keyboard focus (fails after ``limit``)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(
            "s => document.activeElement === document.querySelector(s)", selector
        ):
            return
    pytest.fail(f"{selector} cannot be reached with the keyboard")


@pytest.mark.django_db(transaction=True)
def test_reader_finds_filters_and_follows_a_researcher(
    site: Researcher, page: Page, shots: Path, js_errors: list[str]
):
    r = site
    family = r.display_name.split()[-1]

    # Search from the home page's search box.
    page.goto("/")
    _fits_phone(page)
    page.get_by_label("Search papers and researchers").fill(family)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/search/\?"))
    page.screenshot(path=shots / "public-01-search.png", full_page=True)
    _fits_phone(page)
    page.locator(f"a[href='{r.get_absolute_url()}']").first.click()
    page.wait_for_url(f"**{r.get_absolute_url()}")

    # The profile: name, paper count, and the network drawn from the JSON.
    expect(page.locator("h1")).to_have_text(r.display_name)
    count = Paper.objects.filter(authorships__researcher=r).count()
    expect(page.locator("main")).to_contain_text(f"{count} papers here")
    network = page.locator("#coauthor-network")
    expect(network).to_have_attribute("data-drawn", re.compile(r"^\d+$"))
    drawn = int(network.get_attribute("data-drawn"))
    assert drawn >= 2
    expect(network.locator("svg circle")).to_have_count(drawn)
    # The centre's label is its name alone; its title gives all its papers (a
    # co-author's count is of shared papers).
    centre = network.locator("a.node").first
    expect(centre.locator("text")).to_have_text(r.display_name)
    expect(centre.locator("title")).to_have_text(f"{r.display_name}: {count} papers")
    page.screenshot(path=shots / "public-02-researcher.png", full_page=True)
    _fits_phone(page)

    # Filter by a field: the list holds exactly the papers in it.
    chip = page.locator("aside .chips a").last
    category = re.match(r"(\S+) \(\d+\)", chip.inner_text()).group(1)
    chip.click()
    page.wait_for_url(re.compile(r"category="))
    in_field = sorted(
        p.get_absolute_url()
        for p in Paper.objects.filter(authorships__researcher=r)
        if category in p.categories
    )
    listed = page.locator("#paper-list .paper-title")
    expect(listed).to_have_count(len(in_field))
    assert sorted(listed.evaluate_all("els => els.map(e => e.pathname)")) == in_field
    page.screenshot(path=shots / "public-03-filtered.png", full_page=True)

    # Follow: sign in first (the button says so), come back, follow by keyboard.
    page.locator("#follow-button").click()
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(re.escape(r.get_absolute_url())))
    _tab_to(page, "#follow-button")
    page.keyboard.press("Enter")
    expect(page.locator("#follow-button")).to_have_attribute("aria-pressed", "true")
    assert Follow.objects.filter(user__username=USERNAME, researcher=r).count() == 1
    page.screenshot(path=shots / "public-04-followed.png", full_page=True)

    # The Following page lists the researcher and their papers.
    page.goto("/following/")
    expect(page.locator("aside")).to_contain_text(r.display_name)
    expect(page.locator(".papers .paper-title")).to_have_count(min(count, 24))
    _fits_phone(page)
    page.screenshot(path=shots / "public-05-following.png", full_page=True)
    assert js_errors == []


@pytest.mark.django_db(transaction=True)
def test_a_paper_numbers_its_authors_once(site: Researcher, page: Page, shots: Path):
    paper = Paper.objects.filter(authorships__researcher=site).order_by("id").first()
    page.goto(paper.get_absolute_url())
    first = page.locator("ol.byline li").first
    expect(first).to_contain_text(re.compile(r"^1\. \S"))
    # The position is printed; the list draws no number of its own beside it
    # ("1. 1. Maxim A. Yurkin" before).
    assert first.evaluate("li => getComputedStyle(li).listStyleType") == "none"
    page.screenshot(path=shots / "public-paper-byline.png", full_page=True)
