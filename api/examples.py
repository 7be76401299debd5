"""Request and response bodies shown as examples in the OpenAPI schema.

Every body is what the API answered on a database holding one real record, arXiv
0704.0038 (Maxim A. Yurkin and Alfons G. Hoekstra, "The discrete dipole
approximation: an overview and recent developments"), harvested from its abs
file, matched, and with its two ``new`` proposals approved through the API; long
text is trimmed and the ids are the ones that database gave. The abs record
names no affiliation and no ORCID iD: the institution is the University of
Amsterdam (the authors' university then) with the values an OpenAlex record in
the shared data gives it, and the ORCID iD is ORCID's documented sample iD.
``tests/api/test_openapi_docs.py`` validates each body against the schema of the
response or request it illustrates.

A list operation's example is one item: drf-spectacular wraps it in the cursor
page envelope ``{"next", "previous", "results"}`` of
:class:`api.pagination.IdCursorPagination`.

Source: arXiv abs file ``arxiv/papers/0704/0704.0038.abs`` (``Title``,
``Authors``, ``Categories``, ``Comments``, ``Journal-ref``, ``DOI``, ``Date``
and the abstract); OpenAlex ``work.authorships[].institutions[]`` (``ror``,
``display_name``, ``country_code``, ``type``) for the University of Amsterdam.
"""

from __future__ import annotations

from http import HTTPStatus

from api.errors import PROBLEM_TYPE

YURKIN = {"id": 1, "display_name": "Maxim A. Yurkin", "orcid": None}
HOEKSTRA = {"id": 2, "display_name": "Alfons G. Hoekstra", "orcid": None}

PAPER = {
    "id": 1,
    "arxiv_id": "0704.0038",
    "doi": "10.1016/j.jqsrt.2007.01.034",
    "openalex_id": None,
    "s2_id": None,
    "title": "The discrete dipole approximation: an overview and recent developments",
    "abstract": "We present a review of the discrete dipole approximation (DDA), "
    "which is a general method to simulate light scattering by arbitrarily shaped "
    "particles. [...]",
    "published": "2007-03-31",
    "published_precision": "day",
    "updated": "2007-03-31",
    "latest_version": 1,
    "versions": [
        {"size": "693kb", "version": 1, "submitted": "2007-03-31T16:25:01+00:00"}
    ],
    "categories": ["physics.optics", "physics.comp-ph"],
    "primary_category": "physics.optics",
    "journal_ref": "J.Quant.Spectrosc.Radiat.Transf. 106, 558-589 (2007)",
    "comments": "36 pages, 1 figure",
    "report_no": "",
    "license": "",
    "withdrawn": False,
    "cited_by_count": None,
    "abs_url": "https://arxiv.org/abs/0704.0038",
    "pdf_url": "https://arxiv.org/pdf/0704.0038",
    "authorships": [
        {
            "position": 1,
            "raw_name": "Maxim A. Yurkin",
            "given_name": "Maxim A.",
            "family_name": "Yurkin",
            "suffix": "",
            "is_collaboration": False,
            "orcid": "",
            "affiliations": [],
            "researcher": {**YURKIN, "placement": "checked by a curator"},
        },
        {
            "position": 2,
            "raw_name": "Alfons G. Hoekstra",
            "given_name": "Alfons G.",
            "family_name": "Hoekstra",
            "suffix": "",
            "is_collaboration": False,
            "orcid": "",
            "affiliations": [],
            "researcher": {**HOEKSTRA, "placement": "checked by a curator"},
        },
    ],
    "authors_truncated": False,
    "authors_incomplete": False,
}

PAPER_REF = {
    key: PAPER[key]
    for key in ("id", "arxiv_id", "doi", "title", "published", "primary_category")
}

RESEARCHER = {
    "id": 1,
    "display_name": "Maxim A. Yurkin",
    "name_variants": ["Maxim A. Yurkin"],
    "orcid": None,
    "s2_author_id": None,
    "openalex_author_id": None,
    "locked": False,
    "paper_count": 1,
    "checked_paper_count": 1,
    "placement": "checked by a curator",
    "figures": {
        "citation_count": 0,
        "h_index": 0,
        "first_year": 2007,
        "last_year": 2007,
        "main_category": "physics.optics",
        "latest_affiliation": "",
        "per_year": [{"year": 2007, "papers": 1, "citations": 0}],
    },
}

COAUTHOR = {"researcher": HOEKSTRA, "shared_papers": 1}

FOLLOW = {
    "researcher": YURKIN,
    "following": YURKIN,
    "created": "2026-11-30T05:55:01.487407Z",
}

# ORCID's documented sample iD (Josiah Carberry); a URL is accepted and stored bare.
CLAIM_REQUEST = {
    "orcid": "https://orcid.org/0000-0002-1825-0097",
    "message": "This is my profile.",
}
CLAIM = {
    "id": 1,
    "researcher": 1,
    "orcid": "0000-0002-1825-0097",
    "message": "This is my profile.",
    "status": "pending",
    "created": "2026-11-30T05:57:17.847204Z",
}

INSTITUTION = {
    "id": 1,
    "ror_id": "04dkp9463",
    "name": "University of Amsterdam",
    "aliases": [],
    "country_code": "NL",
    "types": ["education"],
}

AUTHORSHIP = {
    "id": 1,
    "paper": 1,
    "position": 1,
    "raw_name": "Maxim A. Yurkin",
    "given_name": "Maxim A.",
    "family_name": "Yurkin",
    "orcid": "",
    "affiliations": [],
    "is_collaboration": False,
    "researcher": YURKIN,
}

_NEW_EVIDENCE = {
    "pairs": [],
    "orcids": [],
    "members": 1,
    "cohesion": 1.0,
    "weakest": 1.0,
    "model_version": "default-weights-v3",
}
PROPOSAL_PENDING = {
    "id": 1,
    "kind": "new",
    "status": "pending",
    "score": 1.0,
    "impact": 1,
    "identifier_proven": False,
    "researcher": None,
    "other_researcher": None,
    "authorships": [1],
    "evidence": _NEW_EVIDENCE,
    "model_version": "default-weights-v3",
    "block_key": "yurkin m",
    "created": "2026-11-30T05:55:01.315394Z",
    "decided_at": None,
    "reason": "",
}
PROPOSAL_APPLIED = {
    **PROPOSAL_PENDING,
    "status": "applied",
    "researcher": 1,
    "decided_at": "2026-11-30T05:55:01.417849Z",
}
PROPOSAL_REJECTED = {
    **PROPOSAL_PENDING,
    "id": 2,
    "status": "rejected",
    "authorships": [2],
    "block_key": "hoekstra a",
    "created": "2026-11-30T05:55:01.315412Z",
    "decided_at": "2026-11-30T05:55:01.657310Z",
    "reason": "not the same person",
}
# Approving takes no body, except ``moving`` to change a split's partition.
PROPOSAL_APPROVE_REQUEST: dict = {}
PROPOSAL_REJECT_REQUEST = {"reason": "not the same person"}

TOKEN_REQUEST = {"username": "reader", "password": "correct horse battery staple"}
TOKEN = {"token": "e7aaafe2e2bb2bceb31b4d998fd745dc811d9135"}


def _problem(status: int, detail: str, slug: str = "", **extra) -> dict:
    """A problem-details body as :func:`api.errors.problem` builds it.

    Args:
        status: the HTTP status.
        detail: the message the API gave.
        slug: the problem type's short name (defaults from the status).
        **extra: more members (``errors``).

    Returns:
        ``{"type", "title", "status", "detail", **extra}``.
    """
    title = HTTPStatus(status).phrase
    kind = slug or title.lower().replace(" ", "-")
    return {
        "type": PROBLEM_TYPE.format(slug=kind),
        "title": title,
        "status": status,
        "detail": detail,
        **extra,
    }


def _invalid(errors: dict) -> dict:
    """A 400 for invalid fields or query parameters (``errors`` per field)."""
    return _problem(
        400, "the request has invalid fields", "invalid-request", errors=errors
    )


PAPER_NOT_FOUND = _problem(404, "no visible paper has that id, arXiv id or DOI")
RESEARCHER_NOT_FOUND = _problem(404, "No Researcher matches the given query.")
RESEARCHER_RETIRED = _problem(
    410,
    "researcher 12 was retired: the curation decision that created it was undone, "
    "and its papers went back to the researchers in 'holders'",
    "researcher-retired",
    holders=[
        {
            "id": 3,
            "name": "Maxim A. Yurkin",
            "papers": 2,
            "url": "https://wovepaper.example/api/researchers/3/",
        }
    ],
)
INSTITUTION_NOT_FOUND = _problem(404, "No Institution matches the given query.")
AUTHORSHIP_NOT_FOUND = _problem(404, "No Authorship matches the given query.")
PROPOSAL_NOT_FOUND = _problem(404, "No Proposal matches the given query.")
FOLLOW_NOT_FOUND = _problem(404, "No Follow matches the given query.")

PAPERS_INVALID = _invalid({"published_from": ["Enter a valid date."]})
RESEARCHERS_INVALID = _invalid(
    {
        "fields": "unknown fields ['email']; known: ['display_name', 'id', "
        "'locked', 'name_variants', 'openalex_author_id', 'orcid', 'paper_count', "
        "'s2_author_id']"
    }
)
AUTHORSHIPS_INVALID = _invalid({"paper": ["Enter a number."]})
PROPOSALS_INVALID = _invalid(
    {"status": ["Select a valid choice. done is not one of the available choices."]}
)
CLAIM_INVALID = _invalid({"orcid": ["This field is required."]})
DECISION_INVALID = _invalid({"moving": {"0": ["A valid integer is required."]}})
TOKEN_REFUSED = _invalid(
    {"non_field_errors": ["Unable to log in with provided credentials."]}
)

TOKEN_LOCKED = _problem(
    429,
    "Too many failed sign-ins for this username from your address; try again later.",
)

PROPOSAL_DECIDED = _problem(
    409,
    "proposal 1 is applied, not pending: it was decided already",
    "curation-conflict",
)
CLAIM_DUPLICATE = _problem(
    409, "you already have a pending claim on researcher 1", "curation-conflict"
)

# One paper of /api/papers/<id>/similar/ (a list, most similar first).
SIMILAR_PAPER = {**PAPER_REF, "similarity": 0.648}

# /api/search/papers/?q=spin+qubits&mode=hybrid
PAPER_SEARCH = {
    "query": "spin qubits",
    "mode": "hybrid",
    "count": 103,
    "count_is": "exact",
    "page": 1,
    "pages": 5,
    "results": [PAPER_REF],
}
