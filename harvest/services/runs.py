"""Harvest runs: opened, closed, resumed and re-run."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from harvest.models import HarvestRun
from wovepaper.outbox import registered_task

logger = logging.getLogger(__name__)


def harvest_run_start(*, source: str, params: dict) -> HarvestRun:
    """Open a HarvestRun.

    Args:
        source: source name, e.g. ``"arxiv"``.
        params: what was asked (paths, dates), JSON-serialisable.

    Returns:
        The new run, status ``running``.
    """
    return HarvestRun.objects.create(source=source, params=params)


def harvest_run_finish(*, run: HarvestRun, error: str = "") -> HarvestRun:
    """Close a run as finished (failed when ``error`` is given); save its counts."""
    run.status = HarvestRun.Status.FAILED if error else HarvestRun.Status.FINISHED
    run.error = error
    run.finished_at = timezone.now()
    run.save()
    return run


class HarvestRunRefused(Exception):
    """A resume or re-run asked of a run in the wrong state; the message says why."""


class HarvestInterrupted(KeyboardInterrupt):
    """A harvest stopped by Ctrl-C: its run is closed as failed (so it can be
    resumed) and travels with the interruption (``.run``)."""

    def __init__(self, run: HarvestRun) -> None:
        super().__init__(f"run #{run.pk} interrupted")
        self.run = run


# The namespace of harvest runs' advisory locks (any constant the project
# reserves; PostgreSQL 15 manual, 9.27.10 "Advisory Lock Functions").
_RUN_LOCK_SPACE = 7301


@contextmanager
def run_held(run: HarvestRun) -> Iterator[None]:
    """Harvest ``run`` in this process alone, and close it if Ctrl-C stops it.

    Every harvest holds its run so (from files, live lists, lookups by id).
    On PostgreSQL the run is held by a session-level advisory lock, which
    PostgreSQL lets go when the holder's connection ends, so a harvest killed
    with SIGKILL leaves it free; elsewhere (SQLite, one process) nothing is
    locked.

    Raises:
        HarvestRunRefused: another process holds the run (it is resuming the
            same run): nothing was done.
        HarvestInterrupted: Ctrl-C (KeyboardInterrupt) inside; the run is
            closed as failed with the counts and cursor of its last committed
            page or batch (the one cut short was rolled back), to be resumed.
    """
    locked = connection.vendor == "postgresql"
    if locked:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_try_advisory_lock(%s, %s)", [_RUN_LOCK_SPACE, run.pk]
            )
            (held,) = cursor.fetchone()
        if not held:
            raise HarvestRunRefused(
                f"run #{run.pk} is being harvested by another process: "
                "resume it once that one has stopped"
            )
    try:
        yield
    except KeyboardInterrupt as exc:
        run.refresh_from_db()
        harvest_run_finish(run=run, error="interrupted (Ctrl-C)")
        raise HarvestInterrupted(run) from exc
    finally:
        if locked:
            _run_release(run)


def _run_release(run: HarvestRun) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_unlock(%s, %s)", [_RUN_LOCK_SPACE, run.pk]
            )
    except DatabaseError:
        # The connection is gone (the lock went with it) or inside a
        # transaction an error aborted (it goes when the session ends):
        # the error that got here is the one to report.
        logger.warning("harvest run #%s: its lock is released at disconnect", run.pk)


RUN_NOT_FAILED = "run #{run} is {status}: only a failed run can be resumed"
RUN_STILL_RUNNING = "run #{run} is still running: re-run it once it has ended"
RUN_UNKNOWN_KIND = "run #{run} has no parameters to harvest again"


def _run_task(run: HarvestRun, *, resume: bool):
    """The task signature that harvests ``run`` again (resuming it, or afresh)."""
    # By the tasks' names (harvest/tasks.py): the task module imports this one.
    (
        harvest_arxiv_ids_task,
        harvest_arxiv_oai_task,
        harvest_crossref_dois_task,
        harvest_crossref_task,
        harvest_files_task,
        harvest_openalex_authors_task,
        harvest_openalex_institutions_task,
        harvest_openalex_task,
        harvest_ror_ids_task,
        harvest_s2_author_papers_task,
        harvest_s2_authors_task,
        harvest_s2_backfill_task,
        harvest_s2_papers_task,
    ) = (
        registered_task(f"harvest.{name}")
        for name in (
            "arxiv_ids",
            "arxiv_oai",
            "crossref_dois",
            "crossref",
            "files",
            "openalex_authors",
            "openalex_institutions",
            "openalex",
            "ror_ids",
            "s2_author_papers",
            "s2_authors",
            "s2_backfill",
            "s2_papers",
        )
    )

    p = run.params
    if p.get("mode") == "arxiv-api":
        if resume:
            return harvest_arxiv_ids_task.s(run_id=run.pk)
        return harvest_arxiv_ids_task.s(ids=p["ids"], base_url=p["base_url"])
    if p.get("mode") == "crossref-dois":
        if resume:
            return harvest_crossref_dois_task.s(run_id=run.pk)
        return harvest_crossref_dois_task.s(dois=p["ids"], base_url=p["base_url"])
    if p.get("mode") == "s2-papers":
        if resume:
            return harvest_s2_papers_task.s(run_id=run.pk)
        return harvest_s2_papers_task.s(ids=p["ids"], base_url=p["base_url"])
    if p.get("mode") == "s2-author-papers":
        if resume:
            return harvest_s2_author_papers_task.s(run_id=run.pk)
        return harvest_s2_author_papers_task.s(
            author_id=p["author"], base_url=p["base_url"]
        )
    if p.get("mode") == "s2-backfill":
        if resume:
            return harvest_s2_backfill_task.s(run_id=run.pk)
        return harvest_s2_backfill_task.s(limit=p["limit"], base_url=p["base_url"])
    lookups = {
        "openalex-authors": harvest_openalex_authors_task,
        "s2-authors": harvest_s2_authors_task,
        "ror-ids": harvest_ror_ids_task,
        "openalex-institutions": harvest_openalex_institutions_task,
    }
    if p.get("mode") in lookups:
        task = lookups[p["mode"]]
        if resume:
            return task.s(run_id=run.pk)
        return task.s(ids=p["ids"], limit=p["limit"], base_url=p["base_url"])
    live = {
        "oai": harvest_arxiv_oai_task,
        "crossref": harvest_crossref_task,
        "openalex": harvest_openalex_task,
    }
    if p.get("mode") in live:
        task = live[p["mode"]]
        if resume:
            return task.s(run_id=run.pk)
        asked = {"from_date": p["from"], "until_date": p["until"]}
        asked["base_url"] = p["base_url"]
        if p.get("filter"):
            asked["extra_filter"] = p["filter"]
        if p["mode"] == "oai":
            asked |= {"set_spec": p["set"], "metadata_prefix": p["metadata_prefix"]}
        return task.s(**asked)
    if "root" in p:
        return harvest_files_task.s(
            source=run.source, root=p["root"], run_id=run.pk if resume else None
        )
    raise HarvestRunRefused(RUN_UNKNOWN_KIND.format(run=run.pk))


@transaction.atomic
def harvest_run_resume(*, run: HarvestRun) -> HarvestRun:
    """Queue a failed run to carry on from its cursor.

    The status moves ``failed`` -> ``running`` by compare-and-swap, so two operators
    clicking at once queue it once.

    Args:
        run: a failed run (files or OAI-PMH).

    Returns:
        The run, now ``running``; its task is queued when the transaction commits.

    Raises:
        HarvestRunRefused: the run is not failed, or holds no parameters to resume.
    """
    signature = _run_task(run, resume=True)
    changed = HarvestRun.objects.filter(
        pk=run.pk, status=HarvestRun.Status.FAILED
    ).update(status=HarvestRun.Status.RUNNING, error="", finished_at=None)
    if not changed:
        run.refresh_from_db()
        raise HarvestRunRefused(RUN_NOT_FAILED.format(run=run.pk, status=run.status))
    transaction.on_commit(signature.delay)
    run.refresh_from_db()
    return run


def harvest_run_repeat(*, run: HarvestRun) -> None:
    """Queue a new run asking what ``run`` asked (same folder, or same dates and set).

    Args:
        run: a finished or failed run.

    Raises:
        HarvestRunRefused: the run is still running, or holds no parameters.
    """
    if run.status == HarvestRun.Status.RUNNING:
        raise HarvestRunRefused(RUN_STILL_RUNNING.format(run=run.pk))
    _run_task(run, resume=False).delay()
