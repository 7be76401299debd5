"""Request body parsers of the API."""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError

NESTED_TOO_DEEP = "JSON parse error - nested too deep"


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, answering a body nested past Python's recursion limit
    with 400.

    ``json.loads`` raises ``RecursionError`` for 1,000 nested brackets (2 KB),
    which DRF's parser does not catch (it turns ``ValueError`` into a 400): a
    hostile trial got an HTML 500 and a traceback from ``/api/token/``, a claim
    and an approval (issue 48).
    """

    def parse(self, stream, media_type=None, parser_context=None):
        """The parsed body (DRF's contract).

        Raises:
            ParseError: not JSON, or nested too deep (HTTP 400 problem+json).
        """
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(NESTED_TOO_DEEP) from None
