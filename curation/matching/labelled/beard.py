"""The beard (INSPIRE) format: ``*_signatures.json`` and ``*_clusters.json``,
as mentions and gold clusters.
"""

from __future__ import annotations

from pathlib import Path

from curation import names
from curation.matching.labelled.mentions import _labelled, _Mention, _read_members
from curation.matching.labelled.records import (
    _affiliations,
    _gold,
    _is_id,
    _json,
    _kind,
    _record_id,
    _text,
    _Unusable,
)
from curation.matching.labelled_set import LabelledSet


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
