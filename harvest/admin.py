"""Harvest runs and raw records in the admin: read-only, with resume and re-run."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from harvest import services
from harvest.models import DepartedSlot, HarvestRun, RawRecord, SourceAuthor
from wovepaper.admin import ReadOnlyAdmin

PERM = "harvest.operate_harvestrun"


@admin.register(HarvestRun)
class HarvestRunAdmin(ReadOnlyAdmin):
    """Runs with their counts and errors; an operator resumes or re-runs them."""

    list_display = (
        "id",
        "source",
        "status",
        "started_at",
        "finished_at",
        "records_seen",
        "papers_created",
        "papers_updated",
        "papers_unchanged",
        "records_failed",
        "error",
    )
    list_filter = ("source", "status")
    actions = ["resume_selected", "repeat_selected"]

    def has_operate_permission(self, request: HttpRequest) -> bool:
        """Whether the user may resume and re-run (``harvest.operate_harvestrun``)."""
        return request.user.has_perm(PERM)

    def _each(self, request, queryset: QuerySet, service, verb: str) -> None:
        done, skipped, ended = 0, [], []
        for run in queryset.order_by("pk"):
            try:
                service(run=run)
                done += 1
            except services.HarvestRunRefused as exc:
                skipped.append(str(exc))
                continue
            run.refresh_from_db()
            if run.status != HarvestRun.Status.RUNNING:
                # No broker (the embedded default): the task ran in this request.
                ended.append(
                    f"run #{run.pk} {run.status}"
                    + (f": {run.error}" if run.error else "")
                )
        text = f"{done} {verb}, {len(skipped)} skipped"
        if skipped:
            text += " (" + "; ".join(skipped[:10]) + ")"
        if ended:
            text += "; ran at once: " + "; ".join(ended[:10])
        failed = any(" failed" in e for e in ended)
        self.message_user(
            request, text, messages.WARNING if skipped or failed else messages.SUCCESS
        )

    @admin.action(
        description="Resume selected failed runs from their cursor",
        permissions=["operate"],
    )
    def resume_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._each(request, queryset, services.harvest_run_resume, "queued to resume")

    @admin.action(description="Re-run selected runs afresh", permissions=["operate"])
    def repeat_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._each(request, queryset, services.harvest_run_repeat, "queued again")


@admin.register(RawRecord)
class RawRecordAdmin(ReadOnlyAdmin):
    list_display = ("id", "source", "external_id", "status", "error", "fetched_at")
    list_filter = ("source", "status")
    search_fields = ("external_id", "error")


@admin.register(SourceAuthor)
class SourceAuthorAdmin(ReadOnlyAdmin):
    """Author profiles as OpenAlex and Semantic Scholar keep them (evidence)."""

    list_display = (
        "source",
        "external_id",
        "name",
        "orcid",
        "works_count",
        "merged_into",
        "deleted",
        "updated",
    )
    list_filter = ("source", "deleted")
    search_fields = ("external_id", "name", "orcid")


@admin.register(DepartedSlot)
class DepartedSlotAdmin(ReadOnlyAdmin):
    """Curated byline slots a re-harvest deleted, whose researcher and
    constraints come back if a later version prints the person again."""

    list_display = ("paper", "position", "raw_name", "researcher", "departed")
    search_fields = ("raw_name", "paper__arxiv_id", "paper__doi")
    raw_id_fields = ("paper", "researcher")
