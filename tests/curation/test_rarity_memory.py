"""Given-name rarities: counted afresh by full runs, remembered by incremental ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from curation import selectors, services
from tests.factories import AuthorshipFactory
from wovepaper.models import Authorship

pytestmark = pytest.mark.django_db


def _corpus() -> None:
    for _ in range(5):
        AuthorshipFactory(given_name="Wei", family_name="Wang")
    AuthorshipFactory(given_name="Shang-Yung", family_name="Wang")


def test_an_incremental_read_reuses_the_last_count_a_full_read_counts_again():
    _corpus()
    first = selectors.corpus_given_rarities()
    assert set(first) == {"wei", "shangyung"}
    AuthorshipFactory(given_name="Dayong", family_name="Wang")

    assert selectors.corpus_given_rarities(remembered=True) is first
    fresh = selectors.corpus_given_rarities()
    assert "dayong" in fresh
    assert selectors.corpus_given_rarities(remembered=True) is fresh


def test_the_corpus_table_holds_family_rarities_counted_by_given_names():
    _corpus()
    for given in ("Peter", "P."):
        AuthorshipFactory(given_name=given, family_name="Willett")
    AuthorshipFactory(given_name="Jian", family_name="Wang")
    table = selectors.corpus_given_rarities()
    # Wang: three full given names (Wei, Shang-Yung, Jian); Willett: one.
    assert table.family == {"wang": 0.0, "willett": 0.5}  # 1 - log 2 / log 4
    views = selectors.authorship_views(
        Authorship.objects.filter(family_name="Willett"), table
    )
    assert [v.family_rarity for v in views] == [0.5, 0.5]


def test_remembered_rarities_expire(settings):
    settings.CURATION_RARITY_SECONDS = 0
    _corpus()
    selectors.corpus_given_rarities()
    AuthorshipFactory(given_name="Dayong", family_name="Wang")
    assert "dayong" in selectors.corpus_given_rarities(remembered=True)


def test_a_full_matching_run_counts_afresh_an_incremental_one_does_not():
    _corpus()
    services.matching_run()
    AuthorshipFactory(given_name="Dayong", family_name="Wang")
    remembered = selectors.corpus_given_rarities(remembered=True)
    assert "dayong" not in remembered
    services.matching_run(block_keys=["wang d"])
    assert selectors.corpus_given_rarities(remembered=True) is remembered
    services.matching_run()
    assert "dayong" in selectors.corpus_given_rarities(remembered=True)


def test_an_incremental_run_remembers_the_model_until_this_process_trains_one(
    django_assert_num_queries,
):
    from curation.matching import scoring

    assert selectors.active_weights(remembered=True) is scoring.DEFAULT
    with django_assert_num_queries(0):
        assert selectors.active_weights(remembered=True) is scoring.DEFAULT
    trained = services.matcher_train(
        datasets=[Path(settings.WOVEPAPER_DATA_DIR) / "and/s2and/qian_partial"],
        threshold=0.25,
    )
    assert selectors.active_weights(remembered=True).version == trained.version
