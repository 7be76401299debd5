"""Pairwise features between authorships and researcher profiles (pure, no ORM).

The views below are plain snapshots built by :mod:`curation.selectors`; every feature
is a float with a documented range so the scorer (and a curator) can read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from curation import names


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
            authors of the same paper.
        categories: the paper's arXiv categories.
        year: publication year or None.
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
    """

    id: int | None
    given_names: tuple[str, ...]
    family: str
    orcid: str = ""
    paper_ids: frozenset[int] = frozenset()
    coauthor_keys: frozenset[str] = frozenset()
    categories: frozenset[str] = frozenset()
    locked: bool = False


@dataclass(frozen=True)
class Features:
    """Feature values of one pair.

    Attributes:
        orcid: 1.0 both carry the same ORCID, -1.0 both carry different ones, 0.0 else.
        name: best given-name similarity in [0, 1]
            (:func:`curation.names.given_name_similarity`); 0.0 means incompatible.
        coauthors: number of shared co-author name keys (0, 1, 2 ...).
        categories: Jaccard overlap of arXiv categories in [0, 1].
        same_paper: 1.0 when both sides hold an authorship of the same paper (the pair
            cannot be one person), else 0.0.
    """

    orcid: float
    name: float
    coauthors: float
    categories: float
    same_paper: float = 0.0
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict[str, float]:
        """The features as ``{name: value}`` for storing as evidence."""
        return {
            "orcid": self.orcid,
            "name": self.name,
            "coauthors": self.coauthors,
            "categories": self.categories,
            "same_paper": self.same_paper,
        }


def _orcid(a: str, b: str) -> float:
    if a and b:
        return 1.0 if a == b else -1.0
    return 0.0


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _best_name(givens_a: tuple[str, ...], givens_b: tuple[str, ...]) -> float:
    best = 0.0
    for a in givens_a:
        for b in givens_b:
            if names.given_names_compatible(a, b):
                best = max(best, names.given_name_similarity(a, b))
    return best


def profile_of(
    authorships: list[AuthorshipView],
    *,
    id: int | None = None,  # noqa: A002
    orcid: str = "",
    locked: bool = False,
) -> ProfileView:
    """Build a ProfileView as the union of authorships.

    Args:
        authorships: at least one authorship.
        id: the researcher's primary key, None for an unsaved cluster.
        orcid: the researcher's ORCID, "" to take the first one its authorships carry.
        locked: whether the researcher is locked.

    Returns:
        The ProfileView.

    Raises:
        ValueError: ``authorships`` is empty.
    """
    if not authorships:
        raise ValueError("a profile needs at least one authorship")
    givens = tuple(dict.fromkeys(a.given for a in authorships))
    return ProfileView(
        id=id,
        given_names=givens,
        family=authorships[0].family,
        orcid=orcid or next((a.orcid for a in authorships if a.orcid), ""),
        paper_ids=frozenset(a.paper_id for a in authorships),
        coauthor_keys=frozenset().union(*(a.coauthor_keys for a in authorships)),
        categories=frozenset().union(*(a.categories for a in authorships)),
        locked=locked,
    )


def authorship_profile_features(a: AuthorshipView, p: ProfileView) -> Features:
    """Features of an authorship against a researcher profile."""
    return Features(
        orcid=_orcid(a.orcid, p.orcid),
        name=_best_name((a.given,), p.given_names),
        coauthors=float(len(a.coauthor_keys & p.coauthor_keys)),
        categories=_jaccard(a.categories, p.categories),
        same_paper=1.0 if a.paper_id in p.paper_ids else 0.0,
    )


def profile_profile_features(p: ProfileView, q: ProfileView) -> Features:
    """Features of two profiles (for merges and for clustering)."""
    return Features(
        orcid=_orcid(p.orcid, q.orcid),
        name=_best_name(p.given_names, q.given_names),
        coauthors=float(len(p.coauthor_keys & q.coauthor_keys)),
        categories=_jaccard(p.categories, q.categories),
        same_paper=1.0 if p.paper_ids & q.paper_ids else 0.0,
    )
