from __future__ import annotations

from django.db import models


class HarvestRun(models.Model):
    """One harvest of one source: what was asked, how far it got, what it counted.

    ``cursor`` keeps the position reached (a file index, an OAI resumptionToken, a
    Crossref cursor) after every page, so a killed run resumes from there.
    """

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        FAILED = "failed", "failed"

    source = models.CharField(max_length=32, db_index=True)
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.RUNNING
    )
    cursor = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    records_seen = models.PositiveIntegerField(default=0)
    papers_created = models.PositiveIntegerField(default=0)
    papers_updated = models.PositiveIntegerField(default=0)
    papers_unchanged = models.PositiveIntegerField(default=0)
    records_failed = models.PositiveIntegerField(default=0)
    files_skipped = models.JSONField(
        default=list,
        blank=True,
        help_text='Files that hold no records: [{"file": ..., "reason": ...}].',
    )
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        permissions = [("operate_harvestrun", "Can resume and re-run harvest runs")]

    def __str__(self) -> str:
        return f"{self.source} run #{self.pk} ({self.status})"


class RawRecord(models.Model):
    """A record exactly as fetched, kept before it is parsed.

    One row per distinct payload of one external record: fetching the same bytes again
    reuses the row (``last_run`` moves on), a changed payload adds a row. A record that
    fails to parse keeps ``status=failed`` and its ``error``, naming the record and
    the problem.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        PARSED = "parsed", "parsed"
        FAILED = "failed", "failed"

    source = models.CharField(max_length=32)
    external_id = models.CharField(max_length=500)
    locator = models.CharField(max_length=1000, blank=True)
    payload = models.TextField()
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the payload.")
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING
    )
    error = models.TextField(blank=True)
    first_run = models.ForeignKey(
        HarvestRun, on_delete=models.PROTECT, related_name="+"
    )
    last_run = models.ForeignKey(
        HarvestRun, on_delete=models.PROTECT, related_name="raw_records"
    )
    fetched_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "external_id", "content_hash"],
                name="rawrecord_unique_source_id_hash",
            )
        ]
        indexes = [models.Index(fields=["status"])]

    def __str__(self) -> str:
        return f"{self.source}:{self.external_id} ({self.status})"

    @property
    def problem(self) -> str:
        """The error as a line naming the record once: ``<record>: <error>``, or
        the error alone when it starts by naming the record already (a record
        known only by its place), or when a file-level failure (id
        ``file:<locator>``) has an error that starts by naming that file (or an
        entry of it: ``#entry-0``)."""
        name = self.external_id.removeprefix("file:")
        if self.error.startswith(f"{name}: "):
            return self.error  # a record named by its place (no id of its own)
        head, sep, _ = self.error.partition(": ")
        if self.external_id.startswith("file:") and sep and name in head:
            return self.error
        return f"{name}: {self.error}"


class SourceAuthor(models.Model):
    """An author profile as OpenAlex or Semantic Scholar keeps it.

    Evidence for matching and curation, never a curated researcher: the source's
    own disambiguation made it. Byline slots point at it through
    ``Authorship.openalex_author_id`` / ``s2_author_id``. When OpenAlex merged a
    profile into another, ``merged_into`` names the survivor and the slots that
    carried the old id were moved to the new one
    (:func:`harvest.services.authors.source_author_upsert`).
    """

    class Source(models.TextChoices):
        OPENALEX = "openalex", "OpenAlex"
        SEMANTICSCHOLAR = "semanticscholar", "Semantic Scholar"

    source = models.CharField(max_length=32, choices=Source.choices)
    external_id = models.CharField(max_length=32)
    name = models.CharField(max_length=500, blank=True)
    aliases = models.JSONField(default=list, blank=True)
    orcid = models.CharField(max_length=19, blank=True, db_index=True)
    ror_ids = models.JSONField(default=list, blank=True)
    affiliations = models.JSONField(default=list, blank=True)
    works_count = models.PositiveIntegerField(null=True, blank=True)
    merged_into = models.CharField(max_length=32, blank=True)
    deleted = models.BooleanField(default=False)
    raw_record = models.ForeignKey(
        RawRecord, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    first_seen = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["source", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "external_id"], name="sourceauthor_unique_id"
            )
        ]

    def __str__(self) -> str:
        return f"{self.source}:{self.external_id} {self.name}".strip()


class DepartedSlot(models.Model):
    """A curated byline slot a re-harvest deleted, kept for the person's return.

    A new version of a paper that no longer prints an author deletes the
    author's slot, and with it the curator's work on it: its researcher and
    the curator's constraints ("not this person" from a rejected attach, a
    must-link from a move). A source that drops an author and prints them again
    later (OpenAlex and Crossref author lists change between records) then
    brought the rejected attach back to the queue. The slot's curation is
    kept here, and a later byline that prints the same name key with a given
    name that can be the person's gets it back
    (:func:`harvest.services.upsert._byline_sync`): the same row id, the same
    researcher (its survivor when merged since; none when retired, or when it
    holds another slot of the paper by then) and the same constraint rows
    (same ids, so the events that made them still undo them).

    Attributes:
        constraints: ``[{"id", "kind", "researcher", "other_researcher",
            "event", "active", "undone", "created"}]``: the constraint rows the
            slot held, and whether their event stood undone then.
    """

    paper = models.ForeignKey(
        "wovepaper.Paper", on_delete=models.CASCADE, related_name="departed_slots"
    )
    authorship_id = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="The deleted row's id, which the slot gets back when it "
        "returns (ids are never reused): the events that moved it reach it.",
    )
    position = models.PositiveIntegerField(help_text="Where the slot was, 1-based.")
    raw_name = models.CharField(max_length=500)
    given_name = models.CharField(max_length=300, blank=True)
    family_name = models.CharField(max_length=300, blank=True)
    name_key = models.CharField(max_length=300)
    researcher = models.ForeignKey(
        "wovepaper.Researcher",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    constraints = models.JSONField(default=list, blank=True)
    departed = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["paper_id", "position", "id"]

    def __str__(self) -> str:
        return f"{self.raw_name} (left paper {self.paper_id} at {self.position})"
