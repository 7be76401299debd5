"""Organisations looked up live in ROR and OpenAlex, into Institutions."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.db.models import Q

from harvest.models import HarvestRun, RawRecord
from harvest.records import RawItem
from harvest.services.batches import institutions_batch
from harvest.services.lookups import lookup_run
from harvest.sources.json_answers import json_payload
from harvest.sources.polite_http import PoliteClient
from wovepaper.models import Institution

# What an institution ROR answered 404 for is marked with (Institution.status), so
# a backfill does not ask for it again; ROR's own statuses are active, inactive
# and withdrawn.
NOT_IN_ROR = "unknown"


def _ror_look_up(
    http: PoliteClient, base_url: str, ids: list[str]
) -> tuple[list[RawItem], list[str]]:
    """Each id asked alone (ROR's API has no batch lookup); a 404 becomes a raw
    record that fails with ROR's words."""
    from harvest.sources.json_answers import json_answer
    from harvest.sources.ror import ror_id_of

    root = base_url.rstrip("/")
    items, unknown = [], []
    for rid in ids:
        url = f"{root}/{rid}"
        # Read inside fetch, so a body cut short is asked again.
        record, missing = http.fetch(
            url,
            None,
            read=lambda r: (
                (r.text, True)
                if r.status_code == 404
                else (json_answer(r.text, str(r.url)), False)
            ),
            accept=frozenset({404}),
        )
        if missing:
            unknown.append(rid)
            problem = f"ROR answered 404: no organisation {rid}"
            payload = record
        else:
            answered = ror_id_of(record.get("id")) if isinstance(record, dict) else ""
            problem = (
                ""
                if answered == rid
                else f"asked ROR for {rid}, answered the record of {answered or '?'}"
            )
            payload = json_payload(record)
        items.append(
            RawItem(external_id=rid, payload=payload, locator=url, problem=problem)
        )
    return items, unknown


def _ror_write(run: HarvestRun, items: list[RawItem], unknown: list[str]) -> None:
    from harvest.sources.ror import parse_ror_record

    # Always applied (reparse): a record that comes back after a 404 brings the
    # institution back.
    institutions_batch(
        run=run, source="ror", items=items, parse=parse_ror_record, reparse=True
    )
    Institution.objects.filter(ror_id__in=unknown).update(status=NOT_IN_ROR)
    # Named by their failed raw records already (and counted as seen).


def _undescribed(after: str, count: int) -> list[str]:
    """Institutions ROR has not described yet (made from another source's
    mention: no ROR record of theirs was ever parsed) and not known to be
    missing from ROR, by ROR id, past ``after``."""
    described = RawRecord.objects.filter(
        source="ror", status=RawRecord.Status.PARSED
    ).values("external_id")
    return list(
        Institution.objects.filter(ror_id__gt=after)
        .exclude(status=NOT_IN_ROR)
        .exclude(ror_id__in=described)
        .order_by("ror_id")
        .values_list("ror_id", flat=True)[:count]
    )


def harvest_ror_ids(
    *,
    ids: list[str] | None = None,
    limit: int | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Look organisations up in ROR's API and make or refine their Institutions.

    Without ``ids``, every Institution that ROR has not described yet (one an
    OpenAlex or Crossref mention created: no ROR record of it was ever parsed).
    Each id is one ``GET /organizations/{id}``, committed on its own; the
    answer is stored and written like a ROR file record (ROR wins over the
    names other sources gave). An id ROR answers 404 for is a failed record
    naming it, and its institution is marked :data:`NOT_IN_ROR` so it is not
    asked again. ``ROR_CLIENT_ID`` goes in the
    ``Client-Id`` header: with it ROR allows 2,000 requests per 5 minutes,
    without it 50 (the politeness settings follow).

    Args:
        ids: bare ROR ids, or None to backfill.
        limit: most ids to look up; None for all.
        base_url: ``.../v2/organizations``; "" for ``settings.ROR_API_URL``.
        run, task_id, client, progress: as for the other lookups.

    Returns:
        The run, ``finished`` (``papers_*`` count institutions), or ``failed``
        with its ``error`` and a cursor to resume from.

    Source: ROR REST API v2, "Retrieve a record by ID"; ROR docs, "Client ID"
    (rate limits, 2025).
    """
    client_id = settings.ROR_CLIENT_ID
    return lookup_run(
        source="ror",
        mode="ror-ids",
        ids=ids,
        limit=limit,
        base_url=base_url or settings.ROR_API_URL,
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
        per_request=1,  # one request an id: each answer commits on its own
        look_up=_ror_look_up,
        write=_ror_write,
        next_ids=_undescribed,
        headers={"Client-Id": client_id} if client_id else None,
    )


def _openalex_look_up(
    http: PoliteClient, base_url: str, ids: list[str]
) -> tuple[list[RawItem], list[str]]:
    """One list request for up to 50 ROR ids (``filter=ror:<url>|<url>``);
    the ids it does not answer are unknown to OpenAlex."""
    from harvest.services.authors import openalex_list, openalex_root
    from harvest.sources.ror import ror_id_of

    url = f"{openalex_root(base_url)}/institutions"
    results = openalex_list(http, url, "ror", [f"https://ror.org/{rid}" for rid in ids])
    items, found = [], set()
    for entry in results:
        rid = ror_id_of(entry.get("ror")) if isinstance(entry, dict) else ""
        if rid in ids and rid not in found:
            found.add(rid)
            items.append(
                RawItem(
                    external_id=str(entry.get("id", rid)).rsplit("/", 1)[-1][:500],
                    payload=json_payload(entry),
                    locator=f"{url}?filter=ror:{rid}",
                )
            )
    return items, [rid for rid in ids if rid not in found]


def _openalex_write(run: HarvestRun, items: list[RawItem], unknown: list[str]) -> None:
    from harvest.services.authors import note_unknown
    from harvest.sources.openalex import parse_openalex_institution

    if items:
        institutions_batch(
            run=run,
            source="openalex",
            items=items,
            parse=parse_openalex_institution,
            reparse=True,
            fill_only=True,
        )
    note_unknown(run, unknown)


def _incomplete(after: str, count: int) -> list[str]:
    """Institutions that lack a country or a type, by ROR id, past ``after``."""
    return list(
        Institution.objects.filter(ror_id__gt=after)
        .filter(Q(country_code="") | Q(types=[]))
        .order_by("ror_id")
        .values_list("ror_id", flat=True)[:count]
    )


def harvest_openalex_institutions(
    *,
    ids: list[str] | None = None,
    limit: int | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Look institutions up in OpenAlex by ROR id and fill what they lack.

    Without ``ids``, every Institution without a country or a type. Up to 50
    ROR ids a request (``/institutions?filter=ror:<url>|<url>``); the answers
    fill empty fields only (alternative names, acronyms, country, type,
    associated institutions), never replacing what ROR gave. Ids OpenAlex does
    not answer are counted and named in ``params["unknown"]``.

    Args:
        ids: bare ROR ids, or None to backfill.
        limit: most ids to look up; None for all.
        base_url: the works endpoint or the API root; "" for
            ``settings.OPENALEX_WORKS_URL``.
        run, task_id, client, progress: as for the other lookups.

    Returns:
        The run, ``finished`` (``papers_*`` count institutions), or ``failed``.

    Source: OpenAlex docs, "Filter institutions" (``ror``), "Filter entity
    lists" (OR with ``|``).
    """
    from harvest.services.authors import OPENALEX_IDS_PER_REQUEST, openalex_root

    return lookup_run(
        source="openalex",
        mode="openalex-institutions",
        ids=ids,
        limit=limit,
        base_url=openalex_root(base_url),
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
        per_request=OPENALEX_IDS_PER_REQUEST,
        look_up=_openalex_look_up,
        write=_openalex_write,
        next_ids=_incomplete,
        headers=None,
    )
