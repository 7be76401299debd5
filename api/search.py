"""The ``search`` query parameter, bounded so one request cannot tie up the database."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.filters import SearchFilter

# Longest search text and most words accepted; longer input is a 400. SQLite refuses
# LIKE patterns past 50,000 bytes ("LIKE or GLOB pattern too complex"), and each
# word adds a join condition.
MAX_SEARCH_CHARS = 200
MAX_SEARCH_TERMS = 10


class BoundedSearchFilter(SearchFilter):
    """DRF's SearchFilter that refuses over-long search text with HTTP 400."""

    def get_search_terms(self, request):
        """The search words.

        Returns:
            At most :data:`MAX_SEARCH_TERMS` words.

        Raises:
            ValidationError: the text is longer than :data:`MAX_SEARCH_CHARS` or
                has more words than :data:`MAX_SEARCH_TERMS` (HTTP 400).
        """
        raw = request.query_params.get(self.search_param, "")
        if len(raw) > MAX_SEARCH_CHARS:
            raise ValidationError(
                {self.search_param: f"at most {MAX_SEARCH_CHARS} characters"}
            )
        terms = super().get_search_terms(request)
        if len(terms) > MAX_SEARCH_TERMS:
            raise ValidationError(
                {self.search_param: f"at most {MAX_SEARCH_TERMS} words"}
            )
        return terms
