"""The locks a direct edit takes: the authorship and the researchers it
touches, ``FOR UPDATE``, in one order, with their revisions checked.
"""

from __future__ import annotations

from curation.changes import Change
from curation.exceptions import (
    CHANGED,
    ResearcherChanged,
)
from wovepaper.models import Authorship, Researcher


def _lock_authorship_and_researchers(
    change: Change,
    authorship: Authorship,
    *,
    extra: list[int] = (),
    live: bool = True,
) -> tuple[Authorship, dict[int, Researcher]]:
    """Lock researchers before the authorship, as every service does.

    One lock order everywhere (researchers by id, then authorships) is what keeps
    two curators from deadlocking; the authorship's researcher is read first
    without a lock and checked again once both are locked.

    Raises:
        ResearcherChanged: the authorship moved between the read and the lock.
    """
    seen = Authorship.objects.values_list("researcher_id", flat=True).get(
        pk=authorship.pk
    )
    locked = change.lock([r for r in (*extra, seen) if r], live=live)
    current = Authorship.objects.select_for_update().get(pk=authorship.pk)
    if current.researcher_id != seen:
        raise ResearcherChanged(
            CHANGED.format(pk=seen, field=f"authorship {current.pk} moved meanwhile")
        )
    return current, locked


def _check_revisions(
    researchers: dict[int, Researcher], expected: dict[int, int] | None
) -> None:
    """Refuse when a researcher changed since the curator looked at it."""
    for pk, revision in sorted((expected or {}).items()):
        now = researchers[pk].revision if pk in researchers else None
        if now is not None and now != revision:
            raise ResearcherChanged(
                CHANGED.format(pk=pk, field=f"revision {revision} is now {now}")
            )


def _locked_authorships(ids: list[int]) -> list[Authorship]:
    return list(
        Authorship.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    )
