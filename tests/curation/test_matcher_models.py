"""Stored matcher models: train without activating, switch back and forth,
go back to the shipped model; from the command line and the admin."""

from __future__ import annotations

import io
import re

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from curation import services
from curation.matching import labelled, scoring, shipped, training
from curation.models import CurationEvent, MatcherModel, Proposal
from tests.curation.test_over_merged import _grabec
from tests.factories import UserFactory
from wovepaper.models import Authorship

pytestmark = pytest.mark.django_db

QIAN = "and/s2and/qian_partial"
# What matching scores with while no trained model is active (or the active
# one cannot be scored with): the committed model.
SHIPPED = shipped.read()[0].version


def _train(dataset: str = QIAN, **options) -> tuple[MatcherModel, str]:
    """Train on one labelled set; the model stored and what the command said."""
    out = io.StringIO()
    call_command(
        "train_matcher",
        dataset=[settings.WOVEPAPER_DATA_DIR / dataset],
        stdout=out,
        **options,
    )
    model = MatcherModel.objects.order_by("-trained_at", "-id").first()
    assert f"trained {model.version}" in out.getvalue()
    return model, out.getvalue()


def _trained(**options) -> MatcherModel:
    return _train(**options)[0]


# The row train_matcher stored for Qian, kept across this module's tests that
# only edit a stored model by hand (training takes about 5 s each time).
_QIAN_ROW: dict = {}


def _stored() -> MatcherModel:
    """A model trained on Qian by train_matcher, stored and active as that
    command leaves it: trained for the first test that asks, then the same row
    written again (each test's database is rolled back)."""
    if not _QIAN_ROW:
        model = _trained()
        _QIAN_ROW.update(
            (field.attname, getattr(model, field.attname))
            for field in MatcherModel._meta.concrete_fields
            if not field.primary_key
        )
        return model
    MatcherModel.objects.filter(active=True).update(active=False)
    return MatcherModel.objects.create(**_QIAN_ROW)


def _version_matching_records() -> str:
    """Drop the proposals, run matching again and say which model version
    the new proposals carry (one version for the whole run)."""
    Proposal.objects.all().delete()
    services.matching_run()
    versions = set(Proposal.objects.values_list("model_version", flat=True))
    assert len(versions) == 1
    return versions.pop()


@pytest.fixture
def harvested(arxiv_dir):
    from harvest import services as harvest

    harvest.harvest_arxiv_files(
        root=arxiv_dir / "abs_files/ftp/arxiv/papers/0704/0704.0047.abs"
    )


def _models(*args) -> str:
    out = io.StringIO()
    call_command("matcher_models", *args, stdout=out)
    return out.getvalue()


def test_a_model_trained_without_activating_waits_until_activated(harvested):
    first = _trained()
    second = _trained(activate=False)
    assert not second.active
    assert MatcherModel.objects.get(active=True) == first
    # Matching keeps using the active model.
    assert _version_matching_records() == first.version
    listing = _models()
    assert f"* {first.version}" in listing
    assert f"  {second.version}" in listing
    assert "qian_partial" in listing

    assert _models("--activate", second.version).startswith(
        f"matching now uses {second.version}"
    )
    assert list(MatcherModel.objects.filter(active=True)) == [second]
    assert _version_matching_records() == second.version

    # A rollback to the first, then to the shipped model.
    _models("--activate", first.version)
    assert _version_matching_records() == first.version
    assert f"matching now uses the shipped model {SHIPPED}" in _models("--default")
    assert not MatcherModel.objects.filter(active=True).exists()
    assert _version_matching_records() == SHIPPED


def test_activating_an_unknown_version_is_refused_and_changes_nothing():
    model = _trained()
    with pytest.raises(
        CommandError,
        match=f"no stored matcher model has version 'logreg-nope' .newest: "
        f"{model.version}",
    ):
        _models("--activate", "logreg-nope")
    assert list(MatcherModel.objects.filter(active=True)) == [model]


def test_no_stored_model_says_the_shipped_model_is_used():
    assert (
        f"no trained model is stored: matching uses the shipped model {SHIPPED}"
        in _models()
    )


def test_curators_see_the_models_and_operators_switch_them(client, curator):
    first = _trained()
    second = _trained(activate=False)
    url = "/admin/curation/matchermodel/"
    client.force_login(curator)
    page = client.get(url)
    assert page.status_code == 200
    assert second.version in page.content.decode()
    # A curator reads what a model weighs but cannot switch models.
    detail = client.get(f"{url}{second.pk}/change/").content.decode()
    assert "same_given" in detail
    assert "activate_selected" not in page.content.decode()
    client.post(url, {"action": "activate_selected", "_selected_action": [second.pk]})
    assert MatcherModel.objects.get(active=True) == first

    operator = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(operator)
    assert "activate_selected" in client.get(url).content.decode()
    response = client.post(
        url,
        {"action": "activate_selected", "_selected_action": [second.pk]},
        follow=True,
    )
    # The admin writes a message with a capital.
    assert f"Matching now uses {second.version}" in response.content.decode()
    assert MatcherModel.objects.get(active=True) == second
    response = client.post(
        url,
        {"action": "activate_selected", "_selected_action": [first.pk, second.pk]},
        follow=True,
    )
    assert "Select exactly one model" in response.content.decode()
    assert MatcherModel.objects.get(active=True) == second
    client.post(url, {"action": "use_default_weights", "_selected_action": [first.pk]})
    assert not MatcherModel.objects.filter(active=True).exists()


# Rows edited by hand in the database, as the hostile trial wrote them.
BROKEN_ROWS = [
    ({"weights": [1]}, "weights is list [1], not an object"),
    ({"weights": {"name": "big"}}, "the weight of 'name' is 'big', not a finite"),
    ({"weights": {"name": True}}, "the weight of 'name' is True"),
    ({"weights": {"name": 1e300}}, "the weight of 'name' is 1000000000"),
    # Past a float's range: math.isfinite of it would overflow.
    ({"weights": {"orcid": 10**400}}, "the weight of 'orcid' is 1000000000"),
    ({"threshold": 2.0}, "threshold is 2.0, not a number strictly between 0 and 1"),
    ({"version": "default-weights-v8"}, "version is 'default-weights-v8', which"),
    ({"bias": float("nan")}, "bias is nan, not a finite number"),
]


@pytest.mark.parametrize(("edit", "problem"), BROKEN_ROWS)
def test_a_hand_edited_model_is_passed_over_for_the_shipped_model(
    harvested, edit, problem
):
    model = _stored()
    MatcherModel.objects.filter(pk=model.pk).update(**edit)
    model.refresh_from_db()
    assert model.problem.startswith(problem)
    # Matching goes on, with the shipped model, and records its version.
    assert _version_matching_records() == SHIPPED
    out, err = io.StringIO(), io.StringIO()
    call_command("match", stdout=out, stderr=err)
    assert f"scored with {SHIPPED}" in out.getvalue()
    assert f"active matcher model {model.version} cannot be scored with" in (
        err.getvalue()
    )
    listing = _models()
    assert f"* {model.version}" in listing
    assert f"cannot be scored with: {problem}" in listing
    assert f"matching uses the shipped model {SHIPPED}" in listing
    # It cannot be switched to again while its row is broken.
    _models("--default")
    with pytest.raises(
        CommandError, match=re.escape(f"cannot be scored with: {problem}")
    ):
        _models("--activate", model.version)
    assert not MatcherModel.objects.filter(active=True).exists()


@pytest.mark.parametrize(
    "training",
    [[1], {"datasets": [1, 2]}, {"datasets": {"x": 5}, "pairs": "many"}, "text"],
)
def test_a_hand_edited_training_record_shows_what_it_can(client, training):
    model = _stored()
    MatcherModel.objects.filter(pk=model.pk).update(
        training=training, weights={"name": "big"}
    )
    listing = _models()
    assert model.version in listing
    if training == {"datasets": {"x": 5}, "pairs": "many"}:
        assert "? pairs (x; ? from curator decisions)" in listing
    operator = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(operator)
    url = "/admin/curation/matchermodel/"
    page = client.get(url)
    assert page.status_code == 200
    assert "the weight of &#x27;name&#x27; is &#x27;big&#x27;" in page.content.decode()
    detail = client.get(f"{url}{model.pk}/change/")
    assert detail.status_code == 200
    assert "curator decisions: ? pairs" in detail.content.decode()
    response = client.post(
        url,
        {"action": "activate_selected", "_selected_action": [model.pk]},
        follow=True,
    )
    assert "cannot be scored with" in response.content.decode()


def test_a_huge_but_stored_weight_scores_without_overflow():
    weights = scoring.stored_weights("hand", -1000.0, {"name": -1000.0}, 0.5)
    features = training.mention_pair_features(
        *labelled.load(settings.WOVEPAPER_DATA_DIR / QIAN).views[:2]
    )
    assert 0.0 <= scoring.score(features, weights).pairwise_score <= 1.0


def test_a_number_too_long_to_read_as_an_integer_still_loads_the_row():
    # 5,000 digits, written as SQL would: past Python's integer-string limit,
    # it reads as an infinite float, so the row loads and is named unusable.
    from django.db import connection

    model = _stored()
    digits = "1" + "0" * 5000
    with connection.cursor() as cursor:
        cast = "::jsonb" if connection.vendor == "postgresql" else ""
        cursor.execute(
            f"UPDATE curation_matchermodel SET weights = %s{cast}, "
            f"training = %s{cast} WHERE id = %s",
            [f'{{"orcid": {digits}}}', f'{{"pairs": {digits}}}', model.pk],
        )
    model.refresh_from_db()
    assert model.problem.startswith("the weight of 'orcid' is inf")
    assert model.learned_from["pairs"] is None
    assert "cannot be scored with: the weight of 'orcid' is inf" in _models()


def test_a_feature_kept_at_a_default_of_zero_is_listed_once():
    # The MEDLINE pairs never vary block_repeat, whose default weight is 0.
    _, said = _train("and/medline_vishnyakova_pairs", activate=False)
    lines = said.splitlines()
    kept = next(line for line in lines if "kept at their default weight" in line)
    assert "block_repeat" in kept
    assert not any("held at 0" in line and "block_repeat" in line for line in lines)


@pytest.mark.usefixtures("default_weights")
def test_after_a_model_switch_an_attach_it_scores_below_its_threshold_goes_stale(
    arxiv_dir,
):
    # One of Grabec's seven papers harvested after the other six were his:
    # the default weights propose attaching it.
    researcher, rows = _grabec(arxiv_dir)
    late = rows[0]
    Authorship.objects.filter(pk=late.pk).update(researcher=None)
    services.matching_run()
    attach = Proposal.objects.get(status="pending", kind="attach", authorships=late)
    assert attach.model_version == scoring.MODEL_VERSION
    assert attach.score >= settings.CURATION_ATTACH_THRESHOLD

    # A model that scores every pair low becomes the one in use.
    MatcherModel.objects.create(
        version="logreg-strict", bias=-20.0, weights={}, threshold=0.5, active=True
    )
    counts = services.matching_run()
    attach.refresh_from_db()
    assert attach.status == "stale"
    assert counts["made_stale"] >= 1
    reason = CurationEvent.objects.get(
        proposal=attach, kind=CurationEvent.Kind.PROPOSAL_STALE
    ).extra["reason"]
    assert reason.startswith("the model in use (logreg-strict) scores it 0.00, below")
    assert f"made by {scoring.MODEL_VERSION} at {attach.score:.2f}" in reason

    # Back on the default weights, the attach is proposed again.
    services.matcher_activate(version=None)
    services.matching_run()
    assert Proposal.objects.filter(
        status="pending", kind="attach", authorships=late, researcher=researcher
    ).exists()


def test_stored_features_scored_again_give_the_score_they_were_given():
    views = labelled.load(settings.WOVEPAPER_DATA_DIR / QIAN).views[:40]
    for a, b in zip(views, views[1:], strict=False):
        scored = scoring.score(training.mention_pair_features(a, b))
        again = scoring.score_of_features(scored.evidence["features"], scoring.DEFAULT)
        assert round(again, 6) == scored.pairwise_score
    assert scoring.score_of_features({"name": "x"}, scoring.DEFAULT) is None
