"""The researcher admin (:class:`ResearcherAdmin`): the list, the change page,
and the views of the direct edits, each one service call.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
)
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from curation import edits, selectors
from curation.admin.common import SafeActionsMixin, each_object, report
from curation.admin.researchers.parts import (
    PERM,
    ResearcherAuthorshipInline,
    ResearcherForm,
    StateFilter,
    _change_url,
    _ids,
    _int,
    _last_paper,
    _name,
    _retired_words,
)
from curation.exceptions import CurationError
from curation.history import researcher_history, undo_all_offered
from wovepaper import profile
from wovepaper.models import Authorship, Researcher


@admin.register(Researcher)
class ResearcherAdmin(SafeActionsMixin, admin.ModelAdmin):
    """Researcher profiles: list, edit name and identifiers, and every direct edit."""

    form = ResearcherForm
    change_form_template = "admin/curation/researcher/change_form.html"
    list_display = (
        "id",
        "display_name",
        "paper_count",
        "orcid",
        "locked",
        "merged_into",
        "claimed_by",
    )
    list_filter = (StateFilter, "locked")
    search_fields = ("display_name", "orcid", "block_key", "=id")
    actions = ("merge_selected", "lock_selected", "unlock_selected")
    inlines = [ResearcherAuthorshipInline]
    readonly_fields = (
        "state",
        "variants",
        "block_key",
        "slug",
        "locked",
        "claimed_by",
        "revision",
        "created",
        "modified",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Researcher]:
        return (
            super()
            .get_queryset(request)
            .select_related("merged_into", "claimed_by")
            .annotate(n_papers=Count("authorships"))
        )

    @admin.display(description="papers", ordering="n_papers")
    def paper_count(self, obj: Researcher) -> int:
        return obj.n_papers

    @admin.display(description="name variants (as printed)")
    def variants(self, obj: Researcher) -> str:
        return "; ".join(obj.name_variants) or "—"

    @admin.display(description="state")
    def state(self, obj: Researcher) -> str:
        if obj.merged_into_id:
            url = reverse(
                "admin:wovepaper_researcher_change", args=[obj.merged_into_id]
            )
            return format_html(
                'merged into <a href="{}">researcher {}</a>', url, obj.merged_into_id
            )
        if obj.retired:
            return f"retired ({profile.retired_why(obj)})"
        return "live"

    def get_actions(self, request: HttpRequest):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_merge_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM["merge"])

    def has_lock_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM["lock"])

    # --- editing through the service ---------------------------------------

    def save_model(self, request, obj, form, change) -> None:
        """Apply the edit with :func:`curation.edits.researcher_update`, never save().

        The revision the form was opened on is the expected one, so an edit made
        meanwhile by someone else is refused rather than overwritten.
        """
        changes = {
            f: form.cleaned_data.get(f)
            for f in form.changed_data
            if f in edits.EDITABLE_FIELDS
        }
        try:
            edits.researcher_update(
                researcher=obj,
                actor=request.user,
                changes=changes,
                expected={"revision": form.cleaned_data["seen_revision"]},
            )
        except CurationError as exc:
            request._curation_error = str(exc)

    def log_change(self, request, obj, message):
        if getattr(request, "_curation_error", None):
            return None
        return super().log_change(request, obj, message)

    def response_change(self, request, obj):
        error = getattr(request, "_curation_error", None)
        if error:
            self.message_user(request, error, messages.ERROR)
            return HttpResponseRedirect(request.path)
        return super().response_change(request, obj)

    def render_change_form(self, request, context, *args, **kwargs):
        obj = context.get("original")
        context.update(
            # A split needs something to stay and something to go.
            can_split=request.user.has_perm(PERM["split"])
            and obj is not None
            and obj.authorships.count() >= 2,
            can_lock=request.user.has_perm(PERM["lock"]),
            live=bool(obj and not obj.merged_into_id and not obj.retired),
        )
        return super().render_change_form(request, context, *args, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and (obj.merged_into_id or obj.retired):
            fields += ["display_name", "orcid", "s2_author_id", "openalex_author_id"]
        return fields

    # --- urls --------------------------------------------------------------

    def get_urls(self):
        def view(fn):
            return self.admin_site.admin_view(fn)

        return [
            path("<int:pk>/split/", view(self.split_view), name=_name("split")),
            path(
                "<int:pk>/authorships/<int:aid>/move/",
                view(self.move_view),
                name=_name("move"),
            ),
            path(
                "<int:pk>/authorships/<int:aid>/detach/",
                view(self.detach_view),
                name=_name("detach"),
            ),
            path("<int:pk>/lock/", view(self.lock_view), name=_name("lock")),
            path(
                "authorships/<int:aid>/assign/",
                view(self.assign_view),
                name=_name("assign"),
            ),
            *super().get_urls(),
        ]

    def _context(self, request: HttpRequest, title: str, **extra) -> dict:
        return {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": title,
            **extra,
        }

    def _done(self, request: HttpRequest, pk: int, text: str) -> HttpResponse:
        self.message_user(request, text, messages.SUCCESS)
        return HttpResponseRedirect(_change_url(pk))

    def _refused(
        self, request: HttpRequest, pk: int, exc: CurationError
    ) -> HttpResponse:
        self.message_user(request, f"Nothing changed: {exc}", messages.ERROR)
        return HttpResponseRedirect(_change_url(pk))

    # --- merge -------------------------------------------------------------

    @admin.action(description="Merge selected researchers…", permissions=["merge"])
    def merge_selected(self, request: HttpRequest, queryset: QuerySet):
        """Confirmation page first; on ``post=yes`` merge into the lowest id."""
        chosen = list(queryset.order_by("pk"))
        if len(chosen) < 2:
            self.message_user(
                request, "Select two or more researchers to merge.", messages.WARNING
            )
            return None
        if request.POST.get("post") == "yes":
            if not self.has_merge_permission(request):
                raise PermissionDenied
            # The revisions the confirmation page showed: a researcher changed
            # since then is refused, not merged unseen.
            seen = {r.pk: _int(request.POST.get(f"revision_{r.pk}")) for r in chosen}
            try:
                survivor = edits.researcher_merge(
                    researchers=chosen,
                    actor=request.user,
                    expected_revisions={k: v for k, v in seen.items() if v is not None}
                    or None,
                )
            except CurationError as exc:
                self.message_user(request, f"Nothing merged: {exc}", messages.ERROR)
                return None
            others = ", ".join(str(r.pk) for r in chosen[1:])
            return self._done(
                request,
                survivor.pk,
                f"Merged researchers {others} into {survivor}. "
                "Their pages now redirect here; undo it from History.",
            )
        dossiers = [selectors.researcher_dossier(r, limit=8) for r in chosen]
        conflicts = []
        for field in edits.IDENTIFIER_FIELDS:
            holders = [r for r in chosen if getattr(r, field)]
            if len({getattr(r, field) for r in holders}) > 1:
                conflicts.append(
                    f"{field}: "
                    + ", ".join(f"{r.pk} has {getattr(r, field)}" for r in holders)
                )
        return TemplateResponse(
            request,
            "admin/curation/researcher/merge_confirmation.html",
            self._context(
                request,
                "Merge researchers?",
                dossiers=dossiers,
                survivor=chosen[0],
                conflicts=conflicts,
                name_warnings=selectors.merge_name_warnings(chosen),
                queryset=chosen,
                action_checkbox_name=admin.helpers.ACTION_CHECKBOX_NAME,
            ),
        )

    # --- lock --------------------------------------------------------------

    def _set_locked(self, request, queryset, locked: bool) -> None:
        done, skipped = each_object(
            queryset.order_by("pk"),
            lambda r: edits.researcher_set_locked(
                researcher=r, locked=locked, actor=request.user
            ),
        )
        report(self, request, done, skipped, "locked" if locked else "unlocked")

    @admin.action(description="Lock selected researchers", permissions=["lock"])
    def lock_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_locked(request, queryset, True)

    @admin.action(description="Unlock selected researchers", permissions=["lock"])
    def unlock_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_locked(request, queryset, False)

    def lock_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """POST ``locked=1|0`` from the researcher page."""
        if request.method != "POST" or not self.has_lock_permission(request):
            raise PermissionDenied
        researcher = get_object_or_404(Researcher, pk=pk)
        if request.POST.get("locked") not in ("0", "1"):
            return HttpResponseBadRequest("locked must be 1 (lock) or 0 (unlock)")
        locked = request.POST.get("locked") == "1"
        try:
            edits.researcher_set_locked(
                researcher=researcher, locked=locked, actor=request.user
            )
        except CurationError as exc:
            return self._refused(request, pk, exc)
        state = (
            "locked: automation will not change it (its sources still can: a "
            "new version of a record that drops its name takes the paper off, "
            "as its History shows)"
            if locked
            else "unlocked"
        )
        return self._done(request, pk, f"{researcher} is {state}.")

    # --- split -------------------------------------------------------------

    def split_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Choose authorships for a new researcher, confirm, split.

        GET lists the authorships with check boxes; POST without ``confirm`` shows
        what will move and what stays; POST with ``confirm=yes`` splits.
        """
        if not request.user.has_perm(PERM["split"]):
            raise PermissionDenied
        researcher = get_object_or_404(Researcher, pk=pk)
        dossier = selectors.researcher_dossier(researcher, limit=10_000)
        chosen = _ids(request.POST.getlist("authorships"))
        name = request.POST.get("display_name", "")[: edits.MAX_DISPLAY_NAME]
        seen = request.POST.get("revision", "")
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            try:
                new = edits.researcher_split(
                    researcher=researcher,
                    authorship_ids=chosen,
                    actor=request.user,
                    display_name=name,
                    expected_revision=_int(seen),
                )
            except CurationError as exc:
                return self._refused(request, pk, exc)
            return self._done(
                request,
                new.pk,
                format_html(
                    'Split {} authorship(s) off <a href="{}">{} #{}</a> into this new '
                    "researcher #{}. Automation will not join them again; undo it "
                    "from History.",
                    len(chosen),
                    _change_url(pk),
                    researcher.display_name,
                    pk,
                    new.pk,
                ),
            )
        confirming = request.method == "POST" and bool(chosen)
        if request.method == "POST" and not chosen:
            messages.warning(request, "Choose at least one authorship to split off.")
        moving = [p for p in dossier.papers if p.authorship.pk in set(chosen)]
        staying = [p for p in dossier.papers if p.authorship.pk not in set(chosen)]
        return TemplateResponse(
            request,
            "admin/curation/researcher/split.html",
            self._context(
                request,
                f"Split {researcher}",
                researcher=researcher,
                dossier=dossier,
                chosen=set(chosen),
                display_name=name,
                revision=_int(seen) if _int(seen) is not None else researcher.revision,
                confirming=confirming,
                moving=moving,
                staying=staying,
            ),
        )

    # --- move and detach -----------------------------------------------------

    def move_view(self, request: HttpRequest, pk: int, aid: int) -> HttpResponse:
        """Move one authorship to another researcher: choose, confirm, move."""
        if not request.user.has_perm(PERM["move"]):
            raise PermissionDenied
        researcher = get_object_or_404(Researcher, pk=pk)
        authorship = get_object_or_404(
            Authorship.objects.select_related("paper"), pk=aid
        )
        return self._move(request, authorship, researcher)

    def assign_view(self, request: HttpRequest, aid: int) -> HttpResponse:
        """Give an unassigned authorship to a researcher ("this paper is that
        person's"): choose, confirm, assign. Where matching proposed a new
        researcher, or an attach to the wrong one, for an authorship a curator
        knows is someone's. An assigned authorship goes to its move page."""
        if not request.user.has_perm(PERM["move"]):
            raise PermissionDenied
        authorship = get_object_or_404(
            Authorship.objects.select_related("paper"), pk=aid
        )
        if authorship.researcher_id is not None:
            if request.method == "POST":
                self.message_user(
                    request,
                    f"Nothing changed: authorship {aid} was assigned to researcher "
                    f"{authorship.researcher_id} meanwhile; move it from there.",
                    messages.ERROR,
                )
            return HttpResponseRedirect(
                reverse(f"admin:{_name('move')}", args=[authorship.researcher_id, aid])
            )
        return self._move(request, authorship, None)

    def _move(
        self,
        request: HttpRequest,
        authorship: Authorship,
        researcher: Researcher | None,
    ) -> HttpResponse:
        """The move page of ``authorship``, now on ``researcher`` (None:
        unassigned); a confirmed POST moves it (:func:`edits.authorship_move`,
        refused if it is no longer where the curator saw it)."""
        target_id = _ids([request.POST.get("to", "")])
        target = Researcher.objects.filter(pk__in=target_id).first()
        here = (
            reverse(f"admin:{_name('move')}", args=[researcher.pk, authorship.pk])
            if researcher
            else reverse(f"admin:{_name('assign')}", args=[authorship.pk])
        )
        error = ""
        if request.method == "POST" and request.POST.get("to") and target is None:
            error = f"There is no researcher {request.POST.get('to')[:20]}."
        if request.method == "POST" and target and request.POST.get("confirm") == "yes":
            try:
                moved = edits.authorship_move(
                    authorship=authorship,
                    to=target,
                    actor=request.user,
                    expected_researcher=researcher.pk if researcher else None,
                )
            except CurationError as exc:
                if researcher:
                    return self._refused(request, researcher.pk, exc)
                self.message_user(request, f"Nothing changed: {exc}", messages.ERROR)
                return HttpResponseRedirect(here)
            done = "Moved" if researcher else "Assigned"
            return self._done(
                request,
                researcher.pk if researcher else target.pk,
                f"{done} “{authorship.raw_name}” on "
                f"{authorship.paper.arxiv_id or authorship.paper.pk} to {target}. "
                "Automation will keep it there." + _retired_words(moved, "move"),
            )
        candidates = Researcher.objects.live().filter(
            block_key=researcher.block_key if researcher else authorship.block_key
        )
        if researcher:
            candidates = candidates.exclude(pk=researcher.pk)
        candidates = candidates.annotate(n_papers=Count("authorships")).order_by(
            "-n_papers", "pk"
        )[:20]
        return TemplateResponse(
            request,
            "admin/curation/researcher/move.html",
            self._context(
                request,
                f"Move an authorship of {researcher}"
                if researcher
                else f"Assign “{authorship.raw_name}” to a researcher",
                researcher=researcher,
                authorship=authorship,
                target=target,
                target_dossier=selectors.researcher_dossier(target, limit=5)
                if target
                else None,
                last_paper=researcher is not None
                and _last_paper(researcher, authorship),
                candidates=candidates,
                error=error,
                here=here,
            ),
        )

    def detach_view(self, request: HttpRequest, pk: int, aid: int) -> HttpResponse:
        """Detach one authorship ("not this person"): confirm, detach."""
        if not request.user.has_perm(PERM["move"]):
            raise PermissionDenied
        researcher = get_object_or_404(Researcher, pk=pk)
        authorship = get_object_or_404(
            Authorship.objects.select_related("paper"), pk=aid
        )
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            try:
                detached = edits.authorship_detach(
                    authorship=authorship, actor=request.user, expected_researcher=pk
                )
            except CurationError as exc:
                return self._refused(request, pk, exc)
            return self._done(
                request,
                pk,
                f"Detached “{authorship.raw_name}” from {researcher}. Matching will "
                "propose another researcher for it, never this one."
                + _retired_words(detached, "detach"),
            )
        return TemplateResponse(
            request,
            "admin/curation/researcher/detach_confirmation.html",
            self._context(
                request,
                "Not this person?",
                researcher=researcher,
                authorship=authorship,
                last_paper=_last_paper(researcher, authorship),
            ),
        )

    # --- history -------------------------------------------------------------

    def history_view(self, request: HttpRequest, object_id: str, extra_context=None):
        """Every curation event that touched the researcher, each with undo."""
        pk = _int(object_id)
        if pk is None:
            raise Http404("no such researcher")
        researcher = get_object_or_404(Researcher, pk=pk)
        if not self.has_view_or_change_permission(request, researcher):
            raise PermissionDenied
        events = list(researcher_history(researcher_id=researcher.pk)[:200])
        for e in events:
            e.undo_all = undo_all_offered(e)
        return TemplateResponse(
            request,
            "admin/curation/researcher/history.html",
            self._context(
                request,
                f"History of {researcher}",
                researcher=researcher,
                original=researcher,
                events=events,
                can_undo=request.user.has_perm(PERM["undo"]),
            ),
        )
