"""The site, the admin and the API docs work under the Content-Security-Policy
(issue 48, item 7), in a real headless Chromium on real arXiv records: every page
sends the header, nothing on it is blocked, and what needs a script runs (the
co-author network, the curators' review keys, Swagger UI)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from curation import services
from curation.models import Proposal
from harvest.services import harvest_arxiv_files
from tests.browser.conftest import blocked
from wovepaper.models import Researcher

FEED = "arxivpy_2016_atom/search_query-au_del_maestro.xml"
USERNAME, PASSWORD = "curator-csp", "pw-csp-curator"


@pytest.fixture
def researcher(arxiv_dir: Path, db) -> Researcher:
    """Del Maestro's papers harvested and matched, the block's proposals left
    pending; the profile of the first applied one."""
    services.curator_ensure(username=USERNAME, password=PASSWORD)
    harvest_arxiv_files(root=arxiv_dir / FEED)
    services.matching_run()
    first = Proposal.objects.filter(block_key="maestro a").order_by("id").first()
    services.proposal_apply(proposal=first, actor=None)
    return Researcher.objects.live().get(block_key="maestro a")


def _visit(page: Page, url: str) -> None:
    answer = page.goto(url)
    policy = answer.headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy, url
    assert "frame-ancestors 'none'" in policy, url


@pytest.mark.django_db(transaction=True)
def test_site_admin_and_api_docs_run_under_the_policy(
    researcher: Researcher, page: Page, js_errors: list[str]
):
    for url in ("/", f"/researchers/{researcher.pk}", "/search/?q=maestro"):
        _visit(page, url)
        assert blocked(page) == [], url
    _visit(page, f"/researchers/{researcher.pk}")
    # network.js ran: it replaced the placeholder with the drawing.
    expect(page.locator("#coauthor-network")).not_to_contain_text("Loading")

    _visit(page, "/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("wovepaper API")
    expect(page.locator(".opblock").first).to_be_visible()
    assert blocked(page) == []

    _visit(page, "/admin/login/?next=/admin/")
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/admin/$"))
    assert blocked(page) == []
    _visit(page, "/admin/curation/proposal/?status__exact=pending")
    assert blocked(page) == []
    pending = Proposal.objects.filter(status="pending").order_by("id").first()
    _visit(page, f"/admin/curation/proposal/{pending.pk}/change/")
    assert blocked(page) == []
    # The review keys are a script file the policy lets run: "n" goes on to
    # the next pending item (its link carries data-key="n").
    expect(page.locator('[data-key="n"]')).to_have_count(1)
    page.locator("body").press("n")
    expect(page).not_to_have_url(re.compile(rf"/proposal/{pending.pk}/change/$"))
    assert js_errors == []
