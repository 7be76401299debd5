"""Celery tasks of harvest: thin, idempotent, each calls one service."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path

from celery import shared_task
from django.conf import settings
from django.db import transaction

from harvest import selectors, services
from harvest.models import HarvestRun
from wovepaper.celery import TRANSIENT
from wovepaper.tasks import embeddings_refresh_task

# Redelivered after its worker died, or retried after the database connection
# dropped (wovepaper.celery.TRANSIENT; backoff 2 s doubling to 300 s, 8 tries).
_RETRIED = {
    "bind": True,
    "acks_late": True,
    "autoretry_for": TRANSIENT,
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "max_retries": 8,
}


def _counts(run: HarvestRun, then_match: bool) -> dict[str, int | str]:
    """The run's counts, after queueing matching of the blocks it touched.

    Embedding of the papers the run created or changed is queued the same way
    (``settings.EMBED_AFTER_HARVEST``; :func:`wovepaper.semantic.embeddings_refresh`
    skips those whose text did not change).

    Matching is queued once the run has committed (incremental matching after
    each harvest: attaches and new researchers, no merges), unless
    ``then_match`` is false.
    """
    from curation.tasks import matching_run_task

    blocks = selectors.run_block_keys(run=run) if then_match else []
    matching_id = ""
    if blocks:
        matching_id = str(uuid.uuid4())
        transaction.on_commit(
            lambda: matching_run_task.apply_async(
                kwargs={"block_keys": blocks, "merges": False}, task_id=matching_id
            )
        )
    embedding_id = ""
    if settings.EMBED_AFTER_HARVEST and (run.papers_created or run.papers_updated):
        embedding_id = str(uuid.uuid4())
        since = run.started_at.isoformat()
        transaction.on_commit(
            lambda: embeddings_refresh_task.apply_async(
                kwargs={"changed_since": since}, task_id=embedding_id
            )
        )
    return {
        "run": run.pk,
        "status": run.status,
        "seen": run.records_seen,
        "created": run.papers_created,
        "updated": run.papers_updated,
        "unchanged": run.papers_unchanged,
        "failed": run.records_failed,
        "blocks_queued": len(blocks),
        "matching_task": matching_id,
        "embedding_task": embedding_id,
    }


def _harvest(task, harvest, run_id: int | None, **asked) -> HarvestRun:
    """Run a harvest service for a task: the run ``run_id`` resumed when given,
    the task's id passed on (a redelivered task finds its own run)."""
    return harvest(
        run=HarvestRun.objects.get(pk=run_id) if run_id else None,
        task_id=task.request.id or "",
        **asked,
    )


def _live(
    task, harvest, from_date: str, until_date: str, run_id: int | None, **asked
) -> HarvestRun:
    """Run a live harvest service for a task (:func:`_harvest`), ISO dates parsed."""
    return _harvest(
        task,
        harvest,
        run_id,
        from_date=dt.date.fromisoformat(from_date) if from_date else None,
        until_date=dt.date.fromisoformat(until_date) if until_date else None,
        **asked,
    )


@shared_task(name="harvest.arxiv_files", **_RETRIED)
def harvest_arxiv_files_task(
    self, root: str, run_id: int | None = None, then_match: bool = True
) -> dict[str, int | str]:
    """Harvest arXiv files under ``root`` (resuming run ``run_id`` if given).

    A redelivered or retried task resumes its own run from the cursor (the run
    records the task id; :func:`harvest.services.harvest_arxiv_files`).

    Returns:
        The run's counts (see :func:`_counts`): ``run``, ``status``, ``seen``,
        ``created``, ``updated``, ``unchanged``, ``failed``, ``blocks_queued``,
        ``matching_task`` (the queued matching task's id, or "").
    """
    run = _harvest(self, services.harvest_arxiv_files, run_id, root=Path(root))
    return _counts(run, then_match)


@shared_task(name="harvest.arxiv_oai", **_RETRIED)
def harvest_arxiv_oai_task(
    self,
    from_date: str = "",
    until_date: str = "",
    set_spec: str = "",
    metadata_prefix: str = "arXiv",
    base_url: str = "",
    run_id: int | None = None,
    then_match: bool = True,
) -> dict[str, int | str]:
    """Harvest arXiv's OAI-PMH endpoint (``settings.ARXIV_OAI_URL``).

    With no dates (the beat schedule), the run is incremental: from the last
    finished run's ``until`` to today. With ``run_id`` it resumes that run. A
    source unavailable past its retry budget ends the run ``failed`` with the
    reason (not a task error); the next run, or a resume, picks it up.

    Args:
        from_date, until_date: ISO dates (``"2026-11-29"``), "" for the defaults.
        set_spec: an OAI set (``"cs"``), "" for all of arXiv.
        metadata_prefix: ``"arXiv"`` or ``"oai_dc"``.
        base_url: the OAI-PMH endpoint, "" for ``settings.ARXIV_OAI_URL``.
        run_id: a run to resume.
        then_match: queue matching of the touched blocks afterwards.

    Returns:
        The run's counts (see :func:`_counts`).
    """
    run = _live(
        self,
        services.harvest_arxiv_oai,
        from_date,
        until_date,
        run_id,
        set_spec=set_spec,
        metadata_prefix=metadata_prefix,
        base_url=base_url,
    )
    return _counts(run, then_match)


@shared_task(name="harvest.files", **_RETRIED)
def harvest_files_task(
    self, source: str, root: str, run_id: int | None = None, then_match: bool = True
) -> dict[str, int | str]:
    """Harvest ``source``'s files under ``root`` (:func:`services.harvest_files`).

    Args:
        source: ``"arxiv"`` or ``"crossref"``.
        root: a folder or a file.
        run_id: a run to resume.
        then_match: queue matching of the touched blocks afterwards.

    Returns:
        The run's counts (see :func:`_counts`).
    """
    run = _harvest(self, services.harvest_files, run_id, source=source, root=Path(root))
    return _counts(run, then_match)


@shared_task(name="harvest.crossref", **_RETRIED)
def harvest_crossref_task(
    self,
    from_date: str = "",
    until_date: str = "",
    extra_filter: str = "",
    base_url: str = "",
    run_id: int | None = None,
    then_match: bool = True,
) -> dict[str, int | str]:
    """Harvest Crossref works indexed between two days (``CROSSREF_WORKS_URL``).

    With no dates (the beat schedule) the run is incremental, from the last
    finished run's ``until`` to today; with ``run_id`` it resumes that run. A
    source unavailable past its retry budget ends the run ``failed`` with the
    reason (:func:`harvest.services.harvest_crossref`). ``extra_filter`` narrows
    the list (``"type:journal-article,prefix:10.1103"``).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    run = _live(
        self,
        services.harvest_crossref,
        from_date,
        until_date,
        run_id,
        extra_filter=extra_filter,
        base_url=base_url,
    )
    return _counts(run, then_match)


@shared_task(name="harvest.openalex", **_RETRIED)
def harvest_openalex_task(
    self,
    from_date: str = "",
    until_date: str = "",
    extra_filter: str = "",
    base_url: str = "",
    run_id: int | None = None,
    then_match: bool = True,
) -> dict[str, int | str]:
    """Harvest OpenAlex works updated between two days (``OPENALEX_WORKS_URL``).

    With no dates the run is incremental; with ``run_id`` it resumes that run
    (:func:`harvest.services.harvest_openalex`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    run = _live(
        self,
        services.harvest_openalex,
        from_date,
        until_date,
        run_id,
        extra_filter=extra_filter,
        base_url=base_url,
    )
    return _counts(run, then_match)


@shared_task(name="harvest.s2_backfill", **_RETRIED)
def harvest_s2_backfill_task(
    self,
    limit: int | None = None,
    base_url: str = "",
    run_id: int | None = None,
    then_match: bool = True,
) -> dict[str, int | str]:
    """Look up in Semantic Scholar the papers without an S2 id
    (:func:`harvest.services.harvest_s2_backfill`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    run = _harvest(
        self, services.harvest_s2_backfill, run_id, limit=limit, base_url=base_url
    )
    return _counts(run, then_match)


@shared_task(name="harvest.arxiv_ids", **_RETRIED)
def harvest_arxiv_ids_task(
    self,
    ids: list[str] | None = None,
    base_url: str = "",
    run_id: int | None = None,
    then_match: bool = True,
) -> dict[str, int | str]:
    """Fetch arXiv papers by id from the arXiv API
    (:func:`harvest.services.harvest_arxiv_ids`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    run = _harvest(self, services.harvest_arxiv_ids, run_id, ids=ids, base_url=base_url)
    return _counts(run, then_match)


@shared_task(name="harvest.crossref_dois", **_RETRIED)
def harvest_crossref_dois_task(
    self,
    dois: list[str] | None = None,
    base_url: str = "",
    run_id: int | None = None,
    then_match: bool = True,
) -> dict[str, int | str]:
    """Look works up in Crossref by DOI
    (:func:`harvest.services.harvest_crossref_dois`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    run = _harvest(
        self, services.harvest_crossref_dois, run_id, dois=dois, base_url=base_url
    )
    return _counts(run, then_match)


@shared_task(name="harvest.s2_papers", **_RETRIED)
def harvest_s2_papers_task(
    self,
    ids: list[str] | None = None,
    base_url: str = "",
    run_id: int | None = None,
    then_match: bool = True,
) -> dict[str, int | str]:
    """Look papers up in Semantic Scholar by id
    (:func:`harvest.services.harvest_s2_papers`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    run = _harvest(self, services.harvest_s2_papers, run_id, ids=ids, base_url=base_url)
    return _counts(run, then_match)


def _lookup(task, harvest, ids, limit, base_url, run_id) -> dict[str, int | str]:
    """Run a lookup by id (or its backfill) for a task; no matching is queued:
    profiles and institutions change no byline but the merged ids they move."""
    run = _harvest(task, harvest, run_id, ids=ids, limit=limit, base_url=base_url)
    return _counts(run, False)


@shared_task(name="harvest.openalex_authors", **_RETRIED)
def harvest_openalex_authors_task(
    self,
    ids: list[str] | None = None,
    limit: int | None = None,
    base_url: str = "",
    run_id: int | None = None,
) -> dict[str, int | str]:
    """Fetch OpenAlex author profiles, by id or every one byline slots carry
    without a profile (:func:`harvest.services.harvest_openalex_authors`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    return _lookup(
        self, services.harvest_openalex_authors, ids, limit, base_url, run_id
    )


@shared_task(name="harvest.s2_authors", **_RETRIED)
def harvest_s2_authors_task(
    self,
    ids: list[str] | None = None,
    limit: int | None = None,
    base_url: str = "",
    run_id: int | None = None,
) -> dict[str, int | str]:
    """Fetch Semantic Scholar author profiles
    (:func:`harvest.services.harvest_s2_authors`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    return _lookup(self, services.harvest_s2_authors, ids, limit, base_url, run_id)


@shared_task(name="harvest.ror_ids", **_RETRIED)
def harvest_ror_ids_task(
    self,
    ids: list[str] | None = None,
    limit: int | None = None,
    base_url: str = "",
    run_id: int | None = None,
) -> dict[str, int | str]:
    """Look organisations up in ROR, by id or every Institution ROR has not
    described yet (:func:`harvest.services.harvest_ror_ids`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    return _lookup(self, services.harvest_ror_ids, ids, limit, base_url, run_id)


@shared_task(name="harvest.openalex_institutions", **_RETRIED)
def harvest_openalex_institutions_task(
    self,
    ids: list[str] | None = None,
    limit: int | None = None,
    base_url: str = "",
    run_id: int | None = None,
) -> dict[str, int | str]:
    """Fill institutions from OpenAlex by ROR id
    (:func:`harvest.services.harvest_openalex_institutions`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    return _lookup(
        self, services.harvest_openalex_institutions, ids, limit, base_url, run_id
    )


@shared_task(name="harvest.s2_author_papers", **_RETRIED)
def harvest_s2_author_papers_task(
    self,
    author_id: str = "",
    base_url: str = "",
    run_id: int | None = None,
    then_match: bool = True,
) -> dict[str, int | str]:
    """Fetch every paper Semantic Scholar attributes to one author
    (:func:`harvest.services.harvest_s2_author_papers`).

    Returns:
        The run's counts (see :func:`_counts`).
    """
    run = _harvest(
        self,
        services.harvest_s2_author_papers,
        run_id,
        author_id=author_id,
        base_url=base_url,
    )
    return _counts(run, then_match)
