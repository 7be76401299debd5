"""The researcher admin's parts: the state filter (live, merged, retired,
locked), the edit form that goes through the services, the inline of a
researcher's authorships, and the small helpers its views share (URLs,
posted ids, the retirement warning).
"""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from curation import edits
from wovepaper.identifiers import NORMALISERS
from wovepaper.models import Authorship, Researcher
from wovepaper.text import latex_to_text

PERM = {
    "merge": "wovepaper.merge_researcher",
    "split": "wovepaper.split_researcher",
    "move": "wovepaper.move_authorship",
    "lock": "wovepaper.lock_researcher",
    "undo": "curation.undo_curationevent",
}


class StateFilter(admin.SimpleListFilter):
    """Live, merged-away or retired researchers."""

    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("live", "live"), ("merged", "merged away"), ("retired", "retired")]

    def queryset(self, request, queryset):
        if self.value() == "live":
            return queryset.filter(merged_into__isnull=True, retired=False)
        if self.value() == "merged":
            return queryset.filter(merged_into__isnull=False)
        if self.value() == "retired":
            return queryset.filter(retired=True)
        return queryset


class ResearcherForm(forms.ModelForm):
    """Display name and identifiers; the service validates and records them.

    ``seen_revision`` carries the researcher's revision from when the form was
    opened, so a save over someone else's change is refused, not silently lost.
    """

    seen_revision = forms.IntegerField(
        widget=forms.HiddenInput,
        min_value=0,
        max_value=2**31,
        error_messages={"required": "The form is out of date: reload the page."},
    )

    class Meta:
        model = Researcher
        fields = ("display_name", "orcid", "s2_author_id", "openalex_author_id")

    LABELS = {
        "orcid": "ORCID iD",
        "s2_author_id": "Semantic Scholar author id",
        "openalex_author_id": "OpenAlex author id",
    }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["seen_revision"].initial = self.instance.revision
        for field in edits.IDENTIFIER_FIELDS:
            if field in self.fields:
                # Accept resolver URLs; clean_<field> normalises them.
                self.fields[field] = forms.CharField(
                    required=False,
                    max_length=200,
                    label=self.LABELS[field],
                    help_text="Empty removes it; a URL is accepted.",
                )

    def _identifier(self, field: str) -> str | None:
        value = (self.cleaned_data.get(field) or "").strip()
        if not value:
            return None
        try:
            return NORMALISERS[field](value)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean_orcid(self) -> str | None:
        return self._identifier("orcid")

    def clean_s2_author_id(self) -> str | None:
        return self._identifier("s2_author_id")

    def clean_openalex_author_id(self) -> str | None:
        return self._identifier("openalex_author_id")

    def validate_unique(self) -> None:
        # The service checks uniqueness on the normalised value and names the
        # other researcher.
        return None


class ResearcherAuthorshipInline(admin.TabularInline):
    """The researcher's authorships, newest paper first, with move and detach links."""

    model = Authorship
    fk_name = "researcher"
    fields = ("paper_link", "position", "raw_name", "orcid", "affiliations", "edit")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False
    ordering = ("-paper__published", "-paper_id")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("paper")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="paper")
    def paper_link(self, obj: Authorship) -> str:
        paper = obj.paper
        date = paper.published.isoformat() if paper.published else "undated"
        return format_html(
            "{} <small>({}, {})</small>",
            latex_to_text(paper.title)[:120],
            paper.arxiv_id or paper.doi or paper.pk,
            date,
        )

    @admin.display(description="curate")
    def edit(self, obj: Authorship) -> str:
        if obj.pk is None or obj.researcher_id is None:
            return ""
        args = [obj.researcher_id, obj.pk]
        return format_html(
            '<a href="{}">move…</a> · <a href="{}">not this person…</a>',
            reverse("admin:wovepaper_researcher_move", args=args),
            reverse("admin:wovepaper_researcher_detach", args=args),
        )


def _change_url(pk: int) -> str:
    return reverse("admin:wovepaper_researcher_change", args=[pk])


def _name(view: str) -> str:
    return f"wovepaper_researcher_{view}"


def _int(value: str | None) -> int | None:
    """A form value as a non-negative integer of at most 18 ASCII digits, or None."""
    value = (value or "").strip()
    if value.isascii() and value.isdigit() and len(value) <= 18:
        return int(value)
    return None


def _ids(values: list[str]) -> list[int]:
    """The integers among form values (anything else is ignored)."""
    return [n for v in values if (n := _int(v)) is not None]


def _retired_words(event, verb: str) -> str:
    """The sentence telling the curator that ``event`` (a move or detach)
    retired the profile it emptied (:func:`curation.edits.retire_emptied`),
    or "" when it did not."""
    retired = event.extra.get("retired", [])
    if not retired:
        return ""
    return (
        f" Researcher {retired[0]} held no other paper and was retired; undoing "
        f"this {verb} in its History brings it back."
    )


def _last_paper(researcher: Researcher, authorship: Authorship) -> bool:
    """Whether moving or detaching ``authorship`` retires ``researcher``
    (:func:`curation.edits.would_retire`); the confirmation page says so
    before."""
    return authorship.researcher_id == researcher.pk and edits.would_retire(
        researcher, [authorship.pk]
    )
