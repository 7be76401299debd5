"""Training the matcher: labelled pairs, curator decisions, the active model."""

from __future__ import annotations

import io
from collections import Counter, defaultdict

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from curation import services
from curation.matching import labelled, scoring, training
from curation.matching.features import AuthorshipView
from curation.models import MatcherModel, Proposal
from tests.factories import AuthorshipFactory, PaperFactory, UserFactory

QIAN = "and/s2and/qian_partial"


def test_fit_learns_a_varying_feature_and_keeps_defaults_for_constant_ones():
    # Affiliation overlap separates the classes; every other feature is constant.
    x, y = [], []
    for n in range(40):
        match = n % 2 == 0
        row = dict.fromkeys(scoring.FEATURES, 0.0) | {
            "name": 1.0,
            "affiliation": 0.9 if match else 0.0,
        }
        x.append([row[f] for f in scoring.FEATURES])
        y.append(int(match))
    weights = training.fit(training.Examples(x, y), version="t")
    assert weights.weights["affiliation"] > 1.0
    assert weights.weights["coauthors"] == scoring.WEIGHTS["coauthors"]
    assert weights.weights["orcid"] == scoring.WEIGHTS["orcid"]


def test_fit_refuses_one_class():
    with pytest.raises(ValueError, match="both matching and non-matching"):
        training.fit(training.Examples([[0.0] * 6], [1]), version="t")


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
    curator = UserFactory()
    Proposal.objects.create(
        kind="attach",
        score=0.7,
        model_version="default-weights-v3",
        fingerprint="fp-rejected",
        status="rejected",
        decided_by=curator,
        evidence={"features": {"name": 1.0, "categories": 1.0}},
    )
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
