"""What the pipeline takes and returns: the curators' constraints
(:class:`Constraints`) and a :class:`Cluster` of authorships with its pairs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from curation.matching import scoring
from curation.matching.features import (
    AuthorshipView,
)


@dataclass(frozen=True)
class Constraints:
    """Decisions between authorships that clustering obeys (by authorship id).

    A curator's "these are one person" is a must-link, "these are not" a
    cannot-link: S2AND's cluster seeds, ``require`` and ``disallow``
    (Subramanian et al. 2021). Constraints hold within a block: authorships of
    different blocks are never compared.

    Attributes:
        must_link: pairs that share a cluster, unless a cannot-link forbids it.
        cannot_link: pairs that never share one; it carries over to the
            clusters holding them.
    """

    must_link: frozenset[tuple[int, int]] = frozenset()
    cannot_link: frozenset[tuple[int, int]] = frozenset()

    @classmethod
    def of(
        cls,
        must_link: Iterable[tuple[int, int]] = (),
        cannot_link: Iterable[tuple[int, int]] = (),
    ) -> Constraints:
        """Constraints from pairs in any order (each kept as ``(low, high)``)."""

        def ordered(pairs):
            return frozenset(tuple(sorted(p)) for p in pairs if p[0] != p[1])

        return cls(ordered(must_link), ordered(cannot_link))

    def __bool__(self) -> bool:
        return bool(self.must_link or self.cannot_link)

    def between(
        self, owner: dict[int, int], pairs: frozenset[tuple[int, int]]
    ) -> set[tuple[int, int]]:
        """The ``(i, j)`` item pairs, ``i < j``, whose items hold the two
        sides of one of ``pairs``; ``owner`` maps an authorship id to its item."""
        out = set()
        for a, b in pairs:
            i, j = owner.get(a), owner.get(b)
            if i is not None and j is not None and i != j:
                out.add((min(i, j), max(i, j)))
        return out


NO_CONSTRAINTS = Constraints()


@dataclass(frozen=True)
class Cluster:
    """One proposed person.

    Attributes:
        members: the authorships, in input order.
        pair_scores: the Scores inside the cluster that clustering computed:
            every pair of members of one chunk (or of a block of at most
            :data:`CHUNK`), clustered together directly, and every pair of
            parts (chunk clusters, scored as profiles) a merge joined; empty
            for one member.
        pair_sides: for each of ``pair_scores``, in its order, the member ids
            on either side: ``((id,), (id,))`` for two members, the parts'
            member ids for two parts.
        likeliest: for a cluster of evidence-free authorships that
            :func:`attach_evidence_free` left alone because the likeliest
            holder of its name is a researcher (whom nothing forbids):
            ``(researcher id, its authorships, the authorships of every holder
            of the name)``; else None.
    """

    members: list[AuthorshipView]
    pair_scores: list[scoring.Score]
    pair_sides: list[tuple[tuple[int, ...], tuple[int, ...]]] = field(
        default_factory=list
    )
    likeliest: tuple[int, int, int] | None = None

    @property
    def weakest(self) -> float:
        """The lowest pairwise score in [0, 1] among :attr:`pair_scores` (every
        pair clustering scored inside the cluster); 1.0 for a single member.
        What the auto-apply policy weighs: a cluster whose weakest link clears
        its threshold is one person at every link, where the mean
        (:attr:`cohesion`) can hide one doubtful member."""
        return min((s.pairwise_score for s in self.pair_scores), default=1.0)

    @property
    def cohesion(self) -> float:
        """Mean pairwise score of the members in [0, 1]; 1.0 for a single member."""
        if not self.pair_scores:
            return 1.0
        return sum(s.pairwise_score for s in self.pair_scores) / len(self.pair_scores)


def _ids(cluster: Cluster) -> tuple[int, ...]:
    return tuple(m.id for m in cluster.members)
