"""Cursor pagination: stable under inserts, with a page-size cap."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from rest_framework.exceptions import NotFound
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
