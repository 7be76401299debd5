"""The proposal queue's filters and lanes: score band, name block, large
collaborations, field, and the queue's order.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.views.main import SEARCH_VAR, ChangeList
from django.db.models import Count, Q

from curation import selectors
from curation.models import Proposal
from wovepaper.models import Paper


class ScoreBandFilter(admin.SimpleListFilter):
    """Filter proposals by score band: at least :data:`HIGH`, from the
    matcher's joining threshold to :data:`HIGH`, and below the threshold.

    The threshold is the active model's (0.4 for a model ``train_matcher``
    made with its default), else ``CURATION_ATTACH_THRESHOLD`` (0.6 for the
    default weights): with fixed bands a trained model's attaches, all at or
    above 0.4, would mostly fall in "low".
    """

    title = "score"
    parameter_name = "score_band"
    HIGH = 0.9

    def _bands(self) -> dict[str, tuple[float, float, str]]:
        t = min(selectors.joining_threshold(remembered=True), self.HIGH)
        return {
            "high": (self.HIGH, 1.01, f"≥ {self.HIGH:g}"),
            "mid": (t, self.HIGH, f"{t:g} – {self.HIGH:g}"),
            "low": (
                0.0,
                t,
                f"< {t:g} (an attach or merge below the joining threshold)",
            ),
        }

    def lookups(self, request, model_admin):
        return [(k, v[2]) for k, v in self._bands().items()]

    def queryset(self, request, queryset):
        band = self._bands().get(self.value() or "")
        if not band:
            return queryset
        return queryset.filter(score__gte=band[0], score__lt=band[1])


# The queue's order: most papers moved first, then the most borderline score.
QUEUE_ORDER = ("-impact", "uncertainty", "id")
# Merge rows a block's review page offers at most (one fewer than its
# profiles, at least one); a block needing more merges is applied and
# reviewed again.
MERGE_ROWS = 10


class QueueChangeList(ChangeList):
    """Marks the queue's real order in the column headers (not Meta.ordering)."""

    def _get_default_ordering(self):
        return list(QUEUE_ORDER)


class BlockFilter(admin.SimpleListFilter):
    """Filter proposals by block; lists the blocks with the most pending work.

    Any block key works as ``?block=<key>`` (the list shows the busiest 20; the
    search box also matches block keys).
    """

    title = "block"
    parameter_name = "block"
    MAX_CHOICES = 20

    def lookups(self, request, model_admin):
        busiest = (
            Proposal.objects.filter(status=Proposal.Status.PENDING)
            .exclude(block_key="")
            .values("block_key")
            .annotate(n=Count("id"))
            .order_by("-n", "block_key")[: self.MAX_CHOICES]
        )
        return [
            (row["block_key"], f"{row['block_key']} ({row['n']})") for row in busiest
        ]

    def queryset(self, request, queryset):
        value = self.value()
        return queryset.filter(block_key=value[:200]) if value else queryset


class LaneFilter(admin.SimpleListFilter):
    """The queue's lanes: proposals holding a slot of a large collaboration's
    paper (over 100 authors: ``selectors.LARGE_COLLABORATION`` in their
    evidence) have a lane of their own, and the queue opens on the other.

    Such slots were 51% of the demo's proposals (issue 47), and print little
    beyond a name and the collaboration's shared affiliation: reviewed among
    the rest, they buried the proposals a curator can decide on evidence.
    """

    title = "lane"
    parameter_name = "lane"
    MAIN, LARGE, ALL = "main", "large", "all"

    def lookups(self, request, model_admin):
        return [
            (self.MAIN, "main (no paper over 100 authors)"),
            (self.LARGE, "large collaborations (papers over 100 authors)"),
            (self.ALL, "all"),
        ]

    def value(self):
        # "main" by default, but a search (?q=) covers every lane unless one
        # was chosen: an arXiv id or a name of a large collaboration's slot
        # found nothing in "main" (new-user trial).
        if super().value() is None and self.request.GET.get(SEARCH_VAR, "").strip():
            return self.ALL
        return super().value() or self.MAIN

    def choices(self, changelist):
        # As SimpleListFilter's, less its "All" entry: "main" is the default,
        # and "all" a lane of its own.
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == str(lookup),
                "query_string": changelist.get_query_string(
                    {self.parameter_name: lookup}
                ),
                "display": title,
            }

    def queryset(self, request, queryset):
        # The key is only ever written as true: has_key excludes the rest
        # on PostgreSQL and SQLite alike (a missing key's NULL would not).
        large = Q(evidence__has_key=selectors.LARGE_COLLABORATION)
        if self.value() == self.LARGE:
            return queryset.filter(large)
        if self.value() == self.MAIN:
            return queryset.exclude(large)
        return queryset


class FieldFilter(admin.SimpleListFilter):
    """Filter proposals by the primary arXiv category of the papers involved.

    A proposal matches when one of its authorships' papers, or one of its
    researcher's papers (for merges and splits), has that primary category.
    """

    title = "field"
    parameter_name = "field"
    MAX_CHOICES = 40

    def lookups(self, request, model_admin):
        top = (
            Paper.objects.exclude(primary_category="")
            .values("primary_category")
            .annotate(n=Count("id"))
            .order_by("-n", "primary_category")[: self.MAX_CHOICES]
        )
        return [(row["primary_category"], row["primary_category"]) for row in top]

    def queryset(self, request, queryset):
        value = self.value()
        if not value:
            return queryset
        matching = Proposal.objects.filter(
            Q(authorships__paper__primary_category=value)
            | Q(researcher__authorships__paper__primary_category=value)
        ).values("pk")
        return queryset.filter(pk__in=matching)
