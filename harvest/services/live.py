"""Harvesting live sources: date windows newest first, a page with its cursor."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Q
from django.utils import timezone

from harvest import selectors
from harvest.models import HarvestRun
from harvest.records import RawItem
from harvest.services.batches import harvest_batch
from harvest.services.raw import RecordParser
from harvest.services.runs import harvest_run_finish, harvest_run_start, run_held
from harvest.sources.polite_http import PoliteClient
from wovepaper.models import Paper

logger = logging.getLogger(__name__)


def oai_windows(from_date: date, until_date: date, days: int) -> list[list[str]]:
    """Cut a date range into windows of ``days`` days, newest first.

    Args:
        from_date, until_date: the range, both days included (OAI-PMH ``from`` and
            ``until`` are inclusive at day granularity).
        days: window length in days (>= 1).

    Returns:
        ``[[from, until], ...]`` as ISO dates, the window holding ``until_date``
        first; the oldest window may be shorter. Empty when ``from_date`` is after
        ``until_date``.
    """
    windows = []
    end = until_date
    while end >= from_date:
        start = max(from_date, end - timedelta(days=min(days - 1, end.toordinal() - 1)))
        windows.append([start.isoformat(), end.isoformat()])
        if start == date.min:
            break
        end = start - timedelta(days=1)
    return windows


@dataclass(frozen=True)
class LivePage:
    """One page of a live list, as the windowed walk stores it.

    Attributes:
        items: the page's raw records.
        next: where the next page of the window is asked from (an OAI-PMH
            resumptionToken, a Crossref cursor); "" when the window is complete.
    """

    items: list[RawItem]
    next: str


# fetch(start, end, position): the pages of one window from a position ("" for its
# first page), as an iterator of LivePage.
PageFetcher = Callable[[str, str, str], Iterator[LivePage]]


def _client(
    client: PoliteClient | None, source: str, headers: dict | None = None
) -> AbstractContextManager[PoliteClient]:
    """The caller's client (left open), or a new one for ``source`` (closed after)."""
    if client is not None:
        return nullcontext(client)
    return PoliteClient(source, headers=headers)


def _window_cursor(run: HarvestRun) -> tuple[int, str]:
    if not run.cursor:
        return 0, ""
    state = json.loads(run.cursor)
    return int(state["window"]), str(state.get("position", ""))


def _live_run(
    *, source: str, params: dict, run: HarvestRun | None, task_id: str
) -> HarvestRun:
    """The run to carry on: ``run``, the task's own run, or a new one."""
    if run is None and task_id:
        run = selectors.run_of_task(source=source, task_id=task_id)
    if run is None:
        return harvest_run_start(
            source=source, params={**params, "task": task_id} if task_id else params
        )
    if run.status == HarvestRun.Status.FAILED:
        run.status = HarvestRun.Status.RUNNING
        run.error = ""
        run.finished_at = None
        run.save(update_fields=["status", "error", "finished_at"])
    return run


def _unexpected(run: HarvestRun, exc: Exception) -> HarvestRun:
    """End a run that met an error nobody foresaw: failed, with the error and its
    traceback logged, the cursor kept (resumable once the cause is fixed)."""
    logger.exception(
        "harvest run %s stopped by an unexpected error",
        run.pk,
        extra={"harvest_run": run.pk},
    )
    return harvest_run_finish(
        run=run, error=f"unexpected error {type(exc).__name__}: {str(exc)[:500]}"
    )


def run_to_end(run: HarvestRun, walk: Callable[[], None]) -> HarvestRun:
    """Carry out ``walk`` (the requests and batches of a live run), holding the
    run (:func:`~harvest.services.runs.run_held`), and end the run by how it went.

    Returns:
        The run, ``finished``; ``failed`` with the reason when the source stayed
        unavailable past its retry budget or refused the request
        (:class:`~harvest.sources.polite_http.SourceError`), or met an error
        nobody foresaw (logged with its traceback). The cursor is kept.

    Raises:
        DatabaseError: transient (a lost connection): the task retries and the
            run resumes from its cursor.
        HarvestRunRefused: another process is harvesting the run.
        HarvestInterrupted: Ctrl-C; the run is closed as failed, to be resumed.
    """
    with run_held(run):
        return _run_walk(run, walk)


def _run_walk(run: HarvestRun, walk: Callable[[], None]) -> HarvestRun:
    from harvest.sources.polite_http import SourceError

    try:
        walk()
    except SourceError as exc:
        logger.error(
            "harvest run %s failed: %s", run.pk, exc, extra={"harvest_run": run.pk}
        )
        return harvest_run_finish(run=run, error=str(exc))
    except DatabaseError:
        raise  # transient (a lost connection): the task retries, the run resumes
    except Exception as exc:  # noqa: BLE001 - a bug ends the run, never hides it
        return _unexpected(run, exc)
    return harvest_run_finish(run=run)


def _walk_windows(
    *,
    run: HarvestRun,
    parse: RecordParser,
    fetch: PageFetcher,
    restartable: type[Exception] | tuple[type[Exception], ...],
    progress: Callable[[int], None] | None,
) -> HarvestRun:
    """Harvest every window of a live run, newest first, page by page.

    Each page's records, the run's counts and the cursor (``{"window": i,
    "position": p}``: the next page to ask for) commit in one transaction, so a run
    killed at any moment resumes at the first page whose records did not all land,
    losing and duplicating nothing. A position the source no longer knows
    (``restartable`` raised while resuming from it) restarts that window from its
    first page: stored payloads are not parsed again, so this costs requests only.

    Returns:
        The run, finished; or failed with the reason when the source stays
        unavailable past its retry budget or refuses the request
        (:class:`~harvest.sources.polite_http.SourceError`). The cursor is kept.
    """

    windows = run.params["windows"]

    def walk() -> None:
        window, position = _window_cursor(run)
        while window < len(windows):
            start, end = windows[window]
            try:
                for page in fetch(start, end, position):
                    with transaction.atomic():
                        harvest_batch(
                            run=run, source=run.source, items=page.items, parse=parse
                        )
                        run.params["pages"] = run.params.get("pages", 0) + 1
                        done = not page.next
                        run.cursor = json.dumps(
                            {"window": window + done, "position": page.next}
                        )
                        run.save()
                    if progress:
                        progress(len(page.items))
            except restartable as exc:
                if not position:
                    raise
                logger.warning(
                    "%s; window %s..%s starts again",
                    exc,
                    start,
                    end,
                    extra={"harvest_run": run.pk},
                )
                position = ""
                continue
            window, position = _window_cursor(run)

    return run_to_end(run, walk)


def _range_params(
    *, source: str, mode: str, from_date: date | None, until_date: date | None, **same
) -> dict:
    """A live run's parameters: its list, dates and windows (newest first).

    With no ``from_date`` the run continues from the ``until`` day of the last
    finished run of the same list, or reaches back
    :data:`settings.HARVEST_FIRST_DAYS` days.

    Raises:
        ValueError: ``from_date`` is after ``until_date`` (today when not given).
    """
    until_date = until_date or timezone.now().date()
    if from_date is None:
        from_date = selectors.live_next_from(
            source=source, mode=mode, **same
        ) or until_date - timedelta(days=settings.HARVEST_FIRST_DAYS)
    if from_date > until_date:
        # A finished run records its until day; an empty one would let the next
        # incremental run skip from the last real until to here.
        raise ValueError(f"from {from_date} is after until {until_date}")
    return {
        "mode": mode,
        **same,
        "from": from_date.isoformat(),
        "until": until_date.isoformat(),
        "windows": oai_windows(from_date, until_date, settings.HARVEST_WINDOW_DAYS),
        "pages": 0,
    }


def harvest_arxiv_oai(
    *,
    from_date: date | None = None,
    until_date: date | None = None,
    set_spec: str = "",
    metadata_prefix: str = "arXiv",
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Harvest arXiv's OAI-PMH ``ListRecords``: incremental, newest first, resumable.

    The range is cut into windows of :data:`settings.HARVEST_WINDOW_DAYS` days,
    harvested newest window first, each along its resumptionTokens, each page
    committed with the token that follows it (:func:`_walk_windows`). An expired
    token on resuming (``badResumptionToken``) restarts that window. A source
    unavailable past the retry budget, a refused request or a token that loops
    ends the run ``failed`` with the reason; resuming it (``run=``) carries on.

    Args:
        from_date: first datestamp day asked; None continues from the ``until``
            day of the last finished run with the same URL, format and set (that
            day is asked again: ``from`` is inclusive), or
            :data:`settings.HARVEST_FIRST_DAYS` days before ``until_date``.
        until_date: last datestamp day asked; None for today (UTC).
        set_spec: an OAI set (``"cs"``, ``"physics:hep-th"``), "" for all.
        metadata_prefix: ``"arXiv"``, ``"arXivRaw"`` or ``"oai_dc"``.
        base_url: the OAI-PMH endpoint; "" for ``settings.ARXIV_OAI_URL``.
        run: a run to resume (its own parameters are used; the others are ignored).
        task_id: the Celery task doing this harvest ("" outside Celery); a task
            redelivered after its worker died resumes its run (or, if that run
            finished before the ack was lost, returns it unchanged).
        client: the HTTP client; None for a :class:`PoliteClient` with arXiv's
            politeness (one request every 3 s).
        progress: called with the number of records of each page.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: OAI-PMH 2.0 sections 3.5 (flow control) and 4.5 (ListRecords); arXiv
    OAI-PMH (``https://export.arxiv.org/oai2``): the datestamp is the record's last
    metadata change, not its publication date.
    """
    from harvest.sources import arxiv_oai
    from harvest.sources.oai_pmh import OaiBadToken, oai_pages

    params = (
        run.params
        if run
        else _range_params(
            source="arxiv",
            mode="oai",
            from_date=from_date,
            until_date=until_date,
            base_url=base_url or settings.ARXIV_OAI_URL,
            metadata_prefix=metadata_prefix,
            set=set_spec,
        )
    )
    run = _live_run(source="arxiv", params=params, run=run, task_id=task_id)
    if run.status == HarvestRun.Status.FINISHED:
        return run
    p = run.params

    def fetch(start: str, end: str, token: str) -> Iterator[LivePage]:
        for page in oai_pages(
            http,
            p["base_url"],
            metadata_prefix=p["metadata_prefix"],
            from_date=start,
            until_date=end,
            set_spec=p["set"],
            token=token,
        ):
            yield LivePage(
                list(arxiv_oai.split_oai_xml(page.body, page.url)), page.token
            )

    with _client(client, "arxiv") as http:
        return _walk_windows(
            run=run,
            parse=arxiv_oai.parse_oai_record,
            fetch=fetch,
            restartable=OaiBadToken,
            progress=progress,
        )


def harvest_crossref(
    *,
    from_date: date | None = None,
    until_date: date | None = None,
    extra_filter: str = "",
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Harvest Crossref ``/works`` indexed between two days: newest first, resumable.

    Works are asked by ``from-index-date``/``until-index-date`` (the day Crossref
    last indexed the work, so an updated deposit comes again), one window of
    :data:`settings.HARVEST_WINDOW_DAYS` days at a time, newest first, each walked
    with deep-paging cursors (``cursor=*``, 1,000 rows) until an empty page; each
    page commits with the cursor that follows it (:func:`_walk_windows`). Crossref
    cursors expire after five idle minutes, so resuming a run from a refused cursor
    restarts that window.

    Args:
        from_date: first index day; None continues from the ``until`` day of the
            last finished Crossref run, or :data:`settings.HARVEST_FIRST_DAYS`
            days before ``until_date``.
        until_date: last index day; None for today (UTC).
        extra_filter: more Crossref filters, ``"type:journal-article,prefix:10.1103"``
            (a different filter is a different list for incremental runs).
        base_url: ``/works`` endpoint; "" for ``settings.CROSSREF_WORKS_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for Crossref's politeness (polite pool with
            ``HARVEST_CONTACT_EMAIL``).
        progress: called with the number of works of each page.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: Crossref REST API documentation, "Deep paging with cursors" and the
    ``from-index-date``/``until-index-date`` filters.
    """
    from harvest.sources import crossref

    def pages(http: PoliteClient, url: str, start: str, end: str, cursor: str, more):
        return crossref.crossref_pages(
            http,
            url,
            filters={"from-index-date": start, "until-index-date": end, **more},
            cursor=cursor or "*",
        )

    return _harvest_works_by_date(
        source="crossref",
        default_url=settings.CROSSREF_WORKS_URL,
        pages=pages,
        split=crossref.split_works_page,
        parse=crossref.parse_crossref_work,
        from_date=from_date,
        until_date=until_date,
        extra_filter=extra_filter,
        base_url=base_url,
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
    )


def filters_parse(text: str) -> dict[str, str]:
    """``"type:journal-article,prefix:10.1103"`` as ``{"type": "journal-article",
    "prefix": "10.1103"}`` (Crossref and OpenAlex filter syntax).

    Raises:
        ValueError: a part without ``name:value``.
    """
    out = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition(":")
        if not (sep and name.strip() and value.strip()):
            raise ValueError(f"filter {part!r} is not name:value")
        out[name.strip()] = value.strip()
    return out


def _harvest_works_by_date(
    *,
    source: str,
    default_url: str,
    pages: Callable[..., Iterator[Any]],
    split: Callable[[Any], Iterator[RawItem]],
    parse: RecordParser,
    from_date: date | None,
    until_date: date | None,
    extra_filter: str,
    base_url: str,
    run: HarvestRun | None,
    task_id: str,
    client: PoliteClient | None,
    progress: Callable[[int], None] | None,
) -> HarvestRun:
    """A live harvest of a JSON ``/works`` API walked by date windows and cursors.

    ``pages(http, url, start, end, cursor, more)`` walks one window from a cursor
    ("" for the first page) with the extra filters ``more`` (``{"type":
    "journal-article"}``, from ``extra_filter``); each page's ``next_cursor`` is
    saved with its records. A
    cursor the source refuses on resuming restarts its window (cursors expire).

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.
    """
    from harvest.sources.polite_http import SourceRefused

    params = (
        run.params
        if run
        else _range_params(
            source=source,
            mode=source,
            from_date=from_date,
            until_date=until_date,
            base_url=base_url or default_url,
            filter=extra_filter,
        )
    )
    run = _live_run(source=source, params=params, run=run, task_id=task_id)
    more = filters_parse(run.params.get("filter", ""))
    if run.status == HarvestRun.Status.FINISHED:
        return run

    def fetch(start: str, end: str, cursor: str) -> Iterator[LivePage]:
        for page in pages(http, run.params["base_url"], start, end, cursor, more):
            items = list(split(page))
            yield LivePage(items, page.next_cursor if items else "")

    with _client(client, source) as http:
        return _walk_windows(
            run=run,
            parse=parse,
            fetch=fetch,
            restartable=SourceRefused,
            progress=progress,
        )


def harvest_openalex(
    *,
    from_date: date | None = None,
    until_date: date | None = None,
    extra_filter: str = "",
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Harvest OpenAlex works updated between two days: newest first, resumable.

    Works are asked with ``from_updated_date``/``to_updated_date`` (with an API
    key, ``OPENALEX_API_KEY``), a window of :data:`settings.HARVEST_WINDOW_DAYS`
    days at a time, newest first, each walked with cursors (200 works a page);
    works whose authorships OpenAlex truncated are fetched whole. Each page
    commits with the cursor after it (:func:`_walk_windows`); a refused cursor on
    resuming restarts its window.

    Args:
        from_date: first update day; None continues from the last finished
            OpenAlex run's ``until``, or :data:`settings.HARVEST_FIRST_DAYS` back.
        until_date: last update day; None for today (UTC).
        extra_filter: more OpenAlex filters, ``"type:article,language:en"``.
        base_url: ``/works`` endpoint; "" for ``settings.OPENALEX_WORKS_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for OpenAlex's politeness.
        progress: called with the number of works of each page.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: OpenAlex docs, "Paging" (cursor) and "Filter works"
    (``from_updated_date``, ``to_updated_date``).
    """
    from harvest.sources import openalex

    def pages(http: PoliteClient, url: str, start: str, end: str, cursor: str, more):
        return openalex.openalex_pages(
            http,
            url,
            filters={"from_updated_date": start, "to_updated_date": end, **more},
            cursor=cursor or "*",
            api_key=settings.OPENALEX_API_KEY,
        )

    return _harvest_works_by_date(
        source="openalex",
        default_url=settings.OPENALEX_WORKS_URL,
        pages=pages,
        split=openalex.split_works_page,
        parse=openalex.parse_openalex_work,
        from_date=from_date,
        until_date=until_date,
        extra_filter=extra_filter,
        base_url=base_url,
        run=run,
        task_id=task_id,
        client=client,
        progress=progress,
    )


def harvest_s2_backfill(
    *,
    limit: int | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Look up in Semantic Scholar the papers that have no S2 id yet, newest first.

    Papers with an arXiv id or a DOI and no ``s2_id`` are asked 500 at a time
    (``POST /paper/batch`` with ``ARXIV:<id>`` or ``DOI:<doi>``); each answer is
    stored and upserted like any record (S2 ranks last: it fills the S2 paper id,
    S2 author ids on aligned slots, citation counts). Unknown ids answer ``null``:
    the paper's ``s2_not_found_at`` is set and it is not asked again for
    ``settings.S2_RECHECK_DAYS`` days. The cursor is the lowest paper id
    handled, committed with each batch, so a killed run resumes below it.

    Args:
        limit: most papers to look up; None for all.
        base_url: Graph API root; "" for ``settings.S2_API_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for S2's politeness (``S2_API_KEY`` sent as
            ``x-api-key``).
        progress: called with the number of papers asked in each batch.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: Semantic Scholar Graph API, "Get details for multiple papers at once"
    (``/paper/batch``: at most 500 ids, ``null`` for an unknown one).
    """
    from harvest.sources import semanticscholar as s2

    params = (
        run.params
        if run
        else {
            "mode": "s2-backfill",
            "base_url": base_url or settings.S2_API_URL,
            "limit": limit,
            "asked": 0,
        }
    )
    run = _live_run(source="semanticscholar", params=params, run=run, task_id=task_id)
    if run.status == HarvestRun.Status.FINISHED:
        return run
    key = {"x-api-key": settings.S2_API_KEY} if settings.S2_API_KEY else None

    def walk() -> None:
        asked = run.params.get("asked", 0)
        while run.params["limit"] is None or asked < run.params["limit"]:
            recent = timezone.now() - timedelta(days=settings.S2_RECHECK_DAYS)
            wanted = (
                Paper.objects.filter(s2_id__isnull=True)
                .filter(Q(arxiv_id__isnull=False) | Q(doi__isnull=False))
                .exclude(s2_not_found_at__gte=recent)
            )
            if run.cursor:
                wanted = wanted.filter(pk__lt=int(run.cursor))
            room = s2.BATCH_MAX
            if run.params["limit"] is not None:
                room = min(room, run.params["limit"] - asked)
            papers = list(
                wanted.order_by("-pk").values_list("pk", "arxiv_id", "doi")[:room]
            )
            if not papers:
                break
            ids = [f"ARXIV:{a}" if a else f"DOI:{d}" for _, a, d in papers]
            page = s2.s2_papers_batch(http, run.params["base_url"], ids)
            unknown = [
                pk
                for (pk, _, _), entry in zip(papers, page.items, strict=True)
                if entry is None
            ]
            with transaction.atomic():
                Paper.objects.filter(pk__in=unknown).update(
                    s2_not_found_at=timezone.now()
                )
                harvest_batch(
                    run=run,
                    source="semanticscholar",
                    items=list(s2.split_s2_page(page)),
                    parse=s2.parse_s2_paper,
                )
                asked += len(papers)
                run.params["asked"] = asked
                run.cursor = str(min(pk for pk, _, _ in papers))
                run.save()
            if progress:
                progress(len(papers))

    with _client(client, "semanticscholar", headers=key) as http:
        return run_to_end(run, walk)


def harvest_arxiv_ids(
    *,
    ids: list[str] | None = None,
    base_url: str = "",
    run: HarvestRun | None = None,
    task_id: str = "",
    client: PoliteClient | None = None,
    progress: Callable[[int], None] | None = None,
) -> HarvestRun:
    """Fetch some arXiv papers by id from the arXiv API (to backfill or refresh them).

    The ids are asked 100 a page (``id_list``, paged by ``start``); each page's
    entries and the next ``start`` commit together, so a killed run resumes at the
    next page. An id the API does not know is absent from the answer (counted in
    ``params["missing"]``); a malformed id is an API error (HTTP 400) and the run
    fails naming it.

    Args:
        ids: arXiv ids, new or old style, with or without version.
        base_url: the API; "" for ``settings.ARXIV_API_URL``.
        run: a run to resume.
        task_id: the Celery task doing this harvest ("" outside Celery).
        client: the HTTP client; None for arXiv's politeness.
        progress: called with the number of entries of each page.

    Returns:
        The run, ``finished``, or ``failed`` with its ``error``.

    Source: arXiv API user manual (``/api/query?id_list=...&start=&max_results=``).
    """
    from harvest.sources import arxiv_atom

    params = (
        run.params
        if run
        else {
            "mode": "arxiv-api",
            "base_url": base_url or settings.ARXIV_API_URL,
            "ids": list(ids or []),
            "pages": 0,
        }
    )
    run = _live_run(source="arxiv", params=params, run=run, task_id=task_id)
    if run.status == HarvestRun.Status.FINISHED:
        return run
    p = run.params

    def walk() -> None:
        for page in arxiv_api_pages_of(http, p, int(run.cursor or 0)):
            with transaction.atomic():
                harvest_batch(
                    run=run,
                    source="arxiv",
                    items=page.items,
                    parse=arxiv_atom.parse_atom_entry,
                )
                p["pages"] = p.get("pages", 0) + 1
                p["missing"] = max(0, len(p["ids"]) - page.total)
                run.cursor = str(page.start + len(page.items))
                run.save()
            if progress:
                progress(len(page.items))

    with _client(client, "arxiv") as http:
        return run_to_end(run, walk)


def arxiv_api_pages_of(http: PoliteClient, params: dict, start: int):
    """The arXiv API pages of a run's id list, from ``start``."""
    from harvest.sources.arxiv_atom import arxiv_api_pages

    if not params["ids"]:
        return iter(())
    return arxiv_api_pages(http, params["base_url"], id_list=params["ids"], start=start)
