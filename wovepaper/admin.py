"""Papers, researchers and institutions in the admin.

Researchers are read-only here: every change to an assignment goes through the
curation services (the proposal actions), never through a form or ``update()``.
"""

from __future__ import annotations

from django.contrib import admin

from wovepaper.models import Authorship, Follow, Institution, Paper, Researcher


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
    )
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    list_display = (
        "arxiv_id",
        "title",
        "primary_category",
        "published",
        "updated",
        "latest_version",
        "hidden",
    )
    list_filter = ("primary_category", "withdrawn", "hidden")
    search_fields = ("arxiv_id", "doi", "title")
    inlines = [AuthorshipInline]
    readonly_fields = ("created", "modified")


class ResearcherAuthorshipInline(AuthorshipInline):
    fk_name = "researcher"
    fields = ("paper", "position", "raw_name", "orcid", "affiliations")
    readonly_fields = fields


@admin.register(Researcher)
class ResearcherAdmin(admin.ModelAdmin):
    list_display = ("id", "display_name", "orcid", "merged_into", "locked")
    list_filter = ("locked",)
    search_fields = ("display_name", "orcid", "block_key")
    inlines = [ResearcherAuthorshipInline]
    readonly_fields = (
        "display_name",
        "name_variants",
        "block_key",
        "orcid",
        "s2_author_id",
        "openalex_author_id",
        "slug",
        "merged_into",
        "locked",
        "claimed_by",
        "created",
        "modified",
    )

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Institution)
class InstitutionAdmin(admin.ModelAdmin):
    list_display = ("name", "ror_id", "country_code")
    search_fields = ("name", "ror_id")


@admin.register(Follow)
class FollowAdmin(admin.ModelAdmin):
    list_display = ("user", "researcher", "created")
    raw_id_fields = ("user", "researcher")
