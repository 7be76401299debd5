"""A proposed cluster records which authorships each of its joined pairs is
between, and a `new` proposal shows its weakest pairs by name.

On the real INSPIRE "Wang" block ``wang z`` (more than pipeline.CHUNK
mentions, so clustered in chunks and then merged as profiles).
"""

from __future__ import annotations

import pytest
from django.conf import settings
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from curation import services
from curation.admin.proposals import _between
from curation.matching import labelled, pipeline, scoring


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


def test_a_new_proposal_records_its_weakest_pairs_lowest_first():
    cluster = max(_clusters(), key=lambda c: len(c.pair_scores))
    assert len(cluster.pair_scores) > services.PAIRS_RECORDED
    recorded = services._weakest_pairs(cluster)
    assert len(recorded) == services.PAIRS_RECORDED
    # Each record's score, from its own evidence, as the proposal page reads it.
    scores = [
        scoring.sigmoid(r["bias"] + sum(r["contributions"].values())) for r in recorded
    ]
    assert scores == sorted(scores)
    lowest = sorted(s.pairwise_score for s in cluster.pair_scores)
    assert scores == pytest.approx(lowest[: services.PAIRS_RECORDED], abs=1e-3)
    sides = {
        (tuple(left), tuple(right)): s.pairwise_score
        for s, (left, right) in zip(
            cluster.pair_scores, cluster.pair_sides, strict=True
        )
    }
    for record, score in zip(recorded, scores, strict=True):
        left, right = record["between"]
        assert sides[tuple(left), tuple(right)] == pytest.approx(score, abs=1e-3)


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
        "Zheng Wang on x; and 2 more) and authorship #9"
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
