"""The OpenAPI schema describes every operation and parameter, with valid examples.

The schema is generated as /openapi.json serves it. Every example is validated
against the schema of the very response, request body or parameter it
illustrates, after translating the OpenAPI 3.0 keywords JSON Schema lacks
(``nullable``, ``readOnly`` and ``writeOnly``) and closing objects to the
properties they declare, so an example that drifts from its serializer (a field
renamed, added or dropped) fails here. Success bodies must also show every field,
since the serializers always send every field. Last, the examples are compared
with what the API answers on a database holding their real record (arXiv
0704.0038): the same keys and types, and the paper's own values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from urllib.parse import urlsplit

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from rest_framework.test import APIClient

from api import examples as ex

METHODS = ("get", "put", "post", "patch", "delete")
# The one real record every example shows (read in place from the shared data).
ABS_FILE = "abs_files/ftp/arxiv/papers/0704/0704.0038.abs"

# String formats the checks below verify; jsonschema checks "date" itself.
FORMATS = jsonschema.FormatChecker()


@FORMATS.checks("uri", raises=ValueError)
def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    parts = urlsplit(value)
    return bool(parts.scheme and parts.netloc)


@FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    return datetime.fromisoformat(value).tzinfo is not None


@pytest.fixture(scope="module")
def schema() -> dict:
    """The public schema, rendered to JSON and read back as a client sees it."""
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(generated))


def _operations(schema: dict) -> Iterator[tuple[str, dict]]:
    """Yield ("METHOD /path", operation) for every operation, in path order."""
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                yield f"{method.upper()} {path}", item[method]


def _parameters(schema: dict) -> Iterator[tuple[str, dict]]:
    """Yield ("METHOD /path name", parameter), path-level parameters included."""
    for path, item in schema["paths"].items():
        shared = item.get("parameters", [])
        for method in METHODS:
            if method in item:
                for parameter in [*shared, *item[method].get("parameters", [])]:
                    where = f"{method.upper()} {path} {parameter['in']}"
                    yield f"{where} {parameter['name']}", parameter


def _examples(media: dict) -> Iterator[tuple[str, object]]:
    """Yield (name, value) of a media type's or parameter's examples."""
    if "example" in media:
        yield "example", media["example"]
    for name, example in media.get("examples", {}).items():
        yield name, example["value"]


def _json_schema(node: object, components: dict, direction: str, full: bool):
    """Translate an OpenAPI 3.0 schema into a closed JSON Schema.

    Args:
        node: the OpenAPI schema (or a part of it).
        components: ``components.schemas`` of the document, to inline ``$ref``s.
        direction: "response" drops ``writeOnly`` properties, "request" drops
            ``readOnly`` ones.
        full: every remaining property is required (a success body sends all).

    Returns:
        The JSON Schema: references inlined, ``nullable`` as an ``anyOf`` with
        null, objects with declared properties closed to them.
    """
    if isinstance(node, list):
        return [_json_schema(n, components, direction, full) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/components/schemas/")
        return _json_schema(components[name], components, direction, full)
    nested = ("items", "allOf", "anyOf", "oneOf", "not", "additionalProperties")
    dropped = ("properties", "nullable", "readOnly", "writeOnly", "example")
    out = {
        key: _json_schema(value, components, direction, full)
        if key in nested
        else value
        for key, value in node.items()
        if key not in dropped
    }
    if "properties" in node:
        hidden = "writeOnly" if direction == "response" else "readOnly"
        kept = {k: v for k, v in node["properties"].items() if not v.get(hidden)}
        out["properties"] = {
            k: _json_schema(v, components, direction, full) for k, v in kept.items()
        }
        required = kept if full else [k for k in node.get("required", []) if k in kept]
        out["required"] = sorted(required)
        out.setdefault("additionalProperties", False)
    if node.get("nullable"):
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def _body_examples(
    schema: dict, direction: str
) -> Iterator[tuple[str, object, object]]:
    """Yield (where, example, JSON Schema) of every response or request body example.

    Args:
        schema: the OpenAPI document.
        direction: "response" (success bodies must show every field) or "request".
    """
    components = schema["components"]["schemas"]
    for label, operation in _operations(schema):
        if direction == "response":
            bodies = [
                (status, response.get("content", {}), status.startswith("2"))
                for status, response in operation["responses"].items()
            ]
        else:
            bodies = [
                ("body", operation.get("requestBody", {}).get("content", {}), False)
            ]
        for part, content, full in bodies:
            for media_type, media in content.items():
                expected = _json_schema(media["schema"], components, direction, full)
                for name, value in _examples(media):
                    yield f"{label} {part} {media_type} {name}", value, expected


def _violations(value: object, schema: object) -> list[str]:
    """What in ``value`` breaks ``schema`` (empty when it is valid)."""
    validator = jsonschema.Draft202012Validator(schema, format_checker=FORMATS)
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(body)'}: {error.message}"
        for error in validator.iter_errors(value)
    ]


def test_schema_every_operation_has_a_description(schema):
    missing = [
        label
        for label, operation in _operations(schema)
        if not operation.get("description", "").strip()
    ]
    assert not missing, f"operations without a description: {missing}"


def test_schema_every_parameter_has_a_description(schema):
    missing = [
        label
        for label, parameter in _parameters(schema)
        if not parameter.get("description", "").strip()
    ]
    assert not missing, f"parameters without a description: {missing}"


def test_schema_every_success_body_has_an_example(schema):
    missing = [
        f"{label} {status}"
        for label, operation in _operations(schema)
        for status, response in operation["responses"].items()
        if status.startswith("2")
        and response.get("content")
        and not any(
            next(_examples(media), None) for media in response["content"].values()
        )
    ]
    assert not missing, f"success responses without an example: {missing}"


def test_schema_every_post_body_has_a_request_example(schema):
    missing = [
        label
        for label, operation in _operations(schema)
        if label.startswith("POST ")
        and operation.get("requestBody", {}).get("content")
        and not any(
            next(_examples(media), None)
            for media in operation["requestBody"]["content"].values()
        )
    ]
    assert not missing, f"POST operations without a request example: {missing}"


@pytest.mark.parametrize("direction", ["response", "request"])
def test_schema_body_examples_match_their_schema(schema, direction):
    found = list(_body_examples(schema, direction))
    failures = [
        f"{where}: {problem}"
        for where, value, expected in found
        for problem in _violations(value, expected)
    ]
    assert found, f"no {direction} examples at all"
    assert not failures, "\n".join(failures)


def test_schema_parameter_examples_match_their_parameter_schema(schema):
    components = schema["components"]["schemas"]
    failures = [
        f"{label} {name}: {problem}"
        for label, parameter in _parameters(schema)
        for name, value in _examples(parameter)
        for problem in _violations(
            value, _json_schema(parameter["schema"], components, "request", False)
        )
    ]
    assert not failures, "\n".join(failures)


def test_schema_list_examples_are_cursor_pages(schema):
    """A paginated list's example shows the envelope the paginator really sends."""
    pages = [
        (label, media)
        for label, operation in _operations(schema)
        if label.startswith("GET ")
        for media in operation["responses"]["200"].get("content", {}).values()
        if media["schema"].get("$ref", "").startswith("#/components/schemas/Paginated")
    ]
    assert pages, "no paginated list operations"
    for label, media in pages:
        for name, value in _examples(media):
            # ``count`` is optional: lists that can count cheaply send it.
            assert set(value) - {"count"} == {"next", "previous", "results"}, (
                label,
                name,
            )
            assert len(value["results"]) == 1, (label, name)


def test_schema_token_operation_explains_the_authorization_header(schema):
    description = schema["paths"]["/api/token/"]["post"]["description"]
    assert "Authorization: Token <key>" in description


def _signed_in(user) -> APIClient:
    """An API client sending ``user``'s token."""
    from rest_framework.authtoken.models import Token

    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def _shape(value: object) -> object:
    """Keys and JSON types of a body; null matches any type (see _same_shape)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return None if value is None else type(value).__name__


def _same_shape(example: object, real: object) -> bool:
    """Same keys at every level and the same type wherever both are non-null."""
    if example is None or real is None:
        return True
    if isinstance(example, dict) and isinstance(real, dict):
        return example.keys() == real.keys() and all(
            _same_shape(example[key], real[key]) for key in example
        )
    if isinstance(example, list) and isinstance(real, list):
        return not example or not real or _same_shape(example[0], real[0])
    return example == real


@pytest.fixture
def real_record(arxiv_dir, curator) -> dict:
    """arXiv 0704.0038 harvested and matched, its proposals approved by API.

    Returns:
        The pending proposal as the API showed it, and the approve response.
    """
    from curation.models import Proposal
    from curation.services import matching_run
    from harvest.services import harvest_arxiv_files

    harvest_arxiv_files(root=arxiv_dir / ABS_FILE)
    matching_run()
    client = _signed_in(curator)
    pending = list(Proposal.objects.filter(status="pending").order_by("pk"))
    assert len(pending) == 2  # one `new` researcher per author
    shown = client.get(f"/api/proposals/{pending[0].pk}/").json()
    decided = [
        client.post(f"/api/proposals/{p.pk}/approve/", {}, format="json")
        for p in pending
    ]
    assert [r.status_code for r in decided] == [200, 200]
    again = client.post(f"/api/proposals/{pending[0].pk}/approve/", {}, format="json")
    return {"pending": shown, "applied": decided[0].json(), "decided": again.json()}


@pytest.mark.django_db
def test_examples_have_the_shape_of_the_real_responses(real_record, django_user_model):
    from wovepaper.models import Institution

    Institution.objects.create(
        name="University of Amsterdam",
        ror_id="04dkp9463",
        country_code="NL",
        types=["education"],
    )
    anonymous = APIClient()
    paper = anonymous.get("/api/papers/0704.0038/").json()
    yurkin = paper["authorships"][0]["researcher"]["id"]
    user = django_user_model.objects.create_user("reader", password="pw-reader-1")
    reader = _signed_in(user)
    claim = {"orcid": ex.CLAIM_REQUEST["orcid"]}
    real = {
        "PAPER (detail)": (ex.PAPER, paper),
        "PAPER (list)": (
            ex.PAPER,
            anonymous.get("/api/papers/?category=physics.comp-ph").json()["results"][0],
        ),
        "PAPER_REF": (
            ex.PAPER_REF,
            anonymous.get(f"/api/researchers/{yurkin}/papers/").json()["results"][0],
        ),
        "RESEARCHER": (
            ex.RESEARCHER,
            anonymous.get(f"/api/researchers/{yurkin}/").json(),
        ),
        "COAUTHOR": (
            ex.COAUTHOR,
            anonymous.get(f"/api/researchers/{yurkin}/coauthors/").json()[0],
        ),
        "AUTHORSHIP": (
            ex.AUTHORSHIP,
            anonymous.get(f"/api/authorships/?paper={paper['id']}").json()["results"][
                0
            ],
        ),
        "INSTITUTION": (
            ex.INSTITUTION,
            anonymous.get("/api/institutions/04dkp9463/").json(),
        ),
        "PROPOSAL_PENDING": (ex.PROPOSAL_PENDING, real_record["pending"]),
        "PROPOSAL_APPLIED": (ex.PROPOSAL_APPLIED, real_record["applied"]),
        "PROPOSAL_REJECTED": (ex.PROPOSAL_REJECTED, real_record["applied"]),
        "PROPOSAL_DECIDED": (ex.PROPOSAL_DECIDED, real_record["decided"]),
        "FOLLOW": (ex.FOLLOW, reader.post(f"/api/researchers/{yurkin}/follow/").json()),
        "CLAIM": (
            ex.CLAIM,
            reader.post(f"/api/researchers/{yurkin}/claim/", claim).json(),
        ),
        "CLAIM_DUPLICATE": (
            ex.CLAIM_DUPLICATE,
            reader.post(f"/api/researchers/{yurkin}/claim/", claim).json(),
        ),
        "TOKEN": (
            ex.TOKEN,
            anonymous.post(
                "/api/token/", {"username": "reader", "password": "pw-reader-1"}
            ).json(),
        ),
        "PAPER_NOT_FOUND": (
            ex.PAPER_NOT_FOUND,
            anonymous.get("/api/papers/0704.9999/").json(),
        ),
        "PAPERS_INVALID": (
            ex.PAPERS_INVALID,
            anonymous.get("/api/papers/?published_from=yesterday").json(),
        ),
    }
    differ = {
        name: (_shape(example), _shape(answer))
        for name, (example, answer) in real.items()
        if not _same_shape(_shape(example), _shape(answer))
    }
    assert not differ, differ


@pytest.mark.django_db
def test_examples_show_the_real_record(real_record):
    paper = APIClient().get("/api/papers/0704.0038/").json()
    copied = (
        "arxiv_id",
        "doi",
        "title",
        "published",
        "updated",
        "latest_version",
        "versions",
        "categories",
        "primary_category",
        "journal_ref",
        "comments",
        "abs_url",
        "pdf_url",
    )
    assert {k: ex.PAPER[k] for k in copied} == {k: paper[k] for k in copied}
    assert paper["abstract"].startswith(ex.PAPER["abstract"].removesuffix(" [...]"))
    assert [a["raw_name"] for a in ex.PAPER["authorships"]] == [
        a["raw_name"] for a in paper["authorships"]
    ]
    assert ex.PROPOSAL_PENDING["block_key"] == real_record["pending"]["block_key"]
