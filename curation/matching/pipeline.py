"""Authorships to clusters in one block: the scoring and clustering steps together.

Used by the matching service for authorships that match no researcher, by the
quality evaluation (``manage.py evaluate_matching``) and by ``bench/matching.py``,
so all three measure the same thing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from curation import names
from curation.matching import clustering, scoring, variants
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


# Authorships clustered at once before chunk clusters are merged (see
# :func:`cluster_authorships`); at most clustering.MAX_ITEMS. It bounds the pair
# scores per authorship (CHUNK - 1), so a re-cluster grows linearly once common
# names fill their chunks. Chosen by evaluate_matching (5-fold learned B3 F1,
# Wang / Qian) and bench/matching.py (seconds to re-cluster 10,000 / 100,000
# re-keyed Wang mentions, and the growth exponent):
#   200, input order: 0.954 / 0.890; 10.7 s / 259.5 s, exponent 1.38
#   200, name order:  0.953 / 0.890
#   100, name order:  0.954 / 0.887
#    50, name order:  0.9545 / 0.8875; 11.2 s / 149.8 s, exponent 1.13
# (those folds clustered a fifth of each block's people; on folds of whole
# blocks, with the family-rarity feature, at threshold 0.25 / 0.4:
#   400: 0.906 / 0.818;  50: 0.898 / 0.817.)
CHUNK = 50


def cluster_authorships(
    views: list[AuthorshipView],
    *,
    threshold: float,
    weights: scoring.Weights = scoring.DEFAULT,
    constraints: Constraints = NO_CONSTRAINTS,
    researchers: Sequence[ProfileView] = (),
) -> list[Cluster]:
    """Cluster the authorships of one block, of any size.

    Up to :data:`CHUNK` authorships are clustered directly (average linkage over
    pairwise scores). A bigger block is clustered in chunks of :data:`CHUNK`,
    its authorships ordered so that given names printed alike, then a shared
    affiliation word, fall in one chunk (:func:`_chunk_order`); then the chunks'
    clusters are clustered again as profiles
    (average linkage over profile-to-profile scores), repeatedly until no two
    merge: memory and time grow with the number of chunks, not the square of the
    block. Two authorships of one paper are never in one cluster. Last,
    clusters of authorships that print nothing but a full name join the
    likeliest person of that name (:func:`attach_evidence_free`).

    Args:
        views: the block's authorships.
        threshold: pairwise score in [0, 1] at which clusters join.
        weights: the scoring model.
        constraints: must-links and cannot-links between the authorships; the
            chunks' clusters that a must-link joins are joined before the
            chunks are merged, so chunking never parts them.
        researchers: the block's live researchers, when ``views`` are the
            authorships none of them took: they count among the holders of a
            name (:func:`attach_evidence_free`).

    Returns:
        Clusters, each with its members in input order; every view is in
        exactly one.
    """
    position = {v.id: n for n, v in enumerate(views)}
    return [
        Cluster(
            sorted(c.members, key=lambda m: position[m.id]),
            c.pair_scores,
            c.pair_sides,
            c.likeliest,
        )
        for c in attach_evidence_free(
            _cluster_scored(
                views, threshold=threshold, weights=weights, constraints=constraints
            ),
            weights=weights,
            constraints=constraints,
            researchers=researchers,
        )
    ]


def _cluster_scored(
    views: list[AuthorshipView],
    *,
    threshold: float,
    weights: scoring.Weights,
    constraints: Constraints,
) -> list[Cluster]:
    """:func:`cluster_authorships` without :func:`attach_evidence_free`: the
    clusters that pairwise scores alone join, their members in no set order."""
    if len(views) <= CHUNK:
        return _cluster_small(
            views, threshold=threshold, weights=weights, constraints=constraints
        )
    ordered = sorted(views, key=_chunk_order)
    found: list[Cluster] = []
    for start in range(0, len(ordered), CHUNK):
        found += _cluster_small(
            ordered[start : start + CHUNK],
            threshold=threshold,
            weights=weights,
            constraints=constraints,
        )
    if constraints.must_link:
        found = _joined(found, constraints)
    # Members in chunk order: cluster_authorships puts them in input order.
    return _merge_clusters(
        found, threshold=threshold, weights=weights, constraints=constraints
    )


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


def _chunk_order(view: AuthorshipView) -> tuple:
    """Mentions printed alike, then sharing an affiliation word, chunk together."""
    return (given_form(view.given), min(view.affiliation_tokens, default="~"), view.id)


def _input_order(cluster: Cluster) -> tuple:
    return (0,)  # a stable sort keeps the order the chunks produced


def _tokens(cluster: Cluster) -> list[str]:
    """The affiliation words and co-author keys of a cluster's members."""
    return [t for m in cluster.members for t in m.affiliation_tokens | m.coauthor_keys]


def _by_rarest_token(cluster: Cluster) -> tuple:
    """Clusters sharing their smallest affiliation word or co-author key sort
    together: a one-token min-hash of the profile."""
    return (min(_tokens(cluster), default="~"), min(m.id for m in cluster.members))


def _by_name_then_token(cluster: Cluster) -> tuple:
    return (
        min(given_form(m.given) for m in cluster.members),
        max(_tokens(cluster), default=""),
        min(m.id for m in cluster.members),
    )


# The orders the chunk clusters of a big block are compared in, part by part:
# a cluster meets only those of its own part of clustering.MAX_ITEMS, so each
# pass sorts them another way, and merging ends when every order in turn has
# merged nothing. Source: the multi-pass sorted-neighbourhood method, Hernández
# and Stolfo (1995), "The merge/purge problem for large databases", SIGMOD.
_MERGE_ORDERS = (_input_order, _by_rarest_token, _by_name_then_token)


def _merge_clusters(
    found: list[Cluster],
    *,
    threshold: float,
    weights: scoring.Weights,
    constraints: Constraints = NO_CONSTRAINTS,
) -> list[Cluster]:
    passes = quiet = 0
    known: dict = {}  # pair scores of clusters unchanged since an earlier pass
    while len(found) > 1 and quiet < len(_MERGE_ORDERS):
        found = sorted(found, key=_MERGE_ORDERS[passes % len(_MERGE_ORDERS)])
        passes += 1
        merged_any = False
        out: list[Cluster] = []
        for start in range(0, len(found), clustering.MAX_ITEMS):
            part = found[start : start + clustering.MAX_ITEMS]
            profiles = [profile_of(c.members) for c in part]
            # A cluster is known by its first member and size: merging changes both
            # or the size.
            keys = [(c.members[0].id, len(c.members)) for c in part]
            link, vetoed, links = _pair_scorer(profiles, weights, keys, known)
            must: set[tuple[int, int]] = set()
            if constraints:
                owner = {m.id: k for k, c in enumerate(part) for m in c.members}
                must = constraints.between(owner, constraints.must_link)
                vetoed = _also_cannot(
                    vetoed, constraints.between(owner, constraints.cannot_link)
                )
            groups = clustering.cluster(
                len(part), link, threshold=threshold, cannot_link=vetoed, must_link=must
            )
            for group in groups:
                merged_any = merged_any or len(group) > 1
                joins = [(i, j) for n, i in enumerate(group) for j in group[n + 1 :]]
                out.append(
                    Cluster(
                        members=[m for i in group for m in part[i].members],
                        pair_scores=[s for i in group for s in part[i].pair_scores]
                        + [links[i, j] for i, j in joins],
                        pair_sides=[s for i in group for s in part[i].pair_sides]
                        + [(_ids(part[i]), _ids(part[j])) for i, j in joins],
                    )
                )
        found = out
        quiet = 0 if merged_any else quiet + 1
    return found


def _pair_scorer(
    profiles: list[ProfileView],
    weights: scoring.Weights,
    keys: list[tuple[int, int]] | None = None,
    known: dict | None = None,
) -> tuple[
    Callable[[int, int], float],
    Callable[[Sequence[int], Sequence[int]], bool],
    dict[tuple[int, int], scoring.Score],
]:
    """Pair functions over profiles for :func:`clustering.cluster`.

    Returns:
        ``(pair_score, cannot_link, scores)``: the pairwise score of ``i < j``;
        whether two items can never be one person (a veto of
        :func:`scoring.is_vetoed`: one paper, or given names that cannot be one
        person's, as "Jian" and "Jie"), or, for clusters, any two of their
        members' given names conflict (:func:`names_conflict`); the constraint
        carries over to merged clusters, so a bridge such as "J." never joins
        "Jian" and "Jie"; and the Scores computed, by pair.

    Args:
        keys: an identity of each profile that holds across calls (the
            chunk-merge passes compare many unchanged clusters again).
        known: ``{(key, key): (Score, cannot link)}`` filled and read across
            calls when ``keys`` are given.
    """
    scores: dict[tuple[int, int], scoring.Score] = {}
    conflicts: dict[tuple[int, int], bool] = {}

    def scored(i: int, j: int) -> scoring.Score:
        if (i, j) not in scores:
            pair = tuple(sorted((keys[i], keys[j]))) if keys is not None else None
            if pair is not None and known is not None and pair in known:
                scores[i, j], conflicts[i, j] = known[pair]
            else:
                scores[i, j] = scoring.score(
                    profile_profile_features(profiles[i], profiles[j]), weights
                )
                conflicts[i, j] = names_conflict(profiles[i], profiles[j])
                if pair is not None and known is not None:
                    known[pair] = (scores[i, j], conflicts[i, j])
        return scores[i, j]

    def cannot_link(a: Sequence[int], b: Sequence[int]) -> bool:
        i, j = sorted((a[0], b[0]))
        return bool(scored(i, j).veto) or conflicts[i, j]

    return (lambda i, j: scored(i, j).pairwise_score), cannot_link, scores


def _also_cannot(
    vetoed: Callable[[Sequence[int], Sequence[int]], bool],
    pairs: set[tuple[int, int]],
) -> Callable[[Sequence[int], Sequence[int]], bool]:
    """``vetoed``, and true as well for the item pairs ``pairs`` (``i < j``)."""

    def cannot_link(a: Sequence[int], b: Sequence[int]) -> bool:
        return (min(a[0], b[0]), max(a[0], b[0])) in pairs or vetoed(a, b)

    return cannot_link


def _cluster_small(
    views: list[AuthorshipView],
    *,
    threshold: float,
    weights: scoring.Weights,
    constraints: Constraints = NO_CONSTRAINTS,
) -> list[Cluster]:
    pair_score, vetoed, scores = _pair_scorer([profile_of([v]) for v in views], weights)
    must: set[tuple[int, int]] = set()
    if constraints:
        owner = {v.id: i for i, v in enumerate(views)}
        must = constraints.between(owner, constraints.must_link)
        vetoed = _also_cannot(
            vetoed, constraints.between(owner, constraints.cannot_link)
        )
    groups = clustering.cluster(
        len(views), pair_score, threshold=threshold, cannot_link=vetoed, must_link=must
    )
    out = []
    for group in groups:
        pairs = [(i, j) for n, i in enumerate(group) for j in group[n + 1 :]]
        out.append(
            Cluster(
                members=[views[i] for i in group],
                pair_scores=[scores[i, j] for i, j in pairs],
                pair_sides=[((views[i].id,), (views[j].id,)) for i, j in pairs],
            )
        )
    return out


def _ids(cluster: Cluster) -> tuple[int, ...]:
    return tuple(m.id for m in cluster.members)


def cluster_all(
    views: list[AuthorshipView],
    *,
    threshold: float,
    weights: scoring.Weights = scoring.DEFAULT,
    constraints: Constraints = NO_CONSTRAINTS,
) -> dict[int, str]:
    """Block and cluster a whole set of authorships, as matching does.

    Args:
        views: authorships with unique ``id``.
        threshold: pairwise score in [0, 1] at which clusters join.
        weights: the scoring model.
        constraints: must-links and cannot-links between the views (by id);
            they hold within a block.

    Returns:
        ``{view id: cluster label}``; the label is ``"<block>:<n>"``.
    """
    from curation.matching import blocking

    grouped = blocking.blocks(
        views,
        key=lambda v: v.block_key or f"#{v.id}",
        sub_key=lambda v: names.sub_block_key(v.given, v.family),
    )
    # Only the members are kept: the scores recorded inside each cluster are
    # not needed here, and holding all of them made a re-cluster of 100,000
    # authorships take 76.9 s against 72.1 s (bench/matching.py).
    found = {
        block: [
            Cluster(c.members, [])
            for c in cluster_authorships(
                members, threshold=threshold, weights=weights, constraints=constraints
            )
        ]
        for block, members in grouped.items()
    }
    root = join_across_blocks(
        found, threshold=threshold, weights=weights, constraints=constraints
    )
    labels: dict[int, str] = {}
    for block, clusters in found.items():
        for n, cluster in enumerate(clusters):
            home, m = root.get((block, n), (block, n))
            for member in cluster.members:
                labels[member.id] = f"{home}:{m}"
    return labels


def sure_clusters(
    views: list[AuthorshipView],
    *,
    threshold: float,
    sure: float,
    weights: scoring.Weights = scoring.DEFAULT,
    constraints: Constraints = NO_CONSTRAINTS,
) -> list[list[int]]:
    """The clusters the auto-apply policy would apply, as matching forms them.

    Blocks and clusters as :func:`cluster_all` does (joins across blocks
    are merges in the product, which always wait for a curator, so none
    here), then keeps the clusters whose weakest link
    (:attr:`Cluster.weakest`) is at least ``sure``: the ``new`` proposals
    :meth:`curation.deciding.auto_apply.Policy.clears`. A single authorship is its
    own weakest link, so every one that clusters alone is kept.

    Args:
        views: authorships with unique ``id``.
        threshold: pairwise score in [0, 1] at which clusters join.
        sure: the policy's threshold in [0, 1].
        weights: the scoring model.
        constraints: must-links and cannot-links between the views (by id).

    Returns:
        The member ids of each kept cluster, in input order.
    """
    from curation.matching import blocking

    grouped = blocking.blocks(
        views,
        key=lambda v: v.block_key or f"#{v.id}",
        sub_key=lambda v: names.sub_block_key(v.given, v.family),
    )
    return [
        [m.id for m in cluster.members]
        for members in grouped.values()
        for cluster in cluster_authorships(
            members, threshold=threshold, weights=weights, constraints=constraints
        )
        if cluster.weakest >= sure
    ]


def join_across_blocks(
    found: dict[str, list[Cluster]],
    *,
    threshold: float,
    weights: scoring.Weights = scoring.DEFAULT,
    constraints: Constraints = NO_CONSTRAINTS,
) -> dict[tuple[str, int], tuple[str, int]]:
    """Join clusters of two blocks where a name read another way meets them.

    Each cluster's profile is read into every other block its printed names
    land in (:func:`curation.matching.variants.meetings`: ``"Zhang Ping"`` in
    Chinese order meets ``"Ping Zhang"``; ``"García Márquez, J."`` meets
    ``"García, J."``) and scored there against each cluster as two profiles.
    Pairs at ``threshold`` or above with evidence beyond the name
    (:func:`curation.matching.variants.corroborated`), and for a swapped
    order a full given name on the other side (:func:`variants.confirms`),
    join, best first, unless the two groups (a group may hold clusters of
    several blocks) would hold one paper twice, a cannot-link lies between
    them, or their given names, all read in the block of the pair's second
    cluster, are not all compatible: readings of "García Márquez, José" and
    "García Lorca, Juan" never both join one "García, J.", and a cluster
    with no reading there keeps its group apart. The researcher-side
    counterparts are the attaches and merges a matching run proposes
    across blocks (``curation.services``).

    Args:
        found: ``{block: its clusters}`` (:func:`cluster_authorships`).
        threshold: pairwise score in [0, 1] at which two clusters join.
        weights: the scoring model.
        constraints: the cannot-links between authorships (by view id): two
            groups holding such a pair stay apart.

    Returns:
        ``{(block, index): (block, index)}``: each joined cluster's group,
        named by the group's first cluster in block order; clusters that
        joined nothing are absent.
    """
    # Profiles only of the blocks a reading leaves or reaches: most blocks
    # meet no other, and their clusters' profiles would go unread.
    homes = {block.split("/", 1)[0] for block in found}
    reached: set[str] = set()
    leaving: set[str] = set()
    for block, clusters in found.items():
        home = block.split("/", 1)[0]
        for c in clusters:
            family = c.members[0].family
            keys = {
                r.key
                for given in dict.fromkeys(m.given for m in c.members)
                for r in names.block_key_readings(given, family)
            } - {home}
            if keys & homes:
                leaving.add(block)
                reached |= keys & homes
    profiles = {
        block: [profile_of(c.members) for c in clusters]
        for block, clusters in found.items()
        if clusters and (block in leaving or block.split("/", 1)[0] in reached)
    }
    candidates = []
    for meet in variants.meetings(profiles):
        for j, other in enumerate(profiles[meet.other_block]):
            if not (
                variants.corroborated(meet.read, other)
                and variants.confirms(meet.reading, other.given_names)
            ):
                continue
            score = scoring.score(profile_profile_features(meet.read, other), weights)
            if score.veto or names_conflict(meet.read, other):
                continue
            if score.pairwise_score >= threshold:
                candidates.append(
                    (
                        -score.pairwise_score,
                        (meet.block, meet.index),
                        (meet.other_block, j),
                    )
                )
    order = {block: n for n, block in enumerate(found)}
    group: dict[tuple[str, int], list[tuple[str, int]]] = {}
    root: dict[tuple[str, int], tuple[str, int]] = {}
    owner = {
        m.id: (block, n)
        for block, clusters in found.items()
        for n, c in enumerate(clusters)
        for m in c.members
    }

    def members(x: tuple[str, int]) -> list[tuple[str, int]]:
        head = root.get(x, x)
        return group.get(head, [head])

    def givens_in(items: list[tuple[str, int]], key: str) -> list[str] | None:
        """The items' given names read in block ``key``; None when one of
        them has no reading there (no frame to compare them in)."""
        out: list[str] = []
        for block, n in items:
            profile = profiles[block][n]
            if block.split("/", 1)[0] == key:
                out += profile.given_names
                continue
            read = variants.read_into(profile, key)
            if read is None:
                return None
            out += read[0].given_names
        return out

    def may_join(
        a: list[tuple[str, int]], b: list[tuple[str, int]], key: str, family: str
    ) -> bool:
        left, right = givens_in(a, key), givens_in(b, key)
        if left is None or right is None:
            return False
        pinyin = names.reads_as_pinyin(family)
        if not all(
            names.given_names_compatible(x, y, pinyin=pinyin)
            for x in left
            for y in right
        ):
            return False
        papers_a = frozenset().union(*(profiles[x][n].paper_ids for x, n in a))
        papers_b = frozenset().union(*(profiles[x][n].paper_ids for x, n in b))
        if papers_a & papers_b:
            return False
        sides = set(a), set(b)
        return not any(
            {owner.get(i), owner.get(j)} & sides[0]
            and {owner.get(i), owner.get(j)} & sides[1]
            for i, j in constraints.cannot_link
        )

    for _, a, b in sorted(candidates, key=lambda c: (c[0], order[c[1][0]], c[1][1])):
        group_a, group_b = members(a), members(b)
        if group_a[0] == group_b[0]:
            continue
        key = b[0].split("/", 1)[0]
        if not may_join(group_a, group_b, key, profiles[b[0]][b[1]].family):
            continue
        joined = sorted(group_a + group_b, key=lambda x: (order[x[0]], x[1]))
        for x in joined:
            root[x] = joined[0]
        group[joined[0]] = joined
    return root
