"""Reading a labelled set's files: JSON with a clear error that names the
file and the problem, gold clusters, record ids, texts and affiliations.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from curation.matching.labelled_set import DatasetError


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
