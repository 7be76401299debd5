"""Read-only serializers of the curated state."""

from __future__ import annotations

from rest_framework import serializers

from wovepaper.models import Authorship, Paper, Researcher


class ResearcherRefSerializer(serializers.ModelSerializer):
    """A researcher named from elsewhere (an authorship's assignment)."""

    class Meta:
        model = Researcher
        fields = ("id", "display_name", "orcid")


class AuthorshipSerializer(serializers.ModelSerializer):
    """One byline slot; ``researcher`` is the applied assignment or null."""

    researcher = ResearcherRefSerializer(read_only=True)

    class Meta:
        model = Authorship
        fields = (
            "position",
            "raw_name",
            "given_name",
            "family_name",
            "suffix",
            "is_collaboration",
            "orcid",
            "affiliations",
            "researcher",
        )


class PaperSerializer(serializers.ModelSerializer):
    """A paper with its byline in order."""

    authorships = AuthorshipSerializer(many=True, read_only=True)
    abs_url = serializers.CharField(read_only=True)
    pdf_url = serializers.CharField(read_only=True)

    class Meta:
        model = Paper
        fields = (
            "id",
            "arxiv_id",
            "doi",
            "title",
            "abstract",
            "published",
            "updated",
            "latest_version",
            "versions",
            "categories",
            "primary_category",
            "journal_ref",
            "comments",
            "report_no",
            "license",
            "withdrawn",
            "cited_by_count",
            "abs_url",
            "pdf_url",
            "authorships",
        )


class PaperRefSerializer(serializers.ModelSerializer):
    """A paper listed under a researcher, without its byline."""

    class Meta:
        model = Paper
        fields = ("id", "arxiv_id", "doi", "title", "published", "primary_category")


class ResearcherSerializer(serializers.ModelSerializer):
    """A live researcher with the number of papers applied to them."""

    paper_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Researcher
        fields = (
            "id",
            "display_name",
            "name_variants",
            "orcid",
            "s2_author_id",
            "openalex_author_id",
            "locked",
            "paper_count",
        )
