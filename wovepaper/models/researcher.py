from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from wovepaper.text import slug_for


class LiveResearcherQuerySet(models.QuerySet):
    """Researcher queries; ``live()`` hides profiles merged into another."""

    def live(self) -> LiveResearcherQuerySet:
        """Return the researchers that are neither merged away nor retired."""
        return self.filter(merged_into__isnull=True, retired=False)


class Researcher(models.Model):
    """Our curated profile of one person (an author profile); a "user" is a login.

    Researchers are never hard-deleted: a merge sets ``merged_into`` on the profile that
    goes away, so its URL keeps working and redirects to the survivor. ``locked``
    means a
    curator confirmed the profile: automation may propose changes but never applies one.
    ``retired`` marks a profile an undo emptied (the split or ``new`` proposal that
    created it was undone) or a curator emptied (moved or detached every paper
    it held): kept, so its URL and history stay, but not listed.
    ``revision`` counts the curation changes that touched the profile; a merge or
    split proposal made on an older revision is stale.
    """

    display_name = models.CharField(max_length=300)
    name_variants = models.JSONField(default=list, blank=True)
    block_key = models.CharField(max_length=200, db_index=True, blank=True)
    orcid = models.CharField(max_length=19, unique=True, null=True, blank=True)
    s2_author_id = models.CharField(max_length=32, unique=True, null=True, blank=True)
    openalex_author_id = models.CharField(
        max_length=32, unique=True, null=True, blank=True
    )
    slug = models.SlugField(max_length=120, blank=True)
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="merged"
    )
    locked = models.BooleanField(default=False)
    retired = models.BooleanField(default=False)
    revision = models.PositiveIntegerField(default=0)
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="claimed_researchers",
    )
    created = models.DateTimeField(auto_now_add=True)
    modified = models.DateTimeField(auto_now=True)

    objects = LiveResearcherQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        permissions = [
            ("merge_researcher", "Can merge researchers"),
            ("split_researcher", "Can split a researcher"),
            ("move_authorship", "Can move or detach an authorship"),
            ("lock_researcher", "Can lock and unlock a researcher"),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} (#{self.pk})"

    def save(self, *args, **kwargs) -> None:
        self.fill_slug()
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        """The canonical public page: ``/researchers/<id>-<slug>``.

        A row written without ``save()`` (a bulk load) has no slug yet; its URL
        uses ``researcher`` until one is set.
        """
        return reverse(
            "researcher", kwargs={"pk": self.pk, "slug": self.slug or "researcher"}
        )

    def fill_slug(self) -> None:
        """Give the row its slug, from the display name, if it has none:
        :meth:`save` does; a ``bulk_create`` of new rows calls it first."""
        if not self.slug:
            self.slug = slug_for(self.display_name, fallback="researcher")


class Follow(models.Model):
    """A user follows a researcher and hears about their new papers."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="follows"
    )
    researcher = models.ForeignKey(
        Researcher, on_delete=models.CASCADE, related_name="followers"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "researcher"], name="follow_unique_user_researcher"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} follows {self.researcher}"


class CategoryFollow(models.Model):
    """A user follows an arXiv category (``hep-th``, ``cs.LG``) and hears of it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="category_follows",
    )
    category = models.CharField(max_length=40)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["category"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "category"], name="categoryfollow_unique_user_category"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} follows {self.category}"


class DigestDelivery(models.Model):
    """One daily digest e-mail sent to one user: the new papers of what they follow.

    Unique on (user, day), so a redelivered digest task sends nothing twice.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="digest_deliveries",
    )
    day = models.DateField(help_text="The UTC day the digest covers.")
    paper_count = models.PositiveIntegerField(default=0)
    sent = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-day", "user_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "day"], name="digestdelivery_unique_user_day"
            )
        ]

    def __str__(self) -> str:
        return f"digest for {self.user} on {self.day}"


class Notification(models.Model):
    """A message to a follower about a curated change to a researcher they follow.

    One row per user and curation event (``event_id`` is a
    ``curation.CurationEvent`` id, kept as a plain integer so the core app does not
    depend on curation), so a redelivered notification task writes nothing twice.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="notifications",
    )
    researcher = models.ForeignKey(
        Researcher, on_delete=models.CASCADE, related_name="notifications"
    )
    event_id = models.PositiveBigIntegerField()
    subject = models.CharField(max_length=300)
    body = models.TextField()
    emailed = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "event_id"], name="notification_one_per_user_event"
            )
        ]

    def __str__(self) -> str:
        return f"to {self.user}: {self.subject}"
