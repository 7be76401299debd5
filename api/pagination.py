"""Cursor pagination: stable under inserts, with a page-size cap."""

from __future__ import annotations

from rest_framework.pagination import CursorPagination


class IdCursorPagination(CursorPagination):
    """Cursor pages ordered by descending id; ``page_size`` up to 200."""

    ordering = "-id"
    page_size = 25
    page_size_query_param = "page_size"
    max_page_size = 200
