"""The matcher's plain ``new`` decisions applied in bulk
(:mod:`curation.deciding.auto_apply_bulk`) write what applying them one at a time
writes, on real records, and leave every other case to the one-at-a-time path."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction

from curation import services
from curation.deciding import auto_apply, auto_apply_bulk
from curation.history import event_undo
from curation.models import CurationEvent, Proposal
from harvest.services import harvest_files
from tests.factories import AuthorshipFactory, ProposalFactory, ResearcherFactory
from wovepaper.models import Authorship, OutboxMessage, Researcher

DATA = Path(settings.WOVEPAPER_DATA_DIR)
SHIPPED_DEFAULT = str(auto_apply.DEFAULT_THRESHOLD)

pytestmark = pytest.mark.django_db


def _harvest() -> None:
    """arXiv records (a few collaboration papers among them) and an OpenAlex
    works page whose slots print ORCID iDs (left to the one-at-a-time path)."""
    harvest_files(source="arxiv", root=DATA / "arxiv" / "arxivpy_2016_atom")
    harvest_files(source="openalex", root=DATA / "openalex" / "peneira_works_page")


def _state() -> dict:
    """What a run wrote, with the ids that differ between two runs (of
    proposals, researchers founded, events) replaced by the proposal's
    authorship ids."""
    key = {
        p.pk: (p.kind, tuple(sorted(p.authorships.values_list("pk", flat=True))))
        for p in Proposal.objects.all()
    }
    founder = {
        p.researcher_id: key[p.pk]
        for p in Proposal.objects.filter(kind="new", status="applied")
    }
    by_event = {e.pk: key.get(e.proposal_id) for e in CurationEvent.objects.all()}

    def r(pk):
        return founder.get(pk, pk)

    return {
        "researchers": sorted(
            (
                r(x.pk),
                x.display_name,
                x.block_key,
                x.slug,
                x.name_variants,
                x.orcid,
                x.revision,
                x.retired,
                x.locked,
            )
            for x in Researcher.objects.all()
        ),
        "authorships": sorted(
            (a.pk, r(a.researcher_id)) for a in Authorship.objects.all()
        ),
        "proposals": sorted(
            (key[p.pk], p.status, p.decided_by_id, r(p.researcher_id), p.reason)
            for p in Proposal.objects.all()
        ),
        "events": sorted(
            (
                key.get(e.proposal_id),
                e.kind,
                e.actor_id,
                [r(x) for x in e.researchers],
                [{**m, "after": r(m["after"])} for m in e.moves],
                {str(r(int(pk))): f for pk, f in e.fields.items()},
                e.extra,
                e.constraints_on,
                e.constraints_off,
            )
            for e in CurationEvent.objects.all()
        ),
        "outbox": sorted(
            (
                m.task,
                sorted(r(x) for x in m.kwargs.get("researcher_ids", [])),
                by_event.get(m.kwargs.get("event_id")),
            )
            for m in OutboxMessage.objects.all()
        ),
    }


def test_both_paths_write_the_same(settings, monkeypatch):
    settings.CURATION_AUTO_APPLY = SHIPPED_DEFAULT
    _harvest()
    with transaction.atomic():
        with monkeypatch.context() as m:
            m.setattr(auto_apply_bulk, "apply_new", lambda ps, policy: ([], list(ps)))
            one_at_a_time = services.matching_run()
            by_one = _state()
        transaction.set_rollback(True)
    assert not Researcher.objects.exists()
    founded = []
    real = auto_apply_bulk.found_in_bulk

    def spy(foundings, **kwargs):
        founded.extend(foundings)
        return real(foundings, **kwargs)

    monkeypatch.setattr(auto_apply_bulk, "found_in_bulk", spy)
    in_bulk = services.matching_run()
    assert in_bulk == one_at_a_time
    assert _state() == by_one
    # Every plain one went in bulk; those printing an ORCID iD one at a time.
    applied = Proposal.objects.filter(status="applied").prefetch_related("authorships")
    plain = {
        p.pk
        for p in applied
        if not p.identifier_proven and not any(a.orcid for a in p.authorships.all())
    }
    assert {f.proposal.pk for f in founded} == plain
    assert 0 < len(plain) < len(applied)


def test_a_profile_founded_in_bulk_is_undone_like_any(curator, settings):
    settings.CURATION_AUTO_APPLY = SHIPPED_DEFAULT
    harvest_files(source="arxiv", root=DATA / "arxiv" / "arxivpy_2016_atom")
    services.matching_run()
    event = CurationEvent.objects.filter(
        kind="proposal_applied", extra__by="the matcher"
    ).latest("pk")
    researcher = Researcher.objects.get(pk=event.researchers[0])
    moved = [m["authorship"] for m in event.moves]
    assert set(researcher.authorships.values_list("pk", flat=True)) == set(moved)
    event_undo(event=event, actor=curator)
    researcher.refresh_from_db()
    assert researcher.retired
    assert not Authorship.objects.filter(pk__in=moved, researcher__isnull=False)
    assert Proposal.objects.get(pk=event.proposal_id).status == "reverted"


def _new(*authorships) -> Proposal:
    proposal = ProposalFactory(kind="new", score=1.0)
    proposal.authorships.set(authorships)
    return proposal


def test_only_plain_new_proposals_go_in_bulk():
    policy = auto_apply.policy(SHIPPED_DEFAULT)
    plain = _new(AuthorshipFactory(), AuthorshipFactory())
    shared = AuthorshipFactory()
    first, second = _new(shared), _new(shared, AuthorshipFactory())
    taken = _new(AuthorshipFactory(researcher=ResearcherFactory()))
    orcid = _new(AuthorshipFactory(orcid="0000-0002-1825-0097"))
    paper_twice = AuthorshipFactory()
    twice = _new(paper_twice, AuthorshipFactory(paper=paper_twice.paper, position=2))
    attach = ProposalFactory(researcher=ResearcherFactory(), score=1.0)
    attach.authorships.set([AuthorshipFactory()])
    empty = ProposalFactory(kind="new", score=1.0)
    order = [first, plain, taken, second, orcid, twice, attach, empty]
    applied, rest = auto_apply_bulk.apply_new(order, policy)
    assert applied == [plain]
    assert rest == [first, taken, second, orcid, twice, attach, empty]
    plain.refresh_from_db()
    assert plain.status == "applied"
    assert sorted(plain.researcher.authorships.values_list("pk", flat=True)) == sorted(
        plain.authorships.values_list("pk", flat=True)
    )
    for p in rest:
        p.refresh_from_db()
        assert p.status == "pending"


def test_a_chunk_of_founded_profiles_costs_a_few_statements(
    django_assert_max_num_queries,
):
    proposals = [_new(AuthorshipFactory()) for _ in range(200)]
    with django_assert_max_num_queries(12):
        applied, rest = auto_apply_bulk.apply_new(
            proposals, auto_apply.policy(SHIPPED_DEFAULT)
        )
    assert (len(applied), rest) == (200, [])
    assert Researcher.objects.live().count() == 200


def test_a_proposal_given_twice_founds_one_profile():
    """Hostile trial: it founded two, one of them live with no paper."""
    proposal = _new(AuthorshipFactory())
    applied, rest = auto_apply_bulk.apply_new(
        [proposal, proposal], auto_apply.policy(SHIPPED_DEFAULT)
    )
    assert (applied, rest) == ([proposal], [])
    assert Researcher.objects.count() == 1
