"""Live lookups by id (author profiles, organisations): asked in chunks, each
chunk's answers committed with the cursor, so a killed run resumes after the last
chunk that landed."""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from harvest.models import HarvestRun
from harvest.records import RawItem
from harvest.services.live import _client, _live_run, run_to_end
from harvest.sources.polite_http import PoliteClient

# look_up(client, base_url, ids) -> (raw records answered, ids the source does not
# know); write(run, raw records, unknown ids) stores them (counters on the run);
# next_ids(after, count) -> the next ids of a backfill, ascending, past ``after``.
LookUp = Callable[[PoliteClient, str, list[str]], tuple[list[RawItem], list[str]]]
Write = Callable[[HarvestRun, list[RawItem], list[str]], None]
NextIds = Callable[[str, int], list[str]]


def lookup_run(
    *,
    source: str,
    mode: str,
    ids: list[str] | None,
    limit: int | None,
    base_url: str,
    run: HarvestRun | None,
    task_id: str,
    client: PoliteClient | None,
    progress: Callable[[int], None] | None,
    per_request: int,
    look_up: LookUp,
    write: Write,
    next_ids: NextIds,
    headers: dict | None,
) -> HarvestRun:
    """Look ids up in chunks of ``per_request``, each chunk committed with the
    cursor.

    Args:
        source: the source (its politeness; the run's source).
        mode: the run's ``params["mode"]`` (how the admin resumes or re-runs it).
        ids: the ids to look up, or None for a backfill (``next_ids``).
        limit: most ids to look up; None for all.
        base_url: the endpoint root.
        run, task_id, client, progress: as for the live harvests.
        per_request: ids a request asks.
        look_up, write, next_ids: see :data:`LookUp`, :data:`Write`,
            :data:`NextIds`.
        headers: sent with every request (an API key, a client id).

    Returns:
        The run, ``finished``, or ``failed`` with its ``error`` (see
        :func:`~harvest.services.live.run_to_end`). The cursor is the position
        in ``ids``, or for a backfill the last id handled (ids ascend), so a
        killed run resumes after it and an id that answered nothing is not
        asked forever.
    """
    params = (
        run.params
        if run
        else {
            "mode": mode,
            "base_url": base_url,
            "ids": ids,
            "limit": limit,
            "asked": 0,
        }
    )
    run = _live_run(source=source, params=params, run=run, task_id=task_id)
    if run.status == HarvestRun.Status.FINISHED:
        return run
    wanted = run.params.get("ids")
    cap = run.params.get("limit")

    def walk() -> None:
        asked = run.params.get("asked", 0)
        while cap is None or asked < cap:
            room = per_request if cap is None else min(per_request, cap - asked)
            if wanted is not None:
                start = int(run.cursor or 0)
                chunk = wanted[start : start + room]
            else:
                chunk = next_ids(run.cursor, room)
            if not chunk:
                break
            items, unknown = look_up(http, run.params["base_url"], chunk)
            with transaction.atomic():
                write(run, items, unknown)
                asked += len(chunk)
                run.params["asked"] = asked
                run.cursor = (
                    str(int(run.cursor or 0) + len(chunk))
                    if wanted is not None
                    else chunk[-1]
                )
                run.save()
            if progress:
                progress(len(chunk))

    with _client(client, source, headers=headers) as http:
        return run_to_end(run, walk)
