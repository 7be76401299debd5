"""The plain views the engine reads: :class:`AuthorshipView` (one byline slot)
and :class:`ProfileView` (a researcher's authorships pooled, built by
:func:`profile_of`), with the keys they are read by (co-authors,
affiliation words, given-name forms).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

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
