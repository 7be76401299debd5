"""The curation admin shows a title's LaTeX as text, as the public pages do.

A real arXiv title, "Implications of right-handed neutrinos in $B-L$ extended
standard model" (1707.00874, recorded by hepcrawl's OAI-PMH fixtures), must read
"… in B-L extended …" on every page a curator decides from: the proposal, the
researcher with its papers, the move and "not this person" pages, the undo
preview and the paper list.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from curation import services
from curation.models import CurationEvent, Proposal
from harvest.services.files import harvest_arxiv_files
from wovepaper.models import Authorship, Paper

pytestmark = pytest.mark.django_db

SOURCE = "hepcrawl_oai/arxiv-physics-hep-ex.xml"
SHOWN = "Implications of right-handed neutrinos in B-L extended standard model"


@pytest.fixture
def b_l_paper(arxiv_dir: Path) -> Paper:
    """The real hep-ex records harvested and matched; the $B-L$ paper."""
    harvest_arxiv_files(root=arxiv_dir / SOURCE)
    services.matching_run()
    paper = Paper.objects.get(arxiv_id="1707.00874")
    assert "$B-L$" in paper.title  # the source markup is stored as harvested
    return paper


def _page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def _shows_text(html: str) -> None:
    assert SHOWN in " ".join(html.split())
    assert "$B-L$" not in html


def test_proposal_and_researcher_pages_show_latex_as_text(client, curator, b_l_paper):
    client.force_login(curator)
    authorship = Authorship.objects.filter(paper=b_l_paper).order_by("position")[0]
    proposal = Proposal.objects.get(authorships=authorship, status="pending")
    _shows_text(
        _page(client, reverse("admin:curation_proposal_change", args=[proposal.pk]))
    )

    services.proposal_apply(proposal=proposal, actor=curator)
    authorship.refresh_from_db()
    researcher = authorship.researcher
    assert researcher is not None
    _shows_text(
        _page(
            client, reverse("admin:wovepaper_researcher_change", args=[researcher.pk])
        )
    )
    for name in ("move", "detach"):
        url = reverse(
            f"admin:wovepaper_researcher_{name}", args=[researcher.pk, authorship.pk]
        )
        _shows_text(_page(client, url))
    event = CurationEvent.objects.latest("pk")  # the approval
    _shows_text(
        _page(client, reverse("admin:curation_curationevent_undo", args=[event.pk]))
    )


def test_paper_list_shows_latex_as_text(client, curator, b_l_paper):
    client.force_login(curator)
    html = _page(client, reverse("admin:wovepaper_paper_changelist") + "?q=1707.00874")
    _shows_text(html)
    change = _page(client, reverse("admin:wovepaper_paper_change", args=[b_l_paper.pk]))
    assert "$B-L$" in change  # the form edits the stored source itself
