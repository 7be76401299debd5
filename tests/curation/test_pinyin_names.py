"""Run-together pinyin given names, on the real INSPIRE Wang gold clusters."""

from __future__ import annotations

import functools
import json
from collections import defaultdict

import pytest
from django.conf import settings

from curation import names


@functools.cache
def _printed_names_by_person() -> dict[str, frozenset[str]]:
    """Gold INSPIRE author id -> the ``author_name`` strings it was printed as."""
    folder = settings.WOVEPAPER_DATA_DIR / "and" / "beard_inspire_wang"
    signatures = json.loads((folder / "wang_signatures.json").read_text())
    clusters = json.loads((folder / "wang_clusters.json").read_text())
    person = {sig: author for author, sigs in clusters.items() for sig in sigs}
    printed = defaultdict(set)
    for signature in signatures:
        printed[person[signature["signature_id"]]].add(signature["author_name"])
    return {author: frozenset(found) for author, found in printed.items()}


def _person_printed(name: str) -> frozenset[str]:
    """Every printed form of the one person printed as ``name`` (asserted unique)."""
    people = [p for p in _printed_names_by_person().values() if name in p]
    assert len(people) == 1, f"{name} is printed by {len(people)} people"
    return people[0]


def _given(printed: str) -> str:
    return names.parse_name(printed).given


@pytest.mark.parametrize(
    ("full", "initials"),
    [
        ("Wang, Dayong", "Wang, D.Y."),
        ("Wang, Yifang", "Wang, Y.F."),
        ("Wang, Jianchun", "Wang, J.C."),
    ],
)
def test_one_person_printed_run_together_and_as_initials_meets(full, initials):
    # The gold labels say it: one person printed both.
    assert any({full, initials} <= p for p in _printed_names_by_person().values())
    a, b = _given(full), _given(initials)
    assert names.given_names_compatible(a, b, pinyin=True)
    assert names.given_name_similarity(a, b, pinyin=True) == 0.675
    assert names.sub_block_key(a, "Wang") == names.sub_block_key(b, "Wang")
    # Read as one word (the rule without pinyin) the initials fall in another
    # sub-block, and the second initial is any letter at all.
    assert names.name_key(a, "Wang") != names.name_key(b, "Wang")


def test_every_printed_form_of_dayong_shares_one_sub_block():
    forms = _person_printed("Wang, Dayong")
    keys = {names.sub_block_key(_given(f), "Wang") for f in forms}
    assert keys == {"wang|dy"}, forms


def test_a_second_syllable_that_differs_is_another_person():
    assert not names.given_names_compatible("Dayong", "D.X.", pinyin=True)
    assert names.given_names_compatible("Dayong", "D.X.")  # one word: no evidence
    assert not names.given_names_compatible("Dayong", "Dawei", pinyin=True)


def test_hyphenated_and_run_together_spellings_stay_identical():
    assert names.given_name_similarity("Dayong", "Da-Yong", pinyin=True) == 1.0
    assert names.given_name_similarity("Yi Fang", "Yifang", pinyin=True) == 1.0


@pytest.mark.parametrize(
    ("word", "syllables"),
    [
        ("dayong", (("da", "yong"),)),
        ("jianchun", (("jian", "chun"),)),
        ("fangan", (("fan", "gan"),)),  # not fang-an: that is written fang'an
        ("jianan", (("jia", "nan"),)),
        ("chien", ()),  # Wade-Giles, one syllable: not chi-en
        ("shiang", ()),
        ("anna", ()),  # English given names stay whole
        ("susan", ()),
        ("junxian", (("jun", "xian"),)),
        ("xian", ()),  # one syllable: stays one word
        ("zheng", ()),
        ("maria", ()),  # three syllables at the fewest: not a Chinese given name
        ("peter", ()),  # not pinyin
        ("x" * 40, ()),
    ],
)
def test_pinyin_syllables(word, syllables):
    assert names.pinyin_syllables(word) == syllables


@pytest.mark.parametrize(
    ("family", "expected"),
    [
        ("Wang", True),
        ("Zhang", True),
        ("Cheung", True),
        ("Lee", False),
        ("Kim", False),
        ("Smith", False),
        ("van der Wang", True),
    ],
)
def test_reads_as_pinyin_only_for_chinese_family_names(family, expected):
    assert names.reads_as_pinyin(family) is expected


def test_sub_block_key_of_other_names_is_the_stored_name_key():
    for given, family in [("Anna", "Smith"), ("Jean-Pierre", "Serre"), ("Anna", "Lee")]:
        assert names.sub_block_key(given, family) == names.name_key(given, family)
    assert names.sub_block_key("Xian", "Wang") == "wang|x"


def test_a_word_printed_with_a_period_is_still_read_by_syllable():
    # Both spellings of one person in the INSPIRE Wang gold set.
    assert names.given_names_compatible("Junxian.", "Junxian", pinyin=True)
    assert names.given_names_compatible("Junxian.", "J.X.", pinyin=True)
    assert names.sub_block_key("Junxian.", "Wang") == "wang|jx"


def test_english_given_names_under_a_chinese_family_name_stay_whole():
    for given, other, family in [
        ("Susan", "S.M.", "Wong"),
        ("Alan", "A.J.", "Tan"),
        ("Linda", "L.K.", "Ho"),
        ("Chien", "C.H.", "Chang"),
    ]:
        assert names.given_names_compatible(given, other, pinyin=True), given
        assert names.sub_block_key(given, family) == names.name_key(given, family)


def test_hostile_given_names_are_aligned_in_bounded_work():
    # 2^19 syllable readings, or C(25, 12) placements, if nothing bounded them.
    assert names.given_names_compatible(" ".join(["Fangan"] * 19), "F.", pinyin=True)
    assert names.given_names_compatible("J. " * 13, "J. " * 26)
