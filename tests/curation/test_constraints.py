"""Must-links and cannot-links (curator decisions, S2AND cluster seeds) obeyed by
clustering, in one chunk and across the chunks of a big block of real mentions."""

from __future__ import annotations

import json
import shutil

from django.conf import settings
from django.core.management import call_command

from curation.matching import clustering, labelled, pipeline


def test_a_must_link_joins_two_items_that_score_nothing():
    groups = clustering.cluster(
        3,
        lambda i, j: 0.0,
        threshold=0.6,
        cannot_link=lambda a, b: False,
        must_link=[(0, 2)],
    )
    assert groups == [[0, 2], [1]]


def test_a_must_link_carries_to_the_cluster_and_a_cannot_link_wins():
    # 0-1 must; 1-2 must; 0-2 cannot: the cannot-link keeps 2 out of 0's cluster.
    groups = clustering.cluster(
        3,
        lambda i, j: 0.0,
        threshold=0.6,
        cannot_link=lambda a, b: {a[0], b[0]} == {0, 2},
        must_link=[(0, 1), (1, 2)],
    )
    assert sorted(map(sorted, groups)) == [[0, 1], [2]]


def test_a_must_link_chain_makes_one_cluster():
    groups = clustering.cluster(
        4,
        lambda i, j: 0.0,
        threshold=0.6,
        cannot_link=lambda a, b: False,
        must_link=[(0, 1), (1, 2), (2, 3)],
    )
    assert groups == [[0, 1, 2, 3]]


def _wang():
    return labelled.load(settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang")


def test_constraints_hold_across_the_chunks_of_a_big_real_block():
    data = _wang()
    block = [v for v in data.views if v.block_key == "wang z"][:400]
    assert len(block) > 4 * pipeline.CHUNK  # clustered in chunks, then merged
    labels = pipeline.cluster_all(block, threshold=0.4)
    by_label: dict[str, list[int]] = {}
    for view_id, label in labels.items():
        by_label.setdefault(label, []).append(view_id)
    apart = sorted(by_label.values(), key=len)
    # Two mentions left apart by the scores, and two put together by them.
    join = (apart[0][0], apart[-1][0])
    part = sorted(apart[-1])
    split = (part[0], part[-1])
    assert labels[join[0]] != labels[join[1]]
    assert labels[split[0]] == labels[split[1]]
    constrained = pipeline.cluster_all(
        block,
        threshold=0.4,
        constraints=pipeline.Constraints.of(must_link=[join], cannot_link=[split]),
    )
    assert constrained[join[0]] == constrained[join[1]]
    assert constrained[split[0]] != constrained[split[1]]


def test_the_s2and_seeds_are_read_and_change_the_clustering():
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy")
    # cluster_seeds.json: 0-1 "disallow", 1-2 "require" (signature ids).
    index = {sig: i for i, sig in enumerate(data.mention_ids)}
    assert data.cannot_link == {(index["0"], index["1"])}
    assert data.must_link == {(index["1"], index["2"])}
    free = pipeline.cluster_all(data.views, threshold=0.4)
    # Unconstrained, the three Abdul Sattar mentions are one person, as the
    # gold clusters put 0 and 1: the seed that keeps them apart is a decision.
    assert free[index["0"]] == free[index["1"]] == free[index["2"]]
    seeded = pipeline.cluster_all(
        data.views,
        threshold=0.4,
        constraints=pipeline.Constraints.of(data.must_link, data.cannot_link),
    )
    assert seeded[index["0"]] != seeded[index["1"]]
    assert seeded[index["1"]] == seeded[index["2"]]


def test_evaluate_matching_reports_the_seeds_obeyed(capsys):
    call_command(
        "evaluate_matching",
        dataset=[settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy"],
        folds=0,
        json=True,
    )
    report = json.loads(capsys.readouterr().out)
    assert report["seeds"] == {
        "must_link": 1,
        "cannot_link": 1,
        "obeyed": {"ours": 2},
        "must_links_broken": [],
        "dropped": [],
    }


def test_a_title_in_an_s2and_first_name_is_not_a_given_name():
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy")
    first = data.views[data.mention_ids.index("0")]  # "first": "Dr A'bdul"
    assert (first.given, first.family, first.block_key) == (
        "A'bdul",
        "Sattar",
        "sattar a",
    )


def test_a_seed_of_another_kind_is_left_out_and_named(tmp_path):
    # One bad seed costs itself: the set is read, without any constraint.
    folder = tmp_path / "seeded"
    shutil.copytree(settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy", folder)
    (folder / "cluster_seeds.json").write_text('{"0": {"1": "maybe"}}')
    data = labelled.load(folder)
    assert data.seeds_dropped == ("0-1: is str 'maybe', not 'require' or 'disallow'",)
    assert data.must_link == data.cannot_link == frozenset()
    assert len(data.views) == 5


def _dummy_copy(tmp_path, seeds: str):
    folder = tmp_path / "seeded"
    shutil.copytree(settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy", folder)
    (folder / "cluster_seeds.json").write_text(seeds)
    return folder


def test_seeds_that_cannot_hold_or_name_nobody_are_reported(tmp_path, capsys):
    # 1-3: Abdul Sattar and Alexander Konovalov, two blocks never compared;
    # 1-999: no such signature.
    folder = _dummy_copy(tmp_path, '{"1": {"3": "require", "999": "require"}}')
    call_command("evaluate_matching", dataset=[folder], folds=0, json=True)
    seeds = json.loads(capsys.readouterr().out)["seeds"]
    assert seeds["obeyed"] == {"ours": 0}
    assert seeds["must_links_broken"] == [
        "1-3: in different blocks ('sattar a', 'konovalov a'): never compared"
    ]
    assert seeds["dropped"] == ["1-999: names a signature with no gold cluster"]


def test_a_seed_file_of_another_shape_is_named_and_the_set_read_unseeded(tmp_path):
    # The seeds are optional: a seed file of another shape costs the seeds.
    folder = _dummy_copy(tmp_path, '[["0", "1", "require"]]')
    data = labelled.load(folder)
    assert data.seeds_dropped == (
        'cluster_seeds.json is an array, not an object of objects ({"<sig>": '
        '{"<sig>": "require" | "disallow"}}); no seed read',
    )
    assert data.must_link == data.cannot_link == frozenset()
    assert len(data.views) == 5


def test_more_folds_than_people_cost_no_more_than_one_a_person(capsys):
    # 5 mentions of 3 people: 10**8 folds are 3 folds.
    call_command(
        "evaluate_matching",
        dataset=[settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy"],
        folds=10**8,
        json=True,
    )
    report = json.loads(capsys.readouterr().out)
    assert report["learned"]["b3"]["f1"] > 0
