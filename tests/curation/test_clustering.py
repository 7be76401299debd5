"""Blocking and clustering on plain data: bounded blocks, constraints obeyed."""

from __future__ import annotations

import pytest

from curation.matching import blocking, clustering, pipeline
from curation.matching.features import AuthorshipView
from curation.matching.pipeline import clusters as pipeline_clusters


def test_cluster_joins_high_scores_and_keeps_low_apart():
    scores = {(0, 1): 0.9, (0, 2): 0.1, (1, 2): 0.2, (2, 3): 0.95}
    groups = clustering.cluster(
        4,
        lambda i, j: scores.get((i, j), 0.0),
        threshold=0.6,
        cannot_link=lambda a, b: False,
    )
    assert groups == [[0, 1], [2, 3]]


def test_cluster_obeys_cannot_link_through_merges():
    # 0-1 and 1-2 are strong, but 0 and 2 sit on one paper: never together.
    groups = clustering.cluster(
        3,
        lambda i, j: 0.95,
        threshold=0.6,
        cannot_link=lambda a, b: {a[0], b[0]} == {0, 2},
    )
    assert sorted(map(len, groups)) == [1, 2]
    assert not any({0, 2} <= set(g) for g in groups)


def test_cluster_average_linkage_stops_below_threshold():
    # 0-1 = 0.9; 2 links 0.9 to 0 but 0.1 to 1: average 0.5 < 0.6, so 2 stays out.
    scores = {(0, 1): 0.9, (0, 2): 0.9, (1, 2): 0.1}
    groups = clustering.cluster(
        3, lambda i, j: scores[(i, j)], threshold=0.6, cannot_link=lambda a, b: False
    )
    assert groups == [[0, 1], [2]]


def test_cluster_refuses_oversized_input():
    with pytest.raises(ValueError, match="at most 400"):
        clustering.cluster(
            401, lambda i, j: 0.0, threshold=0.5, cannot_link=lambda a, b: False
        )


def test_blocks_sub_block_big_blocks_by_full_name_key():
    items = [("wang y", "wang|y")] * 300 + [("wang y", "wang|yz")] * 5
    items += [("li x", "li|x")] * 3
    grouped = blocking.blocks(
        items, key=lambda t: t[0], sub_key=lambda t: t[1], max_size=200
    )
    assert grouped["li x"] == [("li x", "li|x")] * 3
    assert len(grouped["wang y/wang|y"]) == 300
    assert len(grouped["wang y/wang|yz"]) == 5


def _views(n, *, same_paper=False):
    return [
        AuthorshipView(
            id=i,
            paper_id=0 if same_paper else i,
            given="Yu",
            family="Wang",
            block_key="wang y",
            coauthor_keys=frozenset({"li|x"}),
            categories=frozenset({"hep-th"}),
        )
        for i in range(n)
    ]


def test_pipeline_big_block_of_one_person_ends_in_one_cluster():
    found = pipeline.cluster_authorships(_views(650), threshold=0.6)
    assert [len(c.members) for c in found] == [650]


def test_pipeline_big_block_never_joins_two_slots_of_one_paper():
    found = pipeline.cluster_authorships(_views(450, same_paper=True), threshold=0.6)
    assert len(found) == 450
    assert sorted(v.id for c in found for v in c.members) == list(range(450))


def test_cluster_of_a_full_chunk_of_one_person_is_one_cluster():
    groups = clustering.cluster(
        blocking.MAX_BLOCK,
        lambda i, j: 0.7,
        threshold=0.6,
        cannot_link=lambda a, b: False,
    )
    assert groups == [list(range(blocking.MAX_BLOCK))]


def _named(start: int, given: str, n: int) -> list[AuthorshipView]:
    """``n`` authorships of "<given> Wang" on their own papers, one institute."""
    return [
        AuthorshipView(
            id=start + i,
            paper_id=start + i,
            given=given,
            family="Wang",
            block_key="wang j",
            affiliation_tokens=frozenset({"beijing", "ihep"}),
            categories=frozenset({"hep-ex"}),
        )
        for i in range(n)
    ]


def test_a_bare_initial_never_bridges_two_incompatible_given_names():
    # "J." fits both "Jian" and "Jie"; average linkage over chunks would let a
    # cluster of "Jian" and "J." absorb "Jie" (the INSPIRE Wang over-merge).
    views = _named(0, "Jian", 110) + _named(1000, "J.", 110) + _named(2000, "Jie", 110)
    found = pipeline.cluster_authorships(views, threshold=0.3)
    assert sorted(v.id for c in found for v in c.members) == sorted(v.id for v in views)
    for cluster in found:
        givens = {v.given for v in cluster.members}
        assert not {"Jian", "Jie"} <= givens, givens
    assert len(found) == 2  # each "J." still joins a "Jian" or a "Jie"


def test_pinyin_spellings_of_one_name_cluster_together():
    views = _named(0, "Dayong", 120) + _named(1000, "D.Y.", 120)
    found = pipeline.cluster_all(views, threshold=0.3)
    assert len(set(found.values())) == 1
    # Another second syllable is another person, even at one institute.
    other = _named(0, "Dayong", 120) + _named(1000, "D.X.", 120)
    labels = pipeline.cluster_all(other, threshold=0.3)
    assert not {labels[0]} & {labels[1000 + i] for i in range(120)}


def test_chunk_clusters_of_one_person_meet_though_their_parts_differ(monkeypatch):
    # 60 people, each twice, the second mentions 60 ids later (people publish
    # over time). Chunks of 20 and merge parts of 40 put each person's two
    # clusters in different parts in input order: a second order is needed.
    # (No affiliations: the chunks then keep the input order, as names alike.)
    monkeypatch.setattr(pipeline_clusters, "CHUNK", 20)
    monkeypatch.setattr(clustering, "MAX_ITEMS", 40)
    people = list(range(60)) * 2
    views = [
        AuthorshipView(
            id=i,
            paper_id=i,
            given="Wei",
            family="Wang",
            block_key="wang w",
            coauthor_keys=frozenset({f"co|{p}", f"co2|{p}"}),
            categories=frozenset({f"cat{p}"}),
        )
        for i, p in enumerate(people)
    ]
    found = pipeline.cluster_authorships(views, threshold=0.6)
    assert sorted(sorted(v.id for v in c.members) for c in found) == [
        [p, p + 60] for p in range(60)
    ]


def test_chunks_gather_mentions_printed_alike_and_clusters_keep_input_order(
    monkeypatch,
):
    # 30 "Wei Wang" at one institute among 90 "Wen Wang" elsewhere, interleaved:
    # chunked in input order no chunk holds more than a few of the 30.
    monkeypatch.setattr(pipeline_clusters, "CHUNK", 20)
    views = [
        AuthorshipView(
            id=i,
            paper_id=i,
            given="Wei" if i % 4 == 0 else "Wen",
            family="Wang",
            block_key="wang w",
            affiliation_tokens=frozenset({"ihep" if i % 4 == 0 else f"u{i}"}),
        )
        for i in range(120)
    ]
    found = pipeline.cluster_authorships(views, threshold=0.6)
    wei = [c for c in found if c.members[0].given == "Wei"]
    assert [[m.id for m in c.members] for c in wei] == [list(range(0, 120, 4))]
    # Joined inside two chunks (20 + 10 "Wei"), not from six chunks of five.
    assert len(wei[0].pair_scores) == 190 + 45 + 1
    for cluster in found:
        ids = [m.id for m in cluster.members]
        assert ids == sorted(ids)
