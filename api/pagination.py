"""Cursor pagination (stable under inserts, page size capped) and its ordering."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db.models import Q
from rest_framework.exceptions import NotFound
from rest_framework.filters import OrderingFilter
from rest_framework.pagination import CursorPagination, _reverse_ordering

# Between a sort value and the row id in a two-field cursor position
# ("2007-03-31|1234"): dates and integers never hold it.
_KEY_SEP = "|"


class IdCursorPagination(CursorPagination):
    """Cursor pages ordered by descending id, or by a repeating field (a
    date, a citation count) then the id; ``page_size`` up to 200.

    DRF's CursorPagination keeps the first ordering field's value as the
    cursor's position and counts the rows that tie with it by offset,
    capped at ``offset_cutoff`` (1,000): 1,273 papers of unknown citation
    count, paged by ``-cited_by_count``, came back as the same 200 papers
    from the sixth page on, for ever, and 73 never (new-user trial). Here a
    two-field ordering whose second field is ``id`` keeps both in the
    position (keyset, or "seek", pagination: ``(value, id)`` past the last
    row; Winand, "Use The Index, Luke", ch. 7, "Paging Through Results"),
    so every row has a position of its own and no offset is needed however
    many rows tie.
    """

    def paginate_queryset(self, queryset, request, view=None):
        """One page; a cursor whose position is not a value of the ordering field
        (a hand-made ``p=abc`` where an id or a date belongs) is "Invalid cursor"
        (404), as an undecodable one already is, not a 500.

        Raises:
            NotFound: the cursor cannot be read or names no position.
        """
        try:
            return self._page(queryset, request, view)
        except (ValueError, TypeError, ValidationError) as exc:
            raise NotFound(self.invalid_cursor_message) from exc

    def _page(self, queryset, request, view):
        """DRF's page walk (the attributes its links read: ``page``,
        ``has_next``, ``next_position`` ...), past a position of one or two
        fields (:meth:`_past`)."""
        self.request = request
        self.page_size = self.get_page_size(request)
        if not self.page_size:
            return None
        self.base_url = request.build_absolute_uri()
        self.ordering = self.get_ordering(request, queryset, view)
        self.cursor = self.decode_cursor(request)
        offset, reverse, position = self.cursor or (0, False, None)
        queryset = queryset.order_by(
            *(_reverse_ordering(self.ordering) if reverse else self.ordering)
        )
        if position is not None:
            queryset = queryset.filter(self._past(position, reverse))
        rows = list(queryset[offset : offset + self.page_size + 1])
        self.page = rows[: self.page_size]
        following = (
            self._get_position_from_instance(rows[-1], self.ordering)
            if len(rows) > len(self.page)
            else None
        )
        if reverse:
            self.page.reverse()
            self.has_next = position is not None or offset > 0
            self.has_previous = following is not None
            self.next_position, self.previous_position = position, following
        else:
            self.has_next = following is not None
            self.has_previous = position is not None or offset > 0
            self.next_position, self.previous_position = following, position
        self.display_page_controls = (
            self.has_previous or self.has_next
        ) and self.template is not None
        return self.page

    def _keyed(self) -> bool:
        """Whether the ordering is a field then the id (a two-field position)."""
        return len(self.ordering) == 2 and self.ordering[1].lstrip("-") == "id"

    def _past(self, position: str, reverse: bool) -> Q:
        """The rows after ``position`` in the walk's direction.

        Raises:
            ValueError: a two-field ordering's position without its id.
        """
        descending = self.ordering[0].startswith("-")
        op = "lt" if reverse != descending else "gt"
        field = self.ordering[0].lstrip("-")
        if not self._keyed():
            return Q(**{f"{field}__{op}": position})
        value, sep, pk = position.rpartition(_KEY_SEP)
        if not sep:
            raise ValueError(f"cursor position {position!r} names no row id")
        return Q(**{f"{field}__{op}": value}) | Q(
            **{field: value, f"id__{op}": int(pk)}
        )

    def _get_position_from_instance(self, instance, ordering):
        """The row's position: its first ordering field's value, then
        ``|`` and its id when the ordering is keyed (:meth:`_keyed`)."""
        value = super()._get_position_from_instance(instance, ordering)
        if not self._keyed():
            return value
        pk = instance["id"] if isinstance(instance, dict) else instance.pk
        return f"{value}{_KEY_SEP}{pk}"

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

        Dates and citation counts repeat; the id breaks their ties, and the
        cursor keeps both (:class:`IdCursorPagination`), so any number of
        papers of one date or count page through.
        """
        ordering = super().get_ordering(request, queryset, view) or ["-id"]
        first = ordering[0]
        sign = "-" if first.startswith("-") else ""
        field = self.aliases[first.lstrip("-")]
        return [sign + field] if field == "id" else [sign + field, sign + "id"]
