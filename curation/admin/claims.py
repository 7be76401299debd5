"""Claims in the curators' admin: approve (link the user, lock the profile), reject."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
)
from django.shortcuts import get_object_or_404
from django.urls import path, reverse

from curation.admin.common import SafeActionsMixin, each_object, report
from curation.claims import claim_approve, claim_reject
from curation.exceptions import CurationError
from curation.models import ClaimRequest
from wovepaper.admin import ReadOnlyAdmin

PERM = "curation.decide_claimrequest"


@admin.register(ClaimRequest)
class ClaimRequestAdmin(SafeActionsMixin, ReadOnlyAdmin):
    """Pending claims first; each decision calls one service."""

    list_display = ("id", "researcher", "user", "orcid", "status", "created")
    list_filter = ("status",)
    list_select_related = ("researcher", "user")
    search_fields = ("orcid", "user__username", "researcher__display_name")
    readonly_fields = (
        "user",
        "researcher",
        "orcid",
        "message",
        "status",
        "created",
        "decided_at",
        "decided_by",
        "reason",
    )
    actions = ("approve_selected", "reject_selected")
    change_form_template = "admin/curation/claimrequest/change_form.html"

    def get_ordering(self, request: HttpRequest):
        return ("-status", "-created")  # "pending" sorts before "approved"

    def has_decide_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERM)

    def _decide(self, request, queryset: QuerySet, approve: bool) -> None:
        if approve:
            done, skipped = each_object(
                queryset.order_by("pk"),
                lambda c: claim_approve(claim=c, actor=request.user),
            )
        else:
            done, skipped = each_object(
                queryset.order_by("pk"),
                lambda c: claim_reject(claim=c, actor=request.user),
            )
        report(self, request, done, skipped, "approved" if approve else "rejected")

    @admin.action(description="Approve selected claims", permissions=["decide"])
    def approve_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._decide(request, queryset, True)

    @admin.action(description="Reject selected claims", permissions=["decide"])
    def reject_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._decide(request, queryset, False)

    def render_change_form(self, request, context, *args, **kwargs):
        obj = context.get("original")
        context["can_decide"] = bool(
            obj
            and obj.status == ClaimRequest.Status.PENDING
            and self.has_decide_permission(request)
        )
        return super().render_change_form(request, context, *args, **kwargs)

    def get_urls(self):
        return [
            path(
                "<int:pk>/decide/",
                self.admin_site.admin_view(self.decide_view),
                name="curation_claimrequest_decide",
            ),
            *super().get_urls(),
        ]

    def decide_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """POST ``decision=approve|reject`` (and ``reason``) from the claim page."""
        if request.method != "POST" or not self.has_decide_permission(request):
            raise PermissionDenied
        claim = get_object_or_404(ClaimRequest, pk=pk)
        decision = request.POST.get("decision")
        if decision not in ("approve", "reject"):
            return HttpResponseBadRequest("decision must be approve or reject")
        try:
            if decision == "approve":
                claim_approve(claim=claim, actor=request.user)
                self.message_user(
                    request,
                    f"Claim {pk} approved: {claim.user} now holds researcher "
                    f"{claim.researcher_id}, which is locked.",
                )
            else:
                claim_reject(
                    claim=claim,
                    actor=request.user,
                    reason=request.POST.get("reason", "")[:2000],
                )
                self.message_user(request, f"Claim {pk} rejected.")
        except CurationError as exc:
            self.message_user(request, f"Nothing changed: {exc}", messages.ERROR)
        return HttpResponseRedirect(
            reverse("admin:curation_claimrequest_change", args=[pk])
        )
