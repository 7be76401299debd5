from __future__ import annotations

import datetime as dt

from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.urls import reverse

from wovepaper.text import latex_to_text, slug_for, strings_in, validate_string_list


class Paper(models.Model):
    """One scholarly work, whichever sources described it.

    Identifiers unify records across sources: the arXiv id (new style ``2201.05500`` or
    old style ``hep-th/9901001``, always without the version), the DOI (lower-cased,
    no resolver prefix), the OpenAlex work id and the Semantic Scholar paper id.
    ``versions`` keeps every arXiv version seen, oldest first, as
    ``[{"version": 1, "submitted": "<ISO datetime>", "size": "15kb"}, ...]``.
    """

    arxiv_id = models.CharField(max_length=40, unique=True, null=True, blank=True)
    doi = models.CharField(max_length=255, unique=True, null=True, blank=True)
    openalex_id = models.CharField(max_length=32, unique=True, null=True, blank=True)
    s2_id = models.CharField(max_length=64, unique=True, null=True, blank=True)
    title = models.TextField()
    abstract = models.TextField(blank=True)
    published = models.DateField(
        null=True, blank=True, help_text="Date of the first version."
    )
    published_precision = models.CharField(
        max_length=5,
        choices=[("day", "day"), ("month", "month"), ("year", "year")],
        default="day",
        help_text="How much of the published date the source gave (Crossref "
        "date-parts may stop at the month or the year).",
    )
    updated = models.DateField(
        null=True, blank=True, help_text="Date of the latest version."
    )
    latest_version = models.PositiveSmallIntegerField(default=1)
    versions = models.JSONField(default=list, blank=True)
    categories = models.JSONField(
        default=list, blank=True, validators=[validate_string_list]
    )
    primary_category = models.CharField(max_length=40, blank=True, db_index=True)
    journal_ref = models.TextField(blank=True)
    comments = models.TextField(blank=True)
    report_no = models.TextField(blank=True)
    license = models.URLField(max_length=300, blank=True)
    cited_by_count = models.PositiveIntegerField(null=True, blank=True)
    s2_not_found_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When Semantic Scholar last answered that it does not know this "
        "paper (the S2 lookup asks again after S2_RECHECK_DAYS).",
    )

    class HiddenBy(models.TextChoices):
        """Why a paper is hidden: a re-harvest shows again only what its
        source hid."""

        SOURCE = "source", "deleted at the source"
        CURATOR = "curator", "hidden in the admin (its History says by whom)"

    withdrawn = models.BooleanField(default=False)
    review_flags = models.JSONField(
        default=list,
        blank=True,
        help_text="What a curator should look at, as the harvest found it "
        "(e.g. 'possible repeated author').",
    )
    authors_incomplete = models.BooleanField(
        default=False,
        help_text="The source's byline lists only some authors (arXiv's 'et al.', "
        "'additional authors not shown').",
    )
    hidden = models.BooleanField(
        default=False,
        help_text="Kept, but not shown on the public pages, the API and "
        "matching. Hidden in the admin: stays hidden whatever a re-harvest "
        "brings. Deleted at the source: shown again when the source sends "
        "the record again.",
    )
    hidden_by = models.CharField(
        "hidden because",
        max_length=8,
        choices=HiddenBy.choices,
        blank=True,
        # A default the bulk writers read (harvest.services.copy_rows._plan):
        # without one their INSERT left it NULL, failing every bulk batch.
        default="",
        editable=False,
        help_text="Why the paper is hidden; read only while it is (a hidden "
        "paper without it was deleted at its source).",
    )
    source_datestamp = models.DateField(
        null=True,
        blank=True,
        help_text="Source datestamp of the record whose text is shown.",
    )
    text_source = models.CharField(
        max_length=16,
        default="arxiv",
        help_text="The source whose title, abstract and byline are shown "
        "(harvest.services.SOURCE_PRECEDENCE).",
    )
    source_hash = models.CharField(
        max_length=64,
        blank=True,
        help_text="SHA-256 of the raw record whose text is shown (a tie-breaker).",
    )
    slug = models.SlugField(max_length=120, blank=True, db_index=False)
    search_vector = SearchVectorField(
        null=True,
        editable=False,
        help_text="Full-text search document (PostgreSQL only): title, authors, "
        "abstract; kept by wovepaper.search.search_vectors_refresh.",
    )
    created = models.DateTimeField(auto_now_add=True)
    modified = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-published", "-id"]
        indexes = [models.Index(fields=["-published", "-id"])]

    def __str__(self) -> str:
        """The paper's arXiv id (else DOI, else pk) and title, LaTeX as text."""
        return (
            f"{self.arxiv_id or self.doi or self.pk}: {latex_to_text(self.title)[:80]}"
        )

    def save(self, *args, **kwargs) -> None:
        if not self.slug:
            self.slug = slug_for(self.title, fallback="paper")
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        """The canonical public page: ``/papers/<arXiv id or our id>-<slug>``.

        A row written without ``save()`` (a bulk load) has no slug yet; its URL
        uses ``paper`` until one is set.
        """
        return reverse(
            "paper", kwargs={"ref": f"{self.url_key}-{self.slug or 'paper'}"}
        )

    @property
    def published_shown(self) -> str:
        """The published date to its known precision: ``2019``, ``2019-03`` or
        ``2019-03-05``; "" when undated (:func:`date_shown`)."""
        return date_shown(self.published, self.published_precision)

    @property
    def category_list(self) -> list[str]:
        """The paper's arXiv categories as strings, primary first
        (:func:`wovepaper.text.strings_in`): what the pages, feeds and
        digests show, so a row whose ``categories`` were edited by hand in
        the database (``7``, ``[5, null]``; the admin refuses them) costs
        that row's categories, not its page."""
        return strings_in(self.categories)

    @property
    def url_key(self) -> str:
        """The paper's key in public URLs: its arXiv id, else our numeric id."""
        return self.arxiv_id or str(self.pk)

    @property
    def abs_url(self) -> str:
        """The arXiv abstract page, or "" when the paper has no arXiv id."""
        return f"https://arxiv.org/abs/{self.arxiv_id}" if self.arxiv_id else ""

    @property
    def pdf_url(self) -> str:
        """The arXiv PDF of the latest version, or "" when there is no arXiv id."""
        return f"https://arxiv.org/pdf/{self.arxiv_id}" if self.arxiv_id else ""


def date_shown(day: dt.date | None, precision: str) -> str:
    """A date to its known precision: ``2019``, ``2019-03`` or ``2019-03-05``.

    Args:
        day: the date as stored (a partial date is stored as its first day).
        precision: ``"year"``, ``"month"`` or anything else for a whole date.

    Returns:
        The ISO 8601 prefix the precision allows; "" when ``day`` is None.
    """
    if day is None:
        return ""
    return day.isoformat()[: {"year": 4, "month": 7}.get(precision, 10)]


class Authorship(models.Model):
    """One byline slot of one paper: the name as printed and the evidence about it.

    ``researcher`` is the curated assignment: it is set only by an applied curation
    step (a curator's decision or the identifier policy), never by the harvest.
    A collaboration (``is_collaboration``) keeps its slot but is never a person, so it
    is never assigned to a researcher.
    """

    # Not indexed alone: the unique (paper, position) index serves lookups by
    # paper. The identifier columns and the assignment are indexed only where
    # set (Meta.indexes): most slots carry none, and a bulk harvest paid an
    # index entry per empty value (bench/ingest.py).
    paper = models.ForeignKey(
        Paper, on_delete=models.CASCADE, related_name="authorships", db_index=False
    )
    position = models.PositiveIntegerField(help_text="1-based, as printed.")
    raw_name = models.CharField(max_length=500)
    given_name = models.CharField(max_length=300, blank=True)
    family_name = models.CharField(max_length=300, blank=True)
    suffix = models.CharField(max_length=40, blank=True)
    name_key = models.CharField(max_length=300, blank=True, db_index=True)
    block_key = models.CharField(max_length=200, blank=True, db_index=True)
    is_collaboration = models.BooleanField(default=False)
    orcid = models.CharField(max_length=19, blank=True)
    affiliations = models.JSONField(
        default=list, blank=True, validators=[validate_string_list]
    )
    institutions = models.ManyToManyField(
        "wovepaper.Institution", blank=True, related_name="authorships"
    )
    s2_author_id = models.CharField(max_length=32, blank=True)
    openalex_author_id = models.CharField(max_length=32, blank=True)
    researcher = models.ForeignKey(
        "wovepaper.Researcher",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="authorships",
        db_index=False,
    )
    created = models.DateTimeField(auto_now_add=True)
    modified = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["paper_id", "position"]
        # Partial indexes (PostgreSQL 15 manual, 11.8): an equality lookup on
        # a value (``orcid = '0000-...'``, ``researcher_id = 5``) implies the
        # condition, so the planner uses them; ``exclude(orcid="")`` is the
        # condition itself.
        indexes = [
            models.Index(
                fields=["orcid"],
                condition=~models.Q(orcid=""),
                name="authorship_orcid_set",
            ),
            models.Index(
                fields=["s2_author_id"],
                condition=~models.Q(s2_author_id=""),
                name="authorship_s2_author_set",
            ),
            models.Index(
                fields=["openalex_author_id"],
                condition=~models.Q(openalex_author_id=""),
                name="authorship_openalex_author_set",
            ),
            models.Index(
                fields=["researcher"],
                condition=models.Q(researcher__isnull=False),
                name="authorship_researcher_set",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "position"], name="authorship_unique_paper_position"
            ),
            models.CheckConstraint(
                condition=models.Q(position__gte=1), name="authorship_position_gte_1"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.raw_name} (author {self.position})"

    @property
    def affiliation_list(self) -> list[str]:
        """The affiliation strings printed with this authorship
        (:func:`wovepaper.text.strings_in`): what the pages and the curation
        screens show, so a hand-edited ``affiliations`` (``5``, ``[5, null]``)
        shows as nothing rather than as Python's spelling of it."""
        return strings_in(self.affiliations)
