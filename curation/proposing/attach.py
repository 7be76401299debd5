"""``new`` and ``attach`` drafts of a name block: which existing profile each
of the engine's clusters joins, or that it starts a new one; the rule
attaches (an ORCID iD, a spelling) and the ties between equally likely
profiles.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from django.conf import settings

from curation import names, selectors
from curation.matching import (
    pipeline,
    scoring,
    variants,
)
from curation.matching.features import (
    AuthorshipView,
    ProfileView,
    authorship_profile_features,
    names_meet,
    profile_of,
)
from curation.proposing.drafts import (
    Draft,
    large_collaboration,
    likeliest_evidence,
    recorded_pairs,
)


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
) -> list[Draft]:
    """Attach and ``new`` drafts for one block's unassigned authorships:
    :func:`propose_blocks` of that block alone (``profiles`` its live
    researchers; ``run`` its keyword arguments)."""
    return propose_blocks({block: views}, lambda _: profiles, vetoes, weights, **run)


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


def propose_blocks(
    grouped: Mapping[str, list[AuthorshipView]],
    profiles_of: Callable[[str], list[ProfileView]],
    vetoes: set,
    weights: scoring.Weights,
    taken: frozenset[tuple[int, int]] = frozenset(),
    pending_names: dict[int, list[variants.Slot]] | None = None,
    elsewhere: Mapping[str, list[ProfileView]] | None = None,
    visitors: Mapping[str, list[selectors.Visitor]] | None = None,
) -> list[Draft]:
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
    drafts: list[Draft] = []
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
            if large_collaboration([a]):
                evidence = {**evidence, selectors.LARGE_COLLABORATION: True}
            drafts.append(
                Draft(
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
) -> list[Draft]:
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
    drafts: list[Draft] = []
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
            # policy weighs (curation.deciding.auto_apply).
            "weakest": math.floor(found.weakest * 1e6) / 1e6,
            **(
                {selectors.LARGE_COLLABORATION: True}
                if large_collaboration(members)
                else {}
            ),
            "members": len(members),
            "pairs": recorded_pairs(found),
            "orcids": sorted(orcids),
        }
        if found.likeliest and not any(
            ("a", m.id, found.likeliest[0]) in vetoes for m in members
        ):
            # It prints nothing but the name, and a researcher holds most
            # of that name, but the rule could not propose it to them (a
            # slot of its paper or a name proposed to them already): the
            # curator's hint. Not when a curator said it is not them.
            evidence["likeliest"] = likeliest_evidence(found.likeliest)
        names_agree = all(
            names.given_names_compatible(
                x.given, y.given, pinyin=names.reads_as_pinyin(x.family)
            )
            for n, x in enumerate(members)
            for y in members[n + 1 :]
        )
        drafts.append(
            Draft(
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


def _rule_attaches(
    found: pipeline.Cluster,
    researchers: dict[int, ProfileView],
    vetoes: set,
    weights: scoring.Weights,
    winner: dict[tuple[int, int], tuple[float, int]],
    proposed: dict[int, list[variants.Slot]],
    block: str,
) -> list[Draft]:
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
            "likeliest": likeliest_evidence(found.likeliest),
        }
        winner[(a.paper_id, researcher)] = (s.pairwise_score, -a.id)
        proposed.setdefault(researcher, []).append((a.given, a.family, a.block_key))
        drafts.append(
            Draft(
                "attach",
                s.pairwise_score,
                evidence,
                block,
                [a.id],
                researcher_id=researcher,
            )
        )
    return drafts
