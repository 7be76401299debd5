"""The S2AND format: signatures, papers (co-authors, positions) and
clusters, with its cluster seeds as must-links and cannot-links.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from curation import names
from curation.matching.features import (
    coauthor_keys_of,
)
from curation.matching.labelled.mentions import _labelled, _Mention, _read_members
from curation.matching.labelled.records import (
    _affiliations,
    _gold,
    _json,
    _kind,
    _record_id,
    _text,
    _Unusable,
)
from curation.matching.labelled_set import LabelledSet


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
