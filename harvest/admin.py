"""Harvest runs and raw records in the admin, read-only."""

from __future__ import annotations

from django.contrib import admin

from harvest.models import HarvestRun, RawRecord
from wovepaper.admin import ReadOnlyAdmin


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
