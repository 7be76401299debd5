"""What the beard and S2AND readers share: a mention, its authorship view, the
members of gold clusters, the seeds (must-links and cannot-links), and the
labelled set built from them with the corpus's rarities.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from curation import names
from curation.matching.features import (
    BLOCK_REPEAT_UNKNOWN,
    AuthorshipView,
    NameRarities,
    affiliation_tokens,
    block_repeats,
    full_given_key,
)
from curation.matching.labelled.records import _is_id, _kind, _read_json
from curation.matching.labelled_set import LabelledSet


def _view(
    index: int,
    paper_id: object,
    given: str,
    family: str,
    affiliations: list[str],
    coauthors: frozenset[str] = frozenset(),
) -> AuthorshipView:
    return AuthorshipView(
        id=index,
        paper_id=hash(str(paper_id)),
        given=given,
        family=family,
        block_key=names.block_key(given, family),
        coauthor_keys=coauthors,
        affiliation_tokens=affiliation_tokens(affiliations),
    )


def _with_rarity(views: list[AuthorshipView]) -> list[AuthorshipView]:
    rarities = NameRarities.of((v.given, v.family) for v in views)
    repeat = block_repeats((v.block_key, v.affiliation_tokens, 1) for v in views)
    return [
        replace(
            v,
            block_repeat=repeat.get(v.block_key, BLOCK_REPEAT_UNKNOWN),
            given_rarity=rarities.get(full_given_key(v.given), 0.0),
            family_rarity=rarities.family.get(names.fold(v.family), 0.0),
        )
        for v in views
    ]


@dataclass(frozen=True)
class _Mention:
    """One readable signature record, before it is a view."""

    signature: str | int
    paper: str | int
    given: str
    family: str
    affiliations: list[str]
    raw_name: str
    coauthors: frozenset[str] = frozenset()


def _read_members(
    name: str,
    cluster: object,
    sigs: list,
    members: list[tuple[str, str]],
    notes: list[str],
) -> None:
    """Add a cluster's members to ``members`` as ``(signature id, cluster
    id)`` text pairs; a member that is not an id (:func:`_is_id`: ``true`` and
    ``1.0`` would otherwise be read as signature 1) is left out and noted,
    naming the file ``name``."""
    for sig in sigs:
        if _is_id(sig):
            members.append((str(sig), str(cluster)))
        else:
            notes.append(
                f"{name}: cluster {cluster} lists {_kind(sig)}, not a signature "
                "id; left out"
            )


def _labelled(
    folder: Path,
    mentions: dict[object, _Mention],
    gold_of: dict[object, str],
    left_out: list[str],
    seeds: Path | None = None,
    unread: frozenset[str] = frozenset(),
) -> LabelledSet:
    """The LabelledSet of the readable mentions that have a gold cluster."""
    views, ids, gold, raw, affiliations = [], [], {}, {}, {}
    for key, mention in mentions.items():
        if key not in gold_of:
            continue
        index = len(views)
        views.append(
            _view(
                index,
                mention.paper,
                mention.given,
                mention.family,
                mention.affiliations,
                mention.coauthors,
            )
        )
        ids.append(str(mention.signature))
        gold[index] = gold_of[key]
        raw[index] = mention.raw_name
        affiliations[index] = tuple(mention.affiliations)
    must, cannot, dropped = frozenset(), frozenset(), ()
    if seeds is not None:
        must, cannot, dropped = _seeds(seeds, ids, unread)
    return LabelledSet(
        folder.name,
        _with_rarity(views),
        ids,
        gold,
        raw,
        must,
        cannot,
        dropped,
        tuple(left_out),
        affiliations,
    )


def _seeds(
    path: Path, ids: list[str], unread: frozenset[str] = frozenset()
) -> tuple[frozenset[tuple[int, int]], frozenset[tuple[int, int]], tuple[str, ...]]:
    """The must-links and cannot-links of an S2AND ``cluster_seeds.json``, as
    view id pairs, and the seeds left out with why; empty without the file.

    A seed is left out, and named, when it is neither ``require`` nor
    ``disallow``, when its signature's seeds are not an object, when it names
    a signature without a gold cluster or one in ``unread`` (a record left out
    as unreadable), or one signature twice. A pair seeded both ways is read as
    the cannot-link: a curator's "not one person" outweighs a "same person",
    as a split's cannot-links outweigh the merge they undo.

    Args:
        path: the seed file.
        ids: the signature id of each view, by view id.
        unread: the ids of the signature records left out.

    Raises:
        ValueError: the file is not JSON or not an object (named with the file).
    """
    if not path.is_file():
        return frozenset(), frozenset(), ()
    seeds = _read_json(path)
    if not isinstance(seeds, dict):
        # The seeds are optional: without them the set is read unseeded.
        return (
            frozenset(),
            frozenset(),
            (
                f'{path.name} is {_kind(seeds)}, not an object of objects ({{"<sig>": '
                '{"<sig>": "require" | "disallow"}}); no seed read',
            ),
        )
    view_of = {sig: index for index, sig in enumerate(ids)}
    kinds: dict[str, set[tuple[int, int]]] = {"require": set(), "disallow": set()}
    dropped = []
    for first, others in seeds.items():
        if not isinstance(others, dict):
            dropped.append(f"{first}: its seeds are {_kind(others)}, not an object")
            continue
        for second, kind in others.items():
            a, b = view_of.get(str(first)), view_of.get(str(second))
            missing = [sig for sig, view in ((first, a), (second, b)) if view is None]
            if not isinstance(kind, str) or kind not in kinds:
                why = f"is {_kind(kind)}, not 'require' or 'disallow'"
            elif any(str(sig) in unread for sig in missing):
                left = next(sig for sig in missing if str(sig) in unread)
                why = f"names signature {left}, whose record was left out"
            elif missing:
                why = "names a signature with no gold cluster"
            elif a == b:
                why = "names one signature twice"
            else:
                kinds[kind].add((min(a, b), max(a, b)))
                continue
            dropped.append(f"{first}-{second}: {why}")
    for a, b in sorted(kinds["require"] & kinds["disallow"]):
        dropped.append(
            f"{ids[a]}-{ids[b]}: seeded both require and disallow; read as disallow"
        )
    kinds["require"] -= kinds["disallow"]
    dropped += _disallowed_within_requires(kinds["require"], kinds["disallow"], ids)
    return frozenset(kinds["require"]), frozenset(kinds["disallow"]), tuple(dropped)


def _disallowed_within_requires(
    require: set[tuple[int, int]], disallow: set[tuple[int, int]], ids: list[str]
) -> list[str]:
    """A note for each disallow between two signatures that require seeds
    join through others (0-1 and 1-2 require, 0-2 disallow): every seed is
    kept, and clustering keeps the two apart (a cannot-link wins), so some
    require cannot hold. The chains are the connected components of the
    require seeds (scipy's ``connected_components``)."""
    if not (require and disallow):
        return []
    rows, cols = zip(*require, strict=True)
    graph = coo_matrix(([1] * len(rows), (rows, cols)), shape=(len(ids), len(ids)))
    _, component = connected_components(graph, directed=False)
    return [
        f"{ids[a]}-{ids[b]}: disallow between signatures the require seeds join; "
        "clustering keeps them apart, so a require between them cannot hold"
        for a, b in sorted(disallow)
        if component[a] == component[b]
    ]
