"""A proposal's review page: what it shows (the sides, the evidence, the
actions a curator may take), approve-and-next, and one decision taken.
"""

from __future__ import annotations

from django.contrib import messages
from django.db.models import QuerySet
from django.http import (
    HttpResponseRedirect,
)
from django.urls import reverse

from curation import block_review, selectors, services
from curation.models import Proposal


def _review(proposal: Proposal) -> dict:
    """The side-by-side context of the review page: one dossier per researcher."""
    moving = [a.pk for a in proposal.authorships.all()]
    sides = []
    if proposal.researcher_id:
        title = {
            Proposal.Kind.MERGE: "survives",
            Proposal.Kind.SPLIT: "to split",
        }.get(proposal.kind, "receives the authorships")
        sides.append(
            (
                title,
                selectors.researcher_dossier(
                    proposal.researcher, limit=25, highlight=moving
                ),
            )
        )
    if proposal.other_researcher_id:
        title = "merged into it" if proposal.kind == "merge" else "split off into"
        sides.append(
            (title, selectors.researcher_dossier(proposal.other_researcher, limit=25))
        )
    incoming = []
    if proposal.kind in (Proposal.Kind.ATTACH, Proposal.Kind.NEW):
        incoming = selectors.incoming_papers(
            proposal.authorships.select_related("paper", "researcher").order_by(
                "-paper__published", "pk"
            )
        )
    return {
        "sides": sides,
        "incoming": incoming,
        "moving_ids": set(moving),
        "is_split": proposal.kind == Proposal.Kind.SPLIT,
    }


def _block_url(block_key: str) -> str:
    return reverse("admin:curation_proposal_block", args=[block_key])


def _review_permissions(review: block_review.Review) -> list[str]:
    """What a block review needs of its curator: to decide proposals, to move
    papers, to split them off into a new profile, to merge profiles: the
    permissions of the admin's own pages for each (a hostile trial merged
    with the decide permission alone)."""
    needed = ["curation.decide_proposal"] if review.decisions else []
    if any(target != block_review.NEW for target in review.moves.values()):
        needed.append("wovepaper.move_authorship")
    if block_review.NEW in review.moves.values():
        needed += ["wovepaper.split_researcher", "wovepaper.move_authorship"]
    if review.merges:
        needed.append("wovepaper.merge_researcher")
    return needed or ["curation.decide_proposal"]


# The block page's "approve the waiting ones, apply, next block" button.
APPROVE_NEXT = "approve-next"


def _review_of(post) -> tuple[block_review.Review, list[int]] | None:
    """The Review a block page posted: ``decision-<proposal>`` (approve,
    reject, wait), ``move-<authorship>`` (a researcher id, ``new`` or empty),
    with ``on-<authorship>`` (the researcher whose list shows it; optional),
    ``tick-<authorship>`` (the id of the researcher whose list shows it) with
    that researcher's ``move-ticked-<researcher>`` (a researcher id, ``new``
    or empty: every ticked paper of the profile moves there),
    ``merge-a-<n>`` with ``merge-b-<n>`` (two researcher ids),
    ``one-person`` (the researcher ids of profiles ticked as one person,
    two or more: merged into one), ``reason``, and ``then``: with
    ``approve-next``, every proposal the page showed and the curator left
    waiting is approved ("approve and next": the matcher's proposals as
    shown, after the curator's corrections). None when a value is none of
    those (an id is written as the page writes it: no leading zero), half a
    merge is given, a single profile is ticked as one person, or a paper is
    moved both by its own menu and by its tick to two places. A ticked
    paper's profile is kept (``shown_on``), so a stale page is refused.

    Returns:
        ``(the review, the authorships ticked on a profile whose "move the
        ticked papers" menu chose no place, ascending)``, or None.
    """
    review = block_review.Review(reason=post.get("reason", "")[:2000])
    approve_rest = post.get("then") == APPROVE_NEXT

    def number(text: str) -> int | None:
        # Written as the page writes ids: "050" is no second name of field 50.
        whole = text.isascii() and text.isdigit() and len(text) <= 18
        return int(text) if whole and text == str(int(text)) else None

    for key in post:
        if (
            key.startswith(("decision-", "move-", "merge-", "tick-", "on-"))
            and len(post.getlist(key)) > 1
        ):
            return None  # one field twice: which one was meant?
    for key, value in post.items():
        if key.startswith("decision-"):
            pk = number(key.removeprefix("decision-"))
            if pk is None or value not in ("approve", "reject", "wait"):
                return None
            if value != "wait" or approve_rest:
                review.decisions[pk] = value != "reject"
            if value == "wait" and approve_rest:
                review.if_waiting.add(pk)
        elif key.startswith("move-ticked-"):
            continue  # read with the ticks below
        elif key.startswith("move-") and value:
            pk = number(key.removeprefix("move-"))
            target = block_review.NEW if value == block_review.NEW else number(value)
            shown = post.get(f"on-{pk}", "")
            if pk is None or target is None or (shown and number(shown) is None):
                return None
            review.moves[pk] = target
            if shown:
                review.shown_on[pk] = number(shown)
        elif key.startswith("merge-b-") and value:
            if not post.get("merge-a-" + key.removeprefix("merge-b-"), ""):
                return None  # half a merge: with whom?
        elif key.startswith("merge-a-") and value:
            other = post.get("merge-b-" + key.removeprefix("merge-a-"), "")
            a, b = number(value), number(other)
            if a is None or b is None:
                return None
            if a != b:
                review.merges.append((a, b))
    one_person = [number(value) for value in post.getlist("one-person")]
    if None in one_person or len(set(one_person)) == 1:
        return None  # a profile is one person with which other?
    ticked = sorted(set(one_person))
    review.merges += [(ticked[0], other) for other in ticked[1:]]
    nowhere: list[int] = []
    for key, value in post.items():
        if not key.startswith("tick-"):
            continue
        pk, holder = number(key.removeprefix("tick-")), number(value)
        if pk is None or holder is None:
            return None
        chosen = post.get(f"move-ticked-{holder}", "")
        if not chosen:
            nowhere.append(pk)
            continue
        target = block_review.NEW if chosen == block_review.NEW else number(chosen)
        if target is None or review.moves.get(pk, target) != target:
            return None
        if review.shown_on.get(pk, holder) != holder:
            return None
        review.moves[pk] = target
        review.shown_on[pk] = holder
    return review, sorted(nowhere)


def _decide(
    modeladmin, request, queryset: QuerySet[Proposal], approve: bool
) -> HttpResponseRedirect:
    """Decide the selected proposals as one bulk action with one ``batch``
    event, run by a worker (:func:`curation.services.bulk_decide_start`):
    the request returns at once, to the action's progress page."""
    ids = list(queryset.order_by("pk").values_list("pk", flat=True))
    if not ids:
        modeladmin.message_user(
            request, "None of the selected proposals is in this list.", messages.WARNING
        )
        return HttpResponseRedirect(request.get_full_path())
    batch = services.bulk_decide_start(
        proposal_ids=ids, approve=approve, actor=request.user
    )
    return HttpResponseRedirect(
        reverse("admin:curation_curationevent_progress", args=[batch.pk])
    )
