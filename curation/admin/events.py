"""The curation audit log: read-only rows, each with an undo confirmation page."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from curation.exceptions import CurationError
from curation.history import (
    batch_to_undo,
    batch_undo,
    batch_undo_start,
    bulk_in_force,
    decision_after_undo,
    event_undo,
    is_review_batch,
    source_not_undone,
    undo_all_asked,
    undo_all_offered,
    undo_preview,
    undo_refusal,
    undo_would_forbid,
    undone_merge_pairs,
    unreadable,
)
from curation.models import Constraint, CurationEvent
from wovepaper.admin import ReadOnlyAdmin
from wovepaper.models import Authorship
from wovepaper.text import latex_to_text

# Items of a list in an event's extra shown on its admin page.
EXTRA_LIST_SHOWN = 20
# The changes of a bulk action its Undo all… page links.
BULK_UNDO_LISTED = 50

# Said of an authorship an event moved that no longer exists.
GONE_SINCE = (
    " (no longer exists: a newer version of its paper dropped this byline slot;"
    " an undo leaves it out)"
)


def _gone_text(gone: list[int]) -> str:
    """Says which moved authorships no longer exist (``gone``: their ids)."""
    verb = "no longer exists" if len(gone) == 1 else "no longer exist"
    return (
        f"{len(gone)} {verb} (a newer version of the paper dropped "
        f"{'it' if len(gone) == 1 else 'them'}: {', '.join(map(str, gone))})"
    )


def describe_moves(
    event: CurationEvent,
    limit: int = 12,
    *,
    inverse: bool = False,
    titles: dict[int, str] | None = None,
) -> list[str]:
    """Plain-language lines for an event's moves: "authorship 5: researcher 3 → 7".

    Args:
        event: the event.
        limit: lines at most (then "… and N more").
        inverse: the moves an undo makes (after → before).
        titles: ``{authorship id: "name on paper title"}`` to name them.
    """

    def who(pk):
        return f"researcher {pk}" if pk else "unassigned"

    pairs = [
        (m["authorship"], m["after"], m["before"])
        if inverse
        else (m["authorship"], m["before"], m["after"])
        for m in event.moves[:limit]
    ]
    titles = titles or {}
    lines = [
        f"authorship {a}{titles.get(a, '')}: {who(x)} → {who(y)}" for a, x, y in pairs
    ]
    if len(event.moves) > limit:
        lines.append(f"… and {len(event.moves) - limit} more")
    return lines


def describe_fields(event: CurationEvent, *, inverse: bool = False) -> list[str]:
    """Plain-language lines for an event's field changes (``inverse``: its undo's)."""
    lines = []
    for pk, fields in sorted(event.fields.items(), key=lambda kv: int(kv[0])):
        for field, (before, after) in sorted(fields.items()):
            if inverse:
                before, after = after, before
            if field == "name_variants":
                continue
            if field == "retired":
                lines.append(
                    f"researcher {pk} "
                    + (
                        "is retired: emptied, hidden from lists, kept for its history"
                        if after
                        else "comes into being (or back)"
                    )
                )
                continue
            if field == "merged_into_id":
                lines.append(
                    f"researcher {pk} "
                    + (
                        f"is merged into researcher {after}"
                        if after
                        else "is live again"
                    )
                )
                continue
            lines.append(f"researcher {pk} {field}: {before!r} → {after!r}")
    return lines


def _titles(event: CurationEvent, limit: int) -> dict[int, str]:
    """``{authorship id: ' (name on “title”)'}`` for the first moves of an event;
    an authorship deleted since is said to be gone (an undo leaves it out,
    :func:`curation.history.event_undo`)."""
    ids = [m["authorship"] for m in event.moves[:limit]]
    rows = Authorship.objects.filter(pk__in=ids).values_list(
        "pk", "raw_name", "paper__title"
    )
    found = {
        pk: f" ({name} on “{latex_to_text(title)[:90]}”)" for pk, name, title in rows
    }
    return {pk: found.get(pk, GONE_SINCE) for pk in ids}


@admin.register(CurationEvent)
class CurationEventAdmin(ReadOnlyAdmin):
    """The audit log, read-only; a state-changing event can be undone."""

    list_display = (
        "id",
        "kind",
        "who",
        "proposal",
        "researchers",
        "moved",
        "batch",
        "undoes",
        "created",
    )
    list_filter = ("kind",)
    list_select_related = ("actor", "proposal", "batch", "undoes")
    search_fields = ("=id", "=proposal__id", "actor__username")
    readonly_fields = (
        "kind",
        "who",
        "proposal",
        "undoes",
        "batch",
        "researchers",
        "what_changed",
        "batch_members",
        "undo_all_shown",
        "extra_shown",
        "created",
    )
    exclude = ("moves", "fields", "constraints_on", "constraints_off", "extra")
    change_form_template = "admin/curation/curationevent/change_form.html"

    @admin.display(description="moved")
    def moved(self, obj: CurationEvent) -> int:
        return len(obj.moves)

    @admin.display(description="actor", ordering="actor")
    def who(self, obj: CurationEvent) -> str:
        """The curator, or who acted without one: the source (a new version
        of a record), the matcher (the auto-apply policy, whose events say
        so) or automation (events from before the matcher named itself)."""
        if obj.actor_id:
            return str(obj.actor)
        if obj.kind == CurationEvent.Kind.SOURCE:
            return "the source"
        extra = obj.extra if isinstance(obj.extra, dict) else {}
        return "the matcher" if extra.get("by") == "the matcher" else "automation"

    @admin.display(description="undo all")
    def undo_all_shown(self, obj: CurationEvent) -> str:
        """How a bulk action's *Undo all…* went (``extra["undo_all"]``:
        :func:`curation.history.batch_undo_start`), linked to its undo."""
        asked = undo_all_asked(obj)
        if not asked:
            return ""
        state = asked.get("state")
        if state == "done" and isinstance(asked.get("undo"), int):
            return format_html(
                'undone whole by <a href="{}">batch #{}</a>',
                reverse("admin:curation_curationevent_change", args=[asked["undo"]]),
                asked["undo"],
            )
        if state in ("refused", "failed"):
            return f"{state}, nothing undone: {asked.get('reason', '')}"
        return "queued: a worker is undoing it" if state == "queued" else repr(asked)

    @admin.display(description="extra")
    def extra_shown(self, obj: CurationEvent) -> str:
        """The event's extra JSON, a long list of ids (a merge's ``kept``:
        every authorship its survivor held) cut to its first
        :data:`EXTRA_LIST_SHOWN` with the count."""
        extra = obj.extra
        if not isinstance(extra, dict):
            return repr(extra)
        return repr(
            {
                key: [*value[:EXTRA_LIST_SHOWN], f"… {len(value):,} in all"]
                if isinstance(value, list) and len(value) > EXTRA_LIST_SHOWN
                else value
                for key, value in extra.items()
            }
        )

    @admin.display(description="what changed")
    def what_changed(self, obj: CurationEvent) -> str:
        problem = unreadable(obj)
        if problem:
            return f"The record cannot be read: it was edited by hand and {problem}."
        lines = describe_moves(obj, limit=200) + describe_fields(obj)
        lines += [f"constraint {c} made" for c in obj.constraints_on]
        lines += [f"constraint {c} retired" for c in obj.constraints_off]
        return format_html(
            "<ul>{}</ul>", format_html_join("", "<li>{}</li>", ((x,) for x in lines))
        )

    @admin.display(description="decisions in this bulk action")
    def batch_members(self, obj: CurationEvent) -> str:
        return event_links(
            obj.batch_events.order_by("pk"), lambda e: f": proposal {e.proposal_id}"
        )

    def render_change_form(self, request, context, *args, **kwargs):
        obj = context.get("original")
        context["can_undo"] = bool(
            obj
            and (
                (obj.changes_state and not obj.undone_by.exists())
                or undo_all_offered(obj)
            )
            and request.user.has_perm("curation.undo_curationevent")
        )
        return super().render_change_form(request, context, *args, **kwargs)

    def get_urls(self):
        return [
            path(
                "<int:pk>/undo/",
                self.admin_site.admin_view(self.undo_view),
                name="curation_curationevent_undo",
            ),
            path(
                "<int:pk>/progress/",
                self.admin_site.admin_view(self.progress_view),
                name="curation_curationevent_progress",
            ),
            *super().get_urls(),
        ]

    # Seconds between two reloads of a running bulk action's progress page.
    PROGRESS_REFRESH = 2

    def progress_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """A bulk action's progress (its ``batch`` event): done, skipped and
        failed of how many, with the reasons; it reloads itself every
        :attr:`PROGRESS_REFRESH` seconds until the worker is done
        (:func:`curation.services.bulk_decide_run`)."""
        batch = get_object_or_404(CurationEvent, pk=pk, kind=CurationEvent.Kind.BATCH)
        # Its curator follows it without the event log's permission (a
        # hostile trial: the action ran, then its page answered 403).
        if not (self.has_view_permission(request) or batch.actor_id == request.user.pk):
            raise PermissionDenied
        extra = batch.extra if isinstance(batch.extra, dict) else {}
        state = extra.get("state", "done")
        context = {
            **self.admin_site.each_context(request),
            "title": f"Bulk action #{batch.pk}",
            "batch": batch,
            "state": state,
            "verb": extra.get("verb", "decided"),
            "total": extra.get("total", len(extra.get("proposals", []))),
            "done": extra.get("done", 0),
            "skipped": extra.get("skipped", []),
            "failed": extra.get("failed", []),
            "skipped_count": extra.get("skipped_count", len(extra.get("skipped", []))),
            "failed_count": extra.get("failed_count", len(extra.get("failed", []))),
            "refresh": self.PROGRESS_REFRESH if state != "done" else None,
            "undo_all": state == "done"
            and not is_review_batch(batch)
            and "proposals" in extra
            and request.user.has_perm("curation.undo_curationevent")
            and undo_all_offered(batch),
        }
        return TemplateResponse(
            request, "admin/curation/curationevent/progress.html", context
        )

    def undo_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Confirmation page, then :func:`curation.history.event_undo` on POST."""
        if not request.user.has_perm("curation.undo_curationevent"):
            raise PermissionDenied
        event = get_object_or_404(CurationEvent, pk=pk)
        back = request.POST.get("next") or request.GET.get("next") or ""
        if not back.startswith("/admin/"):
            back = reverse("admin:curation_curationevent_change", args=[pk])
        if event.kind == CurationEvent.Kind.SOURCE:
            # No confirmation page offers what event_undo refuses.
            self.message_user(request, source_not_undone(event), messages.ERROR)
            return HttpResponseRedirect(back)
        if event.kind == CurationEvent.Kind.BATCH:
            return self._batch_undo_view(request, event, back)
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            try:
                undo = event_undo(event=event, actor=request.user)
            except CurationError as exc:
                self.message_user(request, f"Nothing undone: {exc}", messages.ERROR)
                return HttpResponseRedirect(back)
            gone = undo.extra.get("authorships_gone", [])
            decided = decision_after_undo(event=event)
            self.message_user(
                request,
                f"Undid event {event.pk} ({event.get_kind_display()}): "
                f"{len(undo.moves)} authorship(s) moved back"
                + (f"; {_gone_text(gone)}" if gone else "")
                + (f"; {_decision_text(*decided)}" if decided else "")
                + f". The undo is event {undo.pk}, which can itself be undone.",
                messages.SUCCESS,
            )
            return HttpResponseRedirect(back)
        gone, nothing_left = undo_preview(event=event)
        nothing_left = nothing_left or undo_refusal(
            lambda: event_undo(event=event, actor=request.user)
        )
        readable = not unreadable(event)
        decided = decision_after_undo(event=event) if readable else None
        return TemplateResponse(
            request,
            "admin/curation/curationevent/undo_confirmation.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": f"Undo event {event.pk}?",
                "event": event,
                "moves": describe_moves(
                    event, limit=50, inverse=True, titles=_titles(event, 50)
                )
                if readable
                else [],
                "fields": describe_fields(event, inverse=True) if readable else [],
                "gone": _gone_text(gone) if gone else "",
                "retires": describe_constraints(event.constraints_on, active=True)
                if readable
                else [],
                "restores": describe_constraints(event.constraints_off, active=False)
                if readable
                else [],
                "forbids": undo_would_forbid(event=event)
                if readable and not nothing_left
                else None,
                "apart": [
                    f"researchers {lo} and {hi}"
                    for lo, hi in undone_merge_pairs(event=event)
                ]
                if readable and not nothing_left and not event.undone_by.exists()
                else [],
                "decision": _decision_text(*decided) if decided else "",
                "nothing_left": nothing_left,
                "next": back,
            },
        )

    def _batch_undo_view(
        self, request: HttpRequest, batch: CurationEvent, back: str
    ) -> HttpResponse:
        """Confirmation page listing a block review's changes,
        then :func:`curation.history.batch_undo` on POST: all of them or
        none. A bulk action's go to a worker (:meth:`_bulk_undo_view`)."""
        if not is_review_batch(batch):
            return self._bulk_undo_view(request, batch, back)
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            try:
                undo = batch_undo(batch=batch, actor=request.user)
            except CurationError as exc:
                self.message_user(request, f"Nothing undone: {exc}", messages.ERROR)
                return HttpResponseRedirect(back)
            passed = undo.extra.get("passed_over", {})
            self.message_user(
                request,
                f"Undid {len(undo.extra['undone'])} change(s) of batch {batch.pk}, "
                "latest first"
                + (
                    f"; passed over {len(passed)} with nothing left to undo: "
                    + "; ".join(passed.values())
                    if passed
                    else ""
                )
                + f". The undo is batch {undo.pk}, which can itself be undone.",
                messages.SUCCESS,
            )
            return HttpResponseRedirect(back)
        members = batch_to_undo(batch)
        review = batch.extra["review"]
        refused = (
            undo_refusal(lambda: batch_undo(batch=batch, actor=request.user))
            if members
            else ""
        )
        return TemplateResponse(
            request,
            "admin/curation/curationevent/batch_undo_confirmation.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": f"Undo batch {batch.pk}?",
                "event": batch,
                "what": (
                    f"the undo of the review of block “{review}” (a redo)"
                    if batch.extra.get("verb") == "undone"
                    else f"the review of block “{review}”"
                ),
                "members": event_links(members, lambda e: ""),
                "count": len(members),
                "refused": refused,
                "next": back,
            },
        )

    def _bulk_undo_view(
        self, request: HttpRequest, batch: CurationEvent, back: str
    ) -> HttpResponse:
        """Confirmation page of a bulk action's *Undo all…*: how many of its
        changes are in force, the latest :data:`BULK_UNDO_LISTED` linked; then,
        on POST, :func:`curation.history.batch_undo_start`: a worker undoes them
        all or none (up to 10,000: no dry run in the request, as a review's page
        makes), and the event's page says how it went."""
        extra = batch.extra if isinstance(batch.extra, dict) else {}
        asked = undo_all_asked(batch)
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            before = asked.get("state")
            state = batch_undo_start(batch=batch, actor=request.user)
            batch.refresh_from_db()
            self.message_user(
                request,
                *undo_all_said(
                    batch,
                    state,
                    queued=before == "queued",
                    already=before == "done" and state == "done",
                ),
            )
            return HttpResponseRedirect(back)
        in_force = bulk_in_force(batch)
        count = in_force.count() if extra.get("state", "done") == "done" else 0
        return TemplateResponse(
            request,
            "admin/curation/curationevent/batch_undo_confirmation.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": f"Undo batch {batch.pk}?",
                "event": batch,
                "what": (
                    "the undo of a bulk action (a redo)"
                    if extra.get("verb") == "undone"
                    else "the bulk action"
                ),
                "members": event_links(
                    in_force.order_by("-pk")[:BULK_UNDO_LISTED], lambda e: ""
                ),
                "count": count,
                "listed": min(count, BULK_UNDO_LISTED),
                "by_worker": True,
                "queued": asked.get("state") == "queued",
                "next": back,
            },
        )


def undo_all_said(
    batch: CurationEvent, state: str, *, queued: bool = False, already: bool = False
) -> tuple[str, int]:
    """What the admin says of a bulk action's *Undo all…* in ``state``
    (:func:`curation.history.batch_undo_start`), and the message level;
    ``queued``: it was queued already when the curator asked; ``already``:
    it was undone whole before (a second click)."""
    asked = undo_all_asked(batch)
    if queued:
        return f"Undo all of batch {batch.pk} is queued already.", messages.INFO
    if already:
        return (
            f"Nothing undone: batch {batch.pk} was undone whole already, by "
            f"batch {asked.get('undo')}.",
            messages.INFO,
        )
    if state == "running":
        return (
            f"Nothing undone: bulk action {batch.pk} is still running; undo it "
            "once it is done.",
            messages.ERROR,
        )
    if state == "queued":
        return (
            f"Undo all of batch {batch.pk} is queued: a worker undoes its "
            "changes in one step, latest first, all or none. This event's page "
            "says when it is done, or why it was refused.",
            messages.SUCCESS,
        )
    if state in ("refused", "failed"):
        return f"Nothing undone: {asked.get('reason', state)}", messages.ERROR
    undo = CurationEvent.objects.filter(pk=asked.get("undo")).first()
    undo_extra = undo.extra if undo and isinstance(undo.extra, dict) else {}
    undone = len(undo_extra.get("undone", []))
    passed = undo_extra.get("passed_over", {})
    return (
        f"Undid {undone} change(s) of batch {batch.pk}, latest first"
        + (f"; passed over {len(passed)} with nothing left to undo" if passed else "")
        + f". The undo is batch {asked.get('undo')}, which can itself be undone.",
        messages.SUCCESS,
    )


def event_links(
    events: Iterable[CurationEvent], after: Callable[[CurationEvent], str]
) -> str:
    """A list of events, each linked to its page (where a curator undoes
    it) as "<kind> #<id>", followed by ``after(event)``."""
    return format_html(
        "<ul>{}</ul>",
        format_html_join(
            "",
            '<li><a href="{}">{} #{}</a>{}</li>',
            (
                (
                    reverse("admin:curation_curationevent_change", args=[e.pk]),
                    e.get_kind_display(),
                    e.pk,
                    after(e),
                )
                for e in events
            ),
        ),
    )


def _decision_text(proposal: int, status: str) -> str:
    """What an undo does to the proposal its event decided, in words."""
    if status == "pending":
        return f"proposal {proposal} goes back to the queue (pending)"
    if status == "reverted":
        return f"proposal {proposal} is marked reverted"
    return f"proposal {proposal} is {status} again"


def describe_constraints(ids: list[int], *, active: bool) -> list[str]:
    """Plain-language lines for the constraints among ``ids`` that are
    ``active`` now (an undo retires those its event made and brings back
    those it retired): "authorship 12 is not researcher 3's", "authorship
    12 is researcher 3's", "researchers 3 and 4 are not one person"."""
    lines = []
    for c in Constraint.objects.filter(pk__in=ids, active=active).order_by("pk"):
        if c.authorship_id is None:
            said = f"researchers {c.researcher_id} and {c.other_researcher_id} are "
            said += "not one person"
        elif c.kind == Constraint.Kind.MUST_LINK:
            said = f"authorship {c.authorship_id} is researcher {c.researcher_id}'s"
        else:
            said = f"authorship {c.authorship_id} is not researcher {c.researcher_id}'s"
        lines.append(f"constraint {c.pk}: {said}")
    return lines


@admin.register(Constraint)
class ConstraintAdmin(ReadOnlyAdmin):
    """Must-link and cannot-link constraints, read-only."""

    list_display = (
        "id",
        "kind",
        "active",
        "researcher",
        "authorship",
        "other_researcher",
        "event",
        "created",
    )
    list_filter = ("kind", "active")
    raw_id_fields = ("researcher", "authorship", "other_researcher", "event")
