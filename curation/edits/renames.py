"""A profile named after its papers keeps a name they print: when a curator
moves papers off it (a review that swaps the papers of two profiles, a
*Move…* or *Not this person…* of the papers that printed its name), it takes
the fullest name its papers print now, as a split's source does
(:func:`curation.edits.steps.split_off`). A name none of its papers printed
before is a curator's choice, and stays.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser

from curation import names
from curation.changes import Change
from curation.edits.steps import display_name_of
from curation.models import CurationEvent
from wovepaper.models import Authorship, Researcher
from wovepaper.text import slug_for

# Said on the event of a profile renamed after its papers.
RENAMED = "its papers print another name now"


def named_by_their_papers(researcher_ids: Iterable[int]) -> set[int]:
    """Those of ``researcher_ids`` whose display name one of their papers
    prints (:func:`curation.names.display_name_fits`). Two queries.

    Args:
        researcher_ids: researcher ids.

    Returns:
        The ids named after their papers.
    """
    ids = set(researcher_ids)
    printed: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for pk, given, family in Authorship.objects.filter(
        researcher_id__in=ids
    ).values_list("researcher_id", "given_name", "family_name"):
        printed[pk].append((given, family))
    return {
        pk
        for pk, display in Researcher.objects.filter(pk__in=ids).values_list(
            "pk", "display_name"
        )
        if printed[pk] and names.display_name_fits(display, printed[pk])
    }


def renamed_after_papers(researcher: Researcher) -> dict[str, str]:
    """The fields that name ``researcher`` after the papers it holds now
    (:func:`display_name_of`): ``display_name``, ``slug`` and ``block_key``;
    empty when it holds none or its name fits them."""
    held = list(Authorship.objects.filter(researcher=researcher).order_by("pk"))
    printed = [(a.given_name, a.family_name) for a in held]
    if not held or names.display_name_fits(researcher.display_name, printed):
        return {}
    display, given, family = display_name_of(held)
    return {
        "display_name": display,
        "slug": slug_for(display, fallback="researcher"),
        "block_key": names.block_key(given, family),
    }


def researchers_renamed(
    *, named: set[int], actor: AbstractBaseUser, batch: CurationEvent | None
) -> list[CurationEvent]:
    """Rename, each in an ``edited`` event of its own (in ``batch``), those
    of ``named`` (named after their papers before a review's steps) that
    are live and whose papers no longer print their name.

    Args:
        named: researcher ids, from :func:`named_by_their_papers` before.
        actor: the curator.
        batch: the review's ``batch`` event.

    Returns:
        The events, one a researcher renamed, in id order.
    """
    events = []
    for pk in sorted(named - named_by_their_papers(named)):
        change = Change(actor=actor)
        researcher = change.lock([pk], live=False)[pk]
        if researcher.retired or researcher.merged_into_id:
            continue
        fields = renamed_after_papers(researcher)
        if not fields:
            continue
        change.set(researcher, **fields)
        events.append(
            change.commit(
                kind=CurationEvent.Kind.EDITED, batch=batch, extra={"renamed": RENAMED}
            )
        )
    return events
