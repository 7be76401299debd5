"""Conditional GET for detail endpoints: a strong ETag of the body, 304 on a match.

The ETag is a hash of the JSON the endpoint would send, so it changes exactly when
what a client sees changes, whether a harvest updated the paper or a curator moved
an authorship (neither bumps one common timestamp, so no Last-Modified is sent).
Source: RFC 9110 sections 8.8.3 (ETag) and 13.1.2 (If-None-Match).
"""

from __future__ import annotations

import hashlib
import json

from rest_framework.request import Request
from rest_framework.response import Response


def etag_of(data) -> str:
    """The strong ETag (quoted) of a JSON-serialisable body."""
    encoded = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
    return '"' + hashlib.sha256(encoded.encode()).hexdigest()[:32] + '"'


def conditional(request: Request, data) -> Response:
    """200 with the body and its ETag, or 304 when ``If-None-Match`` names it.

    Args:
        request: the GET request.
        data: the body the endpoint would send.

    Returns:
        A Response carrying ``ETag`` (and no body when 304).
    """
    tag = etag_of(data)
    wanted = request.headers.get("If-None-Match", "")
    matches = {t.strip().removeprefix("W/") for t in wanted.split(",")}
    if tag in matches or "*" in matches:
        response = Response(status=304)
    else:
        response = Response(data)
    response["ETag"] = tag
    return response
