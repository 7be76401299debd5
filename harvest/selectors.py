"""Harvest reads."""

from __future__ import annotations

from datetime import date

from harvest.models import HarvestRun
from wovepaper.models import Authorship


def run_block_keys(*, run: HarvestRun) -> list[str]:
    """Block keys of the person authorships on papers a run created or changed.

    Args:
        run: a finished run.

    Returns:
        Sorted distinct block keys (empty when the run changed nothing).
    """
    if not (run.papers_created or run.papers_updated):
        return []
    return sorted(
        set(
            Authorship.objects.filter(
                paper__modified__gte=run.started_at, is_collaboration=False
            )
            .exclude(block_key="")
            .values_list("block_key", flat=True)
        )
    )


def run_of_task(*, source: str, task_id: str) -> HarvestRun | None:
    """The run a Celery task opened (its id in ``params["task"]``), or None.

    A task handed out again after its worker died carries the same id, so it
    finds the run to resume (:func:`harvest.services.harvest_arxiv_files`).
    """
    return (
        HarvestRun.objects.filter(source=source, params__task=task_id)
        .order_by("pk")
        .first()
    )


def live_next_from(*, source: str, mode: str, **same: str) -> date | None:
    """Where an incremental live harvest starts: the last finished run's ``until``.

    That day is asked again (``from`` is inclusive): records changed later on that
    day, after the run, are not missed, and the ones seen are not parsed again.

    Args:
        source: ``"arxiv"``, ``"crossref"``.
        mode: the run's ``params["mode"]`` (``"oai"``, ``"crossref"``).
        same: parameters that make a different list when they differ
            (``base_url``, ``metadata_prefix``, ``set``).

    Returns:
        The ``until`` date of the latest finished run of that list, or None when
        there is none.
    """
    run = (
        HarvestRun.objects.filter(
            source=source,
            status=HarvestRun.Status.FINISHED,
            params__mode=mode,
            **{f"params__{key}": value for key, value in same.items()},
        )
        .order_by("-params__until", "-pk")
        .first()
    )
    return date.fromisoformat(run.params["until"]) if run else None
