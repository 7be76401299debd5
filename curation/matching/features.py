"""Pairwise features between authorships and researcher profiles (pure, no ORM).

The views below are plain snapshots built by :mod:`curation.selectors`; every feature
is a float with a documented range so the scorer (and a curator) can read it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from curation import names

# Bylines longer than this are hyperauthorship (large collaborations): their
# co-authors are not evidence about one person. Two papers of a 3,000-member
# collaboration share hundreds of name keys whoever wrote them, and a cs.SE paper
# shares one or two initial-level keys with such a byline by chance. Source: the
# 100-author bound of hyperauthorship, Cronin (2001), "Hyperauthorship: a
# postmodern perversion or evidence of a structural shift in scholarly
# communication practices?", JASIST 52(7):558-569.
COAUTHOR_MAX_BYLINE = 100


def coauthor_keys_of(byline_keys: list[tuple[int, str]], *, own: int) -> frozenset[str]:
    """The co-author name keys one authorship contributes to the co-author feature.

    Args:
        byline_keys: ``[(slot id, name key)]`` of every slot of the paper, in any
            order, one per slot ("" keys included; they are dropped).
        own: the slot id of the authorship itself (left out).

    Returns:
        The other slots' non-empty name keys; empty when the byline has more than
        :data:`COAUTHOR_MAX_BYLINE` slots.
    """
    if len(byline_keys) > COAUTHOR_MAX_BYLINE:
        return frozenset()
    return frozenset(key for slot, key in byline_keys if slot != own and key)


@dataclass(frozen=True)
class AuthorshipView:
    """One authorship as the matcher sees it.

    Attributes:
        id: Authorship primary key.
        paper_id: Paper primary key (two authorships of one paper are never one person).
        given, family: parsed name parts (Unicode).
        block_key: see :func:`curation.names.block_key`.
        orcid: bare ORCID iD or "".
        coauthor_keys: name keys (:func:`curation.names.name_key`) of the other
            authors of the same paper; empty for a byline over
            :data:`COAUTHOR_MAX_BYLINE` (see :func:`coauthor_keys_of`).
        categories: the paper's arXiv categories.
        year: publication year or None.
        affiliation_tokens: content words of the affiliation strings printed with
            this authorship (:func:`affiliation_tokens`).
        given_rarity: how rare the full given name is in the corpus, in [0, 1]
            (:func:`given_name_rarities`); 0.0 for initials.
        family_rarity: how rare the family name is in the corpus, by the
            people it stands for, in [0, 1] (:func:`family_name_rarities`).
        block_repeat: how often the affiliations printed in its block repeat,
            in [0, 1] (:func:`block_repeats`).
        source_ids: the author ids the sources gave this byline slot, as
            ``"openalex:A5023888391"`` and ``"s2:1741101"`` (:func:`source_ids_of`),
            and ORCID iDs as ``"orcid:0000-0002-3666-1234"``: the slot's own and
            those of the sources' author profiles behind it
            (``curation.selectors``).
        authors: how many slots the paper's byline has (0: unknown).
        text_vector: the unit embedding of the paper's title and abstract
            (``wovepaper.embeddings``: all-MiniLM-L6-v2, float32, 384
            values), or None when the paper has none (not embedded, no title,
            a labelled set that prints no text). Left out of equality and
            hashing: two views are told apart by their other fields.
    """

    id: int
    paper_id: int
    given: str
    family: str
    block_key: str
    orcid: str = ""
    coauthor_keys: frozenset[str] = frozenset()
    categories: frozenset[str] = frozenset()
    year: int | None = None
    affiliation_tokens: frozenset[str] = frozenset()
    given_rarity: float = 0.0
    family_rarity: float = 0.0
    block_repeat: float = 0.0
    source_ids: frozenset[str] = frozenset()
    authors: int = 0
    text_vector: np.ndarray | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class ProfileView:
    """A researcher (or a would-be one) as the union of its authorships.

    Attributes:
        id: Researcher primary key, or None for a cluster not yet a researcher.
        given_names: every given-name form seen on its authorships.
        family: the family name of its display name.
        orcid: its ORCID iD or "".
        paper_ids: its papers.
        coauthor_keys, categories: unions over its authorships.
        locked: a curator confirmed the profile.
        affiliation_tokens: the union of its authorships' affiliation words.
        main_affiliation_tokens: the words printed on at least
            :data:`MAIN_AFFILIATION_SHARE` of its authorships that printed an
            affiliation, or None with fewer than two such authorships (then
            ``affiliation_tokens`` stands for them).
        given_rarity, family_rarity, block_repeat: the highest of its
            authorships'.
        source_ids: the union of its authorships' source ids and the
            researcher's own (``profile_of``).
        years: ``(first, last)`` publication year of its authorships, or None
            when none is dated.
        revision: the researcher's revision when the profile was read (0 for a
            cluster); a proposal records it, so that a later change makes it stale.
        text_vector: the unit mean of its authorships' ``text_vector`` (the
            centroid of what it writes about), or None when none has one.
    """

    id: int | None
    given_names: tuple[str, ...]
    family: str
    orcid: str = ""
    paper_ids: frozenset[int] = frozenset()
    coauthor_keys: frozenset[str] = frozenset()
    categories: frozenset[str] = frozenset()
    locked: bool = False
    affiliation_tokens: frozenset[str] = frozenset()
    given_rarity: float = 0.0
    family_rarity: float = 0.0
    block_repeat: float = 0.0
    revision: int = 0
    main_affiliation_tokens: frozenset[str] | None = None
    source_ids: frozenset[str] = frozenset()
    years: tuple[int, int] | None = None
    text_vector: np.ndarray | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class Features:
    """Feature values of one pair.

    Attributes:
        orcid: 1.0 both carry the same ORCID, -1.0 both carry different ones, 0.0 else.
        name: best given-name similarity in [0, 1]
            (:func:`curation.names.given_name_similarity`); 0.0 means incompatible.
        coauthors: number of shared co-author name keys (0, 1, 2 ...).
        categories: Jaccard overlap of arXiv categories in [0, 1].
        field_conflict: 1.0 when both sides carry arXiv categories and share
            no arXiv archive (:func:`field_archive`: ``hep-ex`` against
            ``astro-ph``; ``cond-mat.str-el`` meets ``cond-mat.mes-hall``),
            else 0.0. Fields apart are evidence against, fields unknown none:
            a model trained on labelled sets without fields (Wang, Qian) has a
            bias for pairs of unknown fields, which ``categories`` alone only
            raises, so two bare "J. Varela" of hep-ex and astro-ph scored 0.75
            in the bundled arXiv data.
        same_paper: 1.0 when both sides hold an authorship of the same paper (the pair
            cannot be one person), else 0.0.
        affiliation: Jaccard overlap of affiliation content words in [0, 1]; 0.0
            when either side printed none.
        rare_name: when both sides print the same full given name (not initials),
            how rare that name is in the corpus, in [0, 1]; else 0.0. Two
            "Shang-Yung Wang" are likely one person, two "Wei Wang" much less so.
        same_given: 1.0 when both sides print a full given name the same way
            (:func:`given_form`: ``"Yi-Fang"`` and ``"Yi Fang"``, or ``"Yifang"``
            twice; a full word and initials, ``"Y. Fang"``, count), else 0.0.
            ``name`` scores ``"J."``/``"Jian"`` and ``"J."``/``"J."`` alike;
            people keep one printed form, so a form shared is evidence of its
            own (S2AND's "first names equal" feature, Subramanian et al. 2021).
        same_initials: 1.0 when both sides share printed forms but none as a
            full name on both sides (``"Y.F."`` and ``"Y. F."``, or ``"JP"``
            and ``"J.P."``), else 0.0. A form of initials is shared by many
            more people than a full name: the two are apart so that a model
            weighs them on their own, and
            ``training.fit`` never lets ``same_initials`` weigh more than
            ``same_given`` (:data:`curation.matching.training.AT_LEAST`).
        affiliation_conflict: 1.0 when both sides printed affiliations and they
            share no content word, else 0.0: a mismatch is evidence, a missing
            affiliation is none, and ``affiliation`` alone (0.0 for both) cannot
            tell them apart. An authorship is compared with every word of a
            profile (any past affiliation counts); two profiles with their main
            words (``ProfileView.main_affiliation_tokens``).
        rare_family: how rare the family name is (the lower of the two sides'
            :func:`family_name_rarities`), in [0, 1]: namesakes are few under a
            family name printed with few given names ("Willett"), many under
            "Wang", whatever the given name.
        source_id: 1.0 when both sides carry one ORCID iD among their source
            ids (a source's author profile links it to one side), or one author
            id of OpenAlex or Semantic Scholar (their own disambiguation put the
            two under one profile) and some evidence beyond the name agrees: a
            co-author, a category, an affiliation word (:func:`_beyond_name`);
            else 0.0. A source's author id is weak evidence, never enough
            alone: it is often the very conflation matching exists to undo
            (OpenAlex's one "Jun Li" of 34,000 works; issue 46: four "Min
            Chen" works in soil science, optics and cardiology under one id).
        source_id_conflict: 1.0 when, for some source, both sides carry its
            author ids and share none, and no source id agrees; else 0.0. Weaker
            evidence than an agreement: a source often splits one person over
            several ids (OpenAlex merges them later), more rarely joins two.
        years_apart: how far apart in time the two sides publish: the years
            between their spans of publication years (0 when the spans overlap
            or either side has no dated paper), over :data:`YEARS_APART_CAP`,
            capped at 1.0. A namesake decades away is likelier another person
            (the year-difference features of S2AND, Subramanian et al. 2021,
            and of the MEDLINE pair study, Vishnyakova et al. 2019).
        block_repeat: how often the affiliations printed in the pair's block
            repeat (the lower of the two sides' :func:`block_repeats`), in
            [0, 1]: not evidence about the pair itself but how likely two
            namesakes of that block are one person before any evidence (the
            model's bias, set by the corpus).
        title_similarity: how alike the two sides' titles and abstracts are:
            the cosine of their ``text_vector`` less :data:`TITLE_NEUTRAL`
            (the similarity that is as likely for one person as for two),
            in [-1, 1]; 0.0 when either side has no text. Above 0 speaks for
            one person, below against. Papers on one subject are likelier by
            one author (the title and abstract similarity of S2AND,
            Subramanian et al. 2021, and of Vishnyakova et al. 2019).
    """

    orcid: float
    name: float
    coauthors: float
    categories: float
    same_paper: float = 0.0
    affiliation: float = 0.0
    rare_name: float = 0.0
    same_given: float = 0.0
    affiliation_conflict: float = 0.0
    rare_family: float = 0.0
    source_id: float = 0.0
    source_id_conflict: float = 0.0
    years_apart: float = 0.0
    same_initials: float = 0.0
    block_repeat: float = 0.0
    field_conflict: float = 0.0
    title_similarity: float = 0.0
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict[str, float]:
        """The features as ``{name: value}`` for storing as evidence."""
        return {
            "orcid": self.orcid,
            "name": self.name,
            "coauthors": self.coauthors,
            "categories": self.categories,
            "field_conflict": self.field_conflict,
            "affiliation": self.affiliation,
            "rare_name": self.rare_name,
            "same_given": self.same_given,
            "same_initials": self.same_initials,
            "affiliation_conflict": self.affiliation_conflict,
            "rare_family": self.rare_family,
            "source_id": self.source_id,
            "source_id_conflict": self.source_id_conflict,
            "years_apart": self.years_apart,
            "block_repeat": self.block_repeat,
            "title_similarity": self.title_similarity,
            "same_paper": self.same_paper,
        }


# Words too common in affiliations to tell two institutions apart. Source: the
# most frequent words of the 6,000 labelled affiliation strings in shared/data/ror
# (ROR's affiliation-matching test sets).
_AFFILIATION_STOPWORDS = frozenset(
    """of the and de di da der des du la le für fur for in at univ university
    universite universita universidad universidade universitat department dept
    institute inst institut instituto istituto school college faculty centre center
    laboratory lab national research science sciences physics technology
    engineering state""".split()
)


def affiliation_tokens(affiliations: Iterable[str]) -> frozenset[str]:
    """Content words of affiliation strings, folded, for overlap scoring.

    Args:
        affiliations: raw affiliation strings (``"Pittsburgh U."``,
            ``"Technische Universität Berlin"``).

    Returns:
        Folded words of three or more letters that are not in the stop list,
        e.g. ``{"pittsburgh"}``, ``{"technische", "berlin"}``; an item that is
        not a string (a stored list edited by hand) gives none: the corpus
        table every run reads (``curation.selectors``) must not fail on one
        row.
    """
    words = set()
    for text in affiliations:
        if not isinstance(text, str):
            continue
        for word in names.fold(text).split():
            if len(word) >= 3 and word not in _AFFILIATION_STOPWORDS:
                words.add(word)
    return frozenset(words)


@names.remembered
def full_given_key(given: str) -> str:
    """Folded full given name, or "" when it is only initials (``"J. P."``).

    ``"Shang-Yung"`` and ``"Shang Yung"`` give ``"shangyung"``.
    """
    words = names.fold(given).split()
    if not words or all(len(w) == 1 for w in words):
        return ""
    return "".join(words)


@names.remembered
def given_form(given: str) -> str:
    """A given name as printed, folded, with spaces, hyphens and periods removed.

    ``"Y.F."``, ``"Y. F."`` and ``"Y-F"`` give ``"yf"``; ``"Yi-Fang"`` gives
    ``"yifang"``. Unlike :func:`full_given_key` initials are kept: the form
    tells ``"J."`` from ``"Jian"``.
    """
    return "".join(names.fold(given).split())


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


def _rare_name(
    givens_a: tuple[str, ...],
    rarity_a: float,
    givens_b: tuple[str, ...],
    rarity_b: float,
) -> float:
    keys_a = {full_given_key(g) for g in givens_a} - {""}
    keys_b = {full_given_key(g) for g in givens_b} - {""}
    return min(rarity_a, rarity_b) if keys_a & keys_b else 0.0


def _shared_forms(givens_a: tuple[str, ...], givens_b: tuple[str, ...]) -> list[bool]:
    """For each printed form both sides share, whether it is a full name on
    both sides (``"JP"`` against ``"J.P."`` shares the form ``"jp"``, of
    initials on one side: not full). Symmetric in its arguments."""
    full_a: dict[str, bool] = {}
    for g in givens_a:
        form = given_form(g)
        if form:
            full_a[form] = full_a.get(form, False) or bool(full_given_key(g))
    shared: dict[str, bool] = {}
    for g in givens_b:
        form = given_form(g)
        if form in full_a:
            full_b = shared.get(form, False) or bool(full_given_key(g))
            shared[form] = full_b
    return [full_a[form] and full_b for form, full_b in shared.items()]


def _same_given(givens_a: tuple[str, ...], givens_b: tuple[str, ...]) -> float:
    return 1.0 if any(_shared_forms(givens_a, givens_b)) else 0.0


def _same_initials(givens_a: tuple[str, ...], givens_b: tuple[str, ...]) -> float:
    shared = _shared_forms(givens_a, givens_b)
    return 1.0 if shared and not any(shared) else 0.0


def _affiliation_conflict(a: frozenset[str], b: frozenset[str]) -> float:
    return 1.0 if a and b and not a & b else 0.0


def source_ids_of(openalex_author_id: str, s2_author_id: str) -> frozenset[str]:
    """A byline slot's source author ids as prefixed strings.

    Args:
        openalex_author_id: ``Authorship.openalex_author_id`` ("" for none).
        s2_author_id: ``Authorship.s2_author_id`` ("" for none).

    Returns:
        ``{"openalex:<id>", "s2:<id>"}``, without the empty ones.
    """
    out = set()
    if openalex_author_id:
        out.add(f"openalex:{openalex_author_id}")
    if s2_author_id:
        out.add(f"s2:{s2_author_id}")
    return frozenset(out)


def _source_ids(a: frozenset[str], b: frozenset[str]) -> tuple[float, float]:
    """``(source_id, source_id_conflict)`` of two sets of source author ids."""
    if not a or not b:
        return 0.0, 0.0
    if a & b:
        return 1.0, 0.0
    sources_a = {i.split(":", 1)[0] for i in a}
    both = sources_a & {i.split(":", 1)[0] for i in b}
    return 0.0, 1.0 if both else 0.0


def _source_id_features(
    a: frozenset[str], b: frozenset[str], *, beyond_name: bool
) -> dict[str, float]:
    """The ``source_id`` and ``source_id_conflict`` features of two sets of
    source ids; ``beyond_name``: whether evidence beyond the name agrees
    (:func:`_beyond_name`), without which a shared OpenAlex or Semantic
    Scholar author id counts for nothing (a shared ``orcid:`` id still
    does)."""
    agree, conflict = _source_ids(a, b)
    if agree and not beyond_name and not any(i.startswith("orcid:") for i in a & b):
        agree = 0.0
    return {"source_id": agree, "source_id_conflict": conflict}


def _beyond_name(coauthors: float, categories: float, affiliation: float) -> bool:
    """Whether a pair shares more than a name: a co-author, an arXiv category
    or an affiliation word (its ``coauthors``, ``categories`` and
    ``affiliation`` features above 0)."""
    return coauthors > 0.0 or categories > 0.0 or affiliation > 0.0


# The cosine of two title-and-abstract embeddings that says nothing either way.
# Two measurements, with the embeddings the product stores (all-MiniLM-L6-v2 as
# wovepaper.embeddings.model_name runs it: int8, 128 word pieces):
# - the MEDLINE pair set's 1,476 train pairs with texts (labelled_pairs; each pair
#   shares a family name and first initial): a one-feature logistic fit, corrected
#   for the pairs' 66% of one person, crosses a log likelihood ratio of 0 at 0.17.
#   One person: median cosine 0.31 (quartiles 0.19 to 0.49); two: 0.04 (-0.01 to
#   0.13). Those namesakes are drawn from all of biomedicine;
# - the demo corpus (make demo, 1,273 papers): two random papers of one primary
#   arXiv category lie at median 0.26 (quartiles 0.17 to 0.36); any two at 0.07.
# Namesakes in one field, the usual case in an arXiv block, would read as one
# person at 0.17; the neutral point is the field's median, so a shared subject
# counts only when it is nearer than the field makes likely.
TITLE_NEUTRAL = 0.26


def title_similarity(a: np.ndarray | None, b: np.ndarray | None) -> float:
    """The ``title_similarity`` feature of two text vectors (see
    :class:`Features`): their cosine less :data:`TITLE_NEUTRAL`, in [-1, 1],
    rounded to 6 places; 0.0 when either is None."""
    if a is None or b is None:
        return 0.0
    value = float(np.dot(a, b)) - TITLE_NEUTRAL
    return round(min(1.0, max(-1.0, value)), 6) + 0.0


def centroid(vectors: Iterable[np.ndarray | None]) -> np.ndarray | None:
    """The unit mean of the vectors that are not None (float32), or None when
    none is (or they cancel out)."""
    known = [v for v in vectors if v is not None]
    if not known:
        return None
    if len(known) == 1:
        return known[0]
    mean = np.mean(known, axis=0, dtype=np.float32)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 1e-6 else None


def with_text_vectors(
    views: Iterable[AuthorshipView],
    texts: Mapping[int, str],
    embed: Callable[[list[str]], np.ndarray],
) -> list[AuthorshipView]:
    """The views, each given the embedding of its paper's text.

    Args:
        views: authorship views.
        texts: ``{paper_id: "title. abstract"}``; a paper missing here, or
            whose text is blank, gets no vector.
        embed: texts to unit vectors, one row each (``wovepaper.embeddings``'s
            ``embed`` or ``embed_cached``); called once, on each paper's text
            once.

    Returns:
        New views in input order (``dataclasses.replace``), ``text_vector``
        set where the paper has a text.
    """
    views = list(views)
    papers = sorted(
        {v.paper_id for v in views if (texts.get(v.paper_id) or "").strip()}
    )
    vectors = embed([texts[p] for p in papers]) if papers else []
    by_paper = dict(zip(papers, vectors, strict=True))
    return [replace(v, text_vector=by_paper.get(v.paper_id)) for v in views]


# Years apart at which the years_apart feature reaches 1.0 (a career's length
# is about this; beyond it the gap says no more).
YEARS_APART_CAP = 20


def _years_apart(a: tuple[int, int] | None, b: tuple[int, int] | None) -> float:
    """The ``years_apart`` feature of two ``(first, last)`` year spans."""
    if a is None or b is None:
        return 0.0
    gap = max(a[0] - b[1], b[0] - a[1], 0)
    return round(min(gap, YEARS_APART_CAP) / YEARS_APART_CAP, 6)


def _span(year: int | None) -> tuple[int, int] | None:
    return None if year is None else (year, year)


def _orcid(a: str, b: str) -> float:
    if a and b:
        return 1.0 if a == b else -1.0
    return 0.0


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@names.remembered
def field_archive(category: str) -> str:
    """The arXiv archive of a category: the part before its first dot, or ""
    for a field of another scheme (a MEDLINE ``"journal:..."`` or
    ``"mesh:..."``, whose journals and headings have no archive to share).

    ``"cond-mat.str-el"`` gives ``"cond-mat"``, ``"hep-th"`` itself. Source:
    the arXiv category taxonomy (https://arxiv.org/category_taxonomy), where a
    category is ``archive.subject`` or an archive of no subjects.
    """
    return "" if ":" in category else category.split(".", 1)[0]


def field_conflict(a: frozenset[str], b: frozenset[str]) -> float:
    """1.0 when both sides carry arXiv categories and share no archive
    (:func:`field_archive`), else 0.0: the ``field_conflict`` feature.
    """
    archives_a = {field_archive(c) for c in a} - {""}
    archives_b = {field_archive(c) for c in b} - {""}
    if not archives_a or not archives_b:
        return 0.0
    return 0.0 if archives_a & archives_b else 1.0


def _best_name(
    givens_a: tuple[str, ...], givens_b: tuple[str, ...], family: str
) -> float:
    pinyin = names.reads_as_pinyin(family)
    best = 0.0
    for a in givens_a:
        for b in givens_b:
            # One alignment a pair: the similarity says whether they are compatible.
            similarity = names.given_name_similarity(a, b, pinyin=pinyin)
            if similarity >= names.COMPATIBLE_SIMILARITY:
                best = max(best, similarity)
    return best


def names_conflict(p: ProfileView, q: ProfileView) -> bool:
    """Whether two profiles hold given names that cannot be one person's.

    True when some given name of ``p`` and some given name of ``q`` are not
    compatible (:func:`curation.names.given_names_compatible`, by pinyin
    syllable for a Chinese family name: ``"Jian"`` and ``"Jie"``), unless both
    carry the same ORCID. Used as a cannot-link constraint when clusters are
    merged: average linkage would otherwise let a
    cluster holding both ``"J."`` and ``"Jian"`` absorb ``"Jie"`` through the
    ``"J."`` mentions.

    Args:
        p, q: the two profiles.

    Returns:
        True when they must stay apart on their names.
    """
    if p.orcid and p.orcid == q.orcid:
        return False
    pinyin = names.reads_as_pinyin(p.family)
    return any(
        not names.given_names_compatible(a, b, pinyin=pinyin)
        for a in p.given_names
        for b in q.given_names
    )


def names_meet(p: ProfileView, q: ProfileView) -> bool:
    """Whether two profiles can be one person on their names.

    True when both carry the same ORCID; else, when both print full given names
    (not initials only), some full given name of each must be compatible with
    one of the other's, so a shared bare ``"J."`` does not bridge ``"Jian"`` and
    ``"Jie"``; else some given name of each. Unlike :func:`names_conflict`, a
    researcher whose variants a curator accepted though the rules call them
    incompatible (``"Yuri"``, ``"Yury"``) still meets either spelling.

    Checked before merge and attach scoring: most researcher pairs in a block
    of a common surname fail it ("Yun" and "Yifang").

    Args:
        p, q: the two profiles.

    Returns:
        False when they cannot be one person on their names.
    """
    if p.orcid and p.orcid == q.orcid:
        return True
    full_p = tuple(g for g in p.given_names if full_given_key(g))
    full_q = tuple(g for g in q.given_names if full_given_key(g))
    if full_p and full_q:
        return _best_name(full_p, full_q, p.family) > 0.0
    return _best_name(p.given_names, q.given_names, p.family) > 0.0


# Share of a profile's affiliation-printing authorships a word must appear on to
# be one of its main affiliation words. Chosen by evaluate_matching (5 folds of
# whole blocks, threshold 0.4, B3 F1 Wang / Qian): the union (no share) gives
# 0.911 / 0.817, a quarter 0.919 / 0.818, 0.3 applied to the overlap as well
# 0.907 / 0.818.
MAIN_AFFILIATION_SHARE = 0.25


def _main_affiliation_tokens(
    authorships: list[AuthorshipView],
) -> frozenset[str] | None:
    printed = [a.affiliation_tokens for a in authorships if a.affiliation_tokens]
    if len(printed) < 2:
        return None
    counts: dict[str, int] = {}
    for tokens in printed:
        for token in tokens:
            counts[token] = counts.get(token, 0) + 1
    least = MAIN_AFFILIATION_SHARE * len(printed)
    return frozenset(t for t, n in counts.items() if n >= least)


def _main_affiliation(p: ProfileView) -> frozenset[str]:
    if p.main_affiliation_tokens is None:
        return p.affiliation_tokens
    return p.main_affiliation_tokens


def profile_of(
    authorships: list[AuthorshipView],
    *,
    id: int | None = None,  # noqa: A002
    orcid: str = "",
    locked: bool = False,
    revision: int = 0,
    source_ids: Iterable[str] = (),
) -> ProfileView:
    """Build a ProfileView as the union of authorships.

    Args:
        authorships: at least one authorship.
        id: the researcher's primary key, None for an unsaved cluster.
        orcid: the researcher's ORCID, "" to take the first one its authorships carry.
        locked: whether the researcher is locked.
        revision: the researcher's revision as read.
        source_ids: the researcher's own source author ids (its OpenAlex and
            Semantic Scholar ids, :func:`source_ids_of`), added to its
            authorships'.

    Returns:
        The ProfileView.

    Raises:
        ValueError: ``authorships`` is empty.
    """
    if not authorships:
        raise ValueError("a profile needs at least one authorship")
    givens = tuple(dict.fromkeys(a.given for a in authorships))
    years = [a.year for a in authorships if a.year is not None]
    return ProfileView(
        id=id,
        given_names=givens,
        family=authorships[0].family,
        orcid=orcid or next((a.orcid for a in authorships if a.orcid), ""),
        paper_ids=frozenset(a.paper_id for a in authorships),
        coauthor_keys=frozenset().union(*(a.coauthor_keys for a in authorships)),
        categories=frozenset().union(*(a.categories for a in authorships)),
        affiliation_tokens=frozenset().union(
            *(a.affiliation_tokens for a in authorships)
        ),
        given_rarity=max(a.given_rarity for a in authorships),
        family_rarity=max(a.family_rarity for a in authorships),
        block_repeat=max(a.block_repeat for a in authorships),
        main_affiliation_tokens=_main_affiliation_tokens(authorships),
        source_ids=frozenset(source_ids).union(*(a.source_ids for a in authorships)),
        locked=locked,
        revision=revision,
        years=(min(years), max(years)) if years else None,
        text_vector=centroid(a.text_vector for a in authorships),
    )


def authorship_profile_features(a: AuthorshipView, p: ProfileView) -> Features:
    """Features of an authorship against a researcher profile."""
    coauthors = float(len(a.coauthor_keys & p.coauthor_keys))
    categories = _jaccard(a.categories, p.categories)
    affiliation = _jaccard(a.affiliation_tokens, p.affiliation_tokens)
    return Features(
        orcid=_orcid(a.orcid, p.orcid),
        name=_best_name((a.given,), p.given_names, a.family),
        coauthors=coauthors,
        categories=categories,
        field_conflict=field_conflict(a.categories, p.categories),
        same_paper=1.0 if a.paper_id in p.paper_ids else 0.0,
        affiliation=affiliation,
        rare_name=_rare_name((a.given,), a.given_rarity, p.given_names, p.given_rarity),
        same_given=_same_given((a.given,), p.given_names),
        same_initials=_same_initials((a.given,), p.given_names),
        affiliation_conflict=_affiliation_conflict(
            a.affiliation_tokens, p.affiliation_tokens
        ),
        rare_family=min(a.family_rarity, p.family_rarity),
        block_repeat=min(a.block_repeat, p.block_repeat),
        **_source_id_features(
            a.source_ids,
            p.source_ids,
            beyond_name=_beyond_name(coauthors, categories, affiliation),
        ),
        years_apart=_years_apart(_span(a.year), p.years),
        title_similarity=title_similarity(a.text_vector, p.text_vector),
    )


def profile_profile_features(p: ProfileView, q: ProfileView) -> Features:
    """Features of two profiles (for merges and for clustering)."""
    coauthors = float(len(p.coauthor_keys & q.coauthor_keys))
    categories = _jaccard(p.categories, q.categories)
    affiliation = _jaccard(p.affiliation_tokens, q.affiliation_tokens)
    return Features(
        orcid=_orcid(p.orcid, q.orcid),
        name=_best_name(p.given_names, q.given_names, p.family),
        coauthors=coauthors,
        categories=categories,
        field_conflict=field_conflict(p.categories, q.categories),
        same_paper=1.0 if p.paper_ids & q.paper_ids else 0.0,
        affiliation=affiliation,
        rare_name=_rare_name(
            p.given_names, p.given_rarity, q.given_names, q.given_rarity
        ),
        same_given=_same_given(p.given_names, q.given_names),
        same_initials=_same_initials(p.given_names, q.given_names),
        # Main words, not unions: two big clusters' unions share some word
        # ("beijing") by chance, which would hide a real conflict.
        affiliation_conflict=_affiliation_conflict(
            _main_affiliation(p), _main_affiliation(q)
        ),
        rare_family=min(p.family_rarity, q.family_rarity),
        block_repeat=min(p.block_repeat, q.block_repeat),
        **_source_id_features(
            p.source_ids,
            q.source_ids,
            beyond_name=_beyond_name(coauthors, categories, affiliation),
        ),
        years_apart=_years_apart(p.years, q.years),
        title_similarity=title_similarity(p.text_vector, q.text_vector),
    )
