"""``docs/api.md`` is true: each request it shows, sent to the demo's data,
gets the answer it shows (issue 52: every command in docs/ is run by a test).

An exchange is two ``http`` blocks: a request (``METHOD /path``, headers, a
blank line, a body) and its answer (``HTTP/1.1 status``, headers, a body).
``"…"`` in an answer matches any value; ``{id}``, ``{token}`` and ``{etag}``
in a request are the values earlier answers gave (the first researcher a
researchers list named, the last token, the last ETag).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from curation.deciding import auto_apply

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "api.md"
ANY = "…"


def exchanges(text: str) -> list[tuple[str, str]]:
    """The (request, answer) pairs of ``http`` blocks in ``text``, in order.

    Raises:
        AssertionError: a request block without its answer, or the reverse.
    """
    blocks = re.findall(r"```http\n(.*?)```", text, re.S)
    pairs = list(zip(blocks[::2], blocks[1::2], strict=False))
    assert len(blocks) % 2 == 0, "an http block without its pair"
    for request, answer in pairs:
        assert not request.startswith("HTTP/"), request
        assert answer.startswith("HTTP/1.1 "), answer
    return pairs


def _parts(block: str) -> tuple[str, dict[str, str], str]:
    head, _, body = block.partition("\n\n")
    first, *header_lines = head.strip("\n").split("\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return first, headers, body.strip()


def matches(shown, actual) -> bool:
    """Whether ``actual`` is what ``shown`` shows: equal, with ``"…"`` standing
    for any value (a whole string, or the rest of a string it ends)."""
    if shown == ANY:
        return True
    if isinstance(shown, str) and shown.endswith(ANY) and isinstance(actual, str):
        return actual.startswith(shown[: -len(ANY)])
    if isinstance(shown, dict):
        return (
            isinstance(actual, dict)
            and shown.keys() == actual.keys()
            and all(matches(shown[k], actual[k]) for k in shown)
        )
    if isinstance(shown, list):
        return (
            isinstance(actual, list)
            and len(shown) == len(actual)
            and all(map(matches, shown, actual))
        )
    return shown == actual and type(shown) is type(actual)


def test_the_matcher_of_answers_tells_what_differs():
    assert matches({"a": ANY, "b": [1, "x…"]}, {"a": 7, "b": [1, "xyz"]})
    assert _header_matches('"…"', '"f4c4"')
    assert not _header_matches("application/json", "application/problem+json")
    assert not matches({"a": 1}, {"a": 1, "b": 2})
    assert not matches([1, 2], [1])
    assert not matches({"a": 1}, {"a": True})
    assert not matches("x…", "yx")


def _header_matches(shown: str, actual: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in shown.split(ANY))
    return re.fullmatch(pattern, actual) is not None


@pytest.mark.django_db
def test_every_exchange_of_the_api_guide_answers_as_shown(settings):
    # The demo's own policy, as `make demo` runs it (the suite's is stricter).
    settings.CURATION_AUTO_APPLY = str(auto_apply.DEFAULT_THRESHOLD)
    data = Path(settings.WOVEPAPER_DATA_DIR) / "arxiv"
    call_command("demo", data=data, stdout=io.StringIO())
    client = APIClient()
    seen: dict[str, str] = {}
    pairs = exchanges(GUIDE.read_text(encoding="utf-8"))
    assert len(pairs) >= 10
    for request, answer in pairs:
        first, headers, body = _parts(request)
        for name, value in seen.items():
            first = first.replace(f"{{{name}}}", value)
            headers = {k: v.replace(f"{{{name}}}", value) for k, v in headers.items()}
        assert "{" not in first, f"no value yet for {first}"
        method, path = first.split(" ", 1)
        extra = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
        content_type = extra.pop("HTTP_CONTENT_TYPE", None)
        got = client.generic(
            method,
            path,
            body.encode(),
            content_type=content_type or "application/octet-stream",
            **extra,
        )
        status_line, want_headers, want_body = _parts(answer)
        where = f"docs/api.md: {first}"
        assert got.status_code == int(status_line.split()[1]), (where, got.content)
        for name, value in want_headers.items():
            assert name in got.headers, (where, name)
            assert _header_matches(value, got.headers[name]), (where, name, got.headers)
        if want_body:
            actual = got.json()
            assert matches(json.loads(want_body), actual), (where, actual)
        else:
            assert not got.content, where
        if "ETag" in got.headers:
            seen["etag"] = got.headers["ETag"]
        if path.startswith("/api/researchers/?"):
            seen["id"] = str(got.json()["results"][0]["id"])
        if path.startswith("/api/token/"):
            seen["token"] = got.json()["token"]
