"""django-filter FilterSets of the public API."""

from __future__ import annotations

import json

import django_filters
from django.db import connection, models
from rest_framework.exceptions import ValidationError

from curation.models import Proposal
from wovepaper.identifiers import orcid_normalise
from wovepaper.models import Authorship, Paper, Researcher

# Largest id a BigAutoField holds; larger numbers are a 400, not a database error.
MAX_ID = 2**63 - 1


class PaperFilter(django_filters.FilterSet):
    """Paper filters: category, published range, arXiv id, DOI, researcher."""

    category = django_filters.CharFilter(method="filter_category", max_length=40)
    published_from = django_filters.DateFilter(
        field_name="published", lookup_expr="gte"
    )
    published_to = django_filters.DateFilter(field_name="published", lookup_expr="lte")
    researcher = django_filters.NumberFilter(
        field_name="authorships__researcher",
        distinct=True,
        min_value=1,
        max_value=MAX_ID,
        decimal_places=0,
    )
    doi = django_filters.CharFilter(method="filter_doi", max_length=255)
    orcid = django_filters.CharFilter(
        method="filter_orcid",
        max_length=60,
        help_text="Papers with an author of this ORCID iD (on the byline or on "
        "the curated researcher); a URL is accepted.",
    )
    has_orcid = django_filters.BooleanFilter(
        method="filter_has_orcid",
        help_text="Papers where at least one authorship carries an ORCID iD.",
    )
    institution = django_filters.NumberFilter(
        field_name="authorships__institutions",
        distinct=True,
        min_value=1,
        max_value=MAX_ID,
        decimal_places=0,
        help_text="Papers with an author affiliated to this institution id.",
    )
    cited_by_min = django_filters.NumberFilter(
        field_name="cited_by_count",
        lookup_expr="gte",
        min_value=0,
        max_value=MAX_ID,
        decimal_places=0,
    )
    cited_by_max = django_filters.NumberFilter(
        field_name="cited_by_count",
        lookup_expr="lte",
        min_value=0,
        max_value=MAX_ID,
        decimal_places=0,
    )

    class Meta:
        model = Paper
        fields = ("primary_category", "arxiv_id")

    def filter_orcid(self, queryset, name, value):
        try:
            orcid = orcid_normalise(value)
        except ValueError as exc:
            raise ValidationError({"orcid": str(exc)}) from exc
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

    name = django_filters.CharFilter(field_name="display_name", lookup_expr="icontains")

    class Meta:
        model = Researcher
        fields = ("orcid",)


class ProposalFilter(django_filters.FilterSet):
    """Curator filters on proposals: kind, status, block, researcher."""

    researcher = django_filters.NumberFilter(
        method="filter_researcher", min_value=1, max_value=MAX_ID, decimal_places=0
    )

    class Meta:
        model = Proposal
        fields = ("kind", "status", "block_key")

    def filter_researcher(self, queryset, name, value):
        return queryset.filter(
            models.Q(researcher_id=value) | models.Q(other_researcher_id=value)
        )


class AuthorshipFilter(django_filters.FilterSet):
    """Authorship filters: paper, researcher, ORCID, assigned or not."""

    paper = django_filters.NumberFilter(
        field_name="paper", min_value=1, max_value=MAX_ID, decimal_places=0
    )
    researcher = django_filters.NumberFilter(
        field_name="researcher", min_value=1, max_value=MAX_ID, decimal_places=0
    )
    assigned = django_filters.BooleanFilter(
        field_name="researcher", lookup_expr="isnull", exclude=True
    )
    orcid = django_filters.CharFilter(field_name="orcid", max_length=19)

    class Meta:
        model = Authorship
        fields = ()
