"""Training the matcher: labelled pairs, curator decisions, the active model."""

from __future__ import annotations

import functools
import io
from collections import Counter, defaultdict

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from curation import services
from curation.matching import labelled, scoring, training
from curation.matching.features import BLOCK_REPEAT_UNKNOWN, AuthorshipView
from curation.models import MatcherModel, Proposal
from tests.factories import AuthorshipFactory, PaperFactory, UserFactory

QIAN = "and/s2and/qian_partial"
WANG = "and/beard_inspire_wang"


def _alternating(**values: tuple[float, float]) -> training.Examples:
    """40 pairs, every other one matching: each feature named takes its first
    value on matching pairs and its second on the others; ``name`` is 1.0 and
    every other feature 0.0."""
    x, y = [], []
    for n in range(40):
        match = n % 2 == 0
        row = dict.fromkeys(scoring.FEATURES, 0.0) | {"name": 1.0}
        row |= {name: pair[0 if match else 1] for name, pair in values.items()}
        x.append([row[f] for f in scoring.FEATURES])
        y.append(int(match))
    return training.Examples(x, y)


def test_fit_learns_a_varying_feature_and_keeps_defaults_for_constant_ones():
    # Affiliation overlap separates the classes; every other feature is constant.
    weights = training.fit(_alternating(affiliation=(0.9, 0.0)), version="t")
    assert weights.weights["affiliation"] > 1.0
    assert weights.weights["coauthors"] == scoring.WEIGHTS["coauthors"]
    assert weights.weights["orcid"] == scoring.WEIGHTS["orcid"]


def test_fit_refuses_one_class():
    with pytest.raises(ValueError, match="both matching and non-matching"):
        training.fit(training.Examples([[0.0] * 6], [1]), version="t")


@functools.cache
def _pairs(path: str) -> training.Examples:
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / path)
    return training.labelled_pairs(data.views, data.gold)


def test_fit_keeps_each_weight_to_the_sign_of_its_evidence_on_real_qian_pairs():
    # Unbounded, Qian's pairs weigh "name" -3.05 (it moves with same_given):
    # a name alike would count against one person.
    weights = training.fit(_pairs(QIAN), version="t")
    kept = set(training.kept_defaults(_pairs(QIAN)))
    for name in set(scoring.FEATURES) - kept:
        assert weights.weights[name] * scoring.WEIGHTS[name] >= 0, name
    assert weights.weights["name"] >= 0
    # What the pairs teach still shows: shared affiliation words weigh most.
    assert weights.weights["affiliation"] > 3.0
    assert weights.weights["affiliation_conflict"] < -0.5


def test_block_repeat_weighs_0_or_more_though_its_default_is_0():
    # Blocks whose affiliations repeat hold the non-matching pairs here: the
    # data would weigh the repeat below 0, its bound keeps it at 0.
    weights = training.fit(
        _alternating(affiliation=(0.9, 0.2), block_repeat=(0.1, 0.9)), version="t"
    )
    assert weights.weights["block_repeat"] == 0.0
    assert weights.weights["affiliation"] > 1.0


def test_trained_on_wang_and_qian_alike_the_family_rarity_keeps_its_weight():
    # Fitted on each set alone the family name's rarity weighs about +3;
    # fitted on both without the blocks' affiliation repeat it fell to +0.07,
    # since Wang's namesakes are one person far more often than Qian's and
    # nothing else told the two corpora apart.
    sets = [_pairs(WANG), _pairs(QIAN)]
    both = training.Examples([], [])
    for pairs in sets:
        both.extend(pairs)
    weights = training.fit(
        both,
        version="t",
        sample_weight=training.set_weights([len(p.y) for p in sets]),
    )
    assert weights.weights["block_repeat"] > 3.0
    assert weights.weights["rare_family"] > 0.8


def test_an_unknown_block_repeat_is_the_labelled_sets_mean():
    # BLOCK_REPEAT_UNKNOWN stands for a block whose affiliations were not
    # printed: the mean over each set's pairs whose block printed them, each
    # set weighing alike.
    column = scoring.FEATURES.index("block_repeat")
    means = []
    for path in (WANG, QIAN):
        read = [row[column] for row in _pairs(path).x]
        known = [r for r in read if r != BLOCK_REPEAT_UNKNOWN]
        assert len(known) > 0.9 * len(read)
        means.append(sum(known) / len(known))
    assert sum(means) / 2 == pytest.approx(BLOCK_REPEAT_UNKNOWN, abs=0.01)


def test_a_set_weighed_zero_is_as_if_it_were_left_out():
    qian, wang = _pairs(QIAN), _pairs(WANG)
    both = training.Examples([*qian.x, *wang.x[:20000]], [*qian.y, *wang.y[:20000]])
    zeroed = training.fit(
        both, version="t", sample_weight=[1.0] * len(qian.y) + [0.0] * 20000
    )
    alone = training.fit(qian, version="t")
    assert zeroed.bias == pytest.approx(alone.bias, abs=1e-3)
    for name in scoring.FEATURES:
        assert zeroed.weights[name] == pytest.approx(alone.weights[name], abs=1e-3)
    # Weighed in, Wang's pairs move the model.
    unweighted = training.fit(both, version="t")
    assert abs(unweighted.bias - alone.bias) > 0.1


def test_set_weights_cap_each_set_without_a_step():
    cap = training.SET_WEIGHT
    weights = training.set_weights([4 * cap, 2 * cap, 5, 0], decisions=2)
    assert weights[: 4 * cap] == pytest.approx([0.25] * 4 * cap)
    assert weights[4 * cap : 6 * cap] == pytest.approx([0.5] * 2 * cap)
    # A small set and the decisions weigh 1 a pair: not blown up to a corpus.
    assert weights[6 * cap :] == [1.0] * 7
    # Its weight grows with its size, without a step.
    totals = [sum(training.set_weights([n])) for n in (cap - 1, cap, cap + 1)]
    assert totals == pytest.approx([cap - 1, cap, cap])
    assert training.set_weights([], decisions=1) == [1.0]


def test_a_few_curator_decisions_do_not_set_a_weight_no_labelled_pair_varies():
    qian = _pairs(QIAN)
    # Approved pairs share 3 co-authors, rejected ones 1: a handful of such
    # decisions took co-authors from its default 1.5 to 0 (a hostile trial).
    few = training.Examples([], [])
    for n in range(8):
        row = dict.fromkeys(scoring.FEATURES, 0.0) | {
            "name": 1.0,
            "same_given": 1.0,
            "affiliation": 0.5,
            "coauthors": 3.0 if n % 2 else 1.0,
        }
        few.x.append([row[f] for f in scoring.FEATURES])
        few.y.append(n % 2)
    hold = training.features_to_hold(qian, few)
    assert "coauthors" in hold
    assert "affiliation" not in hold
    both = training.Examples([*qian.x, *few.x], [*qian.y, *few.y])
    weights = training.fit(both, version="t", hold=hold)
    assert weights.weights["coauthors"] == scoring.WEIGHTS["coauthors"]
    # Enough decisions teach it.
    many = training.Examples(few.x * 10, few.y * 10)
    assert "coauthors" not in training.features_to_hold(qian, many)


def test_a_full_name_alike_never_weighs_less_than_initials_alike():
    # Fitted freely on Wang and Qian, same_initials took +3.2 and same_given
    # 0.0: two bare "J. Wang" scored 0.89, two "Wei Wang" 0.31.
    qian, wang = _pairs(QIAN), _pairs(WANG)
    both = training.Examples([*wang.x, *qian.x], [*wang.y, *qian.y])
    weights = training.fit(
        both,
        version="t",
        sample_weight=training.set_weights([len(wang.y), len(qian.y)]),
    )
    assert weights.weights["same_given"] >= weights.weights["same_initials"] >= 0
    # Also when one of the two never varies: a corpus printed with initials
    # only (its same_given always 0) weighs same_given level with initials.
    column = scoring.FEATURES.index("same_given")
    initials_only = training.Examples(
        [r for r in wang.x if r[column] == 0.0],
        [y for r, y in zip(wang.x, wang.y, strict=True) if r[column] == 0.0],
    )
    weights = training.fit(initials_only, version="t")
    assert weights.weights["same_given"] >= weights.weights["same_initials"] > 0.3
    assert "same_given" not in training.kept_defaults(initials_only)


def test_curator_decisions_pull_an_unvaried_weight_from_its_default_not_from_0():
    # Two decisions varying ORCID beside Qian's pairs (which never do): the
    # weight stays near its default of 6, where the prior centres it.
    qian = _pairs(QIAN)
    row = dict.fromkeys(scoring.FEATURES, 0.0) | {"name": 1.0, "orcid": 1.0}
    examples = training.Examples(
        [*qian.x, [row[f] for f in scoring.FEATURES]] * 1, [*qian.y, 1]
    )
    examples.x.append([0.0] * len(scoring.FEATURES))
    examples.y.append(0)
    weights = training.fit(examples, version="t")
    assert "orcid" not in training.kept_defaults(examples)
    assert weights.weights["orcid"] > 5.0


def test_a_constant_feature_held_at_its_default_leaves_the_bias_alone():
    # Every pair has categories 1.0 (constant, not 0): held at +2.0 while the
    # bias is fitted, so the bias does not count it a second time.
    x, y = [], []
    for n in range(60):
        row = dict.fromkeys(scoring.FEATURES, 0.0) | {
            "name": 1.0,
            "categories": 1.0,
            "affiliation": 0.8 if n % 3 == 0 else 0.0,
        }
        x.append([row[f] for f in scoring.FEATURES])
        y.append(int(n % 3 == 0))
    examples = training.Examples(x, y)
    weights = training.fit(examples, version="t")
    assert weights.weights["categories"] == scoring.WEIGHTS["categories"]
    rate = sum(
        scoring.score(
            scoring.Features(**dict(zip(scoring.FEATURES, r, strict=True))), weights
        ).pairwise_score
        for r in x
    ) / len(x)
    # Calibrated: the mean score is near the share of matching pairs (1/3).
    assert rate == pytest.approx(1 / 3, abs=0.05)


def test_decision_pairs_leave_out_evidence_that_is_not_feature_values():
    decisions = [
        (1, {"features": {"name": 1.0, "affiliation": 0.5}}, True),
        (2, {"features": {"name": 1.0, "affiliation": float("nan")}}, True),
        (3, {"features": {"name": 1e20}}, False),
        (4, {"features": {"name": "abc"}}, False),
        (5, {"features": {"name": None}}, False),
        (6, {"features": ["name"]}, False),
        (7, "evidence", False),
        (8, {"features": {"unknown": 1.0}}, True),
        (9, {"features": {"coauthors": 7, "name": 0.5}}, False),
        (10, {"features": {"coauthors": 10**400}}, False),
        (11, {"features": {"name": -1.0}}, False),
        (12, {"features": {"orcid": -1.0, "name": 1.0}}, False),
    ]
    examples, left_out = training.decision_pairs(decisions)
    assert examples.y == [1, 0, 0]
    assert examples.x[1][scoring.FEATURES.index("coauthors")] == scoring.COAUTHOR_CAP
    assert examples.x[2][scoring.FEATURES.index("orcid")] == -1.0
    assert [why.split(":")[0] for why in left_out] == [
        f"proposal #{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 11)
    ]
    assert "affiliation is nan, not a feature value" in left_out[0]
    assert "no feature in its evidence" in left_out[6]


def _rejected_attach(evidence: dict) -> Proposal:
    """An attach proposal a curator rejected, with this evidence stored."""
    return Proposal.objects.create(
        kind="attach",
        score=0.7,
        model_version="default-weights-v3",
        fingerprint=f"fp-rejected-{Proposal.objects.count()}",
        status="rejected",
        decided_by=UserFactory(),
        evidence=evidence,
    )


@pytest.mark.django_db
def test_a_broken_curator_decision_is_left_out_and_named_not_trained_on():
    _rejected_attach({"features": {"name": 1.0, "affiliation": "nan"}})
    out = io.StringIO()
    call_command(
        "train_matcher", dataset=[settings.WOVEPAPER_DATA_DIR / QIAN], stdout=out
    )
    model = MatcherModel.objects.get(active=True)
    assert model.training["curator_decisions"] == 0
    assert "curator decision left out: proposal #" in out.getvalue()
    assert model.weights["affiliation"] > 3.0  # trained, not all zero


@pytest.mark.django_db
def test_train_matcher_refuses_a_set_named_twice(tmp_path):
    qian = settings.WOVEPAPER_DATA_DIR / QIAN
    with pytest.raises(CommandError, match="named twice"):
        call_command("train_matcher", dataset=[qian, qian], stdout=io.StringIO())
    link = tmp_path / "same"
    link.symlink_to(qian)
    with pytest.raises(CommandError, match="named twice"):
        call_command("train_matcher", dataset=[qian, link], stdout=io.StringIO())
    assert not MatcherModel.objects.exists()


def test_fit_refuses_sample_weights_that_do_not_fit_the_pairs():
    examples = training.Examples([[0.0] * len(scoring.FEATURES)] * 2, [0, 1])
    with pytest.raises(ValueError, match="3 sample weights for 2 pairs"):
        training.fit(examples, version="t", sample_weight=[1.0, 1.0, 1.0])
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="2 sample weights for 2 pairs"):
            training.fit(examples, version="t", sample_weight=[1.0, bad])
    examples.x[1] = [float("nan")] * len(scoring.FEATURES)
    with pytest.raises(ValueError, match="pair 1 has a feature value that is not"):
        training.fit(examples, version="t")


@pytest.mark.django_db
def test_train_matcher_weighs_each_labelled_set_alike(monkeypatch):
    seen = {}
    fit = training.fit

    def spy(examples, *, version, sample_weight=None, hold=()):
        seen["y"], seen["weights"] = list(examples.y), list(sample_weight)
        return fit(examples, version=version, sample_weight=sample_weight, hold=hold)

    monkeypatch.setattr(training, "fit", spy)
    model = services.matcher_train(
        datasets=[
            settings.WOVEPAPER_DATA_DIR / WANG,
            settings.WOVEPAPER_DATA_DIR / QIAN,
        ],
        threshold=0.4,
    )
    sizes = [
        model.training["datasets"][n]["pairs"]
        for n in ("beard_inspire_wang", "qian_partial")
    ]
    assert sizes[0] > 2 * sizes[1] > 0
    weights = seen["weights"]
    assert len(weights) == len(seen["y"]) == sum(sizes)
    wang_total, qian_total = sum(weights[: sizes[0]]), sum(weights[sizes[0] :])
    assert wang_total == pytest.approx(qian_total) == pytest.approx(training.SET_WEIGHT)
    assert model.weights["name"] >= 0


def test_block_folds_keep_whole_blocks_and_whole_people_on_the_real_qian_set():
    data = labelled.load(settings.WOVEPAPER_DATA_DIR / QIAN)
    fold = training.block_folds(data.views, data.gold, 5)
    assert fold == training.block_folds(reversed(data.views), data.gold, 5)
    folds_of_block, folds_of_person = defaultdict(set), defaultdict(set)
    for v in data.views:
        folds_of_block[v.block_key].add(fold[v.id])
        folds_of_person[data.gold[v.id]].add(fold[v.id])
    # A held-out block is clustered with all its namesakes; no person is both
    # trained on and evaluated.
    assert all(len(f) == 1 for f in folds_of_block.values())
    assert all(len(f) == 1 for f in folds_of_person.values())
    sizes = Counter(fold.values())
    assert set(sizes) == {0, 1, 2, 3, 4}
    assert max(sizes.values()) < 1.2 * min(sizes.values())


def test_block_folds_join_blocks_that_one_person_spans():
    views = [
        AuthorshipView(id=n, paper_id=n, given="", family="", block_key=block)
        for n, block in enumerate(["wang j", "wang j", "zhang l", "li p"])
    ]
    # Person "x" is printed in two blocks: both blocks go to one fold.
    fold = training.block_folds(views, {0: "x", 1: "y", 2: "x", 3: "z"}, 2)
    assert fold[0] == fold[1] == fold[2] != fold[3]


@pytest.mark.django_db
def test_train_matcher_activates_a_model_that_matching_then_records():
    _rejected_attach({"features": {"name": 1.0, "categories": 1.0}})
    out = io.StringIO()
    call_command(
        "train_matcher",
        dataset=[settings.WOVEPAPER_DATA_DIR / QIAN],
        threshold=0.3,
        stdout=out,
    )

    model = MatcherModel.objects.get(active=True)
    assert model.threshold == 0.3
    assert model.training["curator_decisions"] == 1
    assert model.training["datasets"]["qian_partial"]["mentions"] == 6542
    assert set(model.weights) == set(scoring.FEATURES)
    assert f"trained {model.version}" in out.getvalue()

    paper = PaperFactory()
    AuthorshipFactory(paper=paper, given_name="Maryam", family_name="Mirzakhani")
    services.matching_run()
    assert Proposal.objects.get(kind="new").model_version == model.version


@pytest.mark.django_db
def test_train_matcher_twice_keeps_one_active_model():
    for _ in range(2):
        services.matcher_train(
            datasets=[settings.WOVEPAPER_DATA_DIR / QIAN], threshold=0.2
        )
    assert MatcherModel.objects.count() == 2
    assert MatcherModel.objects.filter(active=True).count() == 1


@pytest.mark.django_db
def test_train_matcher_rejects_bad_threshold_and_folder(tmp_path):
    with pytest.raises(CommandError, match="strictly between 0 and 1"):
        call_command("train_matcher", threshold=1.5, stdout=io.StringIO())
    with pytest.raises(CommandError, match="no wang_signatures.json"):
        call_command("train_matcher", dataset=[tmp_path], stdout=io.StringIO())


@pytest.mark.django_db
def test_a_model_trained_before_a_feature_existed_gives_it_the_default_weight():
    from curation import selectors

    # As stored by a train_matcher run before source ids and family rarity.
    older = {
        name: 1.0
        for name in scoring.FEATURES
        if name not in {"source_id", "source_id_conflict", "rare_family"}
    }
    MatcherModel.objects.create(
        version="logreg-old", bias=-1.0, weights=older, threshold=0.4
    )
    weights = selectors.active_weights()
    assert weights.version == "logreg-old"
    assert weights.weights["source_id"] == scoring.WEIGHTS["source_id"]
    assert weights.weights["rare_family"] == scoring.WEIGHTS["rare_family"]
    assert weights.weights["name"] == 1.0


@pytest.mark.django_db
def test_a_model_trained_before_same_initials_weighs_initials_as_its_same_given():
    from curation import selectors

    # Stored before same_given was told apart from same_initials: its
    # same_given weight was learned over printed initials too.
    older = {n: 1.0 for n in scoring.FEATURES if n != "same_initials"}
    older["same_given"] = 2.5
    MatcherModel.objects.create(
        version="logreg-before-initials", bias=-1.0, weights=older, threshold=0.4
    )
    weights = selectors.active_weights()
    assert weights.weights["same_initials"] == weights.weights["same_given"] == 2.5
