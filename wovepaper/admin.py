"""Papers, researchers and institutions in the admin.

Researchers are administered by the curators' admin (``curation.admin``): every
change to an assignment goes through the curation services, never through a form
or ``update()``.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib import admin
from django.db import models, transaction
from django.urls import reverse
from django.utils.html import format_html

from harvest.sources.repeated_authors import POSSIBLE_REPEATED_AUTHOR
from wovepaper.cache import papers_changed, searches_changed
from wovepaper.models import (
    Authorship,
    Follow,
    Institution,
    Notification,
    OutboxMessage,
    Paper,
)
from wovepaper.search import search_vectors_refresh
from wovepaper.tasks import embeddings_refresh_task
from wovepaper.text import latex_to_text


class ReadOnlyAdmin(admin.ModelAdmin):
    """No add, change or delete: rows written only by services (harvest, curation)."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class AuthorshipInline(admin.TabularInline):
    model = Authorship
    fields = (
        "position",
        "raw_name",
        "given_name",
        "family_name",
        "orcid",
        "affiliations",
        "is_collaboration",
        "researcher",
        "curate",
    )
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="curate")
    def curate(self, obj: Authorship) -> str:
        """A link to give the authorship to a researcher by hand (unassigned)
        or move it to another (curation.admin.researchers)."""
        if obj.is_collaboration:
            return "-"
        if obj.researcher_id is None:
            url = reverse("admin:wovepaper_researcher_assign", args=[obj.pk])
            return format_html('<a href="{}">assign…</a>', url)
        url = reverse(
            "admin:wovepaper_researcher_move", args=[obj.researcher_id, obj.pk]
        )
        return format_html('<a href="{}">move…</a>', url)


class ReviewFlagFilter(admin.SimpleListFilter):
    """Papers the harvest flagged for a curator (``Paper.review_flags``), by flag."""

    title = "review flag"
    parameter_name = "review_flag"

    def lookups(self, request, model_admin):
        return [(POSSIBLE_REPEATED_AUTHOR, POSSIBLE_REPEATED_AUTHOR)]

    def queryset(self, request, queryset):
        if self.value() == POSSIBLE_REPEATED_AUTHOR:
            flagged = queryset.exclude(review_flags=[]).values_list(
                "pk", "review_flags"
            )
            return queryset.filter(
                pk__in=[pk for pk, flags in flagged if self.value() in flags]
            )
        return queryset


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    list_display = (
        "arxiv_id",
        "title_shown",
        "primary_category",
        "published",
        "updated",
        "latest_version",
        "hidden",
        "hidden_by",
    )
    list_filter = (
        ReviewFlagFilter,
        "primary_category",
        "withdrawn",
        "authors_incomplete",
        "hidden",
        "hidden_by",
    )
    search_fields = ("arxiv_id", "doi", "title")
    inlines = [AuthorshipInline]
    # A licence URL typed without a scheme is read as https, Django 6.0's
    # default (forms.URLField.assume_scheme), not http.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    readonly_fields = ("hidden_by", "review_flags", "created", "modified")

    @admin.display(description="title", ordering="title")
    def title_shown(self, obj: Paper) -> str:
        """The title as the public pages show it (LaTeX as text); the form
        keeps the stored source."""
        return latex_to_text(obj.title)

    def save_model(self, request, obj: Paper, form, change) -> None:
        """Save the paper; a curator who ticks or clears ``hidden`` is who hid
        it (``hidden_by``), so that a re-harvest finding the paper again
        leaves it hidden (a paper its source deleted is shown again)."""
        if "hidden" in form.changed_data:
            obj.hidden_by = Paper.HiddenBy.CURATOR if obj.hidden else ""
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change) -> None:
        """Save the paper's authorships, then rewrite its search vector.

        The stored vector (wovepaper.search) holds the title, the names and the
        abstract; an edit here must reach search as a harvest update does, and
        the researcher pages (hidden, date, fields) and cached searches (counts,
        titles) as well, at once. A changed title or abstract is embedded again
        once the edit commits (the task skips an unchanged text).
        """
        super().save_related(request, form, formsets, change)
        search_vectors_refresh(paper_ids=[form.instance.pk])
        _papers_edited([form.instance.pk])
        pk = form.instance.pk
        transaction.on_commit(lambda: embeddings_refresh_task.delay(paper_ids=[pk]))

    def delete_model(self, request, obj: Paper) -> None:
        """Delete the paper; its researchers' cached pages and cached searches
        go with it."""
        _papers_edited([obj.pk])
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset) -> None:
        """Delete the chosen papers (the admin's bulk action), as delete_model."""
        _papers_edited(queryset.values_list("pk", flat=True))
        super().delete_queryset(request, queryset)


def _papers_edited(paper_ids: Iterable[int]) -> None:
    """A curator wrote these papers: their researchers' cached pages and every
    cached search are dropped when the change commits (a harvest drops only
    the former: wovepaper.cache.searches_changed)."""
    papers_changed(paper_ids)
    searches_changed()


@admin.register(Institution)
class InstitutionAdmin(admin.ModelAdmin):
    list_display = ("name", "ror_id", "country_code")
    search_fields = ("name", "ror_id")


@admin.register(Follow)
class FollowAdmin(admin.ModelAdmin):
    list_display = ("user", "researcher", "created")
    raw_id_fields = ("user", "researcher")


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("user", "researcher", "subject", "emailed", "created")
    raw_id_fields = ("user", "researcher")
    readonly_fields = ("event_id",)


@admin.register(OutboxMessage)
class OutboxMessageAdmin(ReadOnlyAdmin):
    """Tasks the broker refused, waiting for the next flush (wovepaper.outbox):
    an operator sees what an outage left to send, and why each send failed."""

    list_display = ("task", "created_at", "attempts", "last_error")
    list_filter = ("task",)
    readonly_fields = ("task", "kwargs", "created_at", "attempts", "last_error")
