"""``merge`` drafts: profiles that are likely one person, within a block
(:func:`propose_merges`), across spelling variants and initials
(:func:`propose_variant_merges`), and across family names by one ORCID iD
(:func:`propose_orcid_merges`). Merges always wait for a curator.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace

from django.conf import settings

from curation import names
from curation.matching import (
    orcids,
    scoring,
    variants,
)
from curation.matching.features import (
    ProfileView,
    full_given_key,
    names_meet,
    profile_profile_features,
)
from curation.proposing.drafts import Draft

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


def propose_merges(
    block: str,
    profiles: list[ProfileView],
    vetoes: set,
    weights: scoring.Weights,
    pending: dict[int, frozenset[int]] | None = None,
) -> list[Draft]:
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
    drafts: list[Draft] = []
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
                Draft(
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


def propose_variant_merges(
    profiles: dict[str, list[ProfileView]],
    vetoes: set,
    weights: scoring.Weights,
    pending: dict[int, frozenset[int]] | None = None,
) -> list[Draft]:
    """Merge drafts for researchers of two blocks where a name read another
    way meets them.

    A researcher printed ``"Zhang Ping"`` in Chinese order (block ``"ping
    z"``) is never compared, block by block, with the ``"Ping Zhang"`` of
    block ``"zhang p"``; nor ``"García Márquez, J."`` with ``"García, J."``.
    Each researcher is read into every other block its printed names land in
    (:func:`curation.matching.variants.meetings`) and scored there against
    each researcher as :func:`propose_merges` scores a block's pairs: the
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
        vetoes, weights, pending: as for :func:`propose_merges`.

    Returns:
        The drafts, lower id first in each pair, each under the block of the
        researcher its reading met.
    """
    pending = pending or {}
    merge_threshold = settings.CURATION_MERGE_THRESHOLD
    best: dict[tuple[int, int], Draft] = {}
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
            best[lo, hi] = Draft(
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


def propose_orcid_merges(
    profiles: Mapping[str, list[ProfileView]],
    shared: Mapping[str, list[int]],
    vetoes: set,
    weights: scoring.Weights,
    pending: dict[int, frozenset[int]] | None = None,
) -> list[Draft]:
    """Merge drafts for researchers of two blocks that hold one ORCID iD.

    Blocking by family name keeps a person who changed it apart for ever
    ("Sofia Lindberg" until 2019, "Sofia Haddad" since, one iD: issue 46),
    and :func:`propose_merges` compares only a block's pairs. Researchers
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
        vetoes, weights, pending: as for :func:`propose_merges`.

    Returns:
        The drafts, lower id first in each pair, under the lower id's block;
        the evidence carries ``rule``, ``orcid`` and ``names``.
    """
    pending = pending or {}
    where = {p.id: (block, p) for block, members in profiles.items() for p in members}
    drafts: dict[tuple[int, int], Draft] = {}
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
                drafts[lo, hi] = Draft(
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
