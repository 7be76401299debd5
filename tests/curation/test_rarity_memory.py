"""Given-name rarities: counted afresh by full runs, remembered by incremental ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from curation import selectors, services
from curation.matching.features import BLOCK_REPEAT_UNKNOWN
from curation.models import Proposal
from tests.factories import AuthorshipFactory, PaperFactory
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


def test_names_the_remembered_table_never_counted_are_as_rare_as_one_use():
    _corpus()
    table = selectors.corpus_given_rarities(remembered=True)
    later = AuthorshipFactory(given_name="Zoltan", family_name="Zyxwvut")
    (view,) = selectors.authorship_views([later], table)
    # The rarity of one use beside the table's commonest: 1 - log 2 / log(1 + 5)
    # for given names (Wei, 5 mentions), 1 - log 2 / log(1 + 2) for families
    # (Wang, 2 given names).
    assert (table.given_unseen, table.family_unseen) == (0.613147, 0.36907)
    assert (view.given_rarity, view.family_rarity) == (0.613147, 0.36907)
    # A full run counts the new names as what they now are: the rarest.
    fresh = selectors.corpus_given_rarities()
    assert (fresh["zoltan"], fresh.family["zyxwvut"]) == (0.613147, 0.36907)


def test_an_incremental_run_and_a_full_run_agree_on_new_rare_names():
    _corpus()
    selectors.corpus_given_rarities(remembered=True)
    # Two papers of one archive, no category shared: the name is the
    # evidence (no field shared, none in conflict).
    for field in ("math.AG", "math.NT"):
        AuthorshipFactory(
            given_name="Zoltan",
            family_name="Zyxwvut",
            paper=PaperFactory(categories=[field], primary_category=field),
        )

    def proposed() -> list[tuple[str, int]]:
        return sorted(
            (p.kind, p.authorships.count())
            for p in Proposal.objects.filter(block_key="zyxwvut z")
        )

    services.matching_run(block_keys=["zyxwvut z"])
    incremental = proposed()
    Proposal.objects.filter(block_key="zyxwvut z").delete()
    services.matching_run()
    # One person of a name no table had counted, in either run (the scores
    # differ a little: the full run counts the name twice).
    assert incremental == proposed() == [("new", 2)]


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
    from curation.matching import shipped

    first = selectors.active_weights(remembered=True)
    assert first == shipped.read()[0]
    with django_assert_num_queries(0):
        assert selectors.active_weights(remembered=True) is first
    trained = services.matcher_train(
        datasets=[Path(settings.WOVEPAPER_DATA_DIR) / "and/s2and/qian_partial"],
        threshold=0.25,
    )
    assert selectors.active_weights(remembered=True).version == trained.version


def test_the_corpus_table_holds_how_often_each_blocks_affiliations_repeat():
    # Affiliations as INSPIRE prints them in the Wang set.
    chiao_tung = ["Taiwan, Natl. Chiao Tung U."]
    for printed in [chiao_tung] * 3 + [["Beijing, Inst. High Energy Phys."], []]:
        AuthorshipFactory(
            given_name="Shang-Yung", family_name="Wang", affiliations=printed
        )
    # Printed alike but by a collaboration: not a person, not counted.
    AuthorshipFactory(
        given_name="",
        family_name="Wang",
        affiliations=chiao_tung,
        is_collaboration=True,
    )
    for printed in (["CERN"], ["DESY"]):
        AuthorshipFactory(
            given_name="Peter", family_name="Willett", affiliations=printed
        )
    table = selectors.corpus_given_rarities()
    # Wang S.: four mentions print an affiliation, two distinct: log 2 / log 30;
    # Willett P.: each mention prints another.
    assert table.block_repeat == {
        "wang s": pytest.approx(0.203795, abs=1e-6),
        "willett p": 0.0,
    }
    views = selectors.authorship_views(
        Authorship.objects.filter(family_name="Wang", is_collaboration=False), table
    )
    assert {v.block_repeat for v in views} == {table.block_repeat["wang s"]}
    (later,) = selectors.authorship_views(
        [AuthorshipFactory(given_name="Zoltan", family_name="Zyxwvut")], table
    )
    # A block the table never counted: how often its affiliations repeat is
    # not known.
    assert later.block_repeat == BLOCK_REPEAT_UNKNOWN


def test_a_hand_edited_affiliation_list_costs_the_corpus_table_nothing():
    AuthorshipFactory(given_name="Peter", family_name="Willett", affiliations=["CERN"])
    AuthorshipFactory(given_name="Peter", family_name="Willett", affiliations=["CERN"])
    # Not what a harvest stores: a list edited by hand in the database.
    AuthorshipFactory(given_name="Peter", family_name="Willett", affiliations=[None, 3])
    table = selectors.corpus_given_rarities()
    # Two mentions print CERN, one distinct affiliation: log 2 / log 30; the
    # third prints no word.
    assert table.block_repeat == {"willett p": pytest.approx(0.203795, abs=1e-6)}
