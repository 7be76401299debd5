"""Harvest runs and raw records in the admin, read-only."""

from __future__ import annotations

from django.contrib import admin

from harvest.models import HarvestRun, RawRecord


class ReadOnlyAdmin(admin.ModelAdmin):
    """No add, change or delete: these rows are written by the harvest only."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(HarvestRun)
class HarvestRunAdmin(ReadOnlyAdmin):
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
    )
    list_filter = ("source", "status")


@admin.register(RawRecord)
class RawRecordAdmin(ReadOnlyAdmin):
    list_display = ("id", "source", "external_id", "status", "error", "fetched_at")
    list_filter = ("source", "status")
    search_fields = ("external_id", "error")
