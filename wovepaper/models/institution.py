from __future__ import annotations

from django.db import models
from django.urls import reverse

from wovepaper.text import slug_for


class Institution(models.Model):
    """A research organisation, identified by its ROR id where known.

    Source: ROR schema v2 ``id``, ``names[]``, ``locations[].geonames_details``,
    ``types`` (https://ror.readme.io/docs/data-structure).
    """

    ror_id = models.CharField(
        max_length=16,
        unique=True,
        null=True,
        blank=True,
        help_text="ROR id without the https://ror.org/ prefix, e.g. 05a28rw58.",
    )
    name = models.CharField(max_length=500)
    aliases = models.JSONField(default=list, blank=True)
    country_code = models.CharField(max_length=2, blank=True)
    types = models.JSONField(default=list, blank=True)
    relationships = models.JSONField(
        default=list,
        blank=True,
        help_text='ROR relationships: [{"type": "parent"|"child"|"related"|...,'
        ' "ror_id": ..., "label": ...}].',
    )
    status = models.CharField(
        max_length=16,
        default="active",
        help_text="ROR status: active, inactive, withdrawn.",
    )
    slug = models.SlugField(max_length=120, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    modified = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        indexes = [models.Index(fields=["name"])]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        if not self.slug:
            self.slug = slug_for(self.name, fallback="institution")
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        """The canonical public page: ``/institutions/<id>-<slug>``.

        A row written without ``save()`` (a bulk load) uses ``institution`` as
        its slug until one is set.
        """
        return reverse(
            "institution", kwargs={"ref": f"{self.pk}-{self.slug or 'institution'}"}
        )
