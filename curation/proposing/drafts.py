"""A proposal before it is stored (:class:`Draft`), its fingerprint, and the
pairs and evidence it records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from curation.matching import pipeline
from curation.matching.features import (
    COAUTHOR_MAX_BYLINE,
    AuthorshipView,
)


def proposal_fingerprint(
    *, kind: str, authorship_ids: list[int], researcher_ids: list[int]
) -> str:
    """SHA-256 of what a proposal is about (kind and members), 64 hex characters.

    The same fingerprint is never pending twice and never proposed again once a
    curator rejected it.
    """
    text = f"{kind}|{sorted(authorship_ids)}|{sorted(researcher_ids)}"
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Draft:
    """A proposal before it is stored (:func:`curation.proposing.saving.save_drafts`).

    Attributes:
        kind: a :class:`curation.models.Proposal.Kind` value.
        score: the pairwise probability in [0, 1] the proposal rests on.
        evidence: what the proposal records for curators (pairs, features).
        block_key: the name block it was drafted in.
        authorship_ids: the authorships it moves or founds a profile with.
        researcher_id: the profile it attaches to, merges or splits.
        other_researcher_id: a merge's second profile.
        identifier_proven: an ORCID iD proves it (auto-apply may take it).
    """

    kind: str
    score: float
    evidence: dict
    block_key: str
    authorship_ids: list[int]
    researcher_id: int | None = None
    other_researcher_id: int | None = None
    identifier_proven: bool = False


# Pairs a `new` proposal's evidence records at most.
PAIRS_RECORDED = 20


def recorded_pairs(found: pipeline.Cluster) -> list[dict]:
    """The evidence of a proposed cluster's pairs that its proposal records:
    the strongest joined pair first (what joined the cluster most surely:
    the researcher page's "Why is this paper here?" reads its words), then
    the weakest, lowest score first (where a proposed person is likeliest to
    be two: what a curator reviews), :data:`PAIRS_RECORDED` in all (ties in
    clustering order). Each carries ``"between"``: the authorship ids on
    either side (``[[id], [id]]`` for two authorships, the parts' ids for two
    parts a merge joined). Recorded before, the first pairs of its first
    members, in no order of strength."""
    n = len(found.pair_scores)
    if not n:
        return []
    by_score = sorted(range(n), key=lambda k: (found.pair_scores[k].pairwise_score, k))
    strongest = max(range(n), key=lambda k: (found.pair_scores[k].pairwise_score, -k))
    order = [strongest] + [k for k in by_score if k != strongest][: PAIRS_RECORDED - 1]
    return [
        {
            **found.pair_scores[k].evidence,
            "between": [list(side) for side in found.pair_sides[k]],
        }
        for k in order
    ]


def large_collaboration(views: Iterable[AuthorshipView]) -> bool:
    """Whether any of these slots is on a byline of over
    :data:`~curation.matching.features.COAUTHOR_MAX_BYLINE` authors."""
    return any(v.authors > COAUTHOR_MAX_BYLINE for v in views)


def likeliest_evidence(likeliest: tuple[int, int, int]) -> dict:
    """A cluster's :attr:`~curation.matching.pipeline.Cluster.likeliest` as
    evidence stores it: ``{"researcher", "holds", "of"}``."""
    researcher, holds, of = likeliest
    return {"researcher": researcher, "holds": holds, "of": of}
