"""Cursor pagination (stable under inserts, page size capped) and its ordering."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from rest_framework.exceptions import NotFound
from rest_framework.filters import OrderingFilter
from rest_framework.pagination import CursorPagination


class IdCursorPagination(CursorPagination):
    """Cursor pages ordered by descending id; ``page_size`` up to 200."""

    def paginate_queryset(self, queryset, request, view=None):
        """One page; a cursor whose position is not a value of the ordering field
        (a hand-made ``p=abc`` where an id or a date belongs) is "Invalid cursor"
        (404), as an undecodable one already is, not a 500.

        Raises:
            NotFound: the cursor cannot be read or names no position.
        """
        try:
            return super().paginate_queryset(queryset, request, view)
        except (ValueError, TypeError, ValidationError) as exc:
            raise NotFound(self.invalid_cursor_message) from exc

    ordering = "-id"
    page_size = 25
    page_size_query_param = "page_size"
    max_page_size = 200
    # Set by a view whose total is cheap to count (one indexed count): the page
    # then carries it as ``count``. Lists that would scan a large filtered set
    # to count (the paper list) leave it out.
    total: int | None = None

    def get_paginated_response(self, data):
        """``{"next", "previous", "results"}``, plus ``count`` when it is known."""
        response = super().get_paginated_response(data)
        if self.total is not None:
            response.data["count"] = self.total
        return response

    def get_paginated_response_schema(self, schema: dict) -> dict:
        """DRF's cursor page with our links and the optional ``count``."""
        page = super().get_paginated_response_schema(schema)
        page["properties"]["next"]["example"] = (
            "https://wovepaper.example/api/papers/?cursor=cD0yMDA3LTAzLTMx"
        )
        page["properties"]["previous"]["example"] = (
            "https://wovepaper.example/api/papers/?cursor=cj0xJnA9MjAwNy0wMy0zMQ%3D%3D"
        )
        page["properties"]["count"] = {
            "type": "integer",
            "minimum": 0,
            "example": 1,
            "description": "How many results the whole list holds; given only "
            "where counting is cheap (a researcher's papers, the proposals).",
        }
        return page


class AliasOrderingFilter(OrderingFilter):
    """``ordering=`` over public field names that sort on null-free annotations.

    Cursor pagination needs a value on every row to make a cursor from, so
    ``published`` sorts on ``sort_date`` (undated papers as 0001-01-01) and
    ``cited_by_count`` on ``cited_sort`` (unknown counts as -1); the view
    annotates both. Unknown names are ignored (DRF's OrderingFilter), leaving
    the default order, newest harvested first (``-id``).
    """

    ordering_param = "ordering"
    aliases = {"published": "sort_date", "cited_by_count": "cited_sort", "id": "id"}
    ordering_description = (
        "Sort order: `published`, `cited_by_count` or `id`, with `-` for "
        "descending (e.g. `-published`, newest first; `-cited_by_count`, most "
        "cited first; undated papers count as oldest and unknown citation counts "
        "as lowest). One field; the default is `-id` (newest harvested first)."
    )

    def get_valid_fields(self, queryset, view, context=None):
        """The public names a client may ask for."""
        return [(public, public) for public in self.aliases]

    def get_ordering(self, request, queryset, view):
        """The first ordering field asked for, as its annotation, then the id.

        Dates and citation counts repeat; the cursor's position is the first
        field and ties are counted by offset, which is exact only if ties come
        back in the same order every time: the id breaks them (DRF docs,
        CursorPagination: "should be an unchanging, unique or nearly unique
        field").
        """
        ordering = super().get_ordering(request, queryset, view) or ["-id"]
        first = ordering[0]
        sign = "-" if first.startswith("-") else ""
        field = self.aliases[first.lstrip("-")]
        return [sign + field] if field == "id" else [sign + field, sign + "id"]
