"""What is sure in a block (:func:`sure_clusters`), the clusters that join
across blocks by a reading of the name (:func:`join_across_blocks`), and
every block at once (:func:`cluster_all`).
"""

from __future__ import annotations

from curation import names
from curation.matching import scoring, variants
from curation.matching.features import (
    AuthorshipView,
    names_conflict,
    profile_of,
    profile_profile_features,
)
from curation.matching.pipeline.clusters import cluster_authorships
from curation.matching.pipeline.shapes import NO_CONSTRAINTS, Cluster, Constraints


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
