"""Every curation write: proposing, applying, rejecting. One transaction each.

Proposal status changes go through :func:`_transition` only: a compare-and-swap on
the status (``filter(pk=..., status=old).update(status=new)``, proceed only if one
row changed) plus an append-only CurationEvent, after the pattern of healthchecks'
``Flip`` rows.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import math
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from curation import auto_apply, auto_apply_bulk, edits, names, selectors
from curation.changes import Change, gathered, same_paper_clash
from curation.exceptions import (
    CONFLICT,
    IDENTIFIER_TAKEN,
    ILLEGAL_TRANSITION,
    LOCKED,
    MATCHING_BUSY,
    NOT_ON_RESEARCHER,
    NOT_PENDING,
    NOT_PENDING_STALE,
    STALE,
    CurationError,
    IllegalTransition,
    MatchingBusy,
    ProposalConflict,
    ProposalNotPending,
    ProposalStale,
    ResearcherConflict,
    ResearcherLocked,
)
from curation.matching import (
    blocking,
    orcids,
    overmerge,
    pipeline,
    scoring,
    training,
    variants,
)
from curation.matching.features import (
    COAUTHOR_MAX_BYLINE,
    AuthorshipView,
    NameRarities,
    ProfileView,
    authorship_profile_features,
    full_given_key,
    names_meet,
    profile_of,
    profile_profile_features,
)
from curation.models import Constraint, CurationEvent, MatcherModel, Proposal
from wovepaper import embeddings
from wovepaper.models import Authorship, Researcher
from wovepaper.outbox import outbox_send

logger = logging.getLogger(__name__)

S = Proposal.Status
TRANSITIONS: dict[str, set[str]] = {
    S.PENDING: {S.APPROVED, S.APPLIED, S.REJECTED, S.STALE, S.FAILED},
    S.APPROVED: {S.APPLIED, S.STALE, S.FAILED},
    S.APPLIED: {S.REVERTED},
    S.REJECTED: {S.PENDING},  # an undo of the rejection
    S.REVERTED: {S.APPLIED},
    S.STALE: set(),
    S.FAILED: set(),
}


# --- proposing ------------------------------------------------------------


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
class _Draft:
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


def _recorded_pairs(found: pipeline.Cluster) -> list[dict]:
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


def _names_agree(a: AuthorshipView, p: ProfileView) -> bool:
    pinyin = names.reads_as_pinyin(a.family)
    return any(
        names.given_names_compatible(a.given, g, pinyin=pinyin) for g in p.given_names
    )


# An attach candidate: (score, evidence, researcher, the authorship as scored:
# itself, or read into the researcher's block).
_Best = tuple[float, dict, ProfileView, AuthorshipView]


def _best_elsewhere(
    a: AuthorshipView,
    elsewhere: Mapping[str, list[ProfileView]],
    vetoes: set,
    weights: scoring.Weights,
) -> _Best | None:
    """The best-scored researcher of another block that ``a``'s name, read
    another way, lands in (:func:`curation.names.block_key_readings`), with
    evidence beyond the name (:func:`variants.corroborated`) and, for a
    swapped order, a full given name to confirm it (:func:`variants.confirms`);
    None when there is none. Its evidence carries ``reading``: ``{authorship,
    printed, read_as, rule, block}``."""
    best: _Best | None = None
    for r in names.block_key_readings(a.given, a.family):
        if r.key == a.block_key or not elsewhere.get(r.key):
            continue
        read = replace(a, given=r.given, family=r.family, block_key=r.key)
        single = profile_of([read])
        for p in elsewhere[r.key]:
            if (
                ("a", a.id, p.id) in vetoes
                or not variants.confirms(r, p.given_names)
                or not variants.corroborated(single, p)
                or not names_meet(single, p)
            ):
                continue
            s = scoring.score(authorship_profile_features(read, p), weights)
            if s.veto or (best is not None and s.pairwise_score <= best[0]):
                continue
            evidence = {
                **s.evidence,
                "reading": {
                    "authorship": a.id,
                    "printed": variants.written(a.given, a.family),
                    "read_as": variants.written(r.given, r.family),
                    "rule": names.READING_KINDS[r.kind],
                    "block": r.key,
                },
            }
            best = (s.pairwise_score, evidence, p, read)
    return best


def _propose_block(
    block: str,
    views: list[AuthorshipView],
    profiles: list[ProfileView],
    vetoes: set,
    weights: scoring.Weights,
    **run: object,
) -> list[_Draft]:
    """Attach and ``new`` drafts for one block's unassigned authorships:
    :func:`_propose_blocks` of that block alone (``profiles`` its live
    researchers; ``run`` its keyword arguments)."""
    return _propose_blocks({block: views}, lambda _: profiles, vetoes, weights, **run)


def _attach_candidates(
    views: list[AuthorshipView],
    profiles: list[ProfileView],
    vetoes: set,
    weights: scoring.Weights,
    elsewhere: Mapping[str, list[ProfileView]],
    threshold: float,
    visitors: Sequence[selectors.Visitor] = (),
) -> list[tuple[AuthorshipView, _Best | None]]:
    """Each authorship with its best-scored researcher at ``threshold`` or
    above (None when none): of its block, of another block holding
    authorships printed in this one (``visitors``, read in this block's
    frame; the evidence says so under ``frame``: ``{researcher, block,
    home, holds}``), or of another block its name, read another way, lands
    in (:func:`_best_elsewhere`), the best of these.

    Researchers of the block (and visitors) that score alike, as two
    profiles printing the same full name do against a mention that prints
    nothing else, are told apart by :func:`_untied`: the one holding the
    most papers wins, and the evidence names the others under ``tied``."""
    candidates = [(p, None) for p in profiles] + [(v.profile, v) for v in visitors]
    best_of: list[tuple[AuthorshipView, _Best | None]] = []
    for a in views:
        top: list[tuple[scoring.Score, ProfileView, selectors.Visitor | None]] = []
        single = profile_of([a])
        for p, visitor in candidates:
            if ("a", a.id, p.id) in vetoes or not names_meet(single, p):
                continue
            s = scoring.score(authorship_profile_features(a, p), weights)
            if not top or s.pairwise_score > top[0][0].pairwise_score:
                top = [(s, p, visitor)]
            elif s.pairwise_score == top[0][0].pairwise_score:
                top.append((s, p, visitor))
        best: _Best | None = _untied(a, top) if top else None
        found = _best_elsewhere(a, elsewhere, vetoes, weights)
        if found is not None and (best is None or found[0] > best[0]):
            best = found
        best_of.append((a, best if best and best[0] >= threshold else None))
    return best_of


# The researchers tied with an attach's that its evidence names, at most.
TIED_RECORDED = 10


def _untied(
    a: AuthorshipView,
    top: list[tuple[scoring.Score, ProfileView, selectors.Visitor | None]],
) -> _Best:
    """The attach candidate among ``top`` (researchers scoring alike against
    ``a``, best first found; each with its visitor record or None): the one
    holding the most papers (a visitor, those of its profile read in this
    block: what it holds printed here), then the lowest id.

    With nothing in the evidence to tell them apart, the chance that the
    authorship is a given person's is that person's share of the papers:
    the prior of the naive Bayes model of Han, Giles, Zha, Li and
    Tsioutsiouliklis (2004), "Two supervised learning approaches for name
    disambiguation in author citations", JCDL, which the evidence-free
    rule follows too (:func:`curation.matching.pipeline.attach_evidence_free`).
    Measured by ``bench/attach_ties.py`` (a fifth of each labelled person
    attached against researchers holding the rest): with the default
    weights, 226 of Qian-partial's 1,496 attaches tie, and the researcher
    holding most papers is the right one for 118 of them, the lowest id
    (the one matching took before) for 78; with a model trained on INSPIRE
    Wang, 298 of 3,218 tie, 204 against 130.

    Returns:
        ``(score, evidence, profile, a)``; with more than one in ``top`` the
        evidence carries ``tied``: ``{"papers": the winner's papers, "with":
        [{"researcher", "papers"}, ...] of the others, most papers first, at
        most :data:`TIED_RECORDED`, "others": how many others in all}``.
        A visitor's evidence carries ``frame``.
    """
    ranked = sorted(top, key=lambda t: (-len(t[1].paper_ids), t[1].id))
    s, p, visitor = ranked[0]
    evidence = s.evidence
    if visitor is not None:
        evidence = {
            **evidence,
            "frame": {
                "researcher": p.id,
                "block": a.block_key,
                "home": visitor.home,
                "holds": visitor.holds,
            },
        }
    if len(ranked) > 1:
        evidence = {
            **evidence,
            "tied": {
                "papers": len(p.paper_ids),
                "with": [
                    {"researcher": q.id, "papers": len(q.paper_ids)}
                    for _, q, _ in ranked[1 : TIED_RECORDED + 1]
                ],
                "others": len(ranked) - 1,
            },
        }
    return (s.pairwise_score, evidence, p, a)


def _propose_blocks(
    grouped: Mapping[str, list[AuthorshipView]],
    profiles_of: Callable[[str], list[ProfileView]],
    vetoes: set,
    weights: scoring.Weights,
    taken: frozenset[tuple[int, int]] = frozenset(),
    pending_names: dict[int, list[variants.Slot]] | None = None,
    elsewhere: Mapping[str, list[ProfileView]] | None = None,
    visitors: Mapping[str, list[selectors.Visitor]] | None = None,
) -> list[_Draft]:
    """Attach and ``new`` drafts for the unassigned authorships of a run's
    blocks.

    Every authorship is scored first (:func:`_attach_candidates`); which
    attaches are proposed is then decided over the whole run, best score
    first, so that an authorship read into another block competes with that
    block's own on its score, whichever block the run reaches first (a
    hostile trial had two slots of one paper proposed to one researcher, one
    of them read across blocks, and a weaker in-block attach win a clash of
    names by block order).

    Args:
        grouped: ``{block (or "<block>/<sub-block>"): its matchable
            authorships}``.
        profiles_of: a block's live researchers, by its name in ``grouped``.
        vetoes: cannot-links, as ``("a", authorship id, researcher id)``.
        weights: the scoring model.
        taken: ``(paper id, researcher id)`` of slots a pending attach
            already proposes to that researcher
            (``selectors.pending_attach_papers``).
        pending_names: ``{researcher id: [(given, family, block)]}`` of the
            slots pending attaches give researchers, as printed
            (``selectors.pending_attach_names``); the attaches drafted here
            are added to it.
        elsewhere: ``{block: live researchers}`` of other blocks, where an
            authorship whose name reads another way lands
            (:func:`curation.names.block_key_readings`): read so, it is
            scored against them too (:func:`_best_elsewhere`), and an
            attach to one of them records the reading in its evidence.
        visitors: ``{block: researchers of other blocks holding authorships
            printed in it}`` (``selectors.visiting_profiles``): scored as
            candidates of that block's authorships, in its frame. In its
            clustering they count among a name's holders and take no
            attach by rule (:func:`_propose_new`).

    Returns:
        An attach draft for each authorship whose best researcher scores at
        the threshold, unless another slot of its paper goes to that
        researcher (better scored in this run, or pending from an earlier
        one), or a better-scored attach to it in this run, or a pending one,
        prints a given name that cannot be the same person's; ``new`` drafts
        for the clusters of the rest, block by block.
    """
    threshold = weights.threshold or settings.CURATION_ATTACH_THRESHOLD
    visitors = visitors or {}
    scored = {
        block: _attach_candidates(
            views,
            profiles_of(block),
            vetoes,
            weights,
            elsewhere or {},
            threshold,
            visitors.get(block.split("/", 1)[0], ()),
        )
        for block, views in grouped.items()
    }
    everything = [pair for best_of in scored.values() for pair in best_of]
    # One person holds one slot of a paper: when two slots of one paper (the same
    # name printed twice in a large collaboration) would join one researcher, only
    # the better-scoring one is proposed; the other is clustered like any leftover.
    # A slot a pending attach holds (left out of the views) has won already.
    winner: dict[tuple[int, int], tuple[float, int]] = {
        key: (math.inf, 0) for key in taken
    }
    for a, best in everything:
        if best:
            key = (a.paper_id, best[2].id)
            winner[key] = max(winner.get(key, (-1.0, 0)), (best[0], -a.id))
    # Nor do two people join one researcher in one run: "Xue-Qian", "Xiaolin"
    # and "Xuebin" Li each fit an "X. Li" alone, not together. Best score first,
    # an attach whose given name cannot be one person's with one already
    # proposed to that researcher is clustered instead; the next run weighs it
    # against the researcher the curator made.
    # Slots of two blocks compare in one frame, the researcher's own block's
    # where both read into it (variants.names_clash).
    home_of = {p.id: key for key, ps in (elsewhere or {}).items() for p in ps}
    for block in grouped:
        home_of.update((p.id, block.split("/", 1)[0]) for p in profiles_of(block))
    home_of.update((v.profile.id, v.home) for vs in visitors.values() for v in vs)
    clashing: set[int] = set()
    proposed = pending_names if pending_names is not None else {}
    for a, best in sorted(
        ((a, b) for a, b in everything if b), key=lambda ab: (-ab[1][0], ab[0].id)
    ):
        if winner[(a.paper_id, best[2].id)] != (best[0], -a.id):
            continue
        slot = (a.given, a.family, a.block_key)
        given = proposed.setdefault(best[2].id, [])
        home = home_of.get(best[2].id, "")
        if any(variants.names_clash(slot, other, home) for other in given):
            clashing.add(a.id)
        else:
            given.append(slot)
    drafts: list[_Draft] = []
    for block, best_of in scored.items():
        leftovers: list[AuthorshipView] = []
        for a, best in best_of:
            if (
                best is None
                or winner[(a.paper_id, best[2].id)] != (best[0], -a.id)
                or a.id in clashing
            ):
                leftovers.append(a)
                continue
            score, evidence, p, read = best
            proven = evidence["features"]["orcid"] == 1.0 and _names_agree(read, p)
            if evidence["features"]["orcid"] == 1.0 and not proven:
                evidence = {**evidence, "flag": "ORCID agrees but the names do not"}
            if _large_collaboration([a]):
                evidence = {**evidence, selectors.LARGE_COLLABORATION: True}
            drafts.append(
                _Draft(
                    "attach",
                    score,
                    evidence,
                    block,
                    [a.id],
                    researcher_id=p.id,
                    identifier_proven=proven,
                )
            )
        drafts += _propose_new(
            block,
            leftovers,
            profiles_of(block),
            vetoes,
            weights,
            threshold,
            winner,
            proposed,
            [v.profile for v in visitors.get(block.split("/", 1)[0], ())],
        )
    return drafts


def _propose_new(
    block: str,
    leftovers: list[AuthorshipView],
    profiles: list[ProfileView],
    vetoes: set,
    weights: scoring.Weights,
    threshold: float,
    winner: dict[tuple[int, int], tuple[float, int]],
    proposed: dict[int, list[variants.Slot]],
    visiting: Sequence[ProfileView] = (),
) -> list[_Draft]:
    """``new`` drafts for the clusters of a block's authorships that no
    attach took (clustered at ``threshold``), or attaches by rule
    (:func:`_rule_attaches`) for those printing nothing but a name one of
    ``profiles`` holds most of. ``visiting``: the profiles, read in this
    block, of researchers of other blocks holding authorships printed in
    it; they count among a name's holders (a hostile trial had a mention
    attached by rule to a researcher holding 8 of a name's 26 mentions,
    once the one holding 18 was merged into another block), and take
    nothing by rule: the ``new`` names such a one as likeliest."""
    if not leftovers:
        return []
    drafts: list[_Draft] = []
    by_id = {p.id: p for p in profiles}
    for found in pipeline.cluster_authorships(
        leftovers,
        threshold=threshold,
        weights=weights,
        researchers=[*profiles, *visiting],
    ):
        ruled = _rule_attaches(found, by_id, vetoes, weights, winner, proposed, block)
        if ruled:
            drafts += ruled
            continue
        members, cohesion = found.members, found.cohesion
        orcids = {m.orcid for m in members if m.orcid}
        evidence = {
            "model_version": weights.version,
            "cohesion": round(cohesion, 6),
            # The lowest pair score inside (1.0 alone): what the auto-apply
            # policy weighs (curation.auto_apply).
            "weakest": math.floor(found.weakest * 1e6) / 1e6,
            **(
                {selectors.LARGE_COLLABORATION: True}
                if _large_collaboration(members)
                else {}
            ),
            "members": len(members),
            "pairs": _recorded_pairs(found),
            "orcids": sorted(orcids),
        }
        if found.likeliest and not any(
            ("a", m.id, found.likeliest[0]) in vetoes for m in members
        ):
            # It prints nothing but the name, and a researcher holds most
            # of that name, but the rule could not propose it to them (a
            # slot of its paper or a name proposed to them already): the
            # curator's hint. Not when a curator said it is not them.
            evidence["likeliest"] = _likeliest_evidence(found.likeliest)
        names_agree = all(
            names.given_names_compatible(
                x.given, y.given, pinyin=names.reads_as_pinyin(x.family)
            )
            for n, x in enumerate(members)
            for y in members[n + 1 :]
        )
        drafts.append(
            _Draft(
                "new",
                round(cohesion, 6),
                evidence,
                block,
                [m.id for m in members],
                identifier_proven=len(orcids) == 1
                and names_agree
                and all(m.orcid for m in members),
            )
        )
    return drafts


def _large_collaboration(views: Iterable[AuthorshipView]) -> bool:
    """Whether any of these slots is on a byline of over
    :data:`~curation.matching.features.COAUTHOR_MAX_BYLINE` authors."""
    return any(v.authors > COAUTHOR_MAX_BYLINE for v in views)


def _likeliest_evidence(likeliest: tuple[int, int, int]) -> dict:
    """A cluster's :attr:`~curation.matching.pipeline.Cluster.likeliest` as
    evidence stores it: ``{"researcher", "holds", "of"}``."""
    researcher, holds, of = likeliest
    return {"researcher": researcher, "holds": holds, "of": of}


def _rule_attaches(
    found: pipeline.Cluster,
    researchers: dict[int, ProfileView],
    vetoes: set,
    weights: scoring.Weights,
    winner: dict[tuple[int, int], tuple[float, int]],
    proposed: dict[int, list[variants.Slot]],
    block: str,
) -> list[_Draft]:
    """Attach drafts, by rule, for a cluster of authorships that print nothing
    but a name one researcher holds most of (``found.likeliest``:
    :func:`curation.matching.pipeline.attach_evidence_free`), whose scores
    fell short of the attach threshold: what the rule does for a cluster
    holding most of the name, so a paper that arrives after its person was
    curated is proposed as one harvested with the rest would be.

    Args:
        found: one cluster of the block's leftovers.
        researchers: the block's live researchers by id.
        vetoes: cannot-links, as ``("a", authorship id, researcher id)``.
        weights: the scoring model (each draft's evidence is its score).
        winner: ``{(paper id, researcher id): ...}`` of the slots already
            proposed to a researcher (pending, or in this run); updated.
        proposed: ``{researcher id: [(given, family, block)]}`` proposed to
            each in this run and pending, as printed; updated.
        block: the block key.

    Returns:
        One attach draft per member, its evidence carrying ``"rule"``
        (:data:`curation.matching.pipeline.EVIDENCE_FREE_ATTACH_RULE`) and
        ``"likeliest"``; none (the cluster is proposed as ``new``, saying
        who is likeliest) when the researcher is gone, a curator said one of
        them is not that person, a slot of its paper is proposed to them
        already, or a given name proposed to them cannot be the same
        person's.
    """
    if not found.likeliest:
        return []
    researcher = found.likeliest[0]
    p = researchers.get(researcher)
    if p is None:
        return []
    for a in found.members:
        if (
            ("a", a.id, researcher) in vetoes
            or (a.paper_id, researcher) in winner
            or not names_meet(profile_of([a]), p)
            or any(
                variants.names_clash(
                    (a.given, a.family, a.block_key), other, block.split("/", 1)[0]
                )
                for other in proposed.get(researcher, [])
            )
        ):
            return []
    drafts = []
    for a in found.members:
        s = scoring.score(authorship_profile_features(a, p), weights)
        evidence = {
            **s.evidence,
            "rule": pipeline.EVIDENCE_FREE_ATTACH_RULE,
            "likeliest": _likeliest_evidence(found.likeliest),
        }
        winner[(a.paper_id, researcher)] = (s.pairwise_score, -a.id)
        proposed.setdefault(researcher, []).append((a.given, a.family, a.block_key))
        drafts.append(
            _Draft(
                "attach",
                s.pairwise_score,
                evidence,
                block,
                [a.id],
                researcher_id=researcher,
            )
        )
    return drafts


# Researcher-pair Scores this process computed: every run over a block scores
# all its researcher pairs for merges, and between two runs almost none of them
# changed. Keyed by the model and each side's id and snapshot hash (a changed
# profile is another key); the oldest are dropped past this many.
MERGE_SCORE_MEMORY = 200_000
_merge_scores: OrderedDict[tuple, scoring.Score] = OrderedDict()


def _merge_score(
    key: tuple, p: ProfileView, q: ProfileView, weights: scoring.Weights
) -> scoring.Score:
    """The Score of two researcher profiles, remembered under ``key``."""
    found = _merge_scores.get(key)
    if found is None:
        found = scoring.score(profile_profile_features(p, q), weights)
        _merge_scores[key] = found
        if len(_merge_scores) > MERGE_SCORE_MEMORY:
            _merge_scores.popitem(last=False)
    return found


def _may_merge(
    p: ProfileView,
    q: ProfileView,
    names_of_p: ProfileView,
    vetoes: set,
    pending: dict[int, frozenset[int]],
) -> bool:
    """Whether nothing forbids a merge of researchers ``p`` and ``q``: no
    cannot-link, names that meet (``names_of_p``: ``p`` itself, or as read
    into ``q``'s block), and no paper of one slot each, pending attaches
    counted."""
    lo, hi = sorted((p.id, q.id))
    return (
        ("r", lo, hi) not in vetoes
        and names_meet(names_of_p, q)
        and not (p.paper_ids | pending.get(p.id, frozenset()))
        & (q.paper_ids | pending.get(q.id, frozenset()))
    )


def _propose_merges(
    block: str,
    profiles: list[ProfileView],
    vetoes: set,
    weights: scoring.Weights,
    pending: dict[int, frozenset[int]] | None = None,
) -> list[_Draft]:
    """Merge drafts for the researcher pairs of one block that score at
    ``CURATION_MERGE_THRESHOLD``, or that a rule joins (issue 46: duplicates
    left after a curator approved every proposal of the demo):

    - given names the rules call incompatible that are one name spelled two
      ways ("Jurik", "Jurek": :func:`curation.names.spelling_variants`)
      with :data:`SPELLING_COAUTHORS` co-authors in common
      (:func:`_spelled_apart`), scored with the name as neither agreeing nor
      conflicting, at the merge threshold (:data:`SPELLING_RULE`);
    - initials whose one expansion in the block is the other's full given
      name, in a shared category, below the threshold
      (:func:`_initial_rule`).

    Their evidence carries ``rule``; neither is identifier-proven.

    Args:
        block: the block key.
        profiles: the block's live researchers.
        vetoes: cannot-links, as ``("r", low id, high id)``; those of an
            authorship count for the researcher holding it (``matching_run``).
        weights: the scoring model.
        pending: ``{researcher id: paper ids}`` its pending attach proposals
            give it (``selectors.pending_attach_papers``): a pair that would
            then hold two slots of one paper is not proposed, as one already
            holding them is not (the same-paper veto).

    Returns:
        The drafts, lower id first in each pair.
    """
    pending = pending or {}
    drafts: list[_Draft] = []
    merge_threshold = settings.CURATION_MERGE_THRESHOLD
    model = (weights.version, weights.bias, tuple(sorted(weights.weights.items())))
    snapshots = [(p.id, hash(p)) for p in profiles]
    expansions: dict[int, set[int]] = {}
    for i, p in enumerate(profiles):
        for j in range(i + 1, len(profiles)):
            q = profiles[j]
            lo, hi = sorted((p.id, q.id))
            rule = ""
            if _may_merge(p, q, p, vetoes, pending):
                s = _merge_score((model, snapshots[i], snapshots[j]), p, q, weights)
                if s.pairwise_score < merge_threshold:
                    rule = _initial_rule(p, q, profiles, s, expansions)
                    if not rule:
                        continue
            elif _spelled_apart(p, q, vetoes, pending):
                s = scoring.score(
                    replace(
                        profile_profile_features(p, q),
                        name=names.COMPATIBLE_SIMILARITY,
                    ),
                    weights,
                )
                if s.pairwise_score < merge_threshold:
                    continue
                rule = SPELLING_RULE
            else:
                continue
            proven = (
                not rule
                and s.evidence["features"]["orcid"] == 1.0
                and s.evidence["features"]["name"] > 0
            )
            evidence = copy.deepcopy(s.evidence)  # the memo keeps its own
            if rule:
                evidence["rule"] = rule
            drafts.append(
                _Draft(
                    "merge",
                    s.pairwise_score,
                    evidence,
                    block,
                    [],
                    researcher_id=lo,
                    other_researcher_id=hi,
                    identifier_proven=proven,
                )
            )
    return drafts


# Shared co-authors that make two researchers whose given names are spelling
# variants ("Jurik", "Jurek") a merge proposal: a co-author shared once is a
# coincidence of a field, two or more are a group (the co-author feature's
# weight caps at COAUTHOR_CAP = 3 shared).
SPELLING_COAUTHORS = 2
SPELLING_RULE = (
    "given names spelled one letter apart (names.spelling_variants) with "
    f"{SPELLING_COAUTHORS} or more co-authors in common: scored with the names "
    "as neither agreeing nor conflicting"
)
INITIAL_RULE = (
    "initials whose one expansion among the block's researchers is this full "
    "given name, in a shared arXiv category"
)


def _spelled_apart(
    p: ProfileView,
    q: ProfileView,
    vetoes: set,
    pending: dict[int, frozenset[int]],
) -> bool:
    """Whether two researchers of one block whose names do not meet are
    one name spelled two ways with strong co-author evidence: every full
    given name of each is compatible with, or a spelling variant of
    (:func:`curation.names.spelling_variants`), every full given name of the
    other, one pair at least a variant; they share
    :data:`SPELLING_COAUTHORS` co-authors or more; no cannot-link lies
    between them and no paper of one slot each."""
    lo, hi = sorted((p.id, q.id))
    if ("r", lo, hi) in vetoes or len(
        p.coauthor_keys & q.coauthor_keys
    ) < SPELLING_COAUTHORS:
        return False
    if (p.paper_ids | pending.get(p.id, frozenset())) & (
        q.paper_ids | pending.get(q.id, frozenset())
    ):
        return False
    pinyin = names.reads_as_pinyin(p.family)
    full_p = [g for g in p.given_names if full_given_key(g)]
    full_q = [g for g in q.given_names if full_given_key(g)]
    pairs = [(a, b) for a in full_p for b in full_q]
    variant = [names.spelling_variants(a, b, pinyin=pinyin) for a, b in pairs]
    return any(variant) and all(
        v or names.given_names_compatible(a, b, pinyin=pinyin)
        for (a, b), v in zip(pairs, variant, strict=True)
    )


def _initial_rule(
    p: ProfileView,
    q: ProfileView,
    block: list[ProfileView],
    s: scoring.Score,
    expansions: dict[int, set[int]],
) -> str:
    """:data:`INITIAL_RULE` when a pair scored below the merge threshold is
    an initials-only researcher and the one researcher of the block whose
    full given name those initials can stand for, sharing an arXiv category,
    with no affiliation or field in conflict, under a family name that does
    not read as Chinese; else "".

    With no other expansion in the block, the initials are likeliest that
    person's: the share-of-the-name prior that
    :func:`curation.matching.pipeline.attach_evidence_free` applies to
    mentions (Han et al. 2004), here between researchers, for a curator
    (issue 46: "A. Del Maestro" and "Adrian Del Maestro", both cond-mat,
    scored 0.51 to 0.64 by the default weights, under the merge
    threshold). Not under a Chinese family name
    (:func:`curation.names.reads_as_pinyin`): there one initial stands for
    many given names, whichever few a corpus holds ("Y. Wang").
    ``expansions``: ``{initials researcher id: the block's researchers
    printing a full given name its initials can stand for}``, filled here
    and read across the block's pairs.
    """
    features = s.evidence["features"]
    if (
        s.veto
        or names.reads_as_pinyin(p.family)
        or features["categories"] <= 0.0
        or features["field_conflict"] > 0.0
        or features["affiliation_conflict"] > 0.0
    ):
        return ""
    full_p = [g for g in p.given_names if full_given_key(g)]
    full_q = [g for g in q.given_names if full_given_key(g)]
    if bool(full_p) == bool(full_q):
        return ""
    initials, named = (p, q) if full_q else (q, p)
    if initials.id not in expansions:
        expansions[initials.id] = {
            r.id
            for r in block
            if r.id != initials.id
            and any(
                full_given_key(g) and names.given_names_compatible(g, i)
                for g in r.given_names
                for i in initials.given_names
            )
        }
    return INITIAL_RULE if expansions[initials.id] == {named.id} else ""


def _propose_variant_merges(
    profiles: dict[str, list[ProfileView]],
    vetoes: set,
    weights: scoring.Weights,
    pending: dict[int, frozenset[int]] | None = None,
) -> list[_Draft]:
    """Merge drafts for researchers of two blocks where a name read another
    way meets them.

    A researcher printed ``"Zhang Ping"`` in Chinese order (block ``"ping
    z"``) is never compared, block by block, with the ``"Ping Zhang"`` of
    block ``"zhang p"``; nor ``"García Márquez, J."`` with ``"García, J."``.
    Each researcher is read into every other block its printed names land in
    (:func:`curation.matching.variants.meetings`) and scored there against
    each researcher as :func:`_propose_merges` scores a block's pairs: the
    same checks (cannot-links, names that meet, one paper twice) and
    ``CURATION_MERGE_THRESHOLD``, and only with evidence beyond the name
    (:func:`curation.matching.variants.corroborated`) and, for a swapped
    order, a full given name on the other side (:func:`variants.confirms`).
    The evidence says how the name was read (``reading``: the researcher,
    the name as printed and as read, the rule, the block). A pair met both
    ways keeps its better score.

    Args:
        profiles: ``{block: live researchers}`` of every block (a full run's
            snapshot); a block a reading names but ``profiles`` lacks meets
            no one.
        vetoes, weights, pending: as for :func:`_propose_merges`.

    Returns:
        The drafts, lower id first in each pair, each under the block of the
        researcher its reading met.
    """
    pending = pending or {}
    merge_threshold = settings.CURATION_MERGE_THRESHOLD
    best: dict[tuple[int, int], _Draft] = {}
    model = (weights.version, weights.bias, tuple(sorted(weights.weights.items())))
    for meet in variants.meetings(profiles):
        p = profiles[meet.block][meet.index]
        for q in profiles[meet.other_block]:
            lo, hi = sorted((p.id, q.id))
            if (
                lo == hi
                or not variants.confirms(meet.reading, q.given_names)
                or not variants.corroborated(meet.read, q)
                or not _may_merge(p, q, meet.read, vetoes, pending)
            ):
                continue
            # Remembered as a block's pairs are (_merge_score), under the
            # profile as read: a nightly run scores the same pairs again.
            s = _merge_score(
                (model, ("read", p.id, hash(meet.read)), (q.id, hash(q))),
                meet.read,
                q,
                weights,
            )
            if s.veto or s.pairwise_score < merge_threshold:
                continue
            if (lo, hi) in best and best[lo, hi].score >= s.pairwise_score:
                continue
            given, family = meet.printed
            evidence = {
                **copy.deepcopy(s.evidence),  # the memo keeps its own
                "reading": {
                    "researcher": p.id,
                    "printed": variants.written(given, family),
                    "read_as": variants.written(
                        meet.reading.given, meet.reading.family
                    ),
                    "rule": names.READING_KINDS[meet.reading.kind],
                    "block": meet.reading.key,
                },
            }
            best[lo, hi] = _Draft(
                "merge",
                s.pairwise_score,
                evidence,
                meet.other_block,
                [],
                researcher_id=lo,
                other_researcher_id=hi,
                identifier_proven=s.evidence["features"]["orcid"] == 1.0
                and s.evidence["features"]["name"] > 0,
            )
    return [best[pair] for pair in sorted(best)]


# What a merge proposed on one ORCID iD across family names says (its
# evidence's "rule"; the names and the iD follow).
ORCID_ACROSS_NAMES_RULE = (
    "one ORCID iD under two family names: a change of name, or a source's mistake"
)


def _propose_orcid_merges(
    profiles: Mapping[str, list[ProfileView]],
    shared: Mapping[str, list[int]],
    vetoes: set,
    weights: scoring.Weights,
    pending: dict[int, frozenset[int]] | None = None,
) -> list[_Draft]:
    """Merge drafts for researchers of two blocks that hold one ORCID iD.

    Blocking by family name keeps a person who changed it apart for ever
    ("Sofia Lindberg" until 2019, "Sofia Haddad" since, one iD: issue 46),
    and :func:`_propose_merges` compares only a block's pairs. Researchers
    holding one iD (their own, or printed on an authorship they hold:
    ``selectors.orcids_shared``) in two blocks are proposed as one person
    when nothing forbids it (:func:`_may_merge`: no cannot-link, no paper of
    one slot each) and they print full given names that are compatible
    (:func:`curation.matching.orcids.fits`; an iD shared by "Wei Tan" and
    "Dmitri Volkov" is a misplaced iD, flagged on its slot, not a merge).
    The score is the model's, with the iD on both sides. Never
    identifier-proven: an iD on a byline can be a source's mistake, and
    merges wait for a curator.

    Args:
        profiles: ``{block: live researchers}`` of every block (a full run).
        shared: ``{iD: researcher ids}`` (``selectors.orcids_shared``).
        vetoes, weights, pending: as for :func:`_propose_merges`.

    Returns:
        The drafts, lower id first in each pair, under the lower id's block;
        the evidence carries ``rule``, ``orcid`` and ``names``.
    """
    pending = pending or {}
    where = {p.id: (block, p) for block, members in profiles.items() for p in members}
    drafts: dict[tuple[int, int], _Draft] = {}
    for orcid, ids in shared.items():
        held = [where[i] for i in ids if i in where]
        for n, (block, p) in enumerate(held):
            for other_block, q in held[n + 1 :]:
                lo, hi = sorted((p.id, q.id))
                if (
                    block.split("/", 1)[0] == other_block.split("/", 1)[0]
                    or (lo, hi) in drafts
                    or not _may_merge(p, q, p, vetoes, pending)
                    or not _given_names_fit(p, q)
                ):
                    continue
                s = scoring.score(
                    profile_profile_features(
                        replace(p, orcid=orcid), replace(q, orcid=orcid)
                    ),
                    weights,
                )
                if s.veto:
                    continue
                drafts[lo, hi] = _Draft(
                    "merge",
                    s.pairwise_score,
                    {
                        **copy.deepcopy(s.evidence),
                        "rule": ORCID_ACROSS_NAMES_RULE,
                        "orcid": orcid,
                        "names": sorted({p.family, q.family}),
                    },
                    block if p.id == lo else other_block,
                    [],
                    researcher_id=lo,
                    other_researcher_id=hi,
                )
    return [drafts[pair] for pair in sorted(drafts)]


def _given_names_fit(p: ProfileView, q: ProfileView) -> bool:
    """Whether two profiles under two family names print a full given name
    each that one person could print under both (:func:`orcids.fits`)."""
    return any(
        orcids.fits(orcids.IdSlot(0, a, p.family), orcids.IdSlot(0, b, q.family))
        for a in p.given_names
        for b in q.given_names
        if full_given_key(a) and full_given_key(b)
    )


def _propose_splits(
    conflicts: list[selectors.OrcidConflict], weights: scoring.Weights
) -> list[_Draft]:
    """Split proposals for researchers whose authorships carry several ORCID iDs.

    The authorships with the researcher's own iD (or, when it has none, the
    largest group) stay; each other iD's authorships are proposed as a new
    researcher. A curator decides: an ORCID on an authorship can be a source's
    mistake, so this is never applied by the identifier policy.
    """
    drafts = []
    curated = selectors.must_links(c.researcher_id for c in conflicts)
    for conflict in conflicts:
        groups = {
            orcid: [a for a in ids if (a, conflict.researcher_id) not in curated]
            for orcid, ids in conflict.by_orcid.items()
        }
        keep = (
            conflict.orcid
            if conflict.orcid in groups
            else max(groups, key=lambda o: (len(groups[o]), o))
        )
        for orcid, ids in sorted(groups.items()):
            if orcid == keep or not ids:
                continue
            drafts.append(
                _Draft(
                    "split",
                    0.99,
                    {
                        "model_version": weights.version,
                        "flag": "several ORCID iDs on one researcher",
                        "orcids": {o: len(a) for o, a in sorted(groups.items())},
                        "kept": keep,
                        "moving": orcid,
                    },
                    conflict.block_key,
                    sorted(ids),
                    researcher_id=conflict.researcher_id,
                )
            )
    return drafts


# The re-clustering of a researcher with too many papers a year, by (researcher
# id, revision, model version, threshold): it costs seconds for thousands of
# authorships, and every run over the block would otherwise repeat it. The
# oldest are dropped past this many.
RECLUSTER_MEMORY = 1_000
_reclusterings: OrderedDict[tuple, list[list[int]]] = OrderedDict()


def _reclustered(
    suspect: selectors.Suspect, threshold: float, weights: scoring.Weights
) -> list[list[AuthorshipView]]:
    """The suspect's authorships re-clustered as unassigned ones are, remembered."""
    key = (suspect.profile.id, suspect.profile.revision, weights.version, threshold)
    ids = _reclusterings.get(key)
    if ids is None:
        ids = [
            [m.id for m in found.members]
            for found in pipeline.cluster_authorships(
                list(suspect.views), threshold=threshold, weights=weights
            )
        ]
        _reclusterings[key] = ids
        if len(_reclusterings) > RECLUSTER_MEMORY:
            _reclusterings.popitem(last=False)
    by_id = {v.id: v for v in suspect.views}
    return [[by_id[i] for i in part] for part in ids]


def _display_fit(display: str, part: list[AuthorshipView]) -> int:
    """How well a part of a researcher prints its display name: 2 with a full
    given name that fits (:func:`curation.names.display_name_fits`), 1 with
    initials only ("W." fits "Wen Wang" as well as "Wei Wang"), else 0."""
    printed = [(v.given, v.family) for v in part]
    if names.display_name_fits(
        display, [(g, f) for g, f in printed if full_given_key(g)]
    ):
        return 2
    return 1 if names.display_name_fits(display, printed) else 0


def _propose_suspect_splits(
    suspects: list[selectors.Suspect], skip: set[int], weights: scoring.Weights
) -> list[_Draft]:
    """Split proposals for researchers that look like several people.

    The parts are the suspect's disjoint groups, or, for too many papers a year,
    the clusters of a re-clustering of its authorships (as unassigned ones are
    clustered). The part holding most authorships a curator confirmed one at a
    time (:func:`selectors.confirmed_links`) stays (then the one with the
    researcher's ORCID iD, then one printing the researcher's display name
    (:func:`_display_fit`: the profile, its URL, its
    followers and its claim stay with the person it is named after), then the
    largest, then the one printing more full given names, where a display name
    comes from); those never move. Each
    other part of at least :data:`overmerge.MIN_GROUP` papers is proposed as a
    new researcher when the model scores it and the staying part below the
    joining threshold (its score: one minus that pairwise score), or when their
    full given names cannot meet (:func:`names_meet`; score 0.99). Like
    confirmed authorships, those a move would part from what a curator merged
    them with one at a time (in the admin, or a merge proposal approved on its
    own) never move: the curator saw those papers joined
    (:func:`_held_by_merges`); papers that came later still may. Locked
    researchers, and those with an ORCID split proposed in the same run
    (``skip``), are left alone.

    Args:
        suspects: from the run's :class:`selectors.ResearcherSnapshot`.
        skip: researcher ids to leave alone.
        weights: the scoring model.

    Returns:
        Split drafts, never identifier-proven.
    """
    threshold = weights.threshold or settings.CURATION_ATTACH_THRESHOLD
    wanted = [s for s in suspects if not s.profile.locked and s.profile.id not in skip]
    curated = selectors.confirmed_links(s.profile.id for s in wanted)
    merges = selectors.curator_merges(v.id for s in wanted for v in s.views)
    merges_of: dict[int, set[int]] = defaultdict(set)  # authorship: merge indexes
    for n, sides in enumerate(merges):
        for side in sides:
            for authorship in side:
                merges_of[authorship].add(n)
    shown = selectors.display_names(s.profile.id for s in wanted)
    drafts = []
    for suspect in wanted:
        present = {v.id for v in suspect.views}
        its_merges = [
            merges[n]
            for n in sorted(set().union(*(merges_of.get(i, ()) for i in present)))
        ]
        by_id = {v.id: v for v in suspect.views}
        if suspect.suspicion.groups:
            parts = [[by_id[i] for i in group] for group in suspect.suspicion.groups]
            grouped = {v.id for part in parts for v in part}
            parts[0] += [v for v in suspect.views if v.id not in grouped]
        else:
            parts = _reclustered(suspect, threshold, weights)
        rid = suspect.profile.id
        orcid = suspect.profile.orcid
        display = shown.get(rid, "")

        def standing(
            part: list[AuthorshipView],
            rid: int = rid,
            orcid: str = orcid,
            display: str = display,
        ):
            return (
                sum((v.id, rid) in curated for v in part),
                any(orcid and v.orcid == orcid for v in part),
                _display_fit(display, part),
                len(part),
                sum(bool(full_given_key(v.given)) for v in part),
                -min(v.id for v in part),
            )

        parts.sort(key=standing, reverse=True)
        for part in parts[1:]:
            moving = [v for v in part if (v.id, rid) not in curated]
            held = _held_by_merges({v.id for v in moving}, present, its_merges)
            if held:
                logger.info(
                    "researcher %s: %s authorships stay, a curator merged them "
                    "with the rest",
                    rid,
                    len(held),
                )
                moving = [v for v in moving if v.id not in held]
            if len({v.paper_id for v in moving}) < overmerge.MIN_GROUP:
                continue
            # What stays is the staying part and what this part leaves behind
            # (confirmed or held authorships).
            left = [v for v in part if v not in moving]
            going, staying = profile_of(moving), profile_of(parts[0] + left)
            same = scoring.score(profile_profile_features(going, staying), weights)
            # Full given names that cannot meet ("Wei" and "Wen") are two
            # people whatever the initials both parts share score.
            meet = names_meet(going, staying)
            if meet and same.pairwise_score >= threshold:
                continue
            why = (
                f"the model scores the moving part as the same person at "
                f"{same.pairwise_score:.2f}"
                if meet
                else "the two parts print given names that cannot be one person's"
            )
            drafts.append(
                _Draft(
                    "split",
                    round(1.0 - same.pairwise_score, 6) if meet else 0.99,
                    {
                        **same.evidence,
                        "flag": f"{suspect.suspicion.flag}: "
                        f"{suspect.suspicion.detail}; {why}",
                    },
                    suspect.block_key,
                    sorted(v.id for v in moving),
                    researcher_id=rid,
                )
            )
    return drafts


def _held_by_merges(
    moving: set[int],
    present: set[int],
    merges: list[tuple[frozenset[int], ...]],
) -> set[int]:
    """The moving authorships a split must leave where they are, because
    moving them would part what a curator merged one at a time
    (:func:`selectors.curator_merges`): those on one side of such a merge
    while another side of it has an authorship that stays. Held ones stay
    too, so the rule is applied until nothing more is held (three sides, or
    merges in a row: A and B, then both with C).

    Args:
        moving: the authorship ids a split part would move.
        present: every authorship id the researcher holds now.
        merges: each merge's sides.

    Returns:
        The ids of ``moving`` to keep; papers that came after the merges (on
        no side) are never held, so a split may still take them.
    """
    going = set(moving)
    changed = True
    while changed and going:
        changed = False
        for sides in merges:
            staying = [bool(side & present - going) for side in sides]
            for i, side in enumerate(sides):
                if side & going and any(staying[:i] + staying[i + 1 :]):
                    going -= side
                    changed = True
    return set(moving) - going


def _unproven_where_orcid_taken(drafts: list[_Draft]) -> None:
    """A ``new`` cluster whose one ORCID iD a researcher already has, or
    another new cluster of the run has too, is left to a curator: matching did
    not attach it to that researcher (a curator's "not this person", or names
    that cannot meet), so the identifier policy must not decide it; applied,
    it could only make a second researcher of the iD, without it. One query
    for the run."""
    proven = [d for d in drafts if d.kind == "new" and d.identifier_proven]
    clusters_of = Counter(o for d in proven for o in d.evidence["orcids"])
    held = selectors.orcid_holders(clusters_of)
    for d in proven:
        holders = sorted(held[o] for o in d.evidence["orcids"] if o in held)
        if holders:
            d.identifier_proven = False
            d.evidence["orcid_held_by"] = holders
        elif any(clusters_of[o] > 1 for o in d.evidence["orcids"]):
            # Two clusters of one iD in this run (two blocks: "Serre" and
            # "Sere"): one person or a source's mistake, a curator's call.
            d.identifier_proven = False
            d.evidence["orcid_in_other_clusters"] = True


def _misplaced_orcids(
    slots_of: Mapping[str, list[orcids.IdSlot]],
) -> dict[int, tuple[str, orcids.IdSlot]]:
    """``{authorship id: (iD, the slot whose name the iD fits)}`` of the slots
    that print an iD whose other slots print another person's name
    (:func:`curation.matching.orcids.misplaced`)."""
    return {
        aid: (orcid, owner)
        for orcid, slots in slots_of.items()
        for aid, owner in orcids.misplaced(slots).items()
    }


def _flag_misplaced_orcids(drafts: list[_Draft], views: list[AuthorshipView]) -> None:
    """Attach and ``new`` drafts holding a slot whose ORCID iD a source
    misplaced are left to a curator, flagged.

    A source sometimes prints a co-author's iD on another slot of the
    byline (Crossref, issue 46: the iD of "Wei Tan" on "Dmitri Volkov"):
    the slots printing that iD elsewhere print another person's name
    (:func:`curation.matching.orcids.misplaced`). Such a draft is never
    identifier-proven, its ``orcids`` lose the iD (it proves nothing, and
    :func:`_unproven_where_orcid_taken` must not count it), and its evidence
    says so: ``flag`` (unless flagged already), and ``misplaced_orcid``:
    ``[{"authorship", "orcid", "printed", "fits"}]`` (``fits``: the name
    the iD's other slots print). Approving it gives no researcher the iD
    (:func:`_apply`). One query a chunk of iDs.
    """
    by_id = {v.id: v for v in views}
    carried = {
        by_id[aid].orcid
        for d in drafts
        if d.kind in ("attach", "new")
        for aid in d.authorship_ids
        if aid in by_id and by_id[aid].orcid
    }
    if not carried:
        return
    suspect = _misplaced_orcids(selectors.orcid_slots(carried))
    for d in drafts:
        found = [
            (aid, *suspect[aid])
            for aid in d.authorship_ids
            if d.kind in ("attach", "new") and aid in suspect
        ]
        if not found:
            continue
        d.identifier_proven = False
        d.evidence["misplaced_orcid"] = [
            {
                "authorship": aid,
                "orcid": orcid,
                "printed": variants.written(by_id[aid].given, by_id[aid].family),
                "fits": variants.written(owner.given, owner.family),
            }
            for aid, orcid, owner in found
        ]
        aid, orcid, owner = found[0]
        # An attach already flagged ("ORCID agrees but the names do not")
        # keeps its flag: it says the same of the researcher.
        d.evidence.setdefault(
            "flag",
            f"ORCID iD {orcid} printed on "
            f"{variants.written(by_id[aid].given, by_id[aid].family)!r} is printed "
            f"with {variants.written(owner.given, owner.family)!r} elsewhere: "
            "a source's misplaced iD, not applied",
        )
        if "orcids" in d.evidence:
            wrong = {o for _, o, _ in found}
            d.evidence["orcids"] = [o for o in d.evidence["orcids"] if o not in wrong]


def _stale_dead_proposals() -> int:
    """Mark stale the pending proposals that name a researcher merged away or
    retired since, or attach or give a new researcher an authorship assigned
    since, or attach to a researcher of another block one no longer held
    there, or attach to a researcher that changed since one that no longer
    stands on it (:func:`_evidence_lost`), or hold an authorship a
    re-harvest deleted (:func:`selectors.pending_dead_proposals`), each
    with an event
    saying which; return how many. A full matching run starts with it, so the
    queue does not offer a merge of a researcher that is gone, nor a home
    for a paper a curator already placed."""
    with transaction.atomic():
        # Attaches across blocks are read to be checked; most still hold.
        return proposals_stale_if_dead(selectors.pending_dead_proposals())


def proposals_stale_if_dead(
    proposals: Iterable[Proposal], *, batch: CurationEvent | None = None
) -> int:
    """Mark stale each of some locked pending proposals that can no longer
    apply (:func:`_stale_reason`: a side merged away or retired, an
    authorship placed since ...), each with an event saying why.

    Args:
        proposals: pending proposals locked ``select_for_update``, with their
            researchers selected.
        batch: the ``batch`` event (a block review) the events belong to, if
            any.

    Returns:
        How many were made stale.
    """
    count = 0
    for old in proposals:
        reason = _stale_reason(
            old,
            {r.pk: r for r in (old.researcher, old.other_researcher) if r},
            list(old.authorships.all())
            if old.kind in (Proposal.Kind.ATTACH, Proposal.Kind.NEW)
            else [],
        )
        if reason:
            count += _mark_stale(old, reason, batch=batch)
    return count


def _stale_below_model(weights: scoring.Weights) -> int:
    """Mark stale the pending attach proposals another model made that the
    model in use scores below its joining threshold (their stored features
    scored again: :func:`scoring.score_of_features`), each with an event
    giving both scores; return how many. After a switch of model (a new one
    trained, a rollback, the default weights), a full run so leaves no
    attach in the queue that the model in use would not propose; the others
    keep the score and version they were made with. Identifier-proven ones
    stay: an identifier, not the score, proposed them; so do those a rule
    proposed (their evidence's ``rule``: :func:`_rule_attaches`)."""
    threshold = weights.threshold or settings.CURATION_ATTACH_THRESHOLD
    count = 0
    with transaction.atomic():
        for old in selectors.pending_attaches_of_other_models(weights.version):
            evidence = old.evidence if isinstance(old.evidence, dict) else {}
            features = evidence.get("features")
            if not isinstance(features, dict) or evidence.get("rule"):
                # A rule proposed it below the threshold; the score is not
                # why (curation.services._rule_attaches).
                continue
            now = scoring.score_of_features(features, weights)
            if now is not None and now < threshold:
                count += _mark_stale(
                    old,
                    f"the model in use ({weights.version}) scores it {now:.2f}, "
                    f"below its threshold {threshold} (made by "
                    f"{old.model_version} at {old.score:.2f})",
                )
    return count


def _mark_stale(
    old: Proposal, reason: str, *, batch: CurationEvent | None = None
) -> bool:
    """Move a locked pending proposal to ``stale`` with an event giving
    ``reason`` (linked to ``batch`` when given, and by its curator: a
    review's stale events named no one, a new user's trial); False (and
    nothing written) when a curator decided it meanwhile (its
    compare-and-swap fails)."""
    try:
        _transition(
            proposal=old,
            new=S.STALE,
            actor=batch.actor if batch else None,
            event_kind=CurationEvent.Kind.PROPOSAL_STALE,
            extra={"reason": reason},
            batch=batch,
        )
    except ProposalConflict:
        logger.info(
            "proposal %s was decided meanwhile; not made stale",
            old.pk,
            extra={"proposal": old.pk},
        )
        return False
    return True


def _draft_fingerprint(draft: _Draft) -> str:
    return proposal_fingerprint(
        kind=draft.kind,
        authorship_ids=draft.authorship_ids,
        researcher_ids=[
            r for r in (draft.researcher_id, draft.other_researcher_id) if r
        ],
    )


# Proposals written per transaction by a matching run.
SAVE_BATCH = 500


def _supersede(drafts: list[tuple[str, _Draft]]) -> int:
    """Mark stale the pending proposals these drafts replace; return how many.

    A fresh draft that holds an authorship of a pending ``new`` proposal carries
    newer evidence (a paper or a researcher that arrived since), and one that
    holds an authorship of a pending attach to a researcher merged away or
    retired since replaces a proposal that can never apply
    (:func:`selectors.pending_superseded_proposals`); the old proposal goes
    ``stale`` with an event naming why. One a curator decided meanwhile is
    left alone (its compare-and-swap fails).
    """
    ids = {aid for _, d in drafts for aid in d.authorship_ids}
    if not ids:
        return 0
    return sum(
        _mark_stale(old, SUPERSEDED)
        for old in selectors.pending_superseded_proposals(ids)
    )


# Why _supersede makes a proposal stale.
SUPERSEDED = (
    "superseded: matching proposes otherwise now (new papers, researchers or "
    "scoring model since)"
)


def _save_drafts(
    drafts: list[_Draft],
    weights: scoring.Weights,
    seen: dict[int, int],
    held: frozenset[int] = frozenset(),
    counts: Counter | None = None,
) -> list[Proposal]:
    """Store drafts whose fingerprint is neither pending nor rejected, in batches.

    Pending ``new`` proposals that the stored drafts replace are superseded in the
    same transaction (see :func:`_supersede`). Each proposal records the revisions
    of its researchers as the run read them (``seen``: ``{researcher id:
    revision}``; one read for any researcher not in it), so that a change made
    since the run read them makes it stale. ``held``: the authorship ids that a
    pending ``new`` proposal held when the run read them; a batch holding none
    supersedes nothing and is not looked up. ``counts["made_stale"]`` (when
    given) counts the proposals superseded.
    """
    fingerprints = [_draft_fingerprint(d) for d in drafts]
    known = selectors.known_fingerprints(fingerprints)
    fresh: dict[str, _Draft] = {}
    again: dict[str, _Draft] = {}
    for fp, draft in zip(fingerprints, drafts, strict=True):
        if fp not in known:
            fresh.setdefault(fp, draft)
        elif known[fp][1] and (draft.researcher_id or draft.other_researcher_id):
            again.setdefault(fp, draft)
    items = list(fresh.items())
    touched = {
        r
        for d in (*fresh.values(), *again.values())
        for r in (d.researcher_id, d.other_researcher_id)
        if r
    }
    revisions = {r: seen[r] for r in touched if r in seen}
    revisions.update(selectors.researcher_revisions(touched - revisions.keys()))

    def seen_by(d: _Draft) -> dict[str, int]:
        return {
            str(r): revisions[r]
            for r in (d.researcher_id, d.other_researcher_id)
            if r in revisions
        }

    # A pending proposal drafted again on its researchers' newer revisions (one
    # of them changed since, by another decision such as an applied split of
    # another part) holds on the evidence read now: it takes the new revisions,
    # score and evidence, so it stays applicable instead of going stale.
    for fp, d in again.items():
        pk, before = known[fp]
        if before != seen_by(d):
            Proposal.objects.filter(pk=pk, status=Proposal.Status.PENDING).update(
                researcher_revisions=seen_by(d),
                score=min(max(d.score, 0.0), 1.0),
                evidence=d.evidence,
            )
    saved: list[Proposal] = []
    through = Proposal.authorships.through
    # Proposals are derived data: a run after a crash proposes again what a lost
    # commit held. So on PostgreSQL their transactions commit asynchronously,
    # without waiting for the WAL flush (PostgreSQL docs, 28.4 "Asynchronous
    # Commit": a crash loses at most the last few hundred milliseconds of such
    # commits, never consistency; a later synchronous commit, such as a
    # curator's or an auto-apply, flushes them with it). Not inside a caller's
    # transaction (an atomic block, or autocommit turned off), whose own commit
    # must stay as it asked.
    asynchronous = (
        connection.vendor == "postgresql"
        and connection.get_autocommit()
        and not connection.in_atomic_block
    )
    for start in range(0, len(items), SAVE_BATCH):
        batch = items[start : start + SAVE_BATCH]
        with transaction.atomic():
            if asynchronous:
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL synchronous_commit TO OFF")
            if any(aid in held for _, d in batch for aid in d.authorship_ids):
                superseded = _supersede(batch)
                if counts is not None:
                    counts["made_stale"] += superseded
            proposals = Proposal.objects.bulk_create(
                Proposal(
                    kind=d.kind,
                    score=min(max(d.score, 0.0), 1.0),
                    evidence=d.evidence,
                    model_version=d.evidence.get("model_version", weights.version),
                    block_key=d.block_key[:200],
                    fingerprint=fp,
                    identifier_proven=d.identifier_proven,
                    researcher_id=d.researcher_id,
                    other_researcher_id=d.other_researcher_id,
                    researcher_revisions=seen_by(d),
                )
                for fp, d in batch
            )
            through.objects.bulk_create(
                through(proposal_id=p.pk, authorship_id=aid)
                for p, (_, d) in zip(proposals, batch, strict=True)
                for aid in d.authorship_ids
            )
        saved.extend(proposals)
    return saved


@dataclass
class _Proposing:
    """What the per-block part of a matching run read and drafted.

    Attributes:
        drafts: attach and ``new`` drafts of the blocks' unassigned
            authorships, then merge drafts of each block's researchers.
        snapshot: the live researchers of the blocks, as read.
        held: the authorship ids a pending ``new`` (or dead attach) held
            when read (:func:`selectors.matchable_views`).
        blocks: how many (sub-)blocks of unassigned authorships.
        vetoes: the cannot-links read (:func:`_vetoes`).
        merging: ``{researcher id: paper ids}`` pending attaches give the
            researchers read, before this run drafted any.
        views: the blocks' unassigned authorships, as read.
    """

    drafts: list[_Draft]
    snapshot: selectors.ResearcherSnapshot
    held: frozenset[int]
    blocks: int
    vetoes: set
    merging: dict[int, frozenset[int]]
    views: list[AuthorshipView]


def _vetoes(researcher_ids: set[int]) -> set:
    """The cannot-links of these researchers (:func:`selectors.cannot_links`).

    "This authorship is not researcher A" also says A is not the researcher
    holding it now: no merge of the two is proposed (nor applied by the
    identifier policy), or a detach would come back as a merge.

    Returns:
        ``{("a", authorship id, researcher id), ("r", low id, high id)}``.
    """
    vetoes = selectors.cannot_links(researcher_ids)
    holder = selectors.holders(aid for kind, aid, _ in vetoes if kind == "a")
    vetoes |= {
        ("r", *sorted((rid, holder[aid])))
        for kind, aid, rid in list(vetoes)
        if kind == "a" and holder.get(aid) not in (None, rid)
    }
    return vetoes


def _propose_in_blocks(
    block_keys: list[str] | None,
    *,
    merges: bool,
    weights: scoring.Weights,
    rarities: NameRarities,
    remembered: bool,
    whole: bool = False,
) -> _Proposing:
    """Read some blocks (or every block) and draft what is proposed in each:
    attaches and ``new`` for their unassigned authorships, merges of each
    block's researchers (with ``merges``). What crosses blocks over a whole
    corpus (merges of names read another way, ORCID splits) is the caller's.

    Args:
        block_keys: these blocks; None for every block.
        merges: draft merges of each block's researchers.
        weights: the scoring model.
        rarities: the corpus's name rarities
            (:func:`selectors.corpus_given_rarities`).
        remembered: accept the profiles this process built lately
            (:func:`selectors.researcher_snapshot`): an incremental run's.
        whole: ``block_keys`` hold every block with researchers that a name
            of their unassigned authorships, read another way, lands in (a
            shard of a full run: :func:`matching_plan`), so none is read
            besides them.

    Returns:
        The drafts with what was read for them (:class:`_Proposing`).
    """
    views, held = selectors.matchable_views(block_keys, rarities)
    grouped = blocking.blocks(
        views,
        key=lambda v: v.block_key,
        sub_key=lambda v: names.sub_block_key(v.given, v.family),
    )
    # One read of the researchers serves attach, merge and split: the blocks
    # read (those asked for, or every researcher's) hold every block the
    # matchable authorships fall in.
    snapshot = selectors.researcher_snapshot(
        block_keys if block_keys is not None else selectors.researcher_block_keys(),
        rarities,
        remembered=remembered,
    )
    profiles = snapshot.profiles
    # The researchers of the blocks the unassigned authorships' names, read
    # another way, land in (names.block_key_readings): a full run has read
    # them all; a block run reads those of the blocks it lacks, for attaches
    # only (their merges and splits are their own blocks' runs').
    elsewhere = profiles
    if block_keys is not None and not whole:
        lacking = {
            r.key
            for v in views
            for r in names.block_key_readings(v.given, v.family)
            if r.key not in profiles
        }
        if lacking:
            extra = selectors.researcher_snapshot(
                sorted(lacking), rarities, remembered=True
            ).profiles
            elsewhere = {**extra, **profiles}
    # The researchers of other blocks that hold authorships printed in the
    # run's blocks (a survivor of a merge across blocks): candidates of those
    # blocks' attaches, in their frame.
    visitors = selectors.visiting_profiles(grouped, rarities)
    vetoes = _vetoes(
        {p.id for members in elsewhere.values() for p in members}
        | {v.profile.id for vs in visitors.values() for v in vs}
    )
    # The papers pending attaches give researchers: one person holds one slot
    # of a paper, so no other slot of them is proposed to the same researcher
    # (the attaches of the papers matched here), and no merge would give one
    # researcher two (the attaches of the researchers merged here). A full run
    # reads every pending attach once for both.
    attached = (
        selectors.pending_attach_papers()
        if block_keys is None
        else selectors.pending_attach_papers(paper_ids={v.paper_id for v in views})
    )
    taken = frozenset((paper, r) for r, papers in attached.items() for paper in papers)
    merging = attached
    if merges and block_keys is not None:
        merging = selectors.pending_attach_papers(
            researcher_ids=[p.id for members in profiles.values() for p in members]
        )
    drafts: list[_Draft] = []
    givens = selectors.pending_attach_names(
        None
        if block_keys is None
        else [
            *block_keys,
            *elsewhere,
            *(v.home for vs in visitors.values() for v in vs),
        ]
    )
    drafts.extend(
        _propose_blocks(
            grouped,
            lambda block: profiles.get(block.split("/", 1)[0], []),
            vetoes,
            weights,
            taken,
            givens,
            elsewhere,
            visitors,
        )
    )
    for block, members in profiles.items() if merges else ():
        drafts.extend(_propose_merges(block, members, vetoes, weights, merging))
    return _Proposing(drafts, snapshot, held, len(grouped), vetoes, merging, views)


def _count_created(created: list[Proposal], counts: Counter) -> None:
    for proposal in created:
        counts[f"proposed_{proposal.kind}"] += 1


def _auto_apply(
    proposals: Iterable[Proposal], counts: Counter, policy: auto_apply.Policy
) -> None:
    """Apply, as the matcher, those of ``proposals`` that ``policy`` clears
    (:meth:`curation.auto_apply.Policy.clears`), counting ``auto_applied``.

    :data:`AUTO_APPLY_CHUNK` decisions a transaction, their cache bumps and
    tasks queued once a chunk (:func:`curation.changes.gathered`). A chunk's
    plain ``new`` proposals are applied together
    (:func:`curation.auto_apply_bulk.apply_new`); the others one at a time,
    each in its own savepoint: one that can no longer apply (a locked
    researcher, a clash, changed since) is logged and left as it is, and
    costs the others nothing.
    """
    sure = [p for p in proposals if policy.clears_proposal(p)]
    for start in range(0, len(sure), AUTO_APPLY_CHUNK):
        with transaction.atomic(), gathered():
            applied, rest = auto_apply_bulk.apply_new(
                sure[start : start + AUTO_APPLY_CHUNK], policy
            )
            counts["auto_applied"] += len(applied)
            for proposal in rest:
                try:
                    proposal_apply(proposal=proposal, actor=None, policy=policy)
                    counts["auto_applied"] += 1
                except CurationError as exc:
                    logger.info(
                        "auto-apply skipped: %s", exc, extra={"proposal": proposal.pk}
                    )


# Decisions the auto-apply policy commits in one transaction: 500 new
# profiles on a collaboration paper queue one bump of its co-authors' caches,
# not 500, and hold their locks for about a second.
AUTO_APPLY_CHUNK = 500


def _split_and_save(
    found: _Proposing,
    conflicts: list[selectors.OrcidConflict],
    weights: scoring.Weights,
    counts: Counter,
    *,
    orcid_splits: bool = True,
) -> list[Proposal]:
    """Add to ``found``'s drafts the splits of its researchers (those of
    ``conflicts`` with several ORCID iDs unless not ``orcid_splits``, and the
    suspects among the others), then store them all, counting each kind.

    Returns:
        The proposals created, in draft order.
    """
    drafts = found.drafts
    if orcid_splits:
        drafts.extend(_propose_splits(conflicts, weights))
    drafts.extend(
        _propose_suspect_splits(
            found.snapshot.suspects, {c.researcher_id for c in conflicts}, weights
        )
    )
    _flag_misplaced_orcids(drafts, found.views)
    _unproven_where_orcid_taken(drafts)
    created = _save_drafts(
        drafts, weights, found.snapshot.revisions(), found.held, counts
    )
    _count_created(created, counts)
    return created


def matching_run(
    *, block_keys: list[str] | None = None, merges: bool = True
) -> dict[str, int]:
    """Propose assignments for every unassigned authorship (optionally in some blocks).

    Steps per block: score each authorship against the block's live researchers
    (attach above ``CURATION_ATTACH_THRESHOLD``), cluster the rest into ``new``
    proposals; and in every block that holds researchers, propose merges of
    researcher pairs above ``CURATION_MERGE_THRESHOLD`` or that a rule joins
    (spelling variants with co-authors in common, initials with one
    expansion: :func:`_propose_merges`), in a full run also across blocks
    (names read another way, one ORCID iD under two family names:
    :func:`_propose_orcid_merges`), and splits of researchers
    that look over-merged: several ORCID iDs (:func:`_propose_splits`), or groups
    of papers sharing no field and no co-author, or more papers a year than one
    person writes (:func:`_propose_suspect_splits`). Attaches and ``new``
    proposals holding a slot whose ORCID iD a source misplaced are flagged
    for a curator (:func:`_flag_misplaced_orcids`). Cannot-link constraints and
    rejected fingerprints are obeyed. Then the auto-apply policy
    (``CURATION_AUTO_APPLY``, :mod:`curation.auto_apply`) applies the ``new``
    and ``attach`` proposals it clears (identifier-proven, or scored at least
    its threshold) that touch no locked researcher: those the run created, and
    in a full run also those an earlier run left pending. Merges and splits
    always wait for a curator. A full run first marks stale the pending
    proposals that can no longer apply (:func:`_stale_dead_proposals`) and the
    attaches another model made that the one in use scores below its
    threshold (:func:`_stale_below_model`).

    All in this process: :func:`matching_plan`, :func:`matching_shard` and
    :func:`matching_finish` are the same run fanned out over Celery workers
    (``curation.tasks.matching_run_task``), and propose the same.

    Idempotent: a second run proposes nothing new while nothing changed.

    Args:
        block_keys: restrict to these blocks; None means every block.
        merges: also propose merges. A harvest's incremental run leaves them out
            (``False``): new unassigned authorships change no researcher, and
            scoring every researcher pair of a block is most of such a run's
            cost; the nightly full run and curators' runs propose them.

    Returns:
        Counts: ``blocks``, ``proposed_<kind>``, ``auto_applied`` and
        ``made_stale`` (pending proposals superseded by this run's, or that
        can no longer apply).
    """
    # A bad CURATION_AUTO_APPLY fails the run here, before it writes
    # anything (it failed after saving the proposals: hostile trial).
    auto_apply.policy()
    full = block_keys is None
    stale = 0
    weights = selectors.active_weights(remembered=not full)
    if full:
        stale = _stale_dead_proposals() + _stale_below_model(weights)
    found = _propose_in_blocks(
        block_keys,
        merges=merges,
        weights=weights,
        rarities=selectors.corpus_given_rarities(remembered=not full),
        remembered=not full,
    )
    counts: Counter[str] = Counter(blocks=found.blocks, made_stale=stale)
    drafts = found.drafts
    if merges and full:
        # Across blocks only in a full run: it reads every block's researchers,
        # so each reading finds the block it names.
        drafts.extend(
            _propose_variant_merges(
                found.snapshot.profiles, found.vetoes, weights, found.merging
            )
        )
        drafts.extend(
            _propose_orcid_merges(
                found.snapshot.profiles,
                selectors.orcids_shared(),
                found.vetoes,
                weights,
                found.merging,
            )
        )
    # A full run asks the database for every live researcher's conflicts (those
    # with no block key too); an incremental run takes its snapshot's.
    conflicts = selectors.orcid_conflicts() if full else found.snapshot.orcid_conflicts
    created = _split_and_save(found, conflicts, weights, counts)
    policy = auto_apply.policy()
    if policy.applies_any:
        # A full run applies, besides those it created, the ones an earlier run
        # left pending (killed between saving and applying, held by a clash,
        # or made under a stricter policy); an incremental run, the ones it
        # created (one query less, for a harvest's many small runs).
        _auto_apply(
            selectors.pending_auto_apply(policy) if full else created,
            counts,
            policy,
        )
    return dict(counts)


# --- the matching run fanned out over Celery workers ------------------------


@dataclass(frozen=True)
class MatchingPlan:
    """A matching run cut into shards of blocks (:func:`matching_plan`).

    Attributes:
        shards: each shard's block keys, sorted; the costliest shard first.
            No block is in two shards, and blocks whose matching meets (see
            :func:`matching_plan`) are in one.
        made_stale: pending proposals the plan made stale (a full run's
            :func:`_stale_dead_proposals` and :func:`_stale_below_model`).
        started: when the plan read the proposals, an aware UTC datetime in
            ISO 8601: the pending attaches older than this are those the
            run-wide merges weigh (:func:`matching_finish`).
    """

    shards: list[list[str]]
    made_stale: int
    started: str


def matching_plan(*, block_keys: list[str] | None = None) -> MatchingPlan:
    """The step before a fanned-out matching run: cut it into shards.

    A full run first makes stale what can no longer apply, as
    :func:`matching_run` does. Blocks whose matching meets go in one shard,
    so that each shard proposes exactly what :func:`matching_run` proposes
    for its blocks: a name of one read into a block with researchers (both
    weigh attaches to those researchers, and one researcher takes one slot of
    a paper and one person's names in a run), a researcher of one holding
    papers printed in the other (a visitor: a candidate in both), unassigned
    authorships of both carrying one ORCID iD (whose clusters are proven only
    when alone in the run).

    Args:
        block_keys: the run's blocks; None for every block (those of
            unassigned authorships and those of live researchers).

    Returns:
        The plan (:class:`MatchingPlan`).
    """
    started = timezone.now().isoformat()
    auto_apply.policy()  # a bad CURATION_AUTO_APPLY fails before any write
    stale = 0
    if block_keys is None:
        weights = selectors.active_weights()
        stale = _stale_dead_proposals() + _stale_below_model(weights)
    wanted = None if block_keys is None else set(block_keys)
    if wanted is not None and len(wanted) < 2:
        # Nothing to cut (a harvest's run over the one block it touched).
        return MatchingPlan([sorted(wanted)] if wanted else [], stale, started)
    links = selectors.block_links(wanted)
    keys = set(links.sizes) | set(links.researchers) if wanted is None else wanted
    return MatchingPlan(
        blocking.shards(
            keys,
            links.pairs,
            cost=lambda b: (
                (links.sizes.get(b, 0) + links.researchers.get(b, 0)) ** 2 + 1
            ),
            # A shard holds an advisory lock a block on PostgreSQL only.
            count=max(
                settings.CURATION_MATCHING_SHARDS,
                math.ceil(len(keys) / settings.CURATION_MATCHING_SHARD_BLOCKS)
                if connection.vendor == "postgresql"
                else 1,
            ),
        ),
        stale,
        started,
    )


def _lock_key(name: str) -> int:
    """A signed 64-bit advisory lock key for a block key (SHA-256's first 8
    bytes), as PostgreSQL's ``bigint`` form takes it."""
    return int.from_bytes(
        hashlib.sha256(name.encode()).digest()[:8], "big", signed=True
    )


# The lock name of a full run's run-wide step (matching_finish); no block key
# is "*" (curation.names.block_key folds to letters and spaces).
RUN_WIDE = "*"


@contextmanager
def block_locks(block_keys: Iterable[str]) -> Iterator[None]:
    """Hold the lock of each of these blocks, or raise at once if any is held.

    No global lock: two runs over different blocks proceed at once, and two
    over one block take turns. On PostgreSQL a session-level advisory lock per
    block, keyed by :func:`_lock_key` (released on the way out, and when the
    connection ends: a killed worker leaves none behind; PostgreSQL docs,
    13.3.5 "Advisory Locks"), all tried in one statement; and the
    :data:`MATCHING_LOCK_KEY` lock shared, so that a single-process run
    (:func:`matching_run_exclusive`, which holds it alone) excludes every
    block. Elsewhere (the SQLite demo, one process) a cache entry per block
    that expires after ``CURATION_MATCHING_LOCK_SECONDS``.

    Each lock counts against PostgreSQL's shared lock table
    (``max_locks_per_transaction`` times ``max_connections``, 6,400 by
    default): a shard holds at most about ``CURATION_MATCHING_SHARD_BLOCKS``.

    Args:
        block_keys: the blocks (or :data:`RUN_WIDE`).

    Raises:
        MatchingBusy: another run holds one of them, or the single-process
            run holds every block (:data:`MATCHING_BUSY`); none is held then.
    """
    keys = sorted({_lock_key(k) for k in block_keys})
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_try_advisory_lock_shared(%s)", [MATCHING_LOCK_KEY]
            )
            if not cursor.fetchone()[0]:
                raise MatchingBusy(MATCHING_BUSY)
            try:
                # Every row's lock is tried (a filter is evaluated row by row).
                cursor.execute(
                    "SELECT k FROM unnest(%s::bigint[]) AS k "
                    "WHERE NOT pg_try_advisory_lock(k)",
                    [keys],
                )
                refused = {row[0] for row in cursor.fetchall()}
                if refused:
                    cursor.execute(
                        "SELECT pg_advisory_unlock(k) FROM unnest(%s::bigint[]) AS k",
                        [[k for k in keys if k not in refused]],
                    )
                    raise MatchingBusy(MATCHING_BUSY)
            except BaseException:
                cursor.execute(
                    "SELECT pg_advisory_unlock_shared(%s)", [MATCHING_LOCK_KEY]
                )
                raise
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_unlock(k) FROM unnest(%s::bigint[]) AS k",
                    [keys],
                )
                cursor.execute(
                    "SELECT pg_advisory_unlock_shared(%s)", [MATCHING_LOCK_KEY]
                )
        return
    if cache.get(_CACHE_LOCK) is not None:
        raise MatchingBusy(MATCHING_BUSY)
    timeout = settings.CURATION_MATCHING_LOCK_SECONDS
    names_held = [f"{_CACHE_LOCK}:{k:x}" for k in keys]
    taken: list[str] = []
    for name in names_held:
        if not cache.add(name, "1", timeout=timeout):
            cache.delete_many(taken)
            raise MatchingBusy(MATCHING_BUSY)
        taken.append(name)
    try:
        yield
    finally:
        cache.delete_many(taken)


def matching_shard(
    *, block_keys: list[str], full: bool, merges: bool = True, started: str = ""
) -> dict[str, int | list[int]]:
    """One shard of a fanned-out matching run: its blocks, under their locks.

    Proposes for its blocks what :func:`matching_run` proposes for them:
    attaches, ``new``, merges and suspect splits of their researchers, and,
    in a run over some blocks, ORCID splits. In a full run the ORCID splits
    and the merges across blocks are :func:`matching_finish`'s, and it reads
    afresh as a full run does. Applies nothing: the proposals it made that
    the auto-apply policy applies are returned for :func:`matching_finish`.

    Args:
        block_keys: the shard's blocks (:attr:`MatchingPlan.shards`).
        full: a shard of a run over every block.
        merges: as for :func:`matching_run`.
        started: :attr:`MatchingPlan.started`: a full run's shard takes the
            name rarities this process counted since (those of an earlier
            shard of the run), or counts them.

    Returns:
        Counts as :func:`matching_run` gives (``blocks``, ``made_stale``,
        ``proposed_<kind>``), and ``proven``: the ids of the proposals it
        created that the auto-apply policy (:mod:`curation.auto_apply`)
        applies, in order.

    Raises:
        MatchingBusy: another run holds one of its blocks (:func:`block_locks`);
            nothing was written.
    """
    with block_locks(block_keys):
        weights = selectors.active_weights(remembered=not full)
        since = datetime.fromisoformat(started) if full and started else None
        found = _propose_in_blocks(
            block_keys,
            merges=merges,
            weights=weights,
            rarities=selectors.corpus_given_rarities(remembered=not full, since=since),
            remembered=not full,
            whole=full,
        )
        counts: Counter[str] = Counter(blocks=found.blocks, made_stale=0)
        created = _split_and_save(
            found,
            # A full run's ORCID splits are its finishing step's.
            selectors.orcid_conflicts(block_keys)
            if full
            else found.snapshot.orcid_conflicts,
            weights,
            counts,
            orcid_splits=not full,
        )
    policy = auto_apply.policy()
    return {
        **counts,
        "proven": [p.pk for p in created if policy.clears_proposal(p)],
    }


def matching_finish(
    *,
    shard_counts: Sequence[Mapping[str, int | list[int]]],
    full: bool,
    merges: bool = True,
    started: str = "",
    made_stale: int = 0,
) -> dict[str, int]:
    """The step after a fanned-out matching run's shards (the chord callback).

    A full run proposes here what crosses blocks (merges of researchers
    whose names, read another way, meet: :func:`_propose_variant_merges`,
    and of researchers of two blocks holding one ORCID iD:
    :func:`_propose_orcid_merges`,
    weighing the pending attaches older than ``started`` as
    :func:`matching_run` weighs those before its own; and the ORCID splits
    of every live researcher), under the :data:`RUN_WIDE` lock, then applies
    every pending proposal the auto-apply policy clears; a run over some
    blocks applies those its shards created.

    Args:
        shard_counts: what each :func:`matching_shard` returned.
        full: a run over every block.
        merges: as for :func:`matching_run`.
        started: :attr:`MatchingPlan.started`.
        made_stale: :attr:`MatchingPlan.made_stale`.

    Returns:
        The run's counts, as :func:`matching_run` gives them.

    Raises:
        MatchingBusy: another full run is in its run-wide step.
    """
    counts: Counter[str] = Counter(blocks=0, made_stale=made_stale)
    proven: list[int] = []
    for shard in shard_counts:
        for key, value in shard.items():
            if key == "proven":
                proven.extend(value)
            else:
                counts[key] += value
    policy = auto_apply.policy()
    if not full:
        if policy.applies_any:
            by_id = Proposal.objects.filter(
                pk__in=proven, status=Proposal.Status.PENDING
            ).in_bulk()
            _auto_apply([by_id[pk] for pk in proven if pk in by_id], counts, policy)
        return dict(counts)
    with block_locks([RUN_WIDE]):
        weights = selectors.active_weights()
        drafts: list[_Draft] = []
        revisions: dict[int, int] = {}
        if merges:
            rarities = selectors.corpus_given_rarities(
                since=datetime.fromisoformat(started) if started else None
            )
            snapshot = selectors.researcher_snapshot(
                selectors.researcher_block_keys(), rarities
            )
            profiles = snapshot.profiles
            revisions = snapshot.revisions()
            vetoes = _vetoes({p.id for members in profiles.values() for p in members})
            pending = selectors.pending_attach_papers(
                created_before=datetime.fromisoformat(started) if started else None
            )
            drafts.extend(_propose_variant_merges(profiles, vetoes, weights, pending))
            drafts.extend(
                _propose_orcid_merges(
                    profiles, selectors.orcids_shared(), vetoes, weights, pending
                )
            )
        drafts.extend(_propose_splits(selectors.orcid_conflicts(), weights))
        _unproven_where_orcid_taken(drafts)
        _count_created(_save_drafts(drafts, weights, revisions, counts=counts), counts)
        if policy.applies_any:
            _auto_apply(selectors.pending_auto_apply(policy), counts, policy)
    return dict(counts)


# The key of the PostgreSQL advisory lock every matching run takes ("wove" in
# ASCII); advisory lock keys are the application's to choose (PostgreSQL docs,
# 9.27.10 "Advisory Lock Functions").
MATCHING_LOCK_KEY = 0x776F7665
_CACHE_LOCK = "matching-lock"


@contextmanager
def matching_lock() -> Iterator[None]:
    """Hold the matching lock for a run, or raise at once if another run has it.

    On PostgreSQL a session-level advisory lock (``pg_try_advisory_lock``): it is
    released on the way out, and also when the connection ends, so a worker killed
    mid-run (kill -9, a lost machine) leaves no lock behind and the redelivered
    task runs at once (PostgreSQL docs, 13.3.5 "Advisory Locks"). Elsewhere (the
    SQLite demo, one process) a cache entry that expires after
    ``CURATION_MATCHING_LOCK_SECONDS``.

    The lock of every block at once, for a run in one process: a fanned-out
    run's shards hold it shared (:func:`block_locks`), so this one waits for
    them and they for it; a nightly full run and a harvest's run over a few
    blocks would otherwise both write those blocks' proposals from stale
    snapshots.

    Raises:
        MatchingBusy: another run holds the lock (:data:`MATCHING_BUSY`).
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [MATCHING_LOCK_KEY])
            if not cursor.fetchone()[0]:
                raise MatchingBusy(MATCHING_BUSY)
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [MATCHING_LOCK_KEY])
        return
    if not cache.add(_CACHE_LOCK, "1", timeout=settings.CURATION_MATCHING_LOCK_SECONDS):
        raise MatchingBusy(MATCHING_BUSY)
    try:
        yield
    finally:
        cache.delete(_CACHE_LOCK)


def matching_run_exclusive(
    *, block_keys: list[str] | None = None, merges: bool = True
) -> dict[str, int]:
    """:func:`matching_run` in this process under :func:`matching_lock`: no
    other run, single-process or fanned out, touches any block meanwhile.

    Args:
        block_keys, merges: as for :func:`matching_run`.

    Returns:
        The counts of :func:`matching_run`.

    Raises:
        MatchingBusy: another run holds the lock; the caller tries again later
            (the task retries after ``CURATION_MATCHING_RETRY_SECONDS``), since
            that run's snapshot may predate the authorships this one was for.
    """
    with matching_lock():
        return matching_run(block_keys=block_keys, merges=merges)


# --- deciding ------------------------------------------------------------


def _transition(
    *,
    proposal: Proposal,
    new: str,
    actor: AbstractBaseUser | None,
    event_kind: str,
    change: Change | None = None,
    batch: CurationEvent | None = None,
    extra: dict | None = None,
) -> CurationEvent:
    """Move a proposal's status by compare-and-swap and write its event.

    Args:
        change: the state change that goes with it (moves, fields, constraints),
            written into the same event.
        batch: the bulk action's ``batch`` event, if any.

    Raises:
        IllegalTransition: ``new`` is not allowed from the current status.
        ProposalConflict: the status changed under us.
    """
    old = proposal.status
    if new not in TRANSITIONS[old]:
        raise IllegalTransition(
            ILLEGAL_TRANSITION.format(pk=proposal.pk, old=old, new=new)
        )
    now = timezone.now()
    changed = Proposal.objects.filter(pk=proposal.pk, status=old).update(
        status=new,
        decided_at=now,
        decided_by=actor,
        reason=(extra or {}).get("reason", proposal.reason),
    )
    if changed != 1:
        raise ProposalConflict(CONFLICT.format(pk=proposal.pk))
    proposal.status, proposal.decided_at, proposal.decided_by = new, now, actor
    return (change or Change(actor=actor)).commit(
        kind=event_kind,
        proposal=proposal,
        batch=batch,
        researchers=[
            r for r in (proposal.researcher_id, proposal.other_researcher_id) if r
        ],
        extra=extra,
    )


def _lock_proposal(proposal: Proposal) -> Proposal:
    locked = Proposal.objects.select_for_update().get(pk=proposal.pk)
    if locked.status == S.STALE:
        raise ProposalNotPending(
            NOT_PENDING_STALE.format(pk=locked.pk, reason=locked.reason or "no reason")
        )
    if locked.status not in (S.PENDING, S.APPROVED):
        raise ProposalNotPending(NOT_PENDING.format(pk=locked.pk, status=locked.status))
    return locked


def proposal_no_longer_fits(proposal: Proposal) -> str:
    """Why approving a pending proposal now would mark it stale instead (a
    researcher merged away, an authorship placed meanwhile...), or "": what
    its page warns a curator of before the click. Read without locks; the
    approval checks the same again under them (:func:`_apply`).

    Args:
        proposal: any proposal; one not pending gives "".

    Returns:
        The reason, as the stale event would give it, or "".
    """
    if proposal.status != S.PENDING:
        return ""
    ids = [r for r in (proposal.researcher_id, proposal.other_researcher_id) if r]
    researchers = {r.pk: r for r in Researcher.objects.filter(pk__in=ids)}
    authorships = list(Authorship.objects.filter(proposals=proposal).order_by("pk"))
    return _stale_reason(proposal, researchers, authorships)


def _rule_share_lost(proposal: Proposal) -> str:
    """Why an attach the evidence-free rule proposed (:func:`_rule_attaches`)
    no longer stands on its premise, or "": its researcher holds fewer
    authorships than when it was proposed (a split, a move out), so may no
    longer hold most of the name. An attach its score proposed, or evidence
    edited into another shape, gives ""."""
    evidence = proposal.evidence if isinstance(proposal.evidence, dict) else {}
    likeliest = evidence.get("likeliest")
    if not evidence.get("rule") or not isinstance(likeliest, dict):
        return ""
    holds = likeliest.get("holds")
    if not isinstance(holds, int) or isinstance(holds, bool):
        return ""
    now = Authorship.objects.filter(researcher_id=proposal.researcher_id).count()
    if now >= holds:
        return ""
    return (
        f"researcher {proposal.researcher_id} holds {now} authorships, "
        f"{holds} when the rule proposed it as holding most of the name"
    )


def _frame_lost(proposal: Proposal, researchers: dict[int, Researcher]) -> str:
    """Why an attach to a researcher of another block, proposed because it
    held authorships printed in the authorship's block (evidence ``frame``:
    :func:`_attach_candidates`), no longer stands on that premise, or "":
    it holds none printed there now, and does not live there (an undone
    merge took them back; a hostile trial had such an attach applied after
    the merge that made it was undone). ``researchers``: the proposal's, as
    :func:`_stale_reason` read them. An attach without a ``frame``, or one
    edited into another shape or naming another block or researcher, gives
    ""."""
    evidence = proposal.evidence if isinstance(proposal.evidence, dict) else {}
    frame = evidence.get("frame")
    block, researcher = proposal.block_key.split("/", 1)[0], proposal.researcher_id
    if (
        not isinstance(frame, dict)
        or frame.get("block") != block
        or frame.get("researcher") != researcher
    ):
        # Not a frame this proposal could carry (edited by hand): as the
        # proposal page, pass it over.
        return ""
    home = researchers.get(researcher)
    if (home is not None and home.block_key == block) or Authorship.objects.filter(
        researcher_id=researcher, block_key=block
    ).exists():
        return ""
    return (
        f"researcher {researcher} no longer holds an authorship printed in "
        f"block {block!r}, as it did when this was proposed"
    )


def _evidence_lost(
    proposal: Proposal, researchers: dict[int, Researcher], authorships: list
) -> str:
    """Why a pending attach no longer stands on its researcher as it is now,
    or "" (a hostile trial approved attaches that matching would no longer
    propose; nothing marked them stale):

    - the authorship's name, as a re-harvest prints it now, cannot be one
      person's with the researcher's ("J. Smith" proposed to John Smith,
      printed "Jane Smith" by the next version);
    - curation moved authorships off the researcher since the proposal was
      made (a split, a move, a detach), and the model in use scores the
      authorship against what it holds now below its attach threshold (the
      papers that matched it were split off to another researcher), or it
      holds none now.

    A researcher that only gained papers is not scored again: what matched
    is still there, and approving one attach would otherwise make the next
    one stale. An attach a rule proposed (its evidence's ``rule``, below
    the threshold by design) or an identifier proved
    (:func:`_proof_lost`) is checked for names only. ``researchers`` and
    ``authorships`` are the proposal's, as :func:`_stale_reason` read them.
    """
    r = researchers.get(proposal.researcher_id)
    if r is None or len(authorships) != 1:
        return ""
    (a,) = authorships
    profile = selectors.researcher_names(r.pk, r.block_key, orcid=r.orcid or "")
    if profile is None:
        # Nothing to compare with: a profile made to be filled by hand stays
        # one; one whose papers were all moved off since is not the person
        # it was proposed for.
        if selectors.moved_away_since(r.pk, proposal.created):
            return (
                f"every authorship of researcher {r.pk} was moved off since it "
                "was proposed (by curation, or by its source dropping them)"
            )
        return ""
    read = (
        (a.given_name, a.family_name)
        if a.block_key == r.block_key
        else variants.name_in_block(
            a.given_name, a.family_name, r.block_key, profile.family
        )
    )
    if read is None:
        return ""
    single = ProfileView(id=None, given_names=(read[0],), family=read[1], orcid=a.orcid)
    if not names_meet(single, profile):
        return (
            f"authorship {a.pk} prints {a.raw_name!r} now, a name that cannot be "
            f"the same person's as researcher {r.pk}'s"
        )
    evidence = proposal.evidence if isinstance(proposal.evidence, dict) else {}
    if (
        evidence.get("rule")
        or proposal.identifier_proven
        or not selectors.moved_away_since(r.pk, proposal.created)
    ):
        return ""
    rarities = selectors.corpus_given_rarities(remembered=True)
    weights = selectors.active_weights(remembered=True)
    threshold = weights.threshold or settings.CURATION_ATTACH_THRESHOLD
    (view,) = selectors.authorship_views([a], rarities)
    view = replace(view, given=read[0], family=read[1], block_key=r.block_key)
    now = selectors.researcher_profile(r.pk, rarities)
    if now is None:
        return ""
    s = scoring.score(authorship_profile_features(view, now), weights)
    if s.pairwise_score >= threshold:
        return ""
    return (
        f"authorships were moved off researcher {r.pk} since it was proposed, "
        f"and the model in use ({weights.version}) scores it {s.pairwise_score:.2f} "
        f"against what it holds now, below its threshold {threshold} (proposed "
        f"at {proposal.score:.2f})"
    )


def _proof_lost(
    proposal: Proposal, researchers: dict[int, Researcher], authorships: list
) -> str:
    """Why an identifier-proven proposal's ORCID iD no longer proves it, or
    "": what the identifier policy would apply without a curator must still
    stand on the iD when it is applied (a hostile trial had a pending proven
    attach, held back by a lock, applied to a researcher whose iD a curator
    had corrected meanwhile).

    - ``attach``: its authorships no longer all print one iD, or the
      researcher carries another one (or none, and none of its authorships
      prints it);
    - ``new``: its authorships no longer all print one iD;
    - ``merge``: the two researchers carry different iDs.

    ``researchers`` and ``authorships`` are the proposal's, as
    :func:`_stale_reason` read them; a proposal not identifier-proven gives
    ""."""
    if not proposal.identifier_proven:
        return ""
    printed = {a.orcid for a in authorships}
    orcid = next(iter(printed)) if len(printed) == 1 else ""
    if proposal.kind in (Proposal.Kind.ATTACH, Proposal.Kind.NEW) and not orcid:
        return (
            f"authorships {[a.pk for a in authorships]} no longer all print the "
            "ORCID iD that proved it"
        )
    if proposal.kind == Proposal.Kind.ATTACH:
        r = researchers.get(proposal.researcher_id)
        if r is None:
            return ""
        if r.orcid and r.orcid != orcid:
            return (
                f"researcher {r.pk} carries ORCID iD {r.orcid} now and its "
                f"authorship prints {orcid}: the iD no longer proves it"
            )
        if (
            not r.orcid
            and not Authorship.objects.filter(researcher_id=r.pk, orcid=orcid).exists()
        ):
            return (
                f"neither researcher {r.pk} nor its authorships carry ORCID iD "
                f"{orcid} now, which proved it"
            )
    if proposal.kind == Proposal.Kind.MERGE:
        held = {r.pk: r.orcid for r in researchers.values() if r.orcid}
        if len(set(held.values())) > 1:
            return (
                "the researchers carry different ORCID iDs now "
                f"({', '.join(f'{pk}: {o}' for pk, o in sorted(held.items()))})"
            )
    return ""


def _stale_reason(
    proposal: Proposal, researchers: dict[int, Researcher], authorships: list
) -> str:
    """Why the proposal no longer fits the state it was made on, or ""."""
    for r in researchers.values():
        if r.merged_into_id:
            return f"researcher {r.pk} was merged into {r.merged_into_id}"
        if r.retired:
            return f"researcher {r.pk} was retired"
    if proposal.kind in (Proposal.Kind.MERGE, Proposal.Kind.SPLIT):
        for pk, seen in sorted(proposal.researcher_revisions.items()):
            now = researchers[int(pk)].revision if int(pk) in researchers else None
            if now is not None and now != seen:
                return (
                    f"researcher {pk} changed since the proposal was made "
                    f"(revision {seen} -> {now})"
                )
    if proposal.kind in (Proposal.Kind.ATTACH, Proposal.Kind.NEW):
        if not authorships:
            return "its authorships no longer exist"
        taken = [a.pk for a in authorships if a.researcher_id is not None]
        if taken:
            return f"authorships {taken} were assigned meanwhile"
    if proposal.kind == Proposal.Kind.ATTACH:
        clash = same_paper_clash(proposal.researcher_id, authorships)
        if clash:
            return clash
        fewer = _rule_share_lost(proposal) or _frame_lost(proposal, researchers)
        if fewer:
            return fewer
        lost = _evidence_lost(proposal, researchers, authorships)
        if lost:
            return lost
    lost = _proof_lost(proposal, researchers, authorships)
    if lost:
        return lost
    if proposal.kind == Proposal.Kind.MERGE and len(researchers) == 2:
        lo, hi = sorted(researchers)
        clash = same_paper_clash(lo, list(Authorship.objects.filter(researcher_id=hi)))
        if clash:
            return clash
    if proposal.kind == Proposal.Kind.SPLIT:
        source = proposal.researcher_id
        elsewhere = [a.pk for a in authorships if a.researcher_id != source]
        if not authorships:
            return "its authorships no longer exist"
        if elsewhere:
            return f"authorships {elsewhere} left researcher {source} meanwhile"
        if (
            not Authorship.objects.filter(researcher_id=source)
            .exclude(pk__in=[a.pk for a in authorships])
            .exists()
        ):
            return f"it would move every authorship of researcher {source}"
    return ""


def _apply(
    proposal: Proposal,
    actor: AbstractBaseUser | None,
    *,
    batch: CurationEvent | None = None,
    split_ids: list[int] | None = None,
    policy: auto_apply.Policy | None = None,
) -> CurationEvent | str:
    """Apply a locked proposal; return its event, or the reason it is stale."""
    change = Change(actor=actor)
    ids = [r for r in (proposal.researcher_id, proposal.other_researcher_id) if r]
    # A split locks those merged into its researcher with it, in one id
    # order: it may move them with their papers (edits.split_off).
    merged = (
        edits.merged_in(proposal.researcher_id)
        if proposal.kind == Proposal.Kind.SPLIT and proposal.researcher_id
        else []
    )
    locked = change.lock([*ids, *merged], live=False)
    researchers = {pk: locked[pk] for pk in ids}
    authorships = list(
        Authorship.objects.select_for_update().filter(proposals=proposal).order_by("pk")
    )
    reason = _stale_reason(proposal, researchers, authorships)
    if reason:
        return reason
    if actor is None:
        for r in researchers.values():
            if r.locked:
                raise ResearcherLocked(LOCKED.format(pk=r.pk))
    must: list[tuple[Researcher, list[Authorship]]] = []
    extra: dict | None = None
    if proposal.kind == Proposal.Kind.SPLIT:
        source = researchers[proposal.researcher_id]
        if split_ids is not None:
            authorships = list(
                Authorship.objects.select_for_update()
                .filter(pk__in=split_ids)
                .order_by("pk")
            )
            unknown = sorted(set(split_ids) - {a.pk for a in authorships})
            if unknown:
                raise ProposalConflict(
                    NOT_ON_RESEARCHER.format(ids=unknown, pk=source.pk)
                )
        target = edits.split_off(change, source, authorships)
        # The proposal names the researcher it created, for the review page.
        Proposal.objects.filter(pk=proposal.pk).update(other_researcher=target)
        proposal.other_researcher = target
        if split_ids is not None:
            extra = {"moved": [a.pk for a in authorships]}
    elif proposal.kind == Proposal.Kind.ATTACH:
        target = researchers[proposal.researcher_id]
        change.move(authorships, target)
        must.append((target, authorships))
    elif proposal.kind == Proposal.Kind.NEW:
        display, given, family = edits.display_name_of(authorships)
        printed = {a.orcid for a in authorships if a.orcid}
        orcid = printed.pop() if len(printed) == 1 else None
        if orcid and _misplaced_orcids(selectors.orcid_slots([orcid])).keys() & {
            a.pk for a in authorships
        }:
            # The iD's other slots print another person's name: a source put
            # it on this one by mistake; the new researcher does not take it.
            orcid = None
        holder = (
            Researcher.objects.filter(orcid=orcid).values_list("pk", flat=True).first()
            if orcid
            else None
        )
        if holder is not None:
            if actor is None:
                # Automation never makes a second researcher of one iD: the
                # proposal waits for a curator.
                raise ResearcherConflict(
                    IDENTIFIER_TAKEN.format(field="ORCID", value=orcid, other=holder)
                )
            # A curator says these are a new person though their iD is another
            # researcher's (a source's mistake, or a detach from it): the iD
            # stays where it is, as in a split (edits.split_off).
            orcid = None
        target = change.create_researcher(
            display_name=display, block_key=names.block_key(given, family), orcid=orcid
        )
        Proposal.objects.filter(pk=proposal.pk).update(researcher=target)
        proposal.researcher = target
        change.move(authorships, target)
        must.append((target, authorships))
    else:
        survivor = researchers[min(ids)]
        extra = {"kept": edits.held_by(survivor)}
        moved = edits.merge_into(change, survivor, [researchers[max(ids)]])
        must.append((survivor, moved))
        edits.confirm_kept(change, survivor, extra["kept"])
    if actor is None:
        # The matcher's placement, not a curator's word: no must-links.
        must = []
        extra = {
            **(extra or {}),
            "by": "the matcher",
            "policy": (policy or auto_apply.policy()).describe(),
            "model_version": proposal.model_version,
        }
    # (A split writes its own must-links and cannot-links in split_off.)
    for target, moved in must:
        for a in moved:
            change.constrain(Constraint.Kind.MUST_LINK, target, authorship=a)
    return _transition(
        proposal=proposal,
        new=S.APPLIED,
        actor=actor,
        event_kind=CurationEvent.Kind.PROPOSAL_APPLIED,
        change=change,
        batch=batch,
        extra=extra,
    )


def proposal_apply(
    *,
    proposal: Proposal,
    actor: AbstractBaseUser | None,
    batch: CurationEvent | None = None,
    split_ids: list[int] | None = None,
    policy: auto_apply.Policy | None = None,
) -> Proposal:
    """Apply a proposal: move the authorships, write the event and the constraints.

    A curator's approval confirms the slots it places (must-links every later
    run obeys: "checked by a curator"). Automation's (``actor`` None, the
    auto-apply policy) writes none: its placements stay the matcher's, which
    a later run may propose to change and a curator may still confirm; its
    event names the matcher, the policy and the model version.

    One transaction; the proposal row and the researchers it touches are locked
    (``select_for_update``) and every assignment changes by compare-and-swap, so two
    curators deciding at once get one success and one clear error, never half a change.

    Args:
        proposal: a pending (or approved) proposal.
        actor: the curator, or None for automation (the auto-apply policy).
        batch: the bulk action's ``batch`` event that this decision belongs to.
        split_ids: for a ``split``, "approve with changes": the authorship ids
            (of the researcher) to move instead of the proposed partition.
        policy: for automation, the policy that applies it (recorded on the
            event); None for a curator.

    Returns:
        The proposal, now ``applied``.

    Raises:
        ProposalNotPending: it was decided already.
        ProposalStale: its authorships or researchers changed since it was made
            (the proposal is then marked ``stale``, with an event).
        ResearcherLocked: automation (``actor is None``) touched a locked researcher.
        ResearcherConflict: a merge would join two different ORCID iDs, or
            automation would make a second researcher of an ORCID iD.
        InvalidChange: an edited split partition is empty or takes everything.
        ProposalConflict: a concurrent change won the race.
    """
    with transaction.atomic():
        locked = _lock_proposal(proposal)
        outcome = _apply(locked, actor, batch=batch, split_ids=split_ids, policy=policy)
        if isinstance(outcome, CurationEvent):
            return locked
        _transition(
            proposal=locked,
            new=S.STALE,
            actor=actor,
            event_kind=CurationEvent.Kind.PROPOSAL_STALE,
            batch=batch,
            extra={"reason": outcome},
        )
    raise ProposalStale(STALE.format(pk=proposal.pk, reason=outcome))


@transaction.atomic
def proposal_reject(
    *,
    proposal: Proposal,
    actor: AbstractBaseUser | None,
    reason: str = "",
    batch: CurationEvent | None = None,
) -> Proposal:
    """Reject a proposal; record cannot-link constraints so it never comes back.

    An ``attach`` rejection forbids each authorship/researcher pair; a ``merge``
    rejection forbids the researcher pair; a ``split`` rejection confirms every
    authorship the researcher holds now on it (must-links: one person); a
    ``new`` rejection keeps its fingerprint from being proposed again.

    Args:
        proposal: a pending proposal.
        actor: the curator.
        reason: optional free text kept on the proposal and the event.
        batch: the bulk action's ``batch`` event that this decision belongs to.

    Returns:
        The proposal, now ``rejected``.

    Raises:
        ProposalNotPending: it was decided already.
        ProposalConflict: a concurrent change won the race.
    """
    locked = _lock_proposal(proposal)
    change = Change(actor=actor)
    if locked.kind == Proposal.Kind.ATTACH and locked.researcher_id:
        for a in locked.authorships.all():
            change.constrain(
                Constraint.Kind.CANNOT_LINK, locked.researcher_id, authorship=a
            )
    elif locked.kind == Proposal.Kind.MERGE:
        change.constrain(
            Constraint.Kind.CANNOT_LINK,
            locked.researcher_id,
            other=locked.other_researcher_id,
        )
    elif locked.kind == Proposal.Kind.SPLIT and locked.researcher_id:
        # "This is one person": every authorship the researcher holds now is
        # confirmed on it, so no later run proposes splitting any part of them
        # off (only papers that arrive later can be flagged again).
        for a in Authorship.objects.filter(researcher_id=locked.researcher_id):
            change.constrain(
                Constraint.Kind.MUST_LINK, locked.researcher_id, authorship=a
            )
    _transition(
        proposal=locked,
        new=S.REJECTED,
        actor=actor,
        event_kind=CurationEvent.Kind.PROPOSAL_REJECTED,
        change=change,
        batch=batch,
        extra={"reason": reason},
    )
    return locked


def proposals_decide(
    *,
    proposals: list[Proposal],
    approve: bool,
    actor: AbstractBaseUser,
    reason: str = "",
) -> tuple[CurationEvent, int, list[str]]:
    """Approve or reject many proposals now, in this process.

    What :func:`bulk_decide_run` does for a bulk action a worker runs
    (:func:`bulk_decide_start`), for callers that want the outcome at once
    (scripts, tests): one ``batch`` event records the bulk action and each
    proposal's event links to it; a proposal that fails (decided already,
    stale, conflicting, or refused by the database) costs nothing else and is
    listed with its reason.

    Args:
        proposals: the proposals, decided in id order.
        approve: True applies, False rejects.
        actor: the curator.
        reason: for rejections, kept on each proposal.

    Returns:
        ``(batch_event, done_count, skipped_reasons)``; the reasons list the
        skipped (decided already, stale, conflicting) then the failed
        (refused by the database).
    """
    batch = _batch_event([p.pk for p in proposals], approve, actor, reason)
    extra = bulk_decide_run(batch_id=batch.pk)
    batch.refresh_from_db()
    return batch, extra["done"], [*extra["skipped"], *extra["failed"]]


# Decisions of a bulk action committed in one transaction, each in its own
# savepoint, their follow-ups (cache bumps, tasks) queued once
# (changes.gathered); its progress is written after each. 100 holds the
# touched profiles' locks for well under a second.
BULK_CHUNK = 100
# Reasons a batch event keeps of each kind (the counts are whole).
BULK_REASONS_KEPT = 100


def _batch_event(
    ids: Sequence[int], approve: bool, actor: AbstractBaseUser, reason: str
) -> CurationEvent:
    """The ``batch`` event of a bulk action, ``queued``: which proposals,
    approve or reject, the reason, and its progress (``total``, ``done``,
    ``skipped``, ``failed``)."""
    ids = sorted(set(ids))
    return CurationEvent.objects.create(
        kind=CurationEvent.Kind.BATCH,
        actor=actor,
        extra={
            "verb": "applied" if approve else "rejected",
            "proposals": ids,
            "reason": reason,
            "state": "queued",
            "total": len(ids),
            "done": 0,
            "skipped": [],
            "failed": [],
            "skipped_count": 0,
            "failed_count": 0,
        },
    )


def bulk_decide_start(
    *,
    proposal_ids: Sequence[int],
    approve: bool,
    actor: AbstractBaseUser,
    reason: str = "",
) -> CurationEvent:
    """Record a bulk approve or reject and queue it for a worker.

    The request that asks returns at once (issue 47: approving 5,784
    proposals inside one request took 5 min 19 s, past gunicorn's 30 s); the
    worker runs :func:`bulk_decide_run` and writes its progress on the
    ``batch`` event, which the admin's progress page reads. The embedded
    setup runs the task eagerly, before this returns.

    Args:
        proposal_ids: the proposals to decide (decided in id order).
        approve: True applies, False rejects.
        actor: the curator.
        reason: for rejections, kept on each proposal.

    Returns:
        The ``batch`` event (``extra["state"]``: ``queued``, then
        ``running`` and ``done``).
    """
    from curation.tasks import bulk_decide_task

    batch = _batch_event(proposal_ids, approve, actor, reason)
    if bulk_decide_task.app.conf.task_always_eager:
        # In this process: the batch row is this transaction's own.
        bulk_decide_task.delay(batch.pk)
        batch.refresh_from_db()
    else:
        # A worker reads the batch once the request has committed it; through
        # the outbox, so a broker that is down delays the batch, never loses it.
        outbox_send(task="curation.bulk_decide", kwargs={"batch_id": batch.pk})
    return batch


def bulk_decide_run(*, batch_id: int) -> dict:
    """Decide the proposals of a bulk action's ``batch`` event (a worker's
    task, or :func:`proposals_decide` in this process).

    :data:`BULK_CHUNK` decisions a transaction, each by the one-proposal
    service (:func:`proposal_apply`, :func:`proposal_reject`) in its own
    savepoint: one that fails costs nothing else. Skipped: decided already,
    stale, conflicting (a :class:`~curation.exceptions.CurationError`);
    failed: refused by the database. Each proposal's event links to the
    batch. Progress is written on the batch event after each chunk.

    Idempotent: a redelivered task passes over the proposals the batch
    decided already (they count as done) and a finished batch is left as it
    is.

    Args:
        batch_id: a ``batch`` event made by :func:`bulk_decide_start`.

    Returns:
        The batch's ``extra``: ``state`` (``done``), ``total``, ``done``,
        ``skipped`` and ``failed`` (reasons, the first
        :data:`BULK_REASONS_KEPT` of each), ``skipped_count``,
        ``failed_count``.

    Raises:
        CurationEvent.DoesNotExist: no batch event has that id.
    """
    batch = CurationEvent.objects.select_related("actor").get(
        pk=batch_id, kind=CurationEvent.Kind.BATCH
    )
    extra = dict(batch.extra)
    if extra.get("state") == "done" or extra.get("verb") not in ("applied", "rejected"):
        # Finished, or not a bulk action (a block review's batch): untouched.
        return extra
    approve = extra.get("verb") == "applied"
    ids = [int(pk) for pk in extra.get("proposals", [])]
    decided = set(
        CurationEvent.objects.filter(batch=batch, proposal_id__isnull=False)
        .exclude(kind=CurationEvent.Kind.PROPOSAL_STALE)
        .values_list("proposal_id", flat=True)
    )
    found = Proposal.objects.in_bulk(ids)
    done, skipped, failed = len(decided & set(ids)), [], []

    def save(state: str) -> None:
        extra.update(
            state=state,
            done=done,
            skipped=skipped[:BULK_REASONS_KEPT],
            failed=failed[:BULK_REASONS_KEPT],
            skipped_count=len(skipped),
            failed_count=len(failed),
        )
        CurationEvent.objects.filter(pk=batch.pk).update(extra=extra)

    save("running")
    todo = [pk for pk in ids if pk not in decided]
    for start in range(0, len(todo), BULK_CHUNK):
        with transaction.atomic(), gathered():
            for pk in todo[start : start + BULK_CHUNK]:
                proposal = found.get(pk)
                if proposal is None:
                    skipped.append(f"proposal #{pk} no longer exists")
                    continue
                # Each service opens its own savepoint here (and a stale
                # proposal's mark is written before it raises, so it stays).
                try:
                    if approve:
                        proposal_apply(
                            proposal=proposal, actor=batch.actor, batch=batch
                        )
                    else:
                        proposal_reject(
                            proposal=proposal,
                            actor=batch.actor,
                            reason=extra.get("reason", ""),
                            batch=batch,
                        )
                    done += 1
                except CurationError as exc:
                    skipped.append(str(exc))
                except DatabaseError as exc:
                    # Its savepoint rolled back; the rest of the batch goes on.
                    logger.exception("proposal #%s not decided", pk)
                    failed.append(
                        f"proposal #{pk}: the database refused it "
                        f"({type(exc).__name__}: {str(exc).splitlines()[0][:200]})"
                    )
        save("running")
    save("done")
    return extra


# --- curators ------------------------------------------------------------

CURATORS_GROUP = "curators"
CURATOR_PERMISSIONS = (
    ("curation", "view_proposal"),
    ("curation", "change_proposal"),
    ("curation", "decide_proposal"),
    ("curation", "view_curationevent"),
    ("curation", "view_constraint"),
    ("curation", "undo_curationevent"),
    ("curation", "view_claimrequest"),
    ("curation", "decide_claimrequest"),
    ("curation", "view_matchermodel"),
    ("wovepaper", "change_researcher"),
    ("wovepaper", "merge_researcher"),
    ("wovepaper", "split_researcher"),
    ("wovepaper", "move_authorship"),
    ("wovepaper", "lock_researcher"),
    ("wovepaper", "view_researcher"),
    ("wovepaper", "view_paper"),
    ("wovepaper", "view_authorship"),
    ("harvest", "view_harvestrun"),
    ("harvest", "view_rawrecord"),
    ("harvest", "view_sourceauthor"),
)


@transaction.atomic
def curator_ensure(*, username: str, password: str, email: str = ""):
    """Create (or refresh) a staff user in the ``curators`` group.

    Args:
        username: login name.
        password: the password to set.
        email: optional address.

    Returns:
        The user, staff, member of ``curators`` whose permissions are
        :data:`CURATOR_PERMISSIONS`.
    """
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group, Permission

    group, _ = Group.objects.get_or_create(name=CURATORS_GROUP)
    perms = [
        Permission.objects.get(content_type__app_label=app, codename=code)
        for app, code in CURATOR_PERMISSIONS
    ]
    group.permissions.set(perms)
    user, _ = get_user_model().objects.get_or_create(
        username=username, defaults={"email": email}
    )
    user.is_staff = True
    user.set_password(password)
    user.save()
    user.groups.add(group)
    return user


# --- the matcher model -------------------------------------------------------------


@transaction.atomic
def matcher_train(
    *, datasets: list[Path], threshold: float, activate: bool = True
) -> MatcherModel:
    """Train the pairwise model on labelled sets and curator decisions; activate it.

    Labelled pairs come from each dataset (see
    :func:`curation.matching.training.labelled_pairs`), each set weighing
    alike (:func:`curation.matching.training.set_weights`); curator decisions
    are the attach and merge proposals a person applied (positives) or
    rejected (negatives), those whose evidence cannot be read left out and
    named. The new model becomes the only active one (unless ``activate`` is
    False: it is stored for :func:`matcher_activate`); matching runs use it
    from then on and record its version on every proposal.

    Args:
        datasets: labelled set folders (:func:`curation.matching.labelled.load`),
            or pair sets (:func:`curation.matching.labelled_pairs.load_pairs`:
            their train pairs).
        threshold: the pairwise score in [0, 1] at which matching with this model
            joins clusters and proposes attachments.
        activate: make it the model matching uses (False: store it inactive,
            to read its weights and training first).

    Returns:
        The saved MatcherModel, active unless ``activate`` is False.

    Raises:
        labelled.DatasetError: a folder holds no labelled set.
        ValueError: the pairs hold only one class.
    """
    twice = [
        f
        for n, f in enumerate(datasets)
        if f.resolve() in {d.resolve() for d in datasets[:n]}
    ]
    if twice:
        raise ValueError(f"{twice[0]}: named twice; name each set once")
    loaded: list[training.SetPairs] = []
    embed = embeddings.text_embedder()
    for folder in datasets:
        one = training.set_pairs(folder, embed=embed)
        if one.name in {other.name for other in loaded}:
            raise ValueError(
                f"{folder}: another set named {one.name!r} is trained on too; "
                "name sets whose folders have different names"
            )
        loaded.append(one)
    sets = {one.name: one.summary for one in loaded}
    decided = Proposal.objects.filter(
        kind__in=[Proposal.Kind.ATTACH, Proposal.Kind.MERGE],
        status__in=[S.APPLIED, S.REJECTED],
        decided_by__isnull=False,
    ).values_list("pk", "evidence", "status")
    decisions, decisions_left_out = training.decision_pairs(
        (pk, evidence, status == S.APPLIED) for pk, evidence, status in decided
    )
    stamp = timezone.now().strftime("%Y%m%d%H%M%S%f")
    try:
        weights, kept = training.fit_sets(
            loaded, version=f"logreg-{stamp}", decisions=decisions
        )
    except ValueError as exc:
        counts = ", ".join(
            f"{name}: {d['pairs']} pairs, {d['positives']} matching"
            for name, d in sets.items()
        )
        raise ValueError(
            f"{exc} ({counts}; curator decisions: {len(decisions.y)} pairs, "
            f"{sum(decisions.y)} approved)"
        ) from exc
    if activate:
        MatcherModel.objects.filter(active=True).update(active=False)
        # This process's next incremental run reads the new model, not the one
        # it remembers (forgetting early costs one read if this transaction
        # fails).
        selectors.forget_given_rarities()
    return MatcherModel.objects.create(
        active=activate,
        version=weights.version,
        bias=weights.bias,
        weights=weights.weights,
        threshold=threshold,
        training={
            "datasets": sets,
            "curator_decisions": len(decisions.y),
            "curator_decisions_left_out": decisions_left_out,
            "pairs": sum(d["pairs"] for d in sets.values()) + len(decisions.y),
            "positives": sum(d["positives"] for d in sets.values()) + sum(decisions.y),
            "features": list(scoring.FEATURES),
            "defaults_kept": kept,
        },
    )


@transaction.atomic
def matcher_activate(*, version: str | None) -> MatcherModel | None:
    """Make one stored model the one matching uses, or none (default weights).

    For a model stored with ``matcher_train(activate=False)``, and to roll
    back to an earlier model, or to the hand-set default weights
    (:data:`curation.matching.scoring.DEFAULT`), when a new one proposes
    worse. Proposals already made keep the version they were scored with;
    later runs score with this one (another process within
    ``CURATION_RARITY_SECONDS``, as a model trained elsewhere reaches it).

    Args:
        version: the ``MatcherModel.version`` to activate; None deactivates
            every model.

    Returns:
        The active model, or None for the default weights.

    Raises:
        ValueError: no stored model has that version (the newest versions
            named), or its row cannot be scored with (edited by hand:
            ``MatcherModel.problem`` says why); nothing is changed.
    """
    model = None
    if version is not None:
        model = MatcherModel.objects.select_for_update().filter(version=version).first()
        if model is None:
            newest = ", ".join(
                MatcherModel.objects.values_list("version", flat=True)[:3]
            )
            raise ValueError(
                f"no stored matcher model has version {version!r}"
                + (f" (newest: {newest})" if newest else " (none is stored)")
            )
        if model.problem:
            raise ValueError(
                f"matcher model {version!r} cannot be scored with: {model.problem}"
            )
    others = MatcherModel.objects.filter(active=True)
    if model is not None:
        others = others.exclude(pk=model.pk)
    others.update(active=False)
    if model is not None and not model.active:
        model.active = True
        model.save(update_fields=["active"])
    selectors.forget_given_rarities()
    return model
