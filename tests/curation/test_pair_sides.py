"""A proposed cluster records which authorships each of its joined pairs is
between, and a `new` proposal shows its weakest pairs by name.

On the real INSPIRE "Wang" block ``wang z`` (more than pipeline.CHUNK
mentions, so clustered in chunks and then merged as profiles).
"""

from __future__ import annotations

from html import escape as html_escape
from html import unescape as html_unescape

import pytest
from django.conf import settings
from django.urls import reverse
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from curation import selectors, services
from curation.admin.proposals import _between, _cluster_evidence
from curation.matching import labelled, pipeline, scoring
from curation.models import Proposal
from curation.proposing import drafts
from wovepaper import profile
from wovepaper.models import Researcher
from wovepaper.profile import feature_words

# Inputs built around the hand-set default weights' scores: the rules are
# under test here, not the model (tests/conftest.py, default_weights).
pytestmark = pytest.mark.usefixtures("default_weights")


def _clusters() -> list[pipeline.Cluster]:
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang")
    block = [v for v in data.views if v.block_key == "wang z"][:400]
    assert len(block) > 4 * pipeline.CHUNK
    return pipeline.cluster_authorships(block, threshold=0.4)


def test_each_joined_pair_names_two_disjoint_sides_that_hold_the_whole_cluster():
    clusters = _clusters()
    merged_parts = 0
    for cluster in clusters:
        ids = [m.id for m in cluster.members]
        index = {i: n for n, i in enumerate(ids)}
        assert len(cluster.pair_sides) == len(cluster.pair_scores)
        rows, cols = [], []
        for left, right in cluster.pair_sides:
            assert set(left) | set(right) <= set(ids)
            assert not set(left) & set(right)
            merged_parts += len(left) > 1 or len(right) > 1
            rows.append(index[left[0]])
            cols.append(index[right[0]])
            for side in (left, right):  # a part's members were joined before
                rows += [index[side[0]]] * (len(side) - 1)
                cols += [index[i] for i in side[1:]]
        # The joins explain the cluster: they connect every member.
        graph = coo_matrix(([1] * len(rows), (rows, cols)), shape=(len(ids),) * 2)
        assert connected_components(graph, directed=False)[0] == 1
    assert merged_parts > 0  # chunk clusters were joined as profiles


def test_a_new_proposal_records_its_strongest_pair_then_its_weakest_lowest_first():
    cluster = max(_clusters(), key=lambda c: len(c.pair_scores))
    assert len(cluster.pair_scores) > services.PAIRS_RECORDED
    recorded = drafts.recorded_pairs(cluster)
    assert len(recorded) == services.PAIRS_RECORDED
    # Each record's score, from its own evidence, as the proposal page reads it.
    scores = [
        scoring.sigmoid(r["bias"] + sum(r["contributions"].values())) for r in recorded
    ]
    every = sorted(s.pairwise_score for s in cluster.pair_scores)
    assert scores[0] == pytest.approx(every[-1], abs=1e-3)
    assert scores[1:] == sorted(scores[1:])
    assert scores[1:] == pytest.approx(every[: services.PAIRS_RECORDED - 1], abs=1e-3)
    sides = {
        (tuple(left), tuple(right)): s.pairwise_score
        for s, (left, right) in zip(
            cluster.pair_scores, cluster.pair_sides, strict=True
        )
    }
    for record, score in zip(recorded, scores, strict=True):
        left, right = record["between"]
        assert sides[tuple(left), tuple(right)] == pytest.approx(score, abs=1e-3)


@pytest.mark.django_db
def test_the_proposal_page_labels_the_strongest_and_the_weak_pairs():
    cluster = max(_clusters(), key=lambda c: len(c.pair_scores))
    recorded = drafts.recorded_pairs(cluster)
    # Its authorships are not in the database: each side says so by id.
    proposal = Proposal.objects.create(
        kind="new",
        score=round(cluster.cohesion, 6),
        evidence={"cohesion": 0.5, "members": len(cluster.members), "pairs": recorded},
        model_version=scoring.MODEL_VERSION,
        fingerprint="test-ranked",
    )
    html = str(_cluster_evidence(proposal))
    assert f"over {len(cluster.members)} authorships" in html
    assert f"lowest score first ({services.PAIRS_RECORDED} pairs recorded)." in html
    # Average linkage: a joined pair may score below the threshold.
    assert "so one pair may score below it:" in html
    assert html.count("<p>strongest pair, score ") == 1
    assert html.count("<p>weakest pair, score ") == 1
    assert "<p>2nd weakest pair, score " in html
    assert f"<p>{services.PAIRS_RECORDED - 1}th weakest pair, score " in html
    left = recorded[0]["between"][0][0]
    assert f"authorship #{left} (no longer on the proposal)" in html
    assert "0.3333333" not in html  # raw values shown to 3 places


@pytest.mark.django_db
def test_one_authorship_says_no_pairs_and_no_plural():
    proposal = Proposal.objects.create(
        kind="new",
        score=1.0,
        evidence={"cohesion": 1.0, "members": 1},
        model_version=scoring.MODEL_VERSION,
        fingerprint="test-one",
    )
    html = str(_cluster_evidence(proposal))
    assert "over 1 authorship:" in html
    assert "pairs recorded" not in html
    assert "pair recorded" not in html


def test_a_side_of_many_authorships_is_named_by_its_first_three():
    printed = {
        1: "Z. Wang on 1101.0001",
        2: "Z. Wang on 1101.0002",
        3: "Zheng Wang on x",
    }
    assert _between([[1], [2]], printed) == (
        ", between Z. Wang on 1101.0001 and Z. Wang on 1101.0002"
    )
    assert _between([[1, 2, 3, 4, 5], [9]], printed) == (
        ", between 5 authorships (Z. Wang on 1101.0001; Z. Wang on 1101.0002; "
        "Zheng Wang on x; and 2 more) and authorship #9 (no longer on the proposal)"
    )


def test_evidence_without_sides_or_edited_into_another_shape_names_none():
    for sides in (
        None,
        [],
        [[1]],
        [[1], []],
        [[1], ["2"]],
        [[True], [2]],
        "1,2",
        [[1], 2],
    ):
        assert _between(sides, {1: "x", 2: "y"}) == ""


@pytest.fixture
def del_maestro(arxiv_dir, db):
    """Del Maestro's real arXiv papers (2016 Atom feeds) harvested and matched:
    the `new` proposal of the most papers (pending) and its recorded pairs."""
    from harvest.services import harvest_arxiv_files

    harvest_arxiv_files(root=arxiv_dir / "arxivpy_2016_atom")
    services.matching_run()
    proposal = max(
        Proposal.objects.filter(kind="new", status="pending"),
        key=lambda p: p.evidence["members"],
    )
    return proposal, proposal.evidence["pairs"]


def _review_page(client, curator, proposal) -> str:
    """The proposal's admin review page as a curator reads it, whitespace
    collapsed."""
    client.force_login(curator)
    url = reverse("admin:curation_proposal_change", args=[proposal.pk])
    return " ".join(client.get(url).content.decode().split())


def _strength(pair: dict) -> float:
    return sum(c for c in pair["contributions"].values() if c > 0)


def test_the_public_page_explains_each_paper_by_the_strongest_pair_holding_it(
    client, del_maestro
):
    # The researcher page's "Why is this paper here?" says what joined this
    # paper most surely (its strongest recorded pair), not what joined two
    # other papers of the cluster.
    proposal, pairs = del_maestro
    assert len(pairs) > 2
    scores = [
        scoring.sigmoid(p["bias"] + sum(p["contributions"].values())) for p in pairs
    ]
    assert scores[0] == max(scores)
    assert scores[1] < scores[0]
    services.proposal_apply(proposal=proposal, actor=None)
    researcher = Researcher.objects.get(authorships__in=proposal.authorships.all()[:1])
    page = client.get(researcher.get_absolute_url()).content.decode()
    rows = {
        row["own_authorship"]: row
        for row in profile.researcher_papers_page(researcher)["papers"]
    }
    said = set()
    for authorship in proposal.authorships.all():
        holding = [p for p in pairs if any(authorship.pk in s for s in p["between"])]
        assert holding, authorship.pk
        own = max(holding, key=_strength)
        words = feature_words(own["features"], own["contributions"])
        if "rule" in own:
            # Below the threshold: the rule joined it, and the page says so.
            words = f"a rule after clustering left it apart ({own['rule']}); {words}"
        said.add(words)
        assert (
            f"started a new one, joined by {words} (score" in rows[authorship.pk]["why"]
        )
        assert f"joined by {html_escape(words)}" in page
    # The papers of one profile are not all explained by one pair.
    assert len(said) > 1


def test_a_paper_no_recorded_pair_holds_is_told_the_strongest_link_as_that(
    del_maestro,
):
    # A proposal records at most 20 of a cluster's pairs: a paper in none of
    # them is not told another pair's words as its own.
    proposal, pairs = del_maestro
    services.proposal_apply(proposal=proposal, actor=None)
    authorship = proposal.authorships.order_by("pk").first()
    kept = [p for p in pairs if not any(authorship.pk in s for s in p["between"])]
    assert 0 < len(kept) < len(pairs)
    Proposal.objects.filter(pk=proposal.pk).update(
        evidence={**proposal.evidence, "pairs": kept}
    )
    researcher = Researcher.objects.get(authorships=authorship)
    row = next(
        row
        for row in profile.researcher_papers_page(researcher)["papers"]
        if row["own_authorship"] == authorship.pk
    )
    first = max(kept[: profile.NEW_PAIRS_READ], key=_strength)
    words = feature_words(first["features"], first["contributions"])
    assert f"started a new one, the strongest link among them: {words} (" in row["why"]
    assert "joined by" not in row["why"]


def test_a_single_author_paper_printing_nothing_else_joins_its_namesake_saying_why(
    client, curator, del_maestro
):
    # arXiv 1201.4869 is Adrian Del Maestro's alone, with no affiliation: its
    # pair features are his name's only, below the threshold against each of
    # his papers. It joins the one cluster of his name
    # (pipeline.attach_evidence_free), and the proposal page says so.
    proposal, pairs = del_maestro
    alone = proposal.authorships.get(paper__arxiv_id="1201.4869")
    assert alone.paper.authorships.count() == 1
    ruled = [p for p in pairs if p.get("rule")]
    assert [p["between"][1] for p in ruled] == [[alone.pk]]
    assert ruled[0]["rule"] == pipeline.EVIDENCE_FREE_RULE
    page = _review_page(client, curator, proposal)
    assert (
        "clustering left it apart (the mean of its pairwise scores with the "
        "cluster's authorships was below the threshold; the score shown is the "
        "cluster's against it as a whole); joined by a rule: "
        f"{pipeline.EVIDENCE_FREE_RULE}; " in html_unescape(page)
    )
    # The incoming table shows each paper's co-authors (the evidence names
    # shared ones); 1201.4869 has none.
    assert "<th>co-authors</th>" in page
    # Approved, the public page says the same of that paper.
    services.proposal_apply(proposal=proposal, actor=None)
    researcher = Researcher.objects.get(authorships=alone)
    row = next(
        row
        for row in profile.researcher_papers_page(researcher)["papers"]
        if row["own_authorship"] == alone.pk
    )
    assert (
        "started a new one, joined by a rule after clustering left it apart "
        f"({pipeline.EVIDENCE_FREE_RULE}); " in row["why"]
    )


def test_a_new_proposal_whose_paper_was_deleted_says_how_many_are_gone(
    client, curator, del_maestro
):
    # Deleting one of the 8 papers takes its authorship off the pending
    # proposal; its page says the cohesion was over 8 and that one is gone,
    # not "over 8" beside 7 listed.
    proposal, _ = del_maestro
    members = proposal.evidence["members"]
    assert proposal.authorships.count() == members == 8
    proposal.authorships.order_by("pk").first().paper.delete()
    page = _review_page(client, curator, proposal)
    assert f"Cohesion {proposal.evidence['cohesion']} over 8 authorships" in page
    assert (
        "1 of them no longer exists (a paper deleted or re-harvested without "
        "them); approving places the 7 left." in page
    )
    assert "(no longer on the proposal)" in page


def test_the_incoming_table_names_each_papers_co_authors(client, curator, del_maestro):
    # The evidence says "2 shared co-authors": the curator can check it on
    # the incoming papers' own bylines (real Del Maestro papers).
    proposal, _ = del_maestro
    page = _review_page(client, curator, proposal)
    incoming = page.split("<h3>Incoming authorships</h3>", 1)[1].split("</table>")[0]
    rows = incoming.split('<tr class="wp-moving">')[1:]
    assert len(rows) == proposal.authorships.count() == 8
    for authorship in proposal.authorships.select_related("paper"):
        others = list(
            authorship.paper.authorships.exclude(pk=authorship.pk)
            .order_by("position")
            .values_list("raw_name", flat=True)
        )
        (row,) = [r for r in rows if authorship.paper.arxiv_id in r]
        shown = others[: selectors.COAUTHORS_SHOWN]
        assert html_escape(", ".join(shown) or "—") in row
        more = len(others) - len(shown)
        assert (f"… +{more}" in row) == (more > 0)
