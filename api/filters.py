"""django-filter FilterSets of the public API."""

from __future__ import annotations

import json

import django_filters
from django import forms
from django.db import connection, models
from rest_framework.exceptions import ValidationError

from curation.models import Proposal
from wovepaper.identifiers import orcid_normalise
from wovepaper.models import Authorship, Paper, Researcher

# Largest id a BigAutoField holds; larger numbers are a 400, not a database error.
MAX_ID = 2**63 - 1

# What a boolean filter takes (django-filter's BooleanWidget reads these).
_TRUE, _FALSE = ("true", "1"), ("false", "0")


class _StrictBooleanField(forms.NullBooleanField):
    """``true``/``false`` (or ``1``/``0``), absent for either; anything else
    is a 400 naming the value. django-filter's own field reads
    ``has_orcid=maybe`` as absent, so the client got every paper and no
    word of its mistake (new-user trial)."""

    def to_python(self, value):
        if value in (None, ""):
            return None
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        # The value goes in params: django-filter formats the message with
        # them, so a "%" in it would fail as a format string (a 500).
        raise forms.ValidationError(
            "%(value)s is not true or false", params={"value": repr(str(value)[:40])}
        )

    def validate(self, value):
        """Any of True, False and None (absent) is valid."""


class StrictBooleanFilter(django_filters.BooleanFilter):
    """A BooleanFilter refusing values other than true and false (the raw
    text reaches the field: the select widgets read any other value as
    absent)."""

    field_class = _StrictBooleanField

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("widget", forms.TextInput)
        super().__init__(*args, **kwargs)


def orcid_value(value: str, field: str = "orcid") -> str:
    """An ORCID iD filter's value, bare: ``0000-0002-1825-0097``, lower-case
    ``x`` or an https://orcid.org/ URL read alike (the checksum verified).

    Raises:
        ValidationError: not an ORCID iD (a 400 naming the field).
    """
    try:
        return orcid_normalise(value)
    except ValueError as exc:
        raise ValidationError({field: [str(exc)]}) from exc


class PaperFilter(django_filters.FilterSet):
    """Paper filters: category, published range, arXiv id, DOI, researcher."""

    category = django_filters.CharFilter(
        method="filter_category",
        max_length=40,
        help_text="arXiv category, primary or cross-listed, matched as a whole "
        "name, e.g. `physics.comp-ph` or `hep-th` (use `primary_category` for "
        "the primary one only).",
    )
    primary_category = django_filters.CharFilter(
        field_name="primary_category",
        help_text="Primary arXiv category, exact, e.g. `physics.optics`; "
        "cross-lists do not count.",
    )
    arxiv_id = django_filters.CharFilter(
        field_name="arxiv_id",
        help_text="arXiv identifier, exact, without version or `arXiv:` prefix: "
        "new style `0704.0038` or old style `hep-th/9901001`.",
    )
    published_from = django_filters.DateFilter(
        field_name="published",
        lookup_expr="gte",
        help_text="Papers whose first version is dated on or after this day: ISO "
        "date, inclusive, e.g. `2007-03-31`. Undated papers never match.",
    )
    published_to = django_filters.DateFilter(
        field_name="published",
        lookup_expr="lte",
        help_text="Papers whose first version is dated on or before this day: ISO "
        "date, inclusive, e.g. `2007-12-31`. Undated papers never match.",
    )
    researcher = django_filters.NumberFilter(
        field_name="authorships__researcher",
        distinct=True,
        min_value=1,
        max_value=MAX_ID,
        decimal_places=0,
        help_text="Papers with an authorship applied to this researcher: our "
        "numeric id, e.g. `1`. Pending proposals do not count, and a merged-away "
        "id matches nothing (its papers moved to the survivor).",
    )
    doi = django_filters.CharFilter(
        method="filter_doi",
        max_length=255,
        help_text="DOI, exact but case-insensitive, bare (no `https://doi.org/` "
        "or `doi:` prefix), e.g. `10.1016/j.jqsrt.2007.01.034`.",
    )
    orcid = django_filters.CharFilter(
        method="filter_orcid",
        max_length=60,
        help_text="Papers with an author of this ORCID iD, printed on the byline "
        "or held by the applied researcher: bare (`0000-0002-1825-0097`) or as "
        "an https://orcid.org/ URL; the checksum is verified (a wrong one is a "
        "400).",
    )
    has_orcid = StrictBooleanFilter(
        method="filter_has_orcid",
        help_text="`true`: papers where at least one byline slot prints an ORCID "
        "iD; `false`: papers where none does. A researcher's own iD does not "
        "count.",
    )
    institution = django_filters.NumberFilter(
        field_name="authorships__institutions",
        distinct=True,
        min_value=1,
        max_value=MAX_ID,
        decimal_places=0,
        help_text="Papers with an author affiliated to this institution: our "
        "numeric institution id, e.g. `1` (not a ROR id).",
    )
    cited_by_min = django_filters.NumberFilter(
        field_name="cited_by_count",
        lookup_expr="gte",
        min_value=0,
        max_value=MAX_ID,
        decimal_places=0,
        help_text="Papers cited at least this many times (inclusive), e.g. `10`. "
        "Papers whose citation count is unknown never match.",
    )
    cited_by_max = django_filters.NumberFilter(
        field_name="cited_by_count",
        lookup_expr="lte",
        min_value=0,
        max_value=MAX_ID,
        decimal_places=0,
        help_text="Papers cited at most this many times (inclusive), e.g. `100`. "
        "Papers whose citation count is unknown never match.",
    )

    class Meta:
        model = Paper
        fields = ()

    def filter_orcid(self, queryset, name, value):
        orcid = orcid_value(value)
        return queryset.filter(
            models.Q(authorships__orcid=orcid)
            | models.Q(authorships__researcher__orcid=orcid)
        ).distinct()

    def filter_has_orcid(self, queryset, name, value):
        with_orcid = Authorship.objects.exclude(orcid="").values("paper_id")
        if value:
            return queryset.filter(pk__in=with_orcid)
        return queryset.exclude(pk__in=with_orcid)

    def filter_category(self, queryset, name, value):
        # JSON containment is a PostgreSQL operator; SQLite (the embedded demo)
        # matches the quoted category inside the stored JSON text instead.
        if connection.vendor == "postgresql":
            return queryset.filter(categories__contains=[value])
        return queryset.filter(categories__icontains=json.dumps(value))

    def filter_doi(self, queryset, name, value):
        return queryset.filter(doi=value.strip().lower())


class ResearcherFilter(django_filters.FilterSet):
    """Filters: ORCID, name (case-insensitive substring of the display name)."""

    name = django_filters.CharFilter(
        field_name="display_name",
        lookup_expr="icontains",
        help_text="Case-insensitive part of the display name, e.g. `yurkin` or "
        "`Maxim A`; other name variants are not searched.",
    )
    orcid = django_filters.CharFilter(
        method="filter_orcid",
        max_length=60,
        help_text="ORCID iD of the researcher: bare (`0000-0002-1825-0097`) or "
        "as an https://orcid.org/ URL; the checksum is verified (a wrong one is "
        "a 400).",
    )

    class Meta:
        model = Researcher
        fields = ()

    def filter_orcid(self, queryset, name, value):
        return queryset.filter(orcid=orcid_value(value))


class ProposalFilter(django_filters.FilterSet):
    """Curator filters on proposals: kind, status, block, researcher."""

    kind = django_filters.ChoiceFilter(
        field_name="kind",
        choices=Proposal.Kind.choices,
        help_text="What the proposal would do, e.g. `new`.",
    )
    status = django_filters.ChoiceFilter(
        field_name="status",
        choices=Proposal.Status.choices,
        help_text="Where the proposal stands, e.g. `pending`.",
    )
    block_key = django_filters.CharFilter(
        field_name="block_key",
        help_text="Blocking key, exact: the folded family name, a space and the "
        "first given initial, e.g. `yurkin m`.",
    )
    researcher = django_filters.NumberFilter(
        method="filter_researcher",
        min_value=1,
        max_value=MAX_ID,
        decimal_places=0,
        help_text="Proposals about this researcher id, as the target or as the "
        "other researcher of a merge, e.g. `1`.",
    )

    class Meta:
        model = Proposal
        fields = ()

    def filter_researcher(self, queryset, name, value):
        return queryset.filter(
            models.Q(researcher_id=value) | models.Q(other_researcher_id=value)
        )


class AuthorshipFilter(django_filters.FilterSet):
    """Authorship filters: paper, researcher, ORCID, assigned or not."""

    paper = django_filters.NumberFilter(
        field_name="paper",
        min_value=1,
        max_value=MAX_ID,
        decimal_places=0,
        help_text="Byline slots of this paper: our numeric paper id, e.g. `1` "
        "(not an arXiv id or DOI).",
    )
    researcher = django_filters.NumberFilter(
        field_name="researcher",
        min_value=1,
        max_value=MAX_ID,
        decimal_places=0,
        help_text="Byline slots applied to this researcher id, e.g. `1`.",
    )
    assigned = StrictBooleanFilter(
        field_name="researcher",
        lookup_expr="isnull",
        exclude=True,
        help_text="`true`: slots with an applied researcher; `false`: slots no "
        "researcher was applied to yet.",
    )
    orcid = django_filters.CharFilter(
        method="filter_orcid",
        max_length=60,
        help_text="ORCID iD printed on the byline slot: bare "
        "(`0000-0002-1825-0097`) or as an https://orcid.org/ URL; the checksum "
        "is verified (a wrong one is a 400).",
    )

    class Meta:
        model = Authorship
        fields = ()

    def filter_orcid(self, queryset, name, value):
        return queryset.filter(orcid=orcid_value(value))
