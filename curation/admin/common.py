"""What the curators' admin actions share: one service call per object, one message."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.contrib import messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.http import HttpResponseBadRequest

from curation.exceptions import CurationError


def each_object(
    objects: Iterable[Any], service: Callable[[Any], Any]
) -> tuple[int, list[str]]:
    """Call ``service`` once per object; a refusal skips that object only.

    Returns:
        ``(done, skipped)``: how many succeeded, and each refusal's message.
    """
    done, skipped = 0, []
    for obj in objects:
        try:
            service(obj)
            done += 1
        except CurationError as exc:
            skipped.append(str(exc))
    return done, skipped


def report(
    modeladmin, request, done: int, skipped: list[str], verb: str, suffix: str = ""
) -> None:
    """One message "N <verb>, M skipped (reasons)", as Django's delete_selected says."""
    text = f"{done} {verb}, {len(skipped)} skipped"
    if skipped:
        text += " (" + "; ".join(skipped[:10]) + ")"
    modeladmin.message_user(
        request, text + suffix, messages.WARNING if skipped else messages.SUCCESS
    )


class SafeActionsMixin:
    """Answer 400, not 500, when an action's selected ids are not whole numbers."""

    def changelist_view(self, request, extra_context=None):
        if request.method == "POST":
            ids = request.POST.getlist(ACTION_CHECKBOX_NAME)
            if any(not (v.isascii() and v.isdigit() and len(v) <= 18) for v in ids):
                return HttpResponseBadRequest("selected ids must be whole numbers")
        return super().changelist_view(request, extra_context)
