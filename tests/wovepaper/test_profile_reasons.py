"""The words "Why is this paper here?" gives for a match's evidence."""

from __future__ import annotations

from curation.matching import scoring
from curation.matching.features import Features
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
    assert feature_words(features, contributions) == (
        "the names agree (100% similar), a rare given name printed the same way; "
        "against it: no field in common"
    )


def test_evidence_with_nothing_worth_saying_says_the_names_agree():
    features, contributions = _evidence(name=0.1, rare_family=0.3)
    assert feature_words(features, contributions) == "the names agree"
