"""The incremental matching run's PostgreSQL statements read what the ORM reads.

curation.selectors builds a run's snapshots from curation.matching_sql on
PostgreSQL and from the ORM elsewhere. Both paths run here on the same real
records: arXiv papers and an OpenAlex works page (source author ids,
institutions), matched; some proposals applied by a curator, one slot taken off its
researcher (a cannot-link), one paper hidden, new authorships left pending.
"""

from __future__ import annotations

import pytest

from curation import edits, matching_sql, selectors, services
from curation.models import Constraint, Proposal
from harvest.services import harvest_arxiv_files, harvest_files
from wovepaper.models import Authorship, Paper, Researcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def curated(arxiv_dir, curator):
    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    services.matching_run()
    pending = list(Proposal.objects.filter(status="pending").order_by("id"))
    for proposal in pending[: len(pending) // 2]:
        services.proposal_apply(proposal=proposal, actor=curator)
    # Later papers: their authorships meet the applied researchers.
    harvest_files(
        source="openalex", root=arxiv_dir.parent / "openalex" / "peneira_works_page"
    )
    services.matching_run()
    # A curator takes a slot off a researcher: a cannot-link.
    held = Authorship.objects.filter(researcher__isnull=False).order_by("id").first()
    edits.authorship_detach(authorship=held, actor=curator)
    Paper.objects.filter(pk=Paper.objects.order_by("-id").values("pk")[:1]).update(
        hidden=True
    )
    return sorted(set(Authorship.objects.values_list("block_key", flat=True)) - {""})


def _both(monkeypatch, read):
    """``read()`` through the written-out statements, then through the ORM."""
    assert matching_sql.enabled()
    written = read()
    monkeypatch.setattr(matching_sql, "enabled", lambda: False)
    orm = read()
    monkeypatch.undo()
    return written, orm


def test_snapshots_of_every_block_are_the_orms(curated, monkeypatch):
    rarities = selectors.corpus_given_rarities()
    assert Researcher.objects.live().exists()
    assert Constraint.objects.filter(kind="cannot_link", active=True).exists()
    blocks = curated

    written, orm = _both(
        monkeypatch, lambda: selectors.matchable_views(blocks, rarities)
    )
    assert written == orm
    views, held = written
    assert views  # unassigned authorships were read, with their co-authors
    assert any(v.coauthor_keys for v in views)
    assert any(v.categories for v in views)

    written, orm = _both(
        monkeypatch, lambda: selectors.researcher_snapshot(blocks, rarities)
    )
    assert written == orm
    assert sum(len(p) for p in written.profiles.values()) == (
        Researcher.objects.live().filter(authorships__isnull=False).distinct().count()
    )

    ids = list(Researcher.objects.values_list("pk", flat=True))
    written, orm = _both(monkeypatch, lambda: selectors.cannot_links(ids))
    assert written == orm
    assert written

    slots = list(Authorship.objects.order_by("id"))
    written, orm = _both(
        monkeypatch, lambda: selectors.authorship_views(slots, rarities)
    )
    assert written == orm
    assert any(v.source_ids for v in written)


def test_a_block_at_a_time_reads_only_that_block(curated, monkeypatch):
    rarities = selectors.corpus_given_rarities()
    for block in curated[:25]:
        written, orm = _both(
            monkeypatch,
            lambda block=block: selectors.matchable_views([block], rarities),
        )
        assert written == orm
        assert {v.block_key for v in written[0]} <= {block}
        snap, snap_orm = _both(
            monkeypatch,
            lambda block=block: selectors.researcher_snapshot(iter([block]), rarities),
        )
        assert snap == snap_orm
