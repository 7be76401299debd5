"""The shipped matcher model: written by train_matcher --ship, committed, read
by matching while no trained model is active; the hand-set default weights
only when it is missing, and said loudly."""

from __future__ import annotations

import io
import json
import logging

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import override_settings

from curation import selectors, services
from curation.matching import scoring, shipped
from curation.models import MatcherModel, Proposal

pytestmark = pytest.mark.django_db

QIAN = "and/s2and/qian_partial"


@pytest.fixture(autouse=True)
def _forget_models():
    selectors.forget_given_rarities()
    selectors._SHIPPED_WARNED.clear()
    yield
    selectors.forget_given_rarities()
    selectors._SHIPPED_WARNED.clear()


def _ship(target, *datasets: str) -> str:
    out = io.StringIO()
    call_command(
        "train_matcher",
        ship=True,
        ship_to=target,
        dataset=[settings.WOVEPAPER_DATA_DIR / d for d in datasets],
        stdout=out,
    )
    return out.getvalue()


def test_the_committed_model_is_what_matching_uses_without_a_trained_one():
    weights, training = shipped.read()
    assert weights.version.startswith("shipped-logreg-")
    assert weights.threshold == pytest.approx(0.4)
    assert set(training["datasets"]) == {
        "beard_inspire_wang",
        "qian_partial",
        "medline_vishnyakova_pairs",
        "orcid-linked",
    }
    assert training["command"].startswith("manage.py train_matcher --ship")
    # Learned, not the defaults: name agreement weighs what the sets taught.
    assert weights.weights["same_given"] != scoring.WEIGHTS["same_given"]
    assert not MatcherModel.objects.exists()
    assert selectors.active_weights() == weights
    assert selectors.joining_threshold() == pytest.approx(0.4)
    assert selectors.matcher_description() == (
        f"the shipped model {weights.version} (curation/matching/shipped_model.json)"
    )


def test_ship_writes_a_model_that_matching_records_on_its_proposals(
    tmp_path, arxiv_dir
):
    from harvest import services as harvest

    target = tmp_path / "model.json"
    said = _ship(target, QIAN)
    weights, training = shipped.read(target)
    assert f"wrote {target}: {weights.version}" in said
    assert training["datasets"]["qian_partial"]["mentions"] == 6542
    assert training["command"] == (
        f"manage.py train_matcher --ship --dataset {QIAN} --threshold 0.4"
    )
    # A feature no Qian pair varies is left to its default weight.
    assert "orcid" not in json.loads(target.read_text())["weights"]
    assert weights.weights["orcid"] == scoring.WEIGHTS["orcid"]
    harvest.harvest_arxiv_files(
        root=arxiv_dir / "abs_files/ftp/arxiv/papers/0704/0704.0047.abs"
    )
    with override_settings(CURATION_SHIPPED_MODEL=str(target)):
        selectors.forget_given_rarities()
        services.matching_run()
        assert set(Proposal.objects.values_list("model_version", flat=True)) == {
            weights.version
        }
    # The database holds no model: --ship touches none.
    assert not MatcherModel.objects.exists()


def test_a_missing_shipped_model_falls_back_to_the_defaults_and_says_so_once(
    tmp_path, caplog
):
    missing = tmp_path / "nowhere.json"
    with override_settings(CURATION_SHIPPED_MODEL=str(missing)):
        with caplog.at_level(logging.ERROR, logger="curation.selectors"):
            assert selectors.shipped_weights() is scoring.DEFAULT
            assert selectors.shipped_weights() is scoring.DEFAULT
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1
        assert str(missing) in errors[0]
        assert "train_matcher --ship" in errors[0]
        assert "hand-set default weights" in selectors.matcher_description()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not JSON"),
        ('{"format": 9}', "not a shipped matcher model of format 1"),
        (
            '{"format": 1, "training": {}, "version": "v", "bias": 0,'
            ' "weights": {"name": "x"}, "threshold": 0.4}',
            "the weight of 'name' is 'x'",
        ),
        (
            '{"format": 1, "training": {}, "version": "v", "bias": 0,'
            ' "weights": {}, "threshold": 2}',
            "threshold is 2, not a number strictly between 0 and 1",
        ),
    ],
)
def test_a_broken_shipped_model_is_named_and_passed_over(
    tmp_path, caplog, content, problem
):
    broken = tmp_path / "model.json"
    broken.write_text(content)
    with pytest.raises(ValueError, match=f"^{broken}: {problem}"):
        shipped.read(broken)
    with override_settings(CURATION_SHIPPED_MODEL=str(broken)):
        with caplog.at_level(logging.ERROR, logger="curation.selectors"):
            assert selectors.active_weights() is scoring.DEFAULT
        assert selectors.fallback_description() == (
            f"the hand-set default weights {scoring.MODEL_VERSION} (the shipped "
            f"model {broken} cannot be read; the error log says why)"
        )
    assert problem in caplog.text


def test_an_empty_setting_means_the_default_weights_without_a_word(caplog):
    with override_settings(CURATION_SHIPPED_MODEL=""):
        with caplog.at_level(logging.ERROR):
            assert selectors.active_weights() is scoring.DEFAULT
    assert not caplog.records


def test_ship_to_without_ship_is_refused(tmp_path):
    with pytest.raises(CommandError, match="--ship-to goes with --ship"):
        call_command("train_matcher", ship_to=tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("where", ["missing/m.json", "."])
def test_ship_to_a_place_it_cannot_write_is_refused_before_training(tmp_path, where):
    target = tmp_path / where
    with pytest.raises(CommandError, match="cannot write the model there"):
        call_command("train_matcher", ship=True, ship_to=target)
    assert not (tmp_path / "missing").exists()
