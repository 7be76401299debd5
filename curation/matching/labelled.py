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
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from curation import names
from curation.matching import orcid_linked
from curation.matching.features import (
    BLOCK_REPEAT_UNKNOWN,
    AuthorshipView,
    NameRarities,
    affiliation_tokens,
    block_repeats,
    coauthor_keys_of,
    full_given_key,
)
from curation.matching.labelled_set import ORCID_LINKED, DatasetError, LabelledSet

# Said when a default labelled set is missing: where the commands look.
DATA_DIR_HINT = (
    " (the labelled sets are read under WOVEPAPER_DATA_DIR/and:"
    " set WOVEPAPER_DATA_DIR=/path/to/shared/data)"
)


def orcid_linked_corpora(folder: Path) -> Path | None:
    """The data folder the ORCID-linked set named by ``folder`` is built from,
    or None when ``folder`` does not name it (see :data:`ORCID_LINKED`).

    Args:
        folder: a dataset path as given to the commands.

    Returns:
        ``folder``'s parent for ``<data folder>/orcid-linked``,
        ``settings.WOVEPAPER_DATA_DIR`` for a bare ``orcid-linked``; None for
        any other path, and for a real file or folder of that name.
    """
    if folder.name != ORCID_LINKED or folder.exists():
        return None
    if folder.parent == Path():
        from django.conf import settings

        return Path(settings.WOVEPAPER_DATA_DIR)
    return folder.parent


def not_a_folder(folder: Path) -> str:
    """Why ``folder`` cannot hold a labelled set ("" when it is a folder, or
    names the ORCID-linked set of a data folder that exists): for the
    commands' errors."""
    corpora = orcid_linked_corpora(folder)
    if corpora is not None and not corpora.is_dir():
        return f"the ORCID-linked set is built from {corpora}, which is no folder"
    if corpora is not None or folder.is_dir():
        return ""
    if folder.is_file():
        return "a file, not a folder (name the labelled set's folder)"
    return "no such folder"


# The labelled sets trained on by default, under WOVEPAPER_DATA_DIR.
DEFAULT_SETS = ("and/beard_inspire_wang", "and/s2and/qian_partial")
# The sets evaluate_matching scores by default: those, the MEDLINE pair gold
# standard (curation.matching.labelled_pairs; its train pairs are not in
# DEFAULT_SETS: a model trained on them weighs co-authors and fields by MeSH
# headings and journals, not arXiv categories) and S2AND's set with cluster seeds.
# The sets the shipped model file is trained on (train_matcher --ship): every
# labelled set of shared/data/and but S2AND's 9-mention dummy bundle, and the
# ORCID-linked set built from the bundled corpora (ORCID_LINKED).
SHIPPED_SETS = (
    *DEFAULT_SETS,
    "and/medline_vishnyakova_pairs",
    ORCID_LINKED,
)
EVALUATED_SETS = (
    *DEFAULT_SETS,
    "and/medline_vishnyakova_pairs",
    "and/s2and/dummy",
)


def load(
    folder: Path, *, embed: Callable[[list[str]], np.ndarray] | None = None
) -> LabelledSet:
    """Read a labelled set from its folder.

    Args:
        folder: a folder holding ``wang_signatures.json`` and ``wang_clusters.json``
            (beard format) or ``signatures.json`` and ``clusters.json`` (S2AND),
            or the pseudo-path of the ORCID-linked set (:data:`ORCID_LINKED`,
            :func:`curation.matching.orcid_linked.load`).
        embed: texts to unit vectors, for the sets that print titles and
            abstracts (the ORCID-linked set; Wang and Qian print none).

    Returns:
        The LabelledSet; mentions without a gold cluster are left out, and so
        is each signature record that cannot be read (``LabelledSet.left_out``
        names it and why): one broken record costs itself, not the set.

    Raises:
        DatasetError: neither format is there, or both are (which set is meant
            cannot be told), a file of it cannot be read or
            is not the shape its format has (named with the problem), its
            cluster file names a signature twice or one the signature file
            lacks, or no mention has a gold cluster.
    """
    corpora = orcid_linked_corpora(folder)
    if corpora is not None:
        return orcid_linked.load(corpora, embed=embed)
    beard = (folder / "wang_signatures.json").is_file()
    s2and = (folder / "signatures.json").is_file()
    if beard and s2and:
        # Which one was meant cannot be told; reading one in silence would
        # score another set than the one named.
        raise DatasetError(
            f"{folder}: holds both a beard set (wang_signatures.json) and an "
            "S2AND set (signatures.json): give each labelled set a folder of its own"
        )
    if beard:
        read = _load_beard
    elif s2and and (folder / "clusters.json").is_file():
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
        why = (
            f"{len(data.left_out)} signature records left out or read in part, "
            f"first: {'; '.join(data.left_out[:3])}"
            if data.left_out
            else "do the cluster files name the signature ids the signature file uses?"
        )
        raise DatasetError(f"{folder}: no mention has a gold cluster ({why})")
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


def _read_json(path: Path) -> object:
    """A labelled set's JSON file, parsed.

    Raises:
        DatasetError: not JSON, nested too deep to read (Python's recursion
            limit), or an object repeats a key (a later value would silently
            replace the first), named with the file.
    """

    def unique(pairs: list[tuple[str, object]]) -> dict:
        value = dict(pairs)
        if len(value) < len(pairs):
            twice = min(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
            raise DatasetError(f"{path}: key {twice!r} appears twice in one object")
        return value

    try:
        # utf-8-sig: a byte-order mark some editors write is not part of the JSON.
        return json.loads(
            path.read_text(encoding="utf-8-sig"), object_pairs_hook=unique
        )
    except DatasetError:
        raise
    except RecursionError as exc:
        raise DatasetError(
            f"{path}: not JSON this reader can read (nested too deep)"
        ) from exc
    except ValueError as exc:
        raise DatasetError(f"{path}: not JSON ({exc})") from exc


def _json(path: Path, shape: type, of: type) -> dict | list:
    """A JSON file of the shape a labelled set's format has: ``shape`` (dict or
    list) holding ``of`` values.

    Raises:
        DatasetError: not JSON, or another shape (named with the file).
    """
    value = _read_json(path)
    items = value.values() if isinstance(value, dict) else value
    if not isinstance(value, shape) or not all(isinstance(v, of) for v in items):
        kinds = {dict: "objects", list: "arrays", object: "records"}
        raise DatasetError(
            f"{path}: not a JSON {'object' if shape is dict else 'array'} of "
            f"{kinds[of]}"
        )
    return value


def _gold(
    memberships: list[tuple[object, str]],
    known: set,
    path: Path,
    *,
    unidentified: int = 0,
) -> tuple[dict[object, str], list[str]]:
    """``{signature id: gold cluster}`` from ``(signature, cluster)`` pairs.

    Args:
        memberships: ``(signature id, cluster id)`` of every cluster member.
        known: the signature ids the signature file holds.
        path: the cluster file, for messages.
        unidentified: signature records whose id could not be read, or was
            another record's already; with any, a cluster member the file does
            not hold may be one of them, so it is left out and noted rather
            than refused.

    Returns:
        ``(gold, notes)``: ``notes`` names each member left out, and each
        signature left out for being in two clusters (which one is its
        person's the files cannot say).

    Raises:
        DatasetError: (with no unidentified record) a cluster names
            signatures the signature file does not hold (up to five named):
            the files are not one set's.
    """
    gold_of: dict[object, str] = {}
    twice: dict[object, list[str]] = {}
    for sig, cluster in memberships:
        if sig in twice:
            if cluster not in twice[sig]:
                twice[sig].append(cluster)
        elif sig in gold_of and gold_of[sig] != cluster:
            twice[sig] = [gold_of.pop(sig), cluster]
        else:
            gold_of[sig] = cluster
    notes = [
        f"{path.name}: signature {sig} is in {len(clusters)} clusters, "
        f"{', '.join(clusters)}; left out"
        for sig, clusters in twice.items()
    ]
    unknown = sorted((sig for sig in gold_of if sig not in known), key=str)
    if unknown and not unidentified:
        shown = ", ".join(map(str, unknown[:5]))
        raise DatasetError(
            f"{path}: {len(unknown)} signature id(s) in the clusters are not in "
            f"the signature file: {shown}"
        )
    notes += [
        f"{path.name}: cluster {gold_of.pop(sig)} names signature {sig}, which "
        "no readable record holds; left out"
        for sig in unknown
    ]
    return gold_of, notes


class _Unusable(ValueError):
    """A signature record that cannot be read; the message says which and why."""


def _kind(value: object) -> str:
    """A JSON value named for a message: ``"null"``, ``"int 5"``, ``"list"``."""
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "an array"
    return f"{type(value).__name__} {str(value)[:40]!r}"


def _is_id(value: object) -> bool:
    """Whether a value can be a record's id: a non-empty string or an
    integer (not a boolean)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool) and value != ""


def _record_id(value: object, what: str) -> str | int:
    """An id field of a record (a signature's, its paper's): :func:`_is_id`.

    Raises:
        _Unusable: missing, empty or of another type (named with ``what``).
    """
    if value == "":
        raise _Unusable(f"{what} is empty")
    if not _is_id(value):
        raise _Unusable(f"{what} is {_kind(value)}, not a string or an integer")
    return value


def _text(record: dict, key: str, what: str) -> str:
    """A text field of a record: its string, "" when missing or null.

    Raises:
        _Unusable: another type (named with ``what``).
    """
    value = record.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Unusable(f"{what} is {_kind(value)}, not a string")
    return value


def _affiliations(value: object, where: str, notes: list[str]) -> list[str]:
    """The printed affiliation strings of a record; null items are nothing
    printed, other items are read without and noted in ``notes``."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if not isinstance(value, list):
        notes.append(f"{where}: affiliations are {_kind(value)}; read without them")
        return []
    out = []
    for position, item in enumerate(value, start=1):
        if isinstance(item, str):
            out.append(item)
        elif item is not None:
            notes.append(
                f"{where}: affiliation {position} is {_kind(item)}, not a "
                "string; read without it"
            )
    return out


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


def _beard_mention(record: object, n: int, notes: list[str]) -> _Mention:
    """Signature record ``n`` (from 1) of a beard ``wang_signatures.json``.

    Raises:
        _Unusable: it is not an object, or its ``signature_id``,
            ``publication_id`` or ``author_name`` cannot be read.
    """
    if not isinstance(record, dict):
        raise _Unusable(f"record {n} is {_kind(record)}, not an object")
    sig = _record_id(record.get("signature_id"), f"record {n}: signature_id")
    where = f"signature {sig}"
    paper = _record_id(record.get("publication_id"), f"{where}: publication_id")
    printed = _text(record, "author_name", f"{where}: author_name")
    parsed = names.parse_name(printed)
    if not names.block_key(parsed.given, parsed.family):
        raise _Unusable(f"{where}: author_name {printed!r} holds no name")
    affiliations = _affiliations(record.get("author_affiliation"), where, notes)
    return _Mention(sig, paper, parsed.given, parsed.family, affiliations, printed)


def _load_beard(folder: Path) -> LabelledSet:
    """The beard set in ``folder``; ids are compared as text, so a cluster
    file listing ``"10192"`` names the record whose id is ``10192``."""
    path = folder / "wang_signatures.json"
    signatures = _json(path, list, object)
    clusters = _json(folder / "wang_clusters.json", dict, object)
    mentions: dict[str, _Mention] = {}
    first: dict[str, tuple[int, object]] = {}  # id: (record number, record)
    known: set[str] = set()
    left_out: list[str] = []
    unidentified = 0
    for n, record in enumerate(signatures, start=1):
        notes: list[str] = []
        try:
            mention = _beard_mention(record, n, notes)
        except _Unusable as exc:
            left_out.append(f"{path.name}: {exc}; left out")
            sig = record.get("signature_id") if isinstance(record, dict) else None
            if _is_id(sig):
                known.add(str(sig))  # its clusters still name it
            else:
                unidentified += 1
            continue
        key = str(mention.signature)
        if key in first:
            m, earlier = first[key]
            if record == earlier:
                left_out.append(
                    f"{path.name}: signature {key} is listed twice (record {n}, "
                    f"a copy of record {m}, left out)"
                )
                continue
            # Which of the two is the signature its clusters mean the file
            # cannot say; a mistyped id's own is now unknown.
            left_out.append(
                f"{path.name}: signature {key} is listed twice, as records {m} "
                f"and {n}, which differ; both left out"
            )
            mentions.pop(key, None)
            unidentified += 1
            continue
        first[key] = (n, record)
        left_out += [f"{path.name}: {note}" for note in notes]
        mentions[key] = mention
    members, unreadable = [], []
    for author, sigs in clusters.items():
        if not isinstance(sigs, list):
            unreadable.append(
                f"wang_clusters.json: cluster {author} is {_kind(sigs)}, not an "
                "array of signature ids; left out"
            )
            continue
        _read_members("wang_clusters.json", author, sigs, members, unreadable)
    gold_of, notes = _gold(
        members,
        known | set(first),
        folder / "wang_clusters.json",
        unidentified=unidentified,
    )
    return _labelled(folder, mentions, gold_of, left_out + unreadable + notes)


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


def _coauthors(
    paper_id: object, papers: dict | None, info: dict, where: str, notes: list[str]
) -> frozenset:
    """The co-author keys (:func:`coauthor_keys_of`) of the signature whose
    ``author_info`` is ``info``, on paper ``paper_id`` of an S2AND
    ``papers.json`` (``papers``; None without the file: none).

    None either, noted in ``notes``, when the paper is not in the file, its
    ``authors`` is missing or not a list, the author's own position cannot be
    read (:func:`_position`) or is not on the byline, or the byline gives one
    position twice (which of the two is the author it cannot say). Byline
    entries that cannot be read (not an object, a name not a string, a
    position not an integer) are left out, and noted.
    """
    if papers is None:
        return frozenset()
    paper = papers.get(str(paper_id))
    if paper is None:
        notes.append(
            f"{where}: its paper {paper_id} is not in papers.json; read without "
            "co-authors"
        )
        return frozenset()
    own = _position(info, where, notes)
    if own is None:
        return frozenset()
    authors = paper.get("authors") if isinstance(paper, dict) else None
    if not isinstance(authors, list):
        notes.append(f"{where}: its paper's authors cannot be read; read without them")
        return frozenset()
    readable = [
        a
        for a in authors
        if isinstance(a, dict)
        and isinstance(a.get("author_name", ""), str)
        and isinstance(a.get("position"), int)
        and not isinstance(a.get("position"), bool)
    ]
    if len(readable) < len(authors):
        notes.append(
            f"{where}: {len(authors) - len(readable)} of its paper's "
            f"{len(authors)} authors cannot be read (an entry not an object, a "
            "name not a string, a position not an integer); read without them"
        )
    positions = Counter(a["position"] for a in readable)
    repeated = sorted(p for p, count in positions.items() if count > 1)
    if repeated:
        notes.append(
            f"{where}: its paper's byline gives position "
            f"{', '.join(map(str, repeated))} twice; read without co-authors"
        )
        return frozenset()
    if own not in positions:
        notes.append(
            f"{where}: position {own} is not on its paper's byline; read without "
            "co-authors"
        )
        return frozenset()
    return coauthor_keys_of(
        [
            (author["position"], names.name_key(p.given, p.family))
            for author in readable
            for p in [names.parse_name(author.get("author_name", ""))]
        ],
        own=own,
    )


def _position(info: dict, where: str, notes: list[str]) -> int | None:
    """A signature's byline position, or None when it is missing or not an
    integer (noted in ``notes``): the co-author feature leaves out the
    author's own slot by it, so a mistyped one would make the author their
    own co-author."""
    position = info.get("position")
    if position is None:
        return None
    if isinstance(position, bool) or not isinstance(position, int):
        notes.append(
            f"{where}: position is {_kind(position)}, not an integer; read "
            "without co-authors"
        )
        return None
    return position


def _s2and_mention(
    sig_id: str, record: object, papers: dict | None, notes: list[str]
) -> _Mention:
    """Signature ``sig_id`` of an S2AND ``signatures.json``.

    Raises:
        _Unusable: it is not an object, its ``author_info`` is not one, or its
            ``paper_id`` or name parts cannot be read.
    """
    where = f"signature {sig_id}"
    if not isinstance(record, dict):
        raise _Unusable(f"{where} is {_kind(record)}, not an object")
    info = record.get("author_info")
    if not isinstance(info, dict):
        raise _Unusable(f"{where}: author_info is {_kind(info)}, not an object")
    paper = _record_id(record.get("paper_id"), f"{where}: paper_id")
    given = " ".join(
        p for p in (_text(info, k, f"{where}: {k}") for k in ("first", "middle")) if p
    )
    family = _text(info, "last", f"{where}: last")
    if family:
        # Through the name rules in "Last, First" form, which keep the
        # family as given and drop titles and suffixes from the given
        # names: the dummy set prints "first": "Dr A'bdul".
        parsed = names.parse_name(f"{family}, {given}")
        given, family = parsed.given, parsed.family or family
    if not names.block_key(given, family):
        raise _Unusable(f"{where}: author_info holds no name")
    return _Mention(
        sig_id,
        paper,
        given,
        family,
        _affiliations(info.get("affiliations"), where, notes),
        f"{given} {family}".strip(),
        _coauthors(paper, papers, info, where, notes),
    )


def _load_s2and(folder: Path) -> LabelledSet:
    path = folder / "signatures.json"
    signatures = _json(path, dict, object)
    clusters = _json(folder / "clusters.json", dict, object)
    papers_path = folder / "papers.json"
    papers = _json(papers_path, dict, object) if papers_path.is_file() else None
    members, left_out = [], []
    for cluster_id, cluster in clusters.items():
        sigs = cluster.get("signature_ids") if isinstance(cluster, dict) else None
        if not isinstance(sigs, list):
            what = (
                f"signature_ids is {_kind(sigs)}"
                if isinstance(cluster, dict)
                else f"it is {_kind(cluster)}"
            )
            left_out.append(
                f"clusters.json: cluster {cluster_id} has no signature_ids "
                f"array ({what}); left out"
            )
            continue
        _read_members("clusters.json", cluster_id, sigs, members, left_out)
    gold_of, notes = _gold(
        members, {str(sig) for sig in signatures}, folder / "clusters.json"
    )
    left_out += notes
    mentions: dict[object, _Mention] = {}
    unread: set[str] = set()
    for sig_id, record in signatures.items():
        if str(sig_id) not in gold_of:
            continue
        notes: list[str] = []
        try:
            mentions[str(sig_id)] = _s2and_mention(str(sig_id), record, papers, notes)
        except _Unusable as exc:
            left_out.append(f"{path.name}: {exc}; left out")
            unread.add(str(sig_id))
            continue
        left_out += [f"{path.name}: {note}" for note in notes]
    return _labelled(
        folder,
        mentions,
        gold_of,
        left_out,
        seeds=folder / "cluster_seeds.json",
        unread=frozenset(unread),
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
