"""Live lookups by id (papers, author profiles, organisations): asked in chunks,
each chunk's answers committed with the cursor, so a killed run resumes after the
last chunk that landed."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.db import transaction

from harvest.models import HarvestRun
from harvest.records import RawItem
from harvest.services.batches import harvest_batch
from harvest.services.live import _client, _live_run, run_to_end
from harvest.services.raw import RecordParser
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


def _papers_write(source: str, parse: RecordParser) -> Write:
    """A lookup's :data:`Write` for papers: the records upserted as a harvest
    batch, the ids the source does not know added to ``params["missing"]``."""

    def write(run: HarvestRun, items: list[RawItem], unknown: list[str]) -> None:
        harvest_batch(run=run, source=source, items=items, parse=parse)
        run.params["missing"] = [*run.params.get("missing", []), *unknown]

    return write


def _no_backfill(after: str, count: int) -> list[str]:
    """A paper lookup asks only the ids given: nothing more to look up."""
    return []


def harvest_crossref_dois(
    *,
    dois: list[str] | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Look some works up in Crossref by DOI (to backfill or refresh them).

    Each DOI is asked on its own (``GET /works/{doi}``: Crossref has no batch
    lookup); its work and the position of the next DOI commit together, so a
    killed run resumes at the next DOI. A DOI Crossref does not know (HTTP 404)
    is listed in ``params["missing"]`` and the run goes on; an answer that is
    not the DOI's work, or a request Crossref calls bad (HTTP 400), is a failed
    record naming the DOI, and the run goes on; a source unavailable past its
    retry budget (or refusing every request: 401, 403) fails the run, which
    resumes from that DOI.

    Args:
        dois: normalised DOIs (:func:`~harvest.sources.crossref.doi_normalise`).
        base_url: the ``/works`` endpoint; "" for ``settings.CROSSREF_WORKS_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for Crossref's politeness (polite pool).
        progress: called with 1 for each DOI asked.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: Crossref REST API, ``/works/{doi}``.
    """
    from harvest.sources import crossref

    def look_up(http: PoliteClient, url: str, chunk: list[str]):
        (doi,) = chunk
        items = crossref.crossref_work(http, url, doi)
        return ([], [doi]) if items is None else (items, [])

    return lookup_run(
        source="crossref",
        mode="crossref-dois",
        ids=list(dois or []),
        limit=None,
        base_url=base_url or settings.CROSSREF_WORKS_URL,
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
        per_request=1,
        look_up=look_up,
        write=_papers_write("crossref", crossref.parse_crossref_work),
        next_ids=_no_backfill,
        headers=None,
    )


def harvest_s2_papers(
    *,
    ids: list[str] | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Look some papers up in Semantic Scholar by id (to backfill or refresh them).

    The ids are asked :data:`~harvest.sources.semanticscholar.BATCH_MAX` at a
    time (``POST /paper/batch``); each answer's papers and the position of the
    next id commit together, so a killed run resumes at the next batch. An id
    S2 does not know (``null`` in the answer) is listed in
    ``params["missing"]`` and the run goes on.

    Args:
        ids: paper ids as :func:`~harvest.sources.semanticscholar.
            s2_paper_id_normalise` gives them (``CorpusId:N``, ``DOI:...``,
            ``ARXIV:...``, a paperId).
        base_url: Graph API root; "" for ``settings.S2_API_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for S2's politeness (``S2_API_KEY`` sent as
            ``x-api-key``).
        progress: called with the number of ids of each batch.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: Semantic Scholar Graph API, "Get details for multiple papers at
    once" (``/paper/batch``: ``null`` for an unknown id).
    """
    from harvest.sources import semanticscholar as s2

    def look_up(http: PoliteClient, url: str, chunk: list[str]):
        page = s2.s2_papers_batch(http, url, chunk)
        unknown = [i for i, e in zip(chunk, page.items, strict=True) if e is None]
        return list(s2.split_s2_batch(page, chunk)), unknown

    return lookup_run(
        source="semanticscholar",
        mode="s2-papers",
        ids=list(ids or []),
        limit=None,
        base_url=base_url or settings.S2_API_URL,
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
        per_request=s2.BATCH_MAX,
        look_up=look_up,
        write=_papers_write("semanticscholar", s2.parse_s2_paper),
        next_ids=_no_backfill,
        headers={"x-api-key": settings.S2_API_KEY} if settings.S2_API_KEY else None,
    )
