"""Labelled author-disambiguation sets, read into matcher views with gold clusters.

Readers for the two label formats in ``shared/data/and`` (see its SOURCES.md):

- INSPIRE/beard (``wang_signatures.json`` + ``wang_clusters.json``): a list of
  ``{signature_id, publication_id, author_name "Last, First", author_affiliation,
  signature_position}`` and ``{author_id: [signature_id, ...]}``.
- S2AND (``signatures.json`` + ``clusters.json``, optional ``papers.json``
  and ``cluster_seeds.json``):
  ``{sig_id: {signature_id, paper_id, author_info{first, middle, last, suffix,
  affiliations[], position}}}`` and ``{cluster_id: {signature_ids[]}}``; with
  ``papers.json`` the co-authors and venue are known too; ``cluster_seeds.json``
  (``{sig_id: {sig_id: "require" | "disallow"}}``) holds must-links and
  cannot-links.

The inferred ethnicity and gender fields of S2AND are never read.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from curation import names
from curation.matching.features import (
    BLOCK_REPEAT_UNKNOWN,
    AuthorshipView,
    NameRarities,
    affiliation_tokens,
    block_repeats,
    coauthor_keys_of,
    full_given_key,
)

# Said when a default labelled set is missing: where the commands look.
DATA_DIR_HINT = (
    " (the labelled sets are read under WOVEPAPER_DATA_DIR/and:"
    " set WOVEPAPER_DATA_DIR=/path/to/shared/data)"
)
# The labelled sets trained on by default, under WOVEPAPER_DATA_DIR.
DEFAULT_SETS = ("and/beard_inspire_wang", "and/s2and/qian_partial")
# The sets evaluate_matching scores by default: those, the MEDLINE pair gold
# standard (curation.matching.labelled_pairs; its train pairs are not in
# DEFAULT_SETS: a model trained on them weighs co-authors and fields by MeSH
# headings and journals, not arXiv categories) and S2AND's set with cluster seeds.
EVALUATED_SETS = (
    *DEFAULT_SETS,
    "and/medline_vishnyakova_pairs",
    "and/s2and/dummy",
)


@dataclass(frozen=True)
class LabelledSet:
    """Mentions as matcher views, and the gold cluster of each.

    Attributes:
        name: the dataset's folder name.
        views: one AuthorshipView per mention; ``id`` is the mention's index in
            ``mention_ids``.
        mention_ids: the dataset's own signature ids, by view id.
        gold: view id -> gold cluster id.
        raw_names: view id -> the name as the dataset prints it.
        must_link, cannot_link: ``(view id, view id)`` pairs the set's cluster
            seeds require to share a cluster or to stay apart (S2AND's
            ``cluster_seeds.json``, ``require`` and ``disallow``: what a
            curator's decisions are to matching); empty without seeds.
        seeds_dropped: one ``"<sig>-<sig>: why"`` per seed left out (it names
            a signature without a gold cluster, or one signature twice).
    """

    name: str
    views: list[AuthorshipView]
    mention_ids: list[str]
    gold: dict[int, str]
    raw_names: dict[int, str]
    must_link: frozenset[tuple[int, int]] = frozenset()
    cannot_link: frozenset[tuple[int, int]] = frozenset()
    seeds_dropped: tuple[str, ...] = ()


class DatasetError(ValueError):
    """The folder holds no labelled set this module reads; the message says why."""


def load(folder: Path) -> LabelledSet:
    """Read a labelled set from its folder.

    Args:
        folder: a folder holding ``wang_signatures.json`` and ``wang_clusters.json``
            (beard format) or ``signatures.json`` and ``clusters.json`` (S2AND).

    Returns:
        The LabelledSet; mentions without a gold cluster are left out.

    Raises:
        DatasetError: neither format is there, a file of it cannot be read or
            is not the shape its format has (named with the problem), or no
            mention has a gold cluster.
    """
    if (folder / "wang_signatures.json").is_file():
        read = _load_beard
    elif (folder / "signatures.json").is_file() and (
        folder / "clusters.json"
    ).is_file():
        read = _load_s2and
    else:
        raise DatasetError(
            f"{folder}: no wang_signatures.json (beard) or signatures.json + "
            "clusters.json (S2AND) here, nor a pair set (*_pairs_train.csv, "
            "*_pairs_test.csv and pubmed_articles.tar.xz)"
        )
    try:
        data = read(folder)
    except DatasetError:
        raise
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        # Missing or unreadable files, bad JSON, records of another shape.
        raise DatasetError(
            f"{folder}: not a {read.__name__.removeprefix('_load_')} labelled set: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not data.views:
        raise DatasetError(
            f"{folder}: no mention has a gold cluster (do the cluster files name "
            "the signature ids the signature file uses?)"
        )
    return data


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


def _json(path: Path, shape: type, of: type) -> dict | list:
    """A JSON file of the shape a labelled set's format has: ``shape`` (dict or
    list) holding ``of`` values.

    Raises:
        DatasetError: not JSON, or another shape (named with the file).
    """

    def unique(pairs: list[tuple[str, object]]) -> dict:
        value = dict(pairs)
        if len(value) < len(pairs):
            twice = min(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
            raise DatasetError(f"{path}: key {twice!r} appears twice in one object")
        return value

    try:
        value = json.loads(path.read_text(), object_pairs_hook=unique)
    except DatasetError:
        raise
    except ValueError as exc:
        raise DatasetError(f"{path}: not JSON ({exc})") from exc
    items = value.values() if isinstance(value, dict) else value
    if not isinstance(value, shape) or not all(isinstance(v, of) for v in items):
        raise DatasetError(
            f"{path}: not a JSON {'object' if shape is dict else 'array'} of "
            f"{'objects' if of is dict else 'arrays'}"
        )
    return value


def _gold(
    memberships: list[tuple[object, str]], known: set, path: Path
) -> dict[object, str]:
    """``{signature id: gold cluster}`` from ``(signature, cluster)`` pairs.

    Raises:
        DatasetError: a signature is in two clusters, or a cluster names
            signatures the signature file does not hold (up to five named).
    """
    gold_of: dict[object, str] = {}
    for sig, cluster in memberships:
        if sig in gold_of and gold_of[sig] != cluster:
            raise DatasetError(
                f"{path}: signature {sig} is in two clusters, "
                f"{gold_of[sig]} and {cluster}"
            )
        gold_of[sig] = cluster
    unknown = sorted((sig for sig in gold_of if sig not in known), key=str)
    if unknown:
        shown = ", ".join(map(str, unknown[:5]))
        raise DatasetError(
            f"{path}: {len(unknown)} signature id(s) in the clusters are not in "
            f"the signature file: {shown}"
        )
    return gold_of


def _load_beard(folder: Path) -> LabelledSet:
    signatures = _json(folder / "wang_signatures.json", list, dict)
    clusters = _json(folder / "wang_clusters.json", dict, list)
    seen: set = set()
    for sig in signatures:
        if sig.get("signature_id") in seen:
            raise DatasetError(
                f"{folder / 'wang_signatures.json'}: signature "
                f"{sig['signature_id']} is listed twice"
            )
        seen.add(sig.get("signature_id"))
    gold_of = _gold(
        [(sig, str(author)) for author, sigs in clusters.items() for sig in sigs],
        {sig.get("signature_id") for sig in signatures},
        folder / "wang_clusters.json",
    )
    views, ids, gold, raw = [], [], {}, {}
    for sig in signatures:
        if sig["signature_id"] not in gold_of:
            continue
        index = len(views)
        parsed = names.parse_name(sig["author_name"])
        affiliation = sig.get("author_affiliation") or ""
        views.append(
            _view(
                index,
                sig["publication_id"],
                parsed.given,
                parsed.family,
                [affiliation] if affiliation else [],
            )
        )
        ids.append(str(sig["signature_id"]))
        gold[index] = gold_of[sig["signature_id"]]
        raw[index] = sig["author_name"]
    return LabelledSet(folder.name, _with_rarity(views), ids, gold, raw)


def _load_s2and(folder: Path) -> LabelledSet:
    signatures = _json(folder / "signatures.json", dict, dict)
    clusters = _json(folder / "clusters.json", dict, dict)
    for cluster_id, cluster in clusters.items():
        if not isinstance(cluster.get("signature_ids"), list):
            raise DatasetError(
                f"{folder / 'clusters.json'}: cluster {cluster_id} has no "
                "signature_ids array"
            )
    papers_path = folder / "papers.json"
    papers = _json(papers_path, dict, dict) if papers_path.is_file() else {}
    gold_of = _gold(
        [
            (str(sig), str(cluster_id))
            for cluster_id, cluster in clusters.items()
            for sig in cluster["signature_ids"]
        ],
        {str(sig) for sig in signatures},
        folder / "clusters.json",
    )
    views, ids, gold, raw = [], [], {}, {}
    for sig_id, sig in signatures.items():
        if str(sig_id) not in gold_of:
            continue
        info = sig["author_info"]
        given = " ".join(p for p in (info.get("first"), info.get("middle")) if p)
        family = info.get("last") or ""
        if family:
            # Through the name rules in "Last, First" form, which keep the
            # family as given and drop titles and suffixes from the given
            # names: the dummy set prints "first": "Dr A'bdul".
            parsed = names.parse_name(f"{family}, {given}")
            given, family = parsed.given, parsed.family or family
        paper = papers.get(str(sig["paper_id"]), {})
        coauthors = coauthor_keys_of(
            [
                (author.get("position"), names.name_key(p.given, p.family))
                for author in paper.get("authors", [])
                for p in [names.parse_name(author.get("author_name", ""))]
            ],
            own=info.get("position"),
        )
        index = len(views)
        views.append(
            _view(
                index,
                sig["paper_id"],
                given,
                family,
                [a for a in info.get("affiliations") or [] if isinstance(a, str)],
                coauthors,
            )
        )
        ids.append(str(sig_id))
        gold[index] = gold_of[str(sig_id)]
        raw[index] = f"{given} {family}".strip()
    must, cannot, dropped = _seeds(folder / "cluster_seeds.json", ids)
    return LabelledSet(
        folder.name, _with_rarity(views), ids, gold, raw, must, cannot, dropped
    )


def _seeds(
    path: Path, ids: list[str]
) -> tuple[frozenset[tuple[int, int]], frozenset[tuple[int, int]], tuple[str, ...]]:
    """The must-links and cannot-links of an S2AND ``cluster_seeds.json``, as
    view id pairs, and the seeds left out with why (naming a signature without
    a gold cluster, or one signature twice); empty without the file.

    Raises:
        ValueError: the file is not JSON, not an object of objects, or a seed
            is neither ``require`` nor ``disallow`` (named with the file).
    """
    if not path.is_file():
        return frozenset(), frozenset(), ()
    try:
        seeds = json.loads(path.read_text())
    except ValueError as exc:
        raise ValueError(f"{path.name}: not JSON ({exc})") from exc
    if not isinstance(seeds, dict) or not all(
        isinstance(others, dict) for others in seeds.values()
    ):
        raise ValueError(
            f'{path.name}: not an object of objects ({{"<sig>": {{"<sig>": '
            '"require" | "disallow"}})'
        )
    view_of = {sig: index for index, sig in enumerate(ids)}
    kinds: dict[str, set[tuple[int, int]]] = {"require": set(), "disallow": set()}
    dropped = []
    for first, others in seeds.items():
        for second, kind in others.items():
            if not isinstance(kind, str) or kind not in kinds:
                raise ValueError(
                    f"{path.name}: seed {first}-{second} is {kind!r}, "
                    "not 'require' or 'disallow'"
                )
            a, b = view_of.get(str(first)), view_of.get(str(second))
            if a is None or b is None:
                why = "names a signature with no gold cluster"
                dropped.append(f"{first}-{second}: {why}")
            elif a == b:
                dropped.append(f"{first}-{second}: names one signature twice")
            else:
                kinds[kind].add((min(a, b), max(a, b)))
    return frozenset(kinds["require"]), frozenset(kinds["disallow"]), tuple(dropped)
