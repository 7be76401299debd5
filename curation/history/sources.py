"""The harvest's changes of curated slots, recorded as events of the source:
never undone by a curator, but seen in History.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from curation.exceptions import (
    SOURCE_NOT_UNDONE,
)
from curation.models import CurationEvent


def source_not_undone(event: CurationEvent) -> str:
    """Why a ``source`` event has no undo, naming its record."""
    record = event.extra.get("record") if isinstance(event.extra, dict) else ""
    return SOURCE_NOT_UNDONE.format(
        pk=event.pk,
        record=record if isinstance(record, str) and record else "its record",
    )


def record_source_changes(
    *,
    record: str,
    departed: list[tuple[int, int, str]],
    returned: list[tuple[int, int, str]],
    stayed_off: Sequence[tuple[int, int, str, str]] = (),
) -> list[CurationEvent]:
    """Write in the curation history what a new version of a record did to
    curated profiles, as no curator acted: slots that left its byline and took
    a paper off a researcher (their curation is kept as
    :class:`harvest.models.DepartedSlot`), and slots printed again that
    brought it back. One ``source`` event for each researcher and way
    (naming its own slots only), actor-less and never undone
    (:data:`curation.exceptions.SOURCE_NOT_UNDONE`); the History page gives
    its reason. Called by the harvest inside its transaction.

    Args:
        record: the record as curators know it ("arXiv:0704.0033",
            "doi:10.1103/...").
        departed: ``[(authorship id, researcher id, printed name)]`` of the
            rows the version deleted.
        returned: the same of the rows brought back to their researcher.
        stayed_off: ``[(authorship id, researcher id, printed name, why)]``
            of rows printed again whose researcher could not take them back:
            an event on it says so, and moves nothing.

    Returns:
        The events written (none when all three are empty); one query.
    """
    events = []
    for rows, leaving in ((departed, True), (returned, False)):
        by_researcher: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for pk, rid, name in rows:
            by_researcher[rid].append((pk, name))
        for rid, slots in sorted(by_researcher.items()):
            names = " and ".join(f"“{name}”" for _, name in slots)
            reason = (
                f"a new version of {record} no longer prints {names} there: the "
                "paper left the profile, and comes back when the source prints "
                "the name again"
                if leaving
                else f"a new version of {record} prints {names} again: the paper "
                "came back to the profile with its curation"
            )
            moves = [
                {
                    "authorship": pk,
                    "before": rid if leaving else None,
                    "after": None if leaving else rid,
                }
                for pk, _ in slots
            ]
            events.append(_source_event(rid, record, reason, moves))
    for pk, rid, name, why in stayed_off:
        reason = (
            f"a new version of {record} prints “{name}” again, but the paper did "
            f"not come back to the profile: {why}; authorship {pk} is on no "
            "researcher"
        )
        events.append(_source_event(rid, record, reason))
    return CurationEvent.objects.bulk_create(events)


def _source_event(
    researcher_id: int, record: str, reason: str, moves: list[dict] | None = None
) -> CurationEvent:
    """An unsaved actor-less ``source`` event on one researcher."""
    return CurationEvent(
        kind=CurationEvent.Kind.SOURCE,
        researchers=[researcher_id],
        moves=moves or [],
        extra={"record": record, "reason": reason},
    )


def record_source_hiding(
    *, record: str, researcher_ids: Iterable[int], hidden: bool
) -> list[CurationEvent]:
    """Write in the History of each researcher holding a slot of a paper that
    its source deleted the record (the paper is hidden: it leaves every page,
    search and feed) or sent it again (the paper shows again). One actor-less
    ``source`` event a researcher, moving nothing (the slots stay assigned);
    never undone, as :func:`record_source_changes`.

    Args:
        record: the record as curators know it ("arXiv:0704.0033").
        researcher_ids: the researchers holding a slot of the paper.
        hidden: True for a deletion, False for the record sent again.

    Returns:
        The events written; one query.
    """
    reason = (
        f"the source deleted {record}: the paper is hidden, off the profile's "
        "pages, and shows again if the source sends the record again"
        if hidden
        else f"the source sent {record} again: the paper shows on the profile again"
    )
    return CurationEvent.objects.bulk_create(
        _source_event(rid, record, reason) for rid in sorted(set(researcher_ids))
    )
