"""The evidence-free rule: mentions that print nothing beyond a name join the
profile that holds most of that name, when it is the block's only likely
person.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from curation import names
from curation.matching import scoring
from curation.matching.features import (
    AuthorshipView,
    ProfileView,
    field_conflict,
    full_given_key,
    given_form,
    names_conflict,
    profile_of,
    profile_profile_features,
)
from curation.matching.pipeline.shapes import NO_CONSTRAINTS, Cluster, Constraints, _ids


def evidence_free(view: AuthorshipView) -> bool:
    """Whether an authorship carries nothing that tells namesakes apart but
    its name, field and year.

    Args:
        view: one authorship.

    Returns:
        True when it has no affiliation word, no co-author (none, or a
        hyperauthored byline: :data:`features.COAUTHOR_MAX_BYLINE`), no ORCID
        and no source author id.
    """
    return not (
        view.affiliation_tokens or view.coauthor_keys or view.orcid or view.source_ids
    )


# The share of a printed name's mentions, among its holders (the clusters that
# carry evidence and the researchers printing it), that one cluster must hold
# for an evidence-free cluster of that name to join it (attach_evidence_free):
# more likely than not its person. Measured by evaluate_matching (5-fold
# learned B3 F1 on S2AND Qian-partial, threshold 0.4; INSPIRE Wang moved by
# less than 0.001 at each): no rule 0.814; share 0.3 0.819, 0.4 0.821, 0.5
# 0.820, 0.6 0.820 (0.5 measured again once forbidden holders counted and
# family names had to agree: 0.820).
EVIDENCE_FREE_SHARE = 0.5

# What an evidence-free join's recorded pair says (Score.rule).
EVIDENCE_FREE_RULE = (
    "no affiliation, co-author or identifier: joined the cluster that holds "
    "most mentions of its printed name"
)
# What an attach proposed by the same rule says (its evidence's "rule"): the
# researcher, not a cluster, holds most of the name (curation.services).
EVIDENCE_FREE_ATTACH_RULE = (
    "no affiliation, co-author or identifier: proposed to the researcher who "
    "holds most mentions of its printed name"
)


def attach_evidence_free(
    found: list[Cluster],
    *,
    weights: scoring.Weights,
    constraints: Constraints = NO_CONSTRAINTS,
    researchers: Sequence[ProfileView] = (),
) -> list[Cluster]:
    """Join each cluster of evidence-free authorships to the likeliest person
    of its printed name, when one is likelier than all the others together.

    A mention printing a full name and nothing else ("Stefan Wagner", no
    affiliation, no co-authors) scores below the threshold against every
    cluster of that name, however many mentions it holds: its pair features
    are the name's alone. Left apart, each such mention is a profile of one,
    which costs B³ recall (S2AND Qian-partial: 1,548 of its 6,542 mentions
    print no affiliation). With no evidence, the chance that a mention is a
    given person's is that person's share of the name's mentions: the prior
    of the naive Bayes disambiguation model of Han, Giles, Zha, Li and
    Tsioutsiouliklis (2004), "Two supervised learning approaches for name
    disambiguation in author citations", JCDL, P(X_i) = the share of the
    citations written by author i.

    So the holders of a name are the clusters carrying evidence and the
    block's researchers that print the same family name and the same full
    given name (:func:`given_form`), each weighing its authorships; an
    evidence-free cluster joins the biggest holder when it holds at least
    :data:`EVIDENCE_FREE_SHARE` of them all and strictly more than any
    other, and that holder is a cluster (the attach step has scored the
    mention against a researcher already; a curator may assign it by hand)
    that nothing forbids it: one paper, given names that conflict
    (:func:`names_conflict`), fields apart (:func:`field_conflict`). Left
    alone instead: initials only ("S. Wagner"), a cluster holding an
    authorship that a curator's constraint names, and clusters that would
    bring one holder two authorships of one paper (each of them, and none
    marked with a researcher as its likeliest person).

    Args:
        found: the clusters of one block (:func:`_cluster_scored`).
        weights: the model that scores the joined pair for its evidence.
        constraints: the curator's constraints of the block.
        researchers: the block's live researchers, which count among a
            name's holders and take nothing.

    Returns:
        The clusters carrying evidence, in their order, each with the
        evidence-free clusters it took (their members after its own, the
        pair recorded with :data:`EVIDENCE_FREE_RULE` as its ``rule``), then
        the evidence-free clusters left alone, in their order (one whose
        likeliest holder is a researcher says so: :attr:`Cluster.likeliest`).
        The grouping does not depend on the order of ``found``.
    """
    tied = {i for pair in constraints.must_link | constraints.cannot_link for i in pair}
    solid: list[Cluster] = []
    loose: list[Cluster] = []
    for c in found:
        (loose if all(evidence_free(m) for m in c.members) else solid).append(c)
    if not (solid or researchers) or not loose:
        return found
    profiles = [profile_of(c.members) for c in solid]
    # Holder k < len(solid) is solid[k]; past it, researchers[k - len(solid)].
    sizes = [len(c.members) for c in solid] + [len(r.paper_ids) for r in researchers]
    holding = [*profiles, *researchers]
    holders: dict[tuple[str, str], list[int]] = {}
    for k, holder in enumerate(holding):
        for key in _printed_names(holder):
            holders.setdefault(key, []).append(k)
    # Per name, its holders biggest first and their mentions in all, once:
    # a block of one common name holds thousands of each.
    ranked_of = {
        key: sorted(ks, key=lambda k: (-sizes[k], k)) for key, ks in holders.items()
    }
    total_of = {key: sum(sizes[k] for k in ks) for key, ks in holders.items()}
    taken: dict[int, list[Cluster]] = {}
    alone: list[Cluster] = []
    for cluster in loose:
        profile = profile_of(cluster.members)
        keys = _printed_names(profile)
        if len(keys) == 1:
            key = next(iter(keys))
            ranked, total = ranked_of.get(key, []), total_of.get(key, 0)
        else:
            union = {k for key in keys for k in holders.get(key, [])}
            ranked = sorted(union, key=lambda k: (-sizes[k], k))
            total = sum(sizes[k] for k in union)
        best = ranked[0] if ranked else None
        if (
            best is None
            or any(m.id in tied for m in cluster.members)
            or sizes[best] < EVIDENCE_FREE_SHARE * total
            or (len(ranked) > 1 and sizes[ranked[1]] == sizes[best])
            or profile.paper_ids & holding[best].paper_ids
            or names_conflict(profile, holding[best])
            or field_conflict(profile.categories, holding[best].categories)
        ):
            alone.append(cluster)
        elif best >= len(solid):
            researcher = holding[best].id
            alone.append(
                cluster
                if researcher is None
                else replace(cluster, likeliest=(researcher, sizes[best], total))
            )
        else:
            taken.setdefault(best, []).append(cluster)
    for k, joining in taken.items():
        # Two joining one holder could be two slots of one paper (namesakes on
        # a hyperauthored byline carry no co-authors): neither joins.
        clash = _two_slots(joining)
        if clash:
            taken[k] = [c for c in joining if id(c) not in clash]
            alone += [c for c in joining if id(c) in clash]
    # Nor are two such slots given to one researcher: neither says it is his.
    marked: dict[int, list[Cluster]] = {}
    for c in alone:
        if c.likeliest:
            marked.setdefault(c.likeliest[0], []).append(c)
    clash = {i for group in marked.values() for i in _two_slots(group)}
    alone = [replace(c, likeliest=None) if id(c) in clash else c for c in alone]
    out = []
    for k, cluster in enumerate(solid):
        members, pair_scores = list(cluster.members), list(cluster.pair_scores)
        pair_sides = list(cluster.pair_sides)
        holder = _ids(cluster)  # one tuple shared by every pair it joins
        for joined in taken.get(k, []):
            pair = scoring.score(
                profile_profile_features(profiles[k], profile_of(joined.members)),
                weights,
            ).joined_by(EVIDENCE_FREE_RULE)
            pair_scores += [*joined.pair_scores, pair]
            pair_sides += [*joined.pair_sides, (holder, _ids(joined))]
            members += joined.members
        out.append(Cluster(members, pair_scores, pair_sides))
    order = {id(c.members[0]): n for n, c in enumerate(loose)}
    return out + sorted(alone, key=lambda c: order[id(c.members[0])])


def _two_slots(clusters: list[Cluster]) -> set[int]:
    """The ``id()`` of each of ``clusters`` holding a paper another of them
    (or itself twice) holds too."""
    papers = Counter(m.paper_id for c in clusters for m in c.members)
    return {id(c) for c in clusters if any(papers[m.paper_id] > 1 for m in c.members)}


def _printed_names(profile: ProfileView) -> set[tuple[str, str]]:
    """``(folded family name, printed form of a full given name)`` of each
    full given name a profile prints (:func:`given_form`); its family name
    is its first authorship's, as :func:`profile_of` keeps it."""
    family = names.fold(profile.family)
    return {(family, given_form(g)) for g in profile.given_names if full_given_key(g)}


def _joined(found: list[Cluster], constraints: Constraints) -> list[Cluster]:
    """Clusters with those a must-link joins made one, unless a cannot-link
    lies between them (the pair that would join them is then left apart)."""
    owner = {m.id: k for k, c in enumerate(found) for m in c.members}
    group = list(range(len(found)))
    members: dict[int, set[int]] = {k: {k} for k in range(len(found))}
    cannot = constraints.between(owner, constraints.cannot_link)
    for i, j in sorted(constraints.between(owner, constraints.must_link)):
        a, b = group[i], group[j]
        if a == b or any(
            (min(x, y), max(x, y)) in cannot for x in members[a] for y in members[b]
        ):
            continue
        for k in members[b]:
            group[k] = a
        members[a] |= members.pop(b)
    return [
        Cluster(
            [m for k in sorted(ks) for m in found[k].members],
            [s for k in sorted(ks) for s in found[k].pair_scores],
            [s for k in sorted(ks) for s in found[k].pair_sides],
        )
        for _, ks in sorted(members.items())
    ]
