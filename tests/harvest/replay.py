"""A local HTTP server on 127.0.0.1 that replays real recorded exchanges.

The recordings are read in place from ``WOVEPAPER_DATA_DIR`` (nock JSON: an array of
``{path, status, rawHeaders, response}``); each is answered once, in order, by a
threaded pytest-httpserver, so a client that times out and asks again is served
while the first answer still hangs.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from pytest_httpserver import HTTPServer

# Hop-by-hop and length headers are the server's to set for the body it sends.
_DROPPED = {"content-length", "transfer-encoding", "connection", "date", "server"}


def nock_exchanges(path: Path) -> list[dict]:
    """The recorded exchanges of one nock file, in order."""
    return json.loads(path.read_text())


def recorded_headers(exchange: dict) -> dict[str, str]:
    """A recorded response's headers (``rawHeaders`` pairs), minus hop-by-hop ones."""
    raw = exchange.get("rawHeaders") or []
    pairs = zip(raw[::2], raw[1::2], strict=True)
    return {k: v for k, v in pairs if k.lower() not in _DROPPED}


def split_path(recorded: str) -> tuple[str, dict[str, str]]:
    """``"/oai2?verb=X&from=Y"`` as ``("/oai2", {"verb": "X", "from": "Y"})``."""
    parts = urlsplit(recorded)
    return parts.path, dict(parse_qsl(parts.query))


def expect_exchange(server: HTTPServer, exchange: dict) -> None:
    """Answer the recorded request once, in order, with the recorded response."""
    path, query = split_path(exchange["path"])
    server.expect_ordered_request(path, query_string=query).respond_with_data(
        exchange["response"],
        status=exchange["status"],
        headers=recorded_headers(exchange),
        content_type="text/xml" if exchange["status"] == 200 else "text/html",
    )
