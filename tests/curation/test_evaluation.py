"""B³ and pairwise metrics, the labelled-set readers and ``evaluate_matching``."""

from __future__ import annotations

import functools
import io
import json
import math
import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from curation import matching_reports
from curation.management.commands import evaluate_matching
from curation.matching import evaluation, labelled
from curation.matching.features import (
    BLOCK_REPEAT_UNKNOWN,
    NameRarities,
    block_repeats,
    family_name_rarities,
    given_name_rarities,
)

GOLD = {1: "a", 2: "a", 3: "a", 4: "b", 5: "b"}


def test_b_cubed_perfect_clustering_scores_one():
    prf = evaluation.b_cubed({1: "x", 2: "x", 3: "x", 4: "y", 5: "y"}, GOLD)
    assert (prf.precision, prf.recall, prf.f1) == (1.0, 1.0, 1.0)


def test_b_cubed_all_singletons_has_full_precision_low_recall():
    prf = evaluation.b_cubed({m: str(m) for m in GOLD}, GOLD)
    assert prf.precision == 1.0
    # recall per mention: 1/3 for the three a's, 1/2 for the two b's.
    assert prf.recall == pytest.approx((3 * (1 / 3) + 2 * (1 / 2)) / 5)


def test_b_cubed_one_cluster_has_full_recall_low_precision():
    prf = evaluation.b_cubed(dict.fromkeys(GOLD, "all"), GOLD)
    assert prf.recall == 1.0
    assert prf.precision == pytest.approx((3 * (3 / 5) + 2 * (2 / 5)) / 5)


def test_pairwise_counts_same_cluster_pairs():
    # Predicted {1,2} {3,4} {5}: one true pair (1,2) of two predicted; 4 true pairs.
    prf = evaluation.pairwise({1: "p", 2: "p", 3: "q", 4: "q", 5: "r"}, GOLD)
    assert prf.precision == 0.5
    assert prf.recall == 0.25


def test_same_input_ceiling_gives_each_input_to_the_person_holding_most_of_it():
    # Mention 4 (person b) reads as 1 and 2 (person a): it goes with them.
    inputs = {1: "k", 2: "k", 4: "k", 3: "m", 5: "n"}
    assert evaluation.same_input_ceiling(inputs, GOLD) == {
        1: "a",
        2: "a",
        4: "a",
        3: "a",
        5: "b",
    }
    # A tie goes to the person with more mentions in the whole set, then to
    # the id that sorts first as text: the same on every run.
    tied = evaluation.same_input_ceiling(
        {1: "k", 4: "k", 5: "m"}, {1: "a", 4: "b", 5: "b"}
    )
    assert tied == {1: "b", 4: "b", 5: "b"}
    tied = evaluation.same_input_ceiling({1: "k", 4: "k"}, {1: "z", 4: "y"})
    assert tied == {1: "y", 4: "y"}


def test_same_input_ceiling_on_wang_cannot_part_two_people_printing_one_input():
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang")
    inputs = matching_reports.signature_inputs(data)
    ceiling = evaluation.same_input_ceiling(inputs, data.gold)
    # Two INSPIRE people print "Wang, Zheng" at IHEP Beijing: the mentions
    # they print alike go to the one printing more of them.
    zheng = [
        v
        for v in data.views
        if (v.given, v.family) == ("Zheng", "Wang")
        and data.gold[v.id] in {"636358", "311461"}
    ]
    people_of: dict[tuple, set] = {}
    for v in zheng:
        people_of.setdefault(inputs[v.id], set()).add(data.gold[v.id])
    shared = [key for key, people in people_of.items() if len(people) == 2]
    assert shared
    for key in shared:
        held = [data.gold[v.id] for v in zheng if inputs[v.id] == key]
        bigger = max(set(held), key=held.count)
        assert {ceiling[v.id] for v in zheng if inputs[v.id] == key} == {bigger}
    prf = evaluation.b_cubed(ceiling, data.gold)
    assert prf.precision < 1.0
    full_name = evaluation.b_cubed(
        matching_reports.baseline_clusterings(data)["normalised full name"], data.gold
    )
    assert prf.f1 > full_name.f1


def test_b_cubed_errors_name_the_clusters_and_their_parts():
    predicted = {1: "a", 2: "a", 3: "a", 4: "b"}
    gold = {1: "x", 2: "x", 3: "y", 4: "y"}
    over, split = evaluation.b_cubed_errors(predicted, gold, 5)
    # Cluster a: mentions 1 and 2 keep 2/3 precision, 3 keeps 1/3.
    assert over == [evaluation.ClusterError("a", 3, 1.33, (("x", 2), ("y", 1)))]
    # Person y is split over a and b: each of its two mentions keeps 1/2 recall.
    assert split == [evaluation.ClusterError("y", 2, 1.0, (("a", 1), ("b", 1)))]
    assert evaluation.b_cubed_errors(predicted, gold, 0) == ([], [])


def test_b_cubed_errors_add_up_to_the_b_cubed_loss_on_the_wang_set():
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang")
    n = len(data.gold)
    for predicted in (
        {v.id: v.block_key for v in data.views},  # over-merges
        {i: data.raw_names[i] for i in data.gold},  # splits and over-merges
    ):
        scores = evaluation.b_cubed(predicted, data.gold)
        over, split = evaluation.b_cubed_errors(predicted, data.gold, n)
        # Each loss is rounded to 0.01: the sums agree to half that a cluster.
        assert sum(e.loss for e in over) == pytest.approx(
            n * (1 - scores.precision), abs=0.005 * len(over) + 1e-6
        )
        assert sum(e.loss for e in split) == pytest.approx(
            n * (1 - scores.recall), abs=0.005 * len(split) + 1e-6
        )
        assert [e.loss for e in over] == sorted((e.loss for e in over), reverse=True)
        for error in over + split:
            assert sum(m for _, m in error.parts) == error.size
            assert len(error.parts) > 1


def _qian_errors(top: int, **options) -> str:
    """evaluate_matching's output on Qian-partial, default weights, ``--errors top``."""
    out = io.StringIO()
    call_command(
        "evaluate_matching",
        dataset=[settings.WOVEPAPER_DATA_DIR / "and/s2and/qian_partial"],
        folds=0,
        errors=top,
        stdout=out,
        **options,
    )
    return out.getvalue()


def test_evaluate_matching_lists_the_worst_errors_with_names_and_affiliations():
    errors = json.loads(_qian_errors(3, json=True))["errors"]
    assert errors["model"] == "default weights"
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / "and/s2and/qian_partial")
    printed = set(data.raw_names.values())
    for kind in ("over_merged", "split"):
        assert len(errors[kind]) == 3
        assert errors[kind][0]["loss"] >= errors[kind][-1]["loss"] > 0
        for error in errors[kind]:
            parts, more = error["parts"], error["more_parts"]
            assert 2 <= len(parts) <= 5
            shown = sum(p["mentions"] for p in parts)
            assert shown + more["mentions"] == error["mentions"]
            assert all(p["name"] in printed for p in parts)
            assert all(0 <= p["no_affiliation"] <= p["mentions"] for p in parts)
    # An over-merge's parts are gold people: none of them is named twice.
    first = errors["over_merged"][0]["parts"]
    assert len({p["cluster"] for p in first}) == len(first)
    text = _qian_errors(1)
    assert "worst over-merged clusters" in text
    assert "worst split people" in text


def test_given_name_rarities_common_names_score_lower():
    rarities = given_name_rarities(["Wei"] * 50 + ["Shang-Yung", "P."])
    assert rarities["wei"] == 0.0
    assert rarities["shangyung"] > 0.8
    assert "p" not in rarities  # initials have no rarity


def test_family_rarity_counts_given_names_not_mentions():
    # One prolific Willett prints 40 mentions, Wang is printed with 3 given
    # names: Willett is the rarer family name; initials do not count.
    rarities = family_name_rarities(
        [("Peter", "Willett")] * 40
        + [("Wei", "Wang"), ("Jun", "Wang"), ("Lei", "Wang"), ("J.", "Wang")]
    )
    # rarity = 1 - log(1 + count) / log(1 + top count): 1 - log 2 / log 4.
    assert rarities == {"wang": 0.0, "willett": 0.5}
    both = NameRarities.of([("Peter", "Willett"), ("Wei", "Wang")])
    assert set(both) == {"peter", "wei"}
    assert set(both.family) == {"willett", "wang"}


def test_a_family_printed_with_initials_only_is_as_common_as_its_initials_say():
    # 26 people "A. Wang" ... "Z. Wang" and one Peter Willett: Wang is the
    # commoner family though no full given name is printed with it.
    rarities = family_name_rarities(
        [(f"{chr(ord('A') + n)}.", "Wang") for n in range(26)] + [("Peter", "Willett")]
    )
    assert rarities["wang"] == 0.0
    assert rarities["willett"] > 0.7


def test_family_rarity_on_real_qian_names_sets_rare_surnames_above_common_ones():
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / "and/s2and/qian_partial")
    rarity = {v.family: v.family_rarity for v in data.views}
    # Zhang is printed with 27 full given names there, Willett with one.
    assert rarity["Zhang"] == 0.0
    assert rarity["Willett"] == pytest.approx(1 - math.log(2) / math.log(28), abs=1e-6)
    assert 0.0 < rarity["Brown"] < rarity["Willett"]


def test_block_repeat_is_mentions_per_distinct_affiliation_on_a_log_scale():
    cern, desy = frozenset({"cern"}), frozenset({"desy"})
    rows = [("wang p", cern, 3), ("wang p", desy, 1), ("wang p", frozenset(), 9)]
    rows += [("li j", cern, 1), ("li j", desy, 1), ("kim s", cern, 40)]
    rows += [("chen x", cern, 1), ("chen x", frozenset(), 5)]
    repeats = block_repeats(rows)
    # Four mentions print an affiliation, two distinct ones (the nine that
    # print none do not count): log 2 / log 30.
    assert repeats["wang p"] == pytest.approx(math.log(2) / math.log(30), abs=1e-6)
    assert repeats["li j"] == 0.0  # every mention prints another affiliation
    assert repeats["kim s"] == 1.0  # 40 of one: capped
    # One mention printing an affiliation tells nothing of the block: it is
    # left to BLOCK_REPEAT_UNKNOWN, as a block never seen is.
    assert "chen x" not in repeats
    assert "zhang w" not in repeats


def test_block_repeat_on_real_sets_sets_inspire_blocks_above_s2and_ones():
    def mean_repeat(path: str) -> float:
        data = labelled.load(settings.WOVEPAPER_DATA_DIR / path)
        repeats = block_repeats(
            (v.block_key, v.affiliation_tokens, 1) for v in data.views
        )
        assert all(0.0 <= r <= 1.0 for r in repeats.values())
        # Each mention carries its block's repeat, or the unknown one where
        # fewer than two of the block's mentions print an affiliation.
        for v in data.views:
            assert v.block_repeat == repeats.get(v.block_key, BLOCK_REPEAT_UNKNOWN)
        return sum(repeats.values()) / len(repeats)

    # INSPIRE's Wangs are few prolific people a block, S2AND's Qian names
    # many with a paper or two: the affiliations repeat accordingly.
    # (0.58 and 0.31 over the blocks where two mentions print one.)
    assert mean_repeat("and/beard_inspire_wang") > 0.5
    assert mean_repeat("and/s2and/qian_partial") < 0.35


def test_labelled_load_wang_counts():
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang")
    assert len(data.views) == 15424
    assert len(set(data.gold.values())) == 524
    first = data.views[0]
    assert (first.given, first.family) == ("Shang-Yung", "Wang")
    assert first.affiliation_tokens == {"taiwan", "natl", "chiao", "tung"}


def test_labelled_load_s2and_reads_coauthors_from_papers():
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy")
    assert len(data.views) == 5  # only the labelled signatures
    sattar = data.views[0]
    assert sattar.family == "Sattar"
    assert "lorenzen|t" in sattar.coauthor_keys


def test_labelled_load_unknown_folder_is_a_clear_error(tmp_path):
    with pytest.raises(labelled.DatasetError, match="no wang_signatures.json"):
        labelled.load(tmp_path)


def test_a_folder_holding_both_formats_is_refused_naming_both(tmp_path):
    # The real Wang (beard) and dummy (S2AND) files side by side: which set
    # was meant cannot be told, and it was read as beard without a word.
    data = settings.WOVEPAPER_DATA_DIR / "and"
    for name in ("wang_signatures.json", "wang_clusters.json"):
        (tmp_path / name).symlink_to(data / "beard_inspire_wang" / name)
    for name in ("signatures.json", "clusters.json", "papers.json"):
        (tmp_path / name).symlink_to(data / "s2and/dummy" / name)
    with pytest.raises(labelled.DatasetError, match="both a beard set") as refused:
        labelled.load(tmp_path)
    assert "signatures.json" in str(refused.value)
    with pytest.raises(CommandError, match="folder of its own"):
        call_command("evaluate_matching", "--dataset", str(tmp_path), "--folds", "0")


@functools.cache
def _dummy_report() -> dict:
    out = io.StringIO()
    call_command(
        "evaluate_matching",
        dataset=[settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy"],
        json=True,
        stdout=out,
    )
    return json.loads(out.getvalue())


def test_evaluate_matching_json_reports_ours_and_baselines():
    report = _dummy_report()
    assert report["dataset"] == "dummy"
    assert report["mentions"] == 5
    assert set(report["baselines"]) == {
        "exact name string",
        "normalised full name",
        "surname + first initial",
    }
    assert set(report["ours"]["b3"]) == {"precision", "recall", "f1"}
    assert set(report["ceiling"]) == {"b3", "pairwise"}


def test_evaluate_matching_scores_the_model_as_train_matcher_trains_it():
    # Trained on the other folds and on train_matcher's default sets whole.
    shipped = _dummy_report()["learned_as_trained"]
    assert shipped["with"] == ["beard_inspire_wang", "qian_partial"]
    assert shipped["folds"] == 3
    assert 0 < shipped["b3"]["f1"] <= 1
    # A default set is never trained on whole beside its own folds.
    command = evaluate_matching.Command()
    qian = settings.WOVEPAPER_DATA_DIR / "and/s2and/qian_partial"
    defaults = labelled.DEFAULT_SETS
    others = command._other_sets(qian, "qian_partial", defaults)
    assert [one.name for one in others] == ["beard_inspire_wang"]
    # A copy of a default set elsewhere is that set, by its name.
    elsewhere = Path("/nonexistent/qian_partial")
    assert [
        one.name for one in command._other_sets(elsewhere, "qian_partial", defaults)
    ] == ["beard_inspire_wang"]
    # The shipped model is trained on every shipped set but the one evaluated.
    assert [
        one.name
        for one in command._other_sets(qian, "qian_partial", labelled.SHIPPED_SETS)
    ] == ["beard_inspire_wang", "medline_vishnyakova_pairs", "orcid-linked"]


def test_an_unreadable_default_set_is_left_out_of_the_other_sets(
    tmp_path, settings, capsys
):
    (tmp_path / "and/beard_inspire_wang").mkdir(parents=True)
    settings.WOVEPAPER_DATA_DIR = tmp_path
    command = evaluate_matching.Command(stderr=io.StringIO())
    assert command._other_sets(tmp_path / "x", "x", labelled.SHIPPED_SETS) == []
    assert "not trained on with the other sets" in command.stderr._out.getvalue()


def test_evaluate_matching_bad_folder_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="no wang_signatures.json"):
        call_command("evaluate_matching", dataset=[tmp_path], stdout=io.StringIO())


def test_evaluate_matching_says_which_folds_could_not_be_trained():
    learned = _dummy_report()["learned"]
    # 3 gold clusters in 5 folds: some folds hold no pair of one person to learn.
    assert learned["untrained_folds"]
    assert set(learned["untrained_folds"]) <= set(range(5))


def test_evaluate_matching_missing_folder_says_so(tmp_path):
    with pytest.raises(CommandError, match="no such folder"):
        call_command(
            "evaluate_matching", dataset=[tmp_path / "nope"], stdout=io.StringIO()
        )


@pytest.mark.django_db
@pytest.mark.parametrize("command", ["evaluate_matching", "train_matcher"])
def test_missing_default_sets_say_where_they_are_looked_for(
    command, tmp_path, settings
):
    settings.WOVEPAPER_DATA_DIR = tmp_path
    with pytest.raises(CommandError, match="set WOVEPAPER_DATA_DIR="):
        call_command(command, stdout=io.StringIO())


def _s2and_copy(tmp_path, **replace) -> Path:
    """The real S2AND dummy set copied, with some files replaced by text."""
    folder = tmp_path / "set"
    shutil.copytree(settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy", folder)
    for name, text in replace.items():
        (folder / f"{name}.json").write_text(text)
    return folder


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        ({"clusters": "{not json"}, "clusters.json: not JSON"),
        ({"signatures": "[1, 2]"}, "signatures.json: not a JSON object of records"),
        ({"clusters": "[1, 2]"}, "clusters.json: not a JSON object"),
        ({"clusters": "{}"}, "no mention has a gold cluster"),
        (
            {"clusters": '{"c": {"signature_ids": ["0", "999"]}}'},
            "clusters.json: 1 signature id.s. in the clusters are not in the "
            "signature file: 999",
        ),
        (
            {
                "clusters": '{"a": {"signature_ids": ["0"]}, '
                '"b": {"signature_ids": ["0"]}}'
            },
            # Left out, as each broken record is; here no other is labelled.
            "clusters.json: signature 0 is in 2 clusters, a, b; left out",
        ),
        (
            {
                "clusters": '{"a": {"signature_ids": ["0"]}, '
                '"a": {"signature_ids": ["1"]}}'
            },
            "clusters.json: key 'a' appears twice in one object",
        ),
        (
            {"clusters": '{"a": {"signature_ids": "012"}}'},
            "clusters.json: cluster a has no signature_ids array .signature_ids "
            "is str '012'.; left out",
        ),
    ],
)
def test_a_broken_labelled_set_is_refused_naming_the_folder(tmp_path, broken, problem):
    folder = _s2and_copy(tmp_path, **broken)
    with pytest.raises(CommandError, match=f"{folder}.*{problem}"):
        call_command("evaluate_matching", dataset=[folder], stdout=io.StringIO())


def test_a_beard_set_without_its_clusters_file_is_refused(tmp_path):
    (tmp_path / "wang_signatures.json").write_text("[]")
    with pytest.raises(labelled.DatasetError, match="FileNotFoundError"):
        labelled.load(tmp_path)


def test_null_affiliations_of_an_s2and_signature_are_skipped(tmp_path):
    folder = _s2and_copy(tmp_path)
    signatures = json.loads((folder / "signatures.json").read_text())
    first = next(iter(signatures.values()))
    first["author_info"]["affiliations"] = [None, "Allen Institute for AI"]
    (folder / "signatures.json").write_text(json.dumps(signatures))
    data = labelled.load(folder)
    assert {"allen"} <= set().union(*(v.affiliation_tokens for v in data.views))


@pytest.mark.parametrize(
    "option",
    [
        {"folds": 1},
        {"folds": -1},
        {"learned_threshold": 0.0},
        {"learned_threshold": float("nan")},
        {"learned_threshold": 1.5},
        {"errors": -1},
    ],
)
def test_evaluate_matching_refuses_folds_and_thresholds_it_cannot_use(option):
    with pytest.raises(CommandError, match="must"):
        call_command(
            "evaluate_matching",
            dataset=[settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy"],
            stdout=io.StringIO(),
            **option,
        )


def test_a_beard_cluster_naming_a_signature_the_set_lacks_is_refused(tmp_path):
    (tmp_path / "wang_signatures.json").write_text(
        json.dumps(
            [
                {
                    "signature_id": 1,
                    "publication_id": 7,
                    "author_name": "Wang, Y.",
                    "author_affiliation": "",
                    "signature_position": 0,
                }
            ]
        )
    )
    (tmp_path / "wang_clusters.json").write_text('{"a": [1, 99999999]}')
    with pytest.raises(labelled.DatasetError, match="not in the signature file: 9999"):
        labelled.load(tmp_path)


def test_evaluate_matching_says_what_it_is_doing_and_how_long_the_run_took(settings):
    """From the new-user trial: six silent minutes, then a header giving the
    default weights' time only."""
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "evaluate_matching",
        dataset=[settings.WOVEPAPER_DATA_DIR / "and/s2and/dummy"],
        folds=0,
        stdout=out,
        stderr=err,
    )
    # The test settings turn the title evidence off; the run says so first.
    assert err.getvalue() == (
        "title and abstract evidence: off (MATCHING_TEXT_EVIDENCE)...\n"
        "dummy: 5 mentions; clustering with the default weights...\n"
    )
    header = out.getvalue().splitlines()[0]
    assert re.search(
        r"matched in [\d.]+ s at threshold [\d.]+; the whole run took "
        r"[\d.]+ s$",
        header,
    ), header
