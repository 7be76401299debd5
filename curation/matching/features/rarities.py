"""How many people a name is likely to stand for, counted in the corpus:
given-name and family-name rarities (:class:`NameRarities`) and how often a
block's affiliations repeat (:func:`block_repeats`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from curation import names
from curation.matching.features.views import full_given_key


class NameRarities(dict):
    """A corpus's name rarities: ``{full given key: rarity}``, plus ``family``.

    The mapping itself holds the given-name rarities
    (:func:`given_name_rarities`); the ``family`` attribute holds
    ``{folded family name: rarity}`` (:func:`family_name_rarities`).
    ``given_unseen`` and ``family_unseen`` are the rarity of a name the table
    has not counted (a name first seen after the table was read, as by an
    incremental matching run): the rarity of a count of one, the rarest.
    The ``block_repeat`` attribute, read with them from the same corpus,
    holds ``{block key: repeat}`` (:func:`block_repeats`; a block not in it
    has :data:`BLOCK_REPEAT_UNKNOWN`).
    """

    def __init__(
        self,
        given: Mapping[str, float] | None = None,
        family: Mapping[str, float] | None = None,
        *,
        given_unseen: float = 0.0,
        family_unseen: float = 0.0,
        block_repeat: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__(given or {})
        self.family: dict[str, float] = dict(family or {})
        self.given_unseen = given_unseen
        self.family_unseen = family_unseen
        self.block_repeat: dict[str, float] = dict(block_repeat or {})

    @classmethod
    def of(cls, names_: Iterable[tuple[str, str]]) -> NameRarities:
        """The rarities of a corpus given as ``(given, family)`` of every mention."""
        return cls.counted((given, family, 1) for given, family in names_)

    @classmethod
    def counted(cls, rows: Iterable[tuple[str, str, int]]) -> NameRarities:
        """The rarities of a corpus given as ``(given, family, mentions)`` rows
        (one row per distinct printed name, as a grouping query returns them).

        Given names are counted by mentions (:func:`given_name_rarities`);
        family names by the people they stand for (:func:`family_name_rarities`).
        """
        given_counts: dict[str, int] = {}
        full: dict[str, set[str]] = {}
        initials: dict[str, set[str]] = {}
        for given, family, n in rows:
            folded = names.fold(family)
            full.setdefault(folded, set())
            key = full_given_key(given)
            if key:
                given_counts[key] = given_counts.get(key, 0) + n
                full[folded].add(key)
            first = names.fold(given)[:1]
            if first:
                initials.setdefault(folded, set()).add(first)
        family_counts = {
            f: max(1, len(keys), len(initials.get(f, ()))) for f, keys in full.items()
        }
        return cls(
            rarities_from_counts(given_counts),
            rarities_from_counts(family_counts),
            given_unseen=_rarity_of_one(given_counts),
            family_unseen=_rarity_of_one(family_counts),
        )


def _rarity_of_one(counts: Mapping[str, int]) -> float:
    """The rarity :func:`rarities_from_counts` gives a count of 1 beside
    ``counts`` (0.0 with none: no corpus, no rarity)."""
    if not counts:
        return 0.0
    return round(1.0 - math.log(2) / math.log1p(max(max(counts.values()), 1)), 6)


# Mentions per distinct affiliation at which a block's repeat is 1 (its
# ceiling): chosen on the labelled sets, the shipped model's B3 F1 (Wang /
# Qian, evaluate_matching "with the other sets"; measured before a block
# printing fewer than two affiliations was read as unknown) at 10: 0.889 /
# 0.770, at 30: 0.883 / 0.781, at 100: 0.881 / 0.783.
BLOCK_REPEAT_CAP = 30
# Mentions printing an affiliation a block needs for its repeat to be read.
BLOCK_REPEAT_MIN_PRINTED = 2
# The repeat of a block that printed fewer (arXiv prints few affiliations), or
# that a remembered table never counted: the mean over the labelled sets'
# training pairs, each set weighing alike (Wang 0.789, Qian 0.519). Read as 0,
# "every mention another affiliation", it set a model trained with this
# feature against joining two mentions of one LHCb author ("T. Skwarnicki",
# hep-ex, 2014 and 2021) on the bundled arXiv data.
BLOCK_REPEAT_UNKNOWN = 0.65


def block_repeats(rows: Iterable[tuple[str, frozenset[str], int]]) -> dict[str, float]:
    """How often the affiliations printed in each block repeat, in [0, 1].

    Two mentions of a block are one person with a chance of the sum, over
    its people, of their squared shares of its mentions: a block of a few
    prolific people (INSPIRE's Wangs, 29 mentions a person) starts far likelier
    than one of many with a paper or two (S2AND's Qian set, 5.5). Mentions a
    person is not known before matching; mentions per distinct affiliation
    (its content words, :func:`affiliation_tokens`) stands in for it:
    ``log(mentions printing an affiliation / distinct affiliations) /
    log(BLOCK_REPEAT_CAP)``, capped at 1. On the labelled sets it is 15 (Wang)
    and 4.5 (Qian) a block, and it follows the block's share of one-person
    pairs within each set (Spearman +0.31 on Wang, +0.23 on Qian, blocks of 5
    or more mentions). Without it, one model trained on both sets meets two
    corpora whose namesakes are one person at different rates and no feature
    tells them apart: the rarity of the family name, +3.0 and +2.8 fitted on
    each set alone, fell to +0.07 fitted on both, and the shipped model did
    worse on Wang than matching full names (B3 F1 0.814 against 0.878; with
    this feature 0.887, and on Qian 0.789 where it gave 0.780).

    Args:
        rows: ``(block key, affiliation words, mentions)``, a block's rows
            summed (one row per mention, or per distinct affiliation as a
            grouping query returns them); rows without words are left out.

    Returns:
        ``{block key: repeat}`` for the blocks where at least
        :data:`BLOCK_REPEAT_MIN_PRINTED` mentions print an affiliation (0.0
        when each prints another); a block not in it has
        :data:`BLOCK_REPEAT_UNKNOWN`: that no affiliation was printed says
        nothing of how many people a block holds.
    """
    printed: dict[str, int] = {}
    distinct: dict[str, set[frozenset[str]]] = {}
    for block, words, n in rows:
        if not words or n <= 0:
            continue
        printed[block] = printed.get(block, 0) + n
        distinct.setdefault(block, set()).add(words)
    top = math.log(BLOCK_REPEAT_CAP)
    return {
        block: round(min(1.0, math.log(n / len(distinct[block])) / top), 6)
        for block, n in printed.items()
        if n >= BLOCK_REPEAT_MIN_PRINTED
    }


def given_name_rarities(givens: Iterable[str]) -> dict[str, float]:
    """Rarity of each full given name in a corpus, in [0, 1].

    ``rarity = 1 - log(1 + count) / log(1 + max count)`` over the folded full
    given names (:func:`full_given_key`) of every mention in the corpus: the most
    common name scores 0, a name seen once close to 1. Counting names in the
    corpus itself follows S2AND's name-count features (Subramanian et al. 2021),
    without its external count tables.

    Args:
        givens: the given name of every mention (initials are ignored).

    Returns:
        ``{full given key: rarity}``.
    """
    counts: dict[str, int] = {}
    for given in givens:
        key = full_given_key(given)
        if key:
            counts[key] = counts.get(key, 0) + 1
    return rarities_from_counts(counts)


def family_name_rarities(names_: Iterable[tuple[str, str]]) -> dict[str, float]:
    """Rarity of each family name in a corpus, in [0, 1], by its given names.

    A family name's count stands for how many people carry it, which its
    number of mentions does not (one prolific "Willett" prints as many
    mentions as many "Wangs"): the number of distinct full given names
    (:func:`full_given_key`) it is printed with, or of distinct first
    initials when those are more (a family printed with initials only, "A.
    Wang" to "Z. Wang", is no rarer for it), at least 1. Rarity is
    :func:`rarities_from_counts` of those counts. S2AND weighs a pair by the
    counts of its last name for the same reason (Subramanian et al. 2021, its
    "last name count" features); the counts come from the corpus itself here.

    Args:
        names_: ``(given, family)`` of every mention.

    Returns:
        ``{folded family name: rarity}``.
    """
    return NameRarities.of(names_).family


def rarities_from_counts(counts: Mapping[str, int]) -> dict[str, float]:
    """Rarity in [0, 1] of each full given name key from its number of uses.

    Args:
        counts: ``{full given key: mentions}`` (see :func:`given_name_rarities`).

    Returns:
        ``{full given key: 1 - log(1 + count) / log(1 + max count)}``: the most
        used name scores 0.0; ``{}`` for no names.
    """
    if not counts:
        return {}
    top = math.log1p(max(counts.values()))
    return {k: round(1.0 - math.log1p(n) / top, 6) for k, n in counts.items()}
