"""Followers hear about curated changes to the researchers they follow."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.urls import reverse

from curation.models import CurationEvent, Proposal
from wovepaper import profile
from wovepaper.accounts import emailable
from wovepaper.models import Follow, Notification, Researcher

logger = logging.getLogger(__name__)

SUBJECTS = {
    CurationEvent.Kind.MERGED: "{name}: profiles merged",
    CurationEvent.Kind.SPLIT: "{name}: profile split",
    CurationEvent.Kind.UNDONE: "{name}: a curation change was undone",
    CurationEvent.Kind.RETIRED: "{name}: profile retired",
}
# An approved proposal, by its kind: a split proposal applied is a split to
# its followers ("papers added or profiles merged" over "4 authorship(s)
# left the profile" confused them: new-user trial).
PROPOSAL_SUBJECTS = {
    Proposal.Kind.ATTACH: "{name}: papers added",
    Proposal.Kind.NEW: "{name}: new profile",
    Proposal.Kind.MERGE: SUBJECTS[CurationEvent.Kind.MERGED],
    Proposal.Kind.SPLIT: SUBJECTS[CurationEvent.Kind.SPLIT],
}


def _subject(event: CurationEvent) -> str:
    """The subject template of an event's notifications (``{name}`` in it)."""
    if event.kind == CurationEvent.Kind.PROPOSAL_APPLIED and event.proposal_id:
        return PROPOSAL_SUBJECTS.get(event.proposal.kind, "{name}: profile changed")
    return SUBJECTS.get(event.kind, "{name}: profile changed")


# Said to followers of a retired profile an undo brought back.
RESTORED = "{name}: profile restored"


def _retired_change(event: CurationEvent, researcher: Researcher) -> list | None:
    """``[before, after]`` of ``researcher``'s ``retired`` in ``event``, or None."""
    mine = (event.fields or {}).get(str(researcher.pk), {})
    return mine.get("retired") if isinstance(mine, dict) else None


def _retires(event: CurationEvent, researcher: Researcher) -> bool:
    """Whether ``event`` retired ``researcher`` (a review's ``retired``
    event, or a move or detach that took its last paper): its followers'
    subject says so, not "profile changed" (a hostile trial)."""
    return _retired_change(event, researcher) == [False, True]


def _restores(event: CurationEvent, researcher: Researcher) -> bool:
    """Whether ``event`` (an undo) brought retired ``researcher`` back: its
    followers, told of the retirement, are told of this too."""
    return event.undoes_id is not None and _retired_change(event, researcher) == [
        True,
        False,
    ]


def _page(researcher_id: int) -> str:
    """The absolute URL of a researcher's page (``SITE_URL``; the id alone
    redirects to the canonical URL, and a merged-away one to its survivor)."""
    site = settings.SITE_URL.rstrip("/")
    return f"{site}{reverse('researcher-bare', kwargs={'pk': researcher_id})}"


def _describe(event: CurationEvent, researcher: Researcher) -> str:
    gained = sum(1 for m in event.moves if m["after"] == researcher.pk)
    lost = sum(1 for m in event.moves if m["before"] == researcher.pk)
    lines = [f"A curator changed the profile of {researcher.display_name}."]
    if gained:
        lines.append(f"{gained} authorship(s) joined the profile.")
    if lost:
        lines.append(f"{lost} authorship(s) left the profile.")
    gone_to = sorted(
        {m["after"] for m in event.moves if m["before"] == researcher.pk}
        - {None, researcher.pk}
    )
    pointer = (event.fields or {}).get(str(researcher.pk), {}).get("merged_into_id")
    if researcher.merged_into_id and isinstance(pointer, list) and pointer[0]:
        # Merged before, sent on by a split with the papers it brought.
        lines.append(
            f"Its papers went to researcher {researcher.merged_into_id}, and its "
            f"page now redirects there: {_page(researcher.merged_into_id)}"
        )
    elif researcher.merged_into_id:
        lines.append(
            f"The profile was merged into researcher {researcher.merged_into_id}; "
            f"its page now redirects there: {_page(researcher.merged_into_id)}"
        )
    elif researcher.retired:
        lines.append(
            f"The profile was retired ({profile.retired_why(researcher)}); its "
            f"page says where its papers are now: {_page(researcher.pk)}"
        )
    elif _restores(event, researcher):
        lines.append(
            "The profile is public again: a curator undid the change that "
            f"retired it. {_page(researcher.pk)}"
        )
    else:
        lines.append(f"The profile: {_page(researcher.pk)}")
        lines += [f"Papers that left it are now at: {_page(pk)}" for pk in gone_to]
    return "\n".join(lines)


def followers_notify(*, event_id: int) -> int:
    """Write one Notification per follower of each researcher the event changed.

    A user following several touched researchers gets one notification (about
    the first). An e-mail goes out (``EMAIL_BACKEND``; console by default) to
    followers with an address. Idempotent: the (user, event) pair is unique, so a
    redelivered task writes and sends nothing twice.

    Args:
        event_id: a CurationEvent id.

    Returns:
        The number of notifications written.
    """
    event = CurationEvent.objects.select_related("proposal").get(pk=event_id)
    template = _subject(event)
    found = Researcher.objects.in_bulk(event.researchers)
    touched = [found[pk] for pk in event.researchers if pk in found]
    written = 0
    seen: set[int] = set()
    # One query for whose address may be mailed, not one a follower.
    mailable = set(
        emailable(
            get_user_model().objects.filter(follows__researcher__in=touched)
        ).values_list("pk", flat=True)
    )
    for researcher in touched:
        follows = Follow.objects.filter(researcher=researcher).select_related("user")
        for follow in follows:
            if follow.user_id in seen:
                continue
            seen.add(follow.user_id)
            if _retires(event, researcher):
                subject = SUBJECTS[CurationEvent.Kind.RETIRED]
            elif _restores(event, researcher):
                subject = RESTORED
            else:
                subject = template
            subject = subject.format(name=researcher.display_name)[:300]
            body = _describe(event, researcher)
            try:
                with transaction.atomic():
                    note = Notification.objects.create(
                        user=follow.user,
                        researcher=researcher,
                        event_id=event.pk,
                        subject=subject,
                        body=body,
                    )
            except IntegrityError:
                continue  # sent by an earlier delivery of this task
            written += 1
            if follow.user.email and follow.user_id in mailable:
                send_mail(
                    subject,
                    body,
                    settings.DEFAULT_FROM_EMAIL,
                    [follow.user.email],
                    fail_silently=False,
                )
                Notification.objects.filter(pk=note.pk).update(emailed=True)
    logger.info(
        "event %s: %s notifications",
        event.pk,
        written,
        extra={"curation_event": event.pk, "notifications": written},
    )
    return written
