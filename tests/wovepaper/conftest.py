"""Fixtures shared by the public-site tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def applied_corpus(arxiv_dir, django_capture_on_commit_callbacks):
    """Real arXiv records (Del Maestro's papers and co-authors), matched, every
    proposal applied (with what their commits queue: cache bumps, figures).

    Returns:
        The live researchers (a QuerySet).
    """
    from curation import services
    from curation.models import Proposal
    from harvest.services import harvest_arxiv_files
    from wovepaper.models import Researcher

    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    services.matching_run()
    with django_capture_on_commit_callbacks(execute=True):
        for p in Proposal.objects.filter(status="pending").order_by("id"):
            services.proposal_apply(proposal=p, actor=None)
    return Researcher.objects.live()
