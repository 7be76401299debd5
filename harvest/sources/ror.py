"""ROR organisation records, schema v1 and v2, into OrganisationRecords (no ORM).

Files hold a JSON array of records, one record, or a ROR API / Elasticsearch answer
(``items[]`` of the API's list, ``hits.hits[]._source``); :func:`read_ror_file`
cuts them into one RawItem per organisation and :func:`parse_ror_record` reads
either schema.

Source: ROR data structure (ror.readme.io/docs/data-structure, schema v2, 2024) and
the v1 schema it replaced: v2 ``names[{value, types: ror_display|label|alias|acronym,
lang}]``, ``locations[].geonames_details.country_code``, ``types``,
``relationships[{type, id, label}]``, ``status``; v1 ``name``, ``aliases``,
``acronyms``, ``labels[{label}]``, ``country.country_code``, ``types``
(capitalised), ``relationships`` (capitalised types).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harvest.records import NotARecordFile, RawItem, RecordError, file_locator
from harvest.sources.json_answers import json_payload, json_record, text_of
from wovepaper.identifiers import ror_normalise

SOURCE = "ror"


@dataclass(frozen=True)
class OrganisationRecord:
    """One ROR organisation.

    Attributes:
        ror_id: bare ROR id (``019wvm592``).
        name: the display name (v2 ``ror_display``, v1 ``name``).
        aliases: every other name, label (other languages) and acronym, in the
            record's order, without repeats.
        country_code: ISO 3166-1 alpha-2, or "".
        types: lower-case types (``education``, ``facility`` ...).
        relationships: ``({"type": "parent"|"child"|"related"|..., "ror_id": ...,
            "label": ...}, ...)``, types lower-cased.
        status: ``active``, ``inactive`` or ``withdrawn``.
    """

    ror_id: str
    name: str
    aliases: tuple[str, ...] = ()
    country_code: str = ""
    types: tuple[str, ...] = ()
    relationships: tuple[dict, ...] = ()
    status: str = "active"


def ror_id_of(value: object) -> str:
    """The bare ROR id of ``https://ror.org/019wvm592`` (or bare), check digits
    verified; "" for anything else (a look-alike inside another URL included)."""
    try:
        return ror_normalise(value) if isinstance(value, str) else ""
    except ValueError:
        return ""


def read_ror_file(path: Path, root: Path | None = None) -> Iterator[RawItem]:
    """Cut a saved ROR file into one RawItem per organisation.

    Raises:
        RecordError: (while iterating) the file is not JSON.
        NotARecordFile: JSON holding no organisation records.
    """
    locator = file_locator(path, root)
    try:
        data = json.loads(path.read_text(errors="surrogateescape"))
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"{locator}: not JSON: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("hits"), dict):
        hits = data["hits"].get("hits")
        records = (
            [h.get("_source") for h in hits if isinstance(h, dict)]
            if isinstance(hits, list)
            else []
        )
    elif isinstance(data, dict) and isinstance(data.get("items"), list):
        records = data["items"]
    elif (
        isinstance(data, dict) and "id" in data and ("name" in data or "names" in data)
    ):
        records = [data]
    elif isinstance(data, list) and any(_looks_like_record(r) for r in data):
        records = data
    else:
        raise NotARecordFile(f"{locator}: no ROR organisation records in it")
    for index, record in enumerate(records):
        item_locator = f"{locator}#org-{index}"
        rid = ror_id_of(record.get("id")) if isinstance(record, dict) else ""
        yield RawItem(
            external_id=rid or item_locator,
            payload=json_payload(record),
            locator=item_locator,
        )


def parse_ror_record(item: RawItem) -> OrganisationRecord:
    """Parse one ROR record, schema v1 or v2.

    Raises:
        RecordError: not a JSON object, no ROR id, or no name.
    """
    record = json_record(item, "organisation")
    rid = ror_id_of(record.get("id"))
    if not rid:
        raise RecordError(f"{item.locator}: organisation without a ROR id")
    if isinstance(record.get("names"), list):
        name, aliases = _v2_names(record["names"])
        locations = record.get("locations")
        first = locations[0] if isinstance(locations, list) and locations else {}
        details = first.get("geonames_details") if isinstance(first, dict) else None
        country = details.get("country_code") if isinstance(details, dict) else ""
    else:
        name = text_of(record.get("name"))
        labels = [
            text_of(entry.get("label"))
            for entry in record.get("labels") or []
            if isinstance(entry, dict)
        ]
        aliases = _unique(
            [*_texts(record.get("aliases")), *labels, *_texts(record.get("acronyms"))],
            name,
        )
        place = record.get("country")
        country = place.get("country_code") if isinstance(place, dict) else ""
    if not name:
        raise RecordError(f"ror:{rid}: organisation without a name")
    country = text_of(country).upper()
    return OrganisationRecord(
        ror_id=rid,
        name=name,
        aliases=tuple(aliases),
        country_code=country if len(country) == 2 else "",
        types=tuple(t.lower() for t in _texts(record.get("types"))),
        relationships=tuple(
            {
                "type": text_of(r.get("type")).lower(),
                "ror_id": ror_id_of(r.get("id")),
                "label": text_of(r.get("label")),
            }
            for r in record.get("relationships") or []
            if isinstance(r, dict) and ror_id_of(r.get("id"))
        ),
        status=text_of(record.get("status")).lower() or "active",
    )


# Private helpers.


def _looks_like_record(value: object) -> bool:
    return (
        isinstance(value, dict)
        and bool(ror_id_of(value.get("id")))
        and bool({"name", "names"} & set(value))
    )


def _texts(value: object) -> list[str]:
    return (
        [t for t in (text_of(v) for v in value or []) if t]
        if isinstance(value, list)
        else []
    )


def _unique(names: list[str], name: str) -> list[str]:
    seen = {name}
    out = []
    for alias in names:
        if alias and alias not in seen:
            seen.add(alias)
            out.append(alias)
    return out


def _v2_names(names: list) -> tuple[str, list[str]]:
    display = ""
    others = []
    for entry in names:
        if not isinstance(entry, dict):
            continue
        value = text_of(entry.get("value"))
        types = entry.get("types") if isinstance(entry.get("types"), list) else []
        if "ror_display" in types and not display:
            display = value
        else:
            others.append(value)
    return display, _unique(others, display)
