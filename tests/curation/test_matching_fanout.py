"""A matching run fanned out over block shards (run eagerly here) proposes what
the run in one process proposes, and holds each block's lock, not one lock."""

from __future__ import annotations

import json

import pytest
from celery.exceptions import Retry
from django.db import transaction
from django.test import override_settings

from curation import services
from curation.exceptions import MatchingBusy
from curation.matching_run.fanout import MATCHING_LOCK_KEY, _lock_key
from curation.models import Proposal
from curation.tasks import matching_run_task, matching_shard_task
from harvest.services import harvest_arxiv_files
from tests.factories import AuthorshipFactory, PaperFactory, ResearcherFactory
from tests.sessions import second_session
from wovepaper.models import Authorship, Researcher

pytestmark = pytest.mark.django_db

ORCID = "0000-0002-1825-0097"
OTHER_ORCID = "0000-0001-5109-3700"


def _paper_of(*people, categories=("cond-mat.str-el",)):
    """One paper of (given, family[, orcid]) authors; its authorships."""
    paper = PaperFactory(categories=list(categories), primary_category=categories[0])
    return [
        AuthorshipFactory(
            paper=paper,
            position=n,
            given_name=given,
            family_name=family,
            orcid=orcid[0] if orcid else "",
        )
        for n, (given, family, *orcid) in enumerate(people, start=1)
    ]


def _researcher(rows, **fields) -> Researcher:
    first = rows[0]
    researcher = ResearcherFactory(
        display_name=f"{first.given_name} {first.family_name}", **fields
    )
    researcher.block_key = first.block_key
    researcher.save()
    Authorship.objects.filter(pk__in=[r.pk for r in rows]).update(researcher=researcher)
    return researcher


@pytest.fixture
def corpus(arxiv_dir):
    """7,713 real arXiv authorships in 6,596 blocks, a third of the papers
    assigned to researchers (one per printed name, two for some names: merges),
    and hand-made cases whose blocks meet: a name printed in both orders (a
    merge across blocks, a visitor), one ORCID iD under two family names
    (unassigned, in two blocks), a researcher holding two iDs (a split),
    proposals an iD proves (applied by the run)."""
    harvest_arxiv_files(root=arxiv_dir / "abs_files")
    by_name: dict[tuple[str, str], list[Authorship]] = {}
    papers = sorted(set(Authorship.objects.values_list("paper_id", flat=True)))
    for row in (
        Authorship.objects.filter(paper_id__in=papers[::3], is_collaboration=False)
        .exclude(block_key="")
        .order_by("pk")
    ):
        by_name.setdefault((row.given_name, row.family_name), []).append(row)
    for n, rows in enumerate(by_name.values()):
        if n % 7 == 0 and len(rows) > 1:  # one person made two researchers
            _researcher(rows[: len(rows) // 2])
            _researcher(rows[len(rows) // 2 :])
        else:
            _researcher(rows)
    # "Zhang Ping" and "Ping Zhang", one person: two researchers in two blocks
    # sharing co-authors, and a "Zhang Ping" paper held by the "Ping Zhang" one.
    coauthors = [("Wei", "Liu"), ("Hong", "Tang")]
    _researcher(_paper_of(("Zhang", "Ping"), *coauthors))
    western = _researcher(
        _paper_of(("Ping", "Zhang"), *coauthors)[:1]
        + _paper_of(("Ping", "Zhang"), *coauthors)[:1]
    )
    Authorship.objects.filter(pk=_paper_of(("Zhang", "Ping"), *coauthors)[0].pk).update(
        researcher=western
    )
    _paper_of(("Zhang", "Ping"), *coauthors)
    _paper_of(("Ping", "Zhang"), *coauthors)
    # One iD, two family names, nobody holding it: two blocks' clusters.
    _paper_of(("Sofia", "Lindberg", ORCID), ("Karl", "Berg"))
    _paper_of(("Sofia", "Haddad", ORCID), ("Karl", "Berg"))
    # Proven by an iD: an attach to the researcher printing it, a new person.
    _researcher(_paper_of(("Jean-Pierre", "Serre", "0000-0003-1415-9269"))[:1])
    _paper_of(("J.-P.", "Serre", "0000-0003-1415-9269"), ("Armand", "Borel"))
    _paper_of(("Maryam", "Mirzakhani", "0000-0002-3141-5926"))
    # A researcher whose papers carry two iDs.
    _researcher(
        _paper_of(("Anna", "Kowalska", OTHER_ORCID))[:1]
        + _paper_of(("Anna", "Kowalska", "0000-0002-9079-593X"))[:1]
    )
    return Researcher.objects.order_by("-pk").values_list("pk", flat=True)[0]


def _state(last_researcher: int) -> tuple[list, list]:
    """Every proposal and every assignment, researchers made by the run named
    by their lowest authorship id (their ids differ from run to run)."""
    made: dict[int, str] = {}
    for rid, aid in Authorship.objects.filter(
        researcher_id__gt=last_researcher
    ).values_list("researcher_id", "pk"):
        made[rid] = min(made.get(rid, f"made:{aid:09d}"), f"made:{aid:09d}")

    def named(rid):
        return made.get(rid, rid) if rid is not None else None

    proposals = sorted(
        (
            p.kind,
            p.fingerprint,
            p.status,
            p.score,
            p.block_key,
            p.identifier_proven,
            p.model_version,
            named(p.researcher_id),
            named(p.other_researcher_id),
            json.dumps(p.evidence, sort_keys=True),
            sorted(a.pk for a in p.authorships.all()),
        )
        for p in Proposal.objects.prefetch_related("authorships")
    )
    assigned = sorted(
        (aid, named(rid))
        for aid, rid in Authorship.objects.values_list("pk", "researcher_id")
    )
    return proposals, assigned


@override_settings(CURATION_MATCHING_SHARDS=32)  # as with workers (1 eagerly)
def test_fanned_out_run_proposes_what_the_single_process_run_proposes(corpus):
    plan = services.matching_plan()
    assert len(plan.shards) == 32
    shard_of = {key: n for n, keys in enumerate(plan.shards) for key in keys}
    assert len(shard_of) == sum(len(keys) for keys in plan.shards)  # none twice
    # Blocks whose matching meets share a shard.
    assert shard_of["ping z"] == shard_of["zhang p"]
    assert shard_of["lindberg s"] == shard_of["haddad s"]

    with transaction.atomic():
        single_counts = services.matching_run()
        single = _state(corpus)
        transaction.set_rollback(True)
    assert _state(corpus)[0] == []

    fanned_counts = matching_run_task.delay().get()
    fanned = _state(corpus)

    kinds = {kind for kind, *_ in single[0]}
    assert kinds == {"attach", "new", "merge", "split"}
    assert single_counts["auto_applied"] > 0
    assert any("reading" in json.loads(p[9]) for p in single[0] if p[0] == "merge")
    assert fanned_counts == single_counts
    assert fanned[0] == single[0]
    assert fanned[1] == single[1]
    # Idempotent: the next fanned-out run proposes nothing new.
    again = matching_run_task.delay().get()
    assert not {k: v for k, v in again.items() if k.startswith("proposed_")}


@override_settings(CURATION_MATCHING_SHARDS=32)
def test_fanned_out_block_run_proposes_what_the_single_process_run_proposes(corpus):
    blocks = ["ping z", "zhang p", "lindberg s", "haddad s", "kowalska a"]
    blocks += sorted(
        set(
            Authorship.objects.filter(researcher=None).values_list(
                "block_key", flat=True
            )
        )
    )[:300]
    with transaction.atomic():
        single_counts = services.matching_run(block_keys=blocks, merges=False)
        single = _state(corpus)
        transaction.set_rollback(True)

    fanned_counts = matching_run_task.delay(block_keys=blocks, merges=False).get()

    assert fanned_counts == single_counts
    assert _state(corpus) == single
    assert single_counts["proposed_attach"] > 0


@pytest.fixture
def other_worker():
    """A second PostgreSQL session, as another worker holding block locks."""
    other = second_session(autocommit=True)
    yield other
    other.close()


def test_a_shard_whose_block_another_run_holds_is_retried_and_writes_nothing(
    other_worker,
):
    held = _paper_of(("Maryam", "Mirzakhani"))[0]
    free = _paper_of(("Alex", "Eskin"))[0]
    other_worker.execute("SELECT pg_advisory_lock(%s)", [_lock_key(held.block_key)])

    # Its shard asks to be retried later (eager here, so the Retry surfaces),
    # having written nothing; a shard of another block proceeds meanwhile.
    with pytest.raises(Retry, match="Retry in 30s: MatchingBusy"):
        matching_shard_task.apply(
            kwargs={"block_keys": [held.block_key], "full": False}
        )
    assert not Proposal.objects.filter(authorships=held).exists()
    counts = matching_shard_task.delay(block_keys=[free.block_key], full=False).get()
    assert counts["proposed_new"] == 1
    assert Proposal.objects.get(authorships=free).kind == "new"
    # A whole run over both retries too: the shard holding the busy block.
    with pytest.raises(Retry, match="MatchingBusy"):
        matching_run_task.apply(kwargs={"block_keys": [held.block_key, free.block_key]})
    assert not Proposal.objects.filter(authorships=held).exists()

    other_worker.execute("SELECT pg_advisory_unlock(%s)", [_lock_key(held.block_key)])
    counts = matching_run_task.delay(block_keys=[held.block_key, free.block_key]).get()
    # Run once: the free block's proposal stands, the held one's is made.
    assert counts.get("proposed_new") == 1
    assert Proposal.objects.filter(authorships=held).count() == 1
    assert Proposal.objects.filter(authorships=free).count() == 1


def test_block_locks_are_released_after_a_shard_and_after_a_refusal(other_worker):
    services.matching_shard(block_keys=["mirzakhani m"], full=False)
    other_worker.execute("SELECT pg_advisory_lock(%s)", [_lock_key("eskin a")])
    with pytest.raises(MatchingBusy, match="another matching run holds"):
        services.matching_shard(block_keys=["mirzakhani m", "eskin a"], full=False)

    # The other session takes what this one held (twice), and the lock of
    # every block at once: nothing stayed held here.
    for key in (_lock_key("mirzakhani m"), MATCHING_LOCK_KEY):
        (taken,) = other_worker.execute(
            "SELECT pg_try_advisory_lock(%s)", [key]
        ).fetchone()
        assert taken


def test_shards_keep_joined_blocks_together_and_deal_the_costliest_first():
    from curation.matching import blocking

    sizes = {"a": 10, "b": 1, "c": 1, "d": 6, "e": 5, "f": 1}
    cut = blocking.shards(
        sizes, [("b", "c"), ("c", "zz"), ("f", "zz")], cost=sizes.get, count=3
    )
    # b, c and f meet through zz (not a key): one group, dealt last (cost 3)
    # to the cheapest shard, e's (5); a (10), then 8, then d (6).
    assert cut == [["a"], ["b", "c", "e", "f"], ["d"]]
    assert blocking.shards(sizes, [], cost=sizes.get, count=1) == [sorted(sizes)]
    assert len(blocking.shards(sizes, [], cost=sizes.get, count=10)) == 6
