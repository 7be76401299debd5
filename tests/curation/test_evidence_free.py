"""Evidence-free authorships join the likeliest person of their printed name.

``pipeline.attach_evidence_free``: a mention printing a full name and nothing
else scores below the threshold against every cluster of that name, so it was
left a profile of one; it now joins the cluster holding most of that name's
mentions, when one holds at least half of them.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from html import unescape as html_unescape

import pytest
from django.conf import settings
from django.urls import reverse

from curation import services
from curation.exceptions import ProposalStale
from curation.matching import evaluation, labelled, pipeline, scoring, training
from curation.matching.features import AuthorshipView, profile_of
from curation.models import Constraint, Proposal
from curation.proposing import attach, saving
from wovepaper import profile
from wovepaper.models import Authorship

# Inputs built around the hand-set default weights' scores: the rules are
# under test here, not the model (tests/conftest.py, default_weights).
pytestmark = pytest.mark.usefixtures("default_weights")

# At the default weights two bare "Stefan Wagner" score 0.574 (name 3.0 and
# same_given 0.3 against the bias -3.0): below this threshold, the settings'
# default, so only the rule can join them; two at one institute score 0.91.
THRESHOLD = 0.6


def _wagner(start: int, n: int, words: set[str], *, given: str = "Stefan", **more):
    return [
        AuthorshipView(
            id=start + i,
            paper_id=start + i,
            given=given,
            family="Wagner",
            block_key="wagner s",
            affiliation_tokens=frozenset(words),
            **more,
        )
        for i in range(n)
    ]


def _clusters(views, **options) -> list[set[int]]:
    found = pipeline.cluster_authorships(views, threshold=THRESHOLD, **options)
    return [{m.id for m in c.members} for c in found]


def test_evidence_free_mentions_join_the_cluster_holding_most_of_their_name():
    linz = _wagner(0, 6, {"linz", "kepler"})
    munich = _wagner(100, 2, {"munchen"})
    bare = _wagner(200, 3, set())
    found = pipeline.cluster_authorships(bare + munich + linz, threshold=THRESHOLD)
    groups = [{m.id for m in c.members} for c in found]
    assert sorted(groups, key=min) == [
        set(range(6)) | {200, 201, 202},
        {100, 101},
    ]
    joined = next(c for c in found if 0 in {m.id for m in c.members})
    # Members keep the input order; the joins are recorded, saying the rule.
    assert [m.id for m in joined.members] == [200, 201, 202, 0, 1, 2, 3, 4, 5]
    ruled = [
        (s, side)
        for s, side in zip(joined.pair_scores, joined.pair_sides, strict=True)
        if s.evidence.get("rule")
    ]
    assert len(ruled) == 3
    for score, (inside, taken) in ruled:
        assert score.evidence["rule"] == pipeline.EVIDENCE_FREE_RULE
        assert score.pairwise_score < THRESHOLD
        assert set(inside) == set(range(6))
        assert len(taken) == 1
        assert taken[0] in {200, 201, 202}
    # Pairs its score joined say no rule.
    assert any("rule" not in s.evidence for s in joined.pair_scores)


@pytest.mark.parametrize(
    ("parts", "why"),
    [
        ([(4, {"linz"}), (4, {"munchen"})], "two people of equal share"),
        ([(4, {"linz"}), (3, {"munchen"}), (3, {"graz"})], "the biggest holds 4 of 10"),
    ],
)
def test_no_person_likelier_than_the_rest_leaves_them_alone(parts, why):
    views = []
    for n, (size, words) in enumerate(parts):
        views += _wagner(100 * n, size, words)
    views += _wagner(900, 2, set())
    groups = _clusters(views)
    assert {900} in groups, why
    assert {901} in groups, why


def test_initials_only_are_never_joined_by_the_rule():
    views = _wagner(0, 6, {"linz"}, given="S.") + _wagner(900, 1, set(), given="S.")
    # "S." and "S." at default weights: 0.27 apart from any affiliation.
    assert {900} in _clusters(views)


def test_fields_apart_one_paper_or_a_constraint_keep_the_mention_alone():
    linz = _wagner(0, 6, {"linz"}, categories=frozenset({"hep-ex"}))
    astro = _wagner(900, 1, set(), categories=frozenset({"astro-ph.GA"}))
    assert {900} in _clusters(linz + astro)
    on_a_linz_paper = [
        AuthorshipView(
            id=901, paper_id=0, given="Stefan", family="Wagner", block_key="wagner s"
        )
    ]
    assert {901} in _clusters(linz + on_a_linz_paper)
    # A curator said 902 is not 903 (two bare mentions): their clusters are
    # the curator's to place, not the rule's; untied, both join.
    linz = _wagner(0, 6, {"linz"})
    bare = _wagner(902, 2, set())
    assert {902} not in _clusters(linz + bare)
    assert {903} not in _clusters(linz + bare)
    tied = pipeline.Constraints.of(cannot_link=[(902, 903)])
    groups = _clusters(linz + bare, constraints=tied)
    assert {902} in groups
    assert {903} in groups


def test_clusters_carrying_evidence_are_left_as_they_were():
    linz = _wagner(0, 6, {"linz"})
    munich = _wagner(100, 2, {"munchen"})
    found = pipeline.cluster_authorships(linz + munich, threshold=THRESHOLD)
    scored = pipeline._cluster_scored(
        linz + munich,
        threshold=THRESHOLD,
        weights=scoring.DEFAULT,
        constraints=pipeline.NO_CONSTRAINTS,
    )
    assert [sorted(m.id for m in c.members) for c in found] == [
        sorted(m.id for m in c.members) for c in scored
    ]
    assert [len(c.pair_scores) for c in found] == [len(c.pair_scores) for c in scored]


def test_two_slots_of_one_paper_never_join_one_holder():
    # Namesakes on a hyperauthored byline carry no co-authors: two bare
    # "Stefan Wagner" of one paper are evidence-free, and neither may join.
    linz = _wagner(0, 6, {"linz"})
    one_paper = _wagner(100, 2, set())
    one_paper = [replace(v, paper_id=500) for v in one_paper]
    other = _wagner(200, 1, set())
    groups = _clusters(linz + one_paper + other)
    assert {100} in groups
    assert {101} in groups
    assert set(range(6)) | {200} in groups


def test_the_share_counts_every_holder_of_the_name_even_one_forbidden():
    # The likeliest person (10 of 12 mentions) is in another field: the
    # mention is not given to the next one, which holds 2 of 12.
    astro = _wagner(0, 10, {"munchen"}, categories=frozenset({"astro-ph.GA"}))
    linz = _wagner(100, 2, {"linz"})
    bare = _wagner(900, 1, set(), categories=frozenset({"hep-ex"}))
    groups = _clusters(astro + linz + bare)
    assert {900} in groups
    assert set(range(100, 102)) in groups
    # The same when the likeliest shares its paper.
    on_a_munich_paper = [replace(bare[0], paper_id=0, categories=frozenset())]
    assert {900} in _clusters(astro + linz + on_a_munich_paper)


def test_a_researcher_holding_most_of_the_name_takes_it_from_no_cluster():
    # Incremental matching clusters what no researcher took: a researcher of
    # four "Stefan Wagner" mentions is the likeliest person of a bare mention,
    # not the single Graz mention beside it; the bare one stays alone (the
    # attach step scored it against the researcher already).
    researcher = profile_of(_wagner(0, 4, {"linz"}), id=7)
    graz = _wagner(100, 1, {"graz"})
    bare = _wagner(900, 1, set())
    assert {100, 900} in _clusters(graz + bare)
    found = pipeline.cluster_authorships(
        graz + bare, threshold=THRESHOLD, researchers=[researcher]
    )
    assert sorted(sorted(m.id for m in c.members) for c in found) == [[100], [900]]
    # A researcher holding a smaller share leaves the rule to the clusters.
    small = profile_of(_wagner(0, 1, {"linz"}), id=8)
    found = pipeline.cluster_authorships(
        _wagner(100, 3, {"graz"}) + bare, threshold=THRESHOLD, researchers=[small]
    )
    assert {100, 101, 102, 900} in [{m.id for m in c.members} for c in found]


def test_only_the_same_family_name_holds_the_name():
    # "Jan van der Velde" and a bare "Jan Velde" share a block key's family
    # word and the given name, not the family name.
    def velde(start, n, family, words):
        return [
            AuthorshipView(
                id=start + i,
                paper_id=start + i,
                given="Jan",
                family=family,
                block_key="velde j",
                affiliation_tokens=frozenset(words),
            )
            for i in range(n)
        ]

    views = velde(0, 6, "van der Velde", {"leiden"}) + velde(900, 1, "Velde", set())
    assert {900} in _clusters(views)
    views = velde(0, 6, "van der Velde", {"leiden"}) + velde(
        900, 1, "van der Velde", set()
    )
    assert {900} not in _clusters(views)


def test_the_grouping_does_not_depend_on_the_input_order():
    linz = _wagner(0, 6, {"linz"})
    munich = _wagner(100, 2, {"munchen"})
    bare = _wagner(200, 4, set())
    views = bare + munich + linz
    expected = sorted(sorted(g) for g in _clusters(views))
    for seed in range(5):
        shuffled = list(views)
        random.Random(seed).shuffle(shuffled)
        assert sorted(sorted(g) for g in _clusters(shuffled)) == expected


@pytest.fixture(scope="module")
def qian():
    return labelled.load(settings.WOVEPAPER_DATA_DIR / "and/s2and/qian_partial")


def test_real_qian_stefan_wagner_mentions_printing_no_affiliation_meet_his_profile(
    qian,
):
    # S2AND's Qian block "wagner s": 34 mentions, 32 of one person, most of
    # them with no affiliation; scored by a model trained on the other blocks
    # (none of his mentions), as evaluate_matching's folds score it.
    block = [v for v in qian.views if v.block_key == "wagner s"]
    gold = {v.id: qian.gold[v.id] for v in block}
    person, mentions = Counter(gold.values()).most_common(1)[0]
    assert (len(block), mentions) == (34, 32)
    assert sum(pipeline.evidence_free(v) for v in block) >= 20
    weights = training.fit(
        training.labelled_pairs(
            [v for v in qian.views if v.block_key != "wagner s"], qian.gold
        ),
        version="test",
    )
    scored = pipeline._cluster_scored(
        block, threshold=0.4, weights=weights, constraints=pipeline.NO_CONSTRAINTS
    )
    found = pipeline.cluster_authorships(block, threshold=0.4, weights=weights)

    def largest_share(clusters):
        return max(sum(gold[m.id] == person for m in c.members) for c in clusters)

    # Before the rule his 32 mentions were spread over 20 or more profiles.
    assert len(scored) >= 20
    assert largest_share(scored) <= 10
    assert largest_share(found) >= 30
    b3 = lambda clusters: evaluation.b_cubed(  # noqa: E731
        {m.id: n for n, c in enumerate(clusters) for m in c.members}, gold
    )
    assert b3(found).f1 > 0.9 > 0.2 > b3(scored).f1


def test_a_mention_a_researcher_likely_holds_says_so():
    # The researcher holds 4 of the 5 mentions of the name that carry
    # evidence: the bare mention is left alone, marked with who holds the
    # name (the proposal's hint).
    researcher = profile_of(_wagner(0, 4, {"linz"}), id=7)
    graz = _wagner(100, 1, {"graz"})
    bare = _wagner(900, 1, set())
    found = pipeline.cluster_authorships(
        graz + bare, threshold=THRESHOLD, researchers=[researcher]
    )
    marks = {tuple(m.id for m in c.members): c.likeliest for c in found}
    assert marks == {(100,): None, (900,): (7, 4, 5)}
    # A researcher of another field is no likeliest person.
    astro = profile_of(
        _wagner(0, 4, {"linz"}, categories=frozenset({"astro-ph.GA"})), id=7
    )
    hep = [replace(bare[0], categories=frozenset({"hep-ex"}))]
    found = pipeline.cluster_authorships(
        graz + hep, threshold=THRESHOLD, researchers=[astro]
    )
    assert all(c.likeliest is None for c in found)


@pytest.fixture
def late_paper(arxiv_dir, settings, tmp_path):
    """Adrian Del Maestro's profile curated from the real 2016 feeds, then his
    single-author 1201.4869 harvested (it scores 0.65 against the profile),
    under an attach threshold of 0.7 that its score falls short of."""
    from harvest.services import harvest_arxiv_files
    from tests.wovepaper.test_feeds import LATE_PAPER, _without_late_paper

    feeds = arxiv_dir / "arxivpy_2016_atom"
    harvest_arxiv_files(root=_without_late_paper(feeds, tmp_path))
    services.matching_run()
    biggest = max(
        Proposal.objects.filter(status="pending", kind="new"),
        key=lambda p: p.evidence["members"],
    )
    researcher = services.proposal_apply(proposal=biggest, actor=None).researcher
    assert researcher.authorships.count() == 7
    harvest_arxiv_files(root=feeds)
    settings.CURATION_ATTACH_THRESHOLD = 0.7
    late = Authorship.objects.get(paper__arxiv_id=LATE_PAPER)
    return researcher, late


@pytest.mark.django_db
def test_a_late_bare_paper_below_the_attach_threshold_is_proposed_by_the_rule(
    client, curator, late_paper
):
    # Harvested with the rest it joined his cluster by the rule; harvested
    # after his profile, the same rule proposes it to him.
    researcher, late = late_paper
    services.matching_run()

    (attach,) = Proposal.objects.filter(status="pending", authorships=late)
    assert (attach.kind, attach.researcher_id) == ("attach", researcher.pk)
    assert attach.score < 0.7
    assert attach.evidence["rule"] == pipeline.EVIDENCE_FREE_ATTACH_RULE
    assert attach.evidence["likeliest"] == {
        "researcher": researcher.pk,
        "holds": 7,
        "of": 7,
    }
    client.force_login(curator)
    url = reverse("admin:curation_proposal_change", args=[attach.pk])
    page = html_unescape(client.get(url).content.decode())
    assert (
        "Proposed by a rule, its score having fallen short of the attach "
        "threshold of the run that proposed it: "
        f"{pipeline.EVIDENCE_FREE_ATTACH_RULE} (they held 7 of the 7 mentions"
        in " ".join(page.replace("<strong>", "").replace("</strong>", "").split())
    )
    # A second run proposes nothing new; a model switch leaves it pending.
    assert services.matching_run().get("proposed_attach", 0) == 0
    assert (
        saving.stale_below_model(scoring.Weights("another", -3.0, scoring.WEIGHTS)) == 0
    )
    services.proposal_apply(proposal=attach, actor=curator)
    row = next(
        row
        for row in profile.researcher_papers_page(researcher)["papers"]
        if row["own_authorship"] == late.pk
    )
    # The public page says a curator approved it (the rule is the curators').
    assert row["why"].startswith("A curator approved the match on ")


@pytest.mark.django_db
def test_a_rejected_rule_attach_is_neither_proposed_again_nor_named(
    curator, late_paper
):
    # The curator rejects the rule's attach (a cannot-link of the paper and
    # him): the next run proposes the paper on its own, naming no one.
    researcher, late = late_paper
    services.matching_run()
    (attach,) = Proposal.objects.filter(status="pending", authorships=late)
    services.proposal_reject(proposal=attach, actor=curator)
    assert Constraint.objects.filter(
        kind=Constraint.Kind.CANNOT_LINK, researcher=researcher, authorship=late
    ).exists()

    services.matching_run()

    (again,) = Proposal.objects.filter(status="pending", authorships=late)
    assert again.kind == "new"
    assert "likeliest" not in again.evidence


def test_the_rule_names_the_likeliest_researcher_when_it_cannot_propose_to_them():
    # _propose_block on plain views: the researcher (id 7) holds 4 of the 5
    # "Stefan Wagner" mentions carrying evidence. A bare one is proposed to
    # him by the rule, unless another slot of its paper is pending for him:
    # then it is proposed on its own, naming him.
    researcher = profile_of(_wagner(0, 4, {"linz"}), id=7)
    graz = _wagner(100, 1, {"graz"})
    bare = _wagner(900, 1, set())
    weights = scoring.Weights("test", -3.0, scoring.WEIGHTS, 0.6)

    drafts = attach._propose_block(
        "wagner s", graz + bare, [researcher], set(), weights
    )
    by_kind = {(d.kind, tuple(d.authorship_ids)): d for d in drafts}
    ruled = by_kind["attach", (900,)]
    assert ruled.researcher_id == 7
    assert ruled.score < 0.6
    assert ruled.evidence["rule"] == pipeline.EVIDENCE_FREE_ATTACH_RULE
    assert ("new", (100,)) in by_kind

    drafts = attach._propose_block(
        "wagner s",
        graz + bare,
        [researcher],
        set(),
        weights,
        taken=frozenset({(900, 7)}),
    )
    by_kind = {(d.kind, tuple(d.authorship_ids)): d for d in drafts}
    alone = by_kind["new", (900,)]
    assert alone.evidence["likeliest"] == {"researcher": 7, "holds": 4, "of": 5}
    assert "likeliest" not in by_kind["new", (100,)].evidence


@pytest.mark.django_db
def test_a_new_proposal_page_names_its_likeliest_researcher(client, curator):
    from tests.factories import AuthorshipFactory, ResearcherFactory

    researcher = ResearcherFactory()
    proposal = Proposal.objects.create(
        kind="new",
        score=1.0,
        evidence={
            "cohesion": 1.0,
            "members": 1,
            "pairs": [],
            "likeliest": {"researcher": researcher.pk, "holds": 4, "of": 5},
        },
        fingerprint="likeliest-page",
    )
    authorship = AuthorshipFactory()
    proposal.authorships.add(authorship)
    client.force_login(curator)
    page = client.get(
        reverse("admin:curation_proposal_change", args=[proposal.pk])
    ).content.decode()
    assert (
        f'<a href="/admin/wovepaper/researcher/{researcher.pk}/change/">researcher '
        f"#{researcher.pk}</a> held 4 of the 5 mentions of that name" in page
    )
    assert reverse("admin:wovepaper_researcher_assign", args=[authorship.pk]) in page


def test_two_bare_slots_of_one_paper_are_neither_proposed_nor_marked():
    # A hyperauthored byline printing "Stefan Wagner" twice: neither slot is
    # his by the rule, whichever comes first.
    researcher = profile_of(_wagner(0, 4, {"linz"}), id=7)
    graz = _wagner(100, 1, {"graz"})
    twice = [replace(v, paper_id=500) for v in _wagner(900, 2, set())]
    weights = scoring.Weights("test", -3.0, scoring.WEIGHTS, 0.6)
    for slots in (twice, twice[::-1]):
        drafts = attach._propose_block(
            "wagner s", graz + slots, [researcher], set(), weights
        )
        assert [d.kind for d in drafts] == ["new"] * 3
        assert not any("likeliest" in d.evidence for d in drafts)


@pytest.mark.django_db
def test_a_rule_attach_whose_researcher_lost_papers_no_longer_fits(curator, late_paper):
    # Proposed while he held all 7 of his name's papers; a split takes 5 of
    # them: the rule's premise is gone, and approving makes it stale.
    from curation import edits

    researcher, late = late_paper
    services.matching_run()
    (attach,) = Proposal.objects.filter(status="pending", authorships=late)
    assert services.proposal_no_longer_fits(attach) == ""
    moving = list(researcher.authorships.order_by("pk").values_list("pk", flat=True))
    edits.researcher_split(
        researcher=researcher, authorship_ids=moving[:5], actor=curator
    )

    said = f"researcher {researcher.pk} holds 2 authorships, 7 when the rule " + (
        "proposed it as holding most of the name"
    )
    assert services.proposal_no_longer_fits(attach) == said
    with pytest.raises(ProposalStale, match=said):
        services.proposal_apply(proposal=attach, actor=curator)
    attach.refresh_from_db()
    assert attach.status == "stale"
    late.refresh_from_db()
    assert late.researcher_id is None
