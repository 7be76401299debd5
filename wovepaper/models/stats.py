from __future__ import annotations

from django.db import models

from .researcher import Researcher


class ResearcherStats(models.Model):
    """What browsing and search show of a live researcher, kept beside the profile.

    Derived, never curated: :func:`wovepaper.stats.researcher_stats_refresh`
    rewrites a researcher's row from its visible papers whenever a curation
    change, a matching run or a harvest bumps the researcher's cache version
    (:func:`wovepaper.cache.researchers_changed`), and ``manage.py
    researcher_stats`` rebuilds every row. A researcher without a row (merged
    away, retired, or with no visible paper) is not listed by the browse pages.
    """

    researcher = models.OneToOneField(
        Researcher, on_delete=models.CASCADE, primary_key=True, related_name="stats"
    )
    paper_count = models.PositiveIntegerField(default=0)
    citation_count = models.PositiveIntegerField(
        default=0, help_text="Sum of the visible papers' cited_by_count."
    )
    h_index = models.PositiveIntegerField(default=0)
    first_year = models.PositiveSmallIntegerField(null=True, blank=True)
    last_year = models.PositiveSmallIntegerField(null=True, blank=True)
    active_year = models.PositiveSmallIntegerField(
        default=0,
        help_text="last_year, or 0 without a dated paper: the recently-active "
        "order (an index with NULLS LAST is not portable to SQLite).",
    )
    main_category = models.CharField(
        max_length=40, blank=True, help_text="The commonest primary arXiv category."
    )
    latest_affiliation = models.CharField(max_length=300, blank=True)
    per_year = models.JSONField(
        default=list,
        blank=True,
        help_text='[{"year", "papers", "citations"}] from the first year to the '
        "last, years without papers included.",
    )
    sort_name = models.CharField(
        max_length=300, help_text="Folded family name, then given name: A-Z order."
    )
    letter = models.CharField(
        max_length=1, help_text="A-Z of the folded family name; '#' for others."
    )
    refreshed = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "researcher stats"
        # One for each order and filter of the browse page
        # (wovepaper.browse.researcher_listing), so a page reads its rows in
        # order instead of sorting every researcher.
        indexes = [
            models.Index(fields=["letter", "sort_name"]),
            models.Index(fields=["sort_name"]),
            models.Index(fields=["-paper_count", "sort_name"]),
            models.Index(fields=["-citation_count", "-paper_count", "sort_name"]),
            models.Index(fields=["-active_year", "-paper_count", "sort_name"]),
            models.Index(fields=["main_category", "-paper_count"]),
        ]

    def __str__(self) -> str:
        return f"stats of researcher #{self.researcher_id}"
