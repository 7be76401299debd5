"""The words "Why is this paper here?" gives for a match's evidence."""

from __future__ import annotations

import functools

from django.conf import settings

from curation.matching import labelled, scoring
from curation.matching.features import Features, profile_of, profile_profile_features
from wovepaper.profile import feature_words


def _evidence(**values) -> tuple[dict, dict]:
    """A pair scored with the default weights: its features and contributions."""
    score = scoring.score(
        Features(**{"orcid": 0.0, "coauthors": 0.0, "categories": 0.0, **values})
    )
    return score.evidence["features"], score.evidence["contributions"]


def test_a_small_contribution_is_not_given_as_a_reason_and_one_against_is_said():
    # As "Xiang Liu" of hep-ph was attached to the astro-ph one at 0.73: the
    # full name agrees, "Liu" is common (rarity 0.25), the fields are apart.
    features, contributions = _evidence(
        name=1.0, rare_name=0.9, same_given=1.0, rare_family=0.25, field_conflict=1.0
    )
    assert contributions["rare_family"] == 0.25
    # The rare name says the names agree; the name scale is not said again.
    assert feature_words(features, contributions) == (
        "a rare given name printed the same way; against it: no field in common"
    )


def test_evidence_with_nothing_worth_saying_says_what_the_names_found():
    features, contributions = _evidence(name=0.1, rare_family=0.3)
    assert feature_words(features, contributions) == "the same family name"


@functools.cache
def _wang() -> labelled.LabelledSet:
    return labelled.load(settings.WOVEPAPER_DATA_DIR / "and/beard_inspire_wang")


def _mentions(printed: str) -> list:
    data = _wang()
    return [v for v in data.views if data.raw_names[v.id] == printed]


def _words(a, b, weights: scoring.Weights = scoring.DEFAULT) -> str:
    score = scoring.score(
        profile_profile_features(profile_of([a]), profile_of([b])), weights
    )
    return feature_words(score.evidence["features"], score.evidence["contributions"])


def test_two_real_mentions_printed_with_the_same_initials_say_so_not_a_percentage():
    # Two real "Wang, Z." of INSPIRE: 0.675 on the name scale, which read as
    # "the names agree (68% similar)" for two names printed alike.
    first, second = _mentions("Wang, Z.")[:2]
    assert _words(first, second).startswith(
        "the same initials, with no full given name on both sides"
    )
    # A learned model that weighs the initials themselves says them once.
    learned = scoring.Weights(
        "t", scoring.BIAS, {**scoring.WEIGHTS, "same_initials": 2.8}
    )
    assert _words(first, second, learned).count("initials") == 1


def test_real_initials_against_a_full_name_are_compatible_not_the_same():
    z, zheng = _mentions("Wang, Z.")[0], _mentions("Wang, Zheng")[0]
    assert _words(z, zheng).startswith(
        "compatible given names (initials or a variant of a full name)"
    )
    zhengs = _mentions("Wang, Zheng")
    assert _words(zhengs[0], zhengs[1]).startswith("the same given name printed alike")


def test_fields_partly_shared_say_how_much():
    # One arXiv category shared of the three the two sides print (Jaccard 1/3).
    features, contributions = _evidence(name=1.0, same_given=1.0, categories=1 / 3)
    assert contributions["categories"] > 0.5
    assert "fields in common (33% overlap)" in feature_words(features, contributions)
    features, contributions = _evidence(name=1.0, same_given=1.0, categories=1.0)
    assert "the same fields" in feature_words(features, contributions)


def test_titles_near_or_far_in_meaning_are_said_either_way():
    # title_similarity is the cosine less its neutral point: +0.3 reads as
    # close subjects, -0.2 as distant ones (the default weight is 5).
    features, contributions = _evidence(
        name=1.0, same_given=1.0, coauthors=1.0, title_similarity=0.3
    )
    assert "titles and abstracts on close subjects" in feature_words(
        features, contributions
    )
    features, contributions = _evidence(name=1.0, same_given=1.0, title_similarity=-0.2)
    assert feature_words(features, contributions).endswith(
        "against it: titles and abstracts on distant subjects"
    )
    # Near the neutral point it is no reason either way.
    features, contributions = _evidence(name=1.0, same_given=1.0, title_similarity=0.05)
    assert "subjects" not in feature_words(features, contributions)
