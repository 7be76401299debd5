"""Read-only viewsets over the curated state; each ``get_queryset`` is a selector."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.db.models import IntegerField, Prefetch, Value
from django.db.models.functions import Coalesce
from django.http import Http404, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import parsers, permissions, serializers, viewsets
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.exceptions import (
    APIException,
    NotFound,
    Throttled,
    ValidationError,
)
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from api import examples
from api.conditional import conditional
from api.errors import problem
from api.filters import (
    AuthorshipFilter,
    PaperFilter,
    ProposalFilter,
    ResearcherFilter,
)
from api.pagination import AliasOrderingFilter
from api.parsers import JSONParser
from api.serializers import (
    AuthorshipDetailSerializer,
    ClaimSerializer,
    CoauthorSerializer,
    FollowSerializer,
    InstitutionSerializer,
    PaperRefSerializer,
    PaperSearchSerializer,
    PaperSerializer,
    ProposalDecisionSerializer,
    ProposalSerializer,
    ResearcherSerializer,
    SimilarPaperSerializer,
)
from curation import selectors as curation_selectors
from curation import services as curation_services
from curation.claims import claim_submit
from curation.models import Proposal
from wovepaper import cache as site_cache
from wovepaper import profile, selectors
from wovepaper import services as core_services
from wovepaper.models import Authorship, Follow, Institution, Paper, Researcher
from wovepaper.search import (
    BAD_YEAR,
    SearchQueryError,
    SemanticUnavailable,
    paper_named_by,
    search_filters,
    search_results,
)
from wovepaper.semantic import MODES, default_mode, similar_papers

# A cached researcher response lives at most this long (seconds) even if no bump
# arrives (a cache restart loses versions; the timeout bounds what that can show).
RESEARCHER_CACHE_SECONDS = 300

# Path ``id`` forms the routes accept (also given to the schema as patterns).
# ASCII digits: "\d" also matches "２" and "٢", which int() reads as 2.
NUMERIC_LOOKUP = r"[0-9]{1,18}"
# Our id, an arXiv id (old-style ones hold a slash) or a DOI (slashes too).
PAPER_LOOKUP = r"[^?#]{1,300}"
INSTITUTION_LOOKUP = r"[0-9a-z]{1,18}"

# --- OpenAPI documentation (drf-spectacular); example bodies in api/examples.py ---

# The shape of every error body (api.errors.problem), for the schema only.
PROBLEM = inline_serializer(
    name="Problem",
    fields={
        "type": serializers.URLField(help_text="URI naming the kind of problem."),
        "title": serializers.CharField(help_text="The HTTP status phrase."),
        "status": serializers.IntegerField(help_text="The HTTP status code."),
        "detail": serializers.CharField(help_text="What went wrong this time."),
        "errors": serializers.DictField(
            required=False,
            help_text="On a 400 for invalid fields: the messages per field name.",
        ),
        "retry_after": serializers.IntegerField(
            required=False, help_text="On a 429: seconds to wait before retrying."
        ),
        "holders": serializers.ListField(
            child=inline_serializer(
                name="FormerHolder",
                fields={
                    "id": serializers.IntegerField(help_text="The researcher's id."),
                    "name": serializers.CharField(help_text="Its display name."),
                    "papers": serializers.IntegerField(
                        help_text="How many of the retired researcher's papers "
                        "it holds (not its own paper count)."
                    ),
                    "url": serializers.URLField(help_text="Its API URL."),
                },
            ),
            required=False,
            help_text="On a 410 for a retired researcher: the researchers that "
            "hold its papers now, most papers first, each `id`, `name`, "
            "`papers` (how many of its papers) and `url` (their API URL).",
        ),
    },
)


def _example(summary: str, value: object, **kwargs) -> OpenApiExample:
    """An OpenAPI example (of a 200 or 201 body unless ``kwargs`` say otherwise)."""
    return OpenApiExample(summary, value=value, **kwargs)


def _problem(status: int, description: str, *cases: tuple[str, dict]) -> dict:
    """A ``responses`` entry documenting an error status as problem details.

    Args:
        status: the HTTP status (400, 404, 409).
        description: when the operation answers it.
        *cases: (summary, body) examples from :mod:`api.examples`.

    Returns:
        ``{(status, "application/problem+json"): OpenApiResponse}``.
    """
    return {
        (status, "application/problem+json"): OpenApiResponse(
            PROBLEM,
            description=description,
            examples=[_example(summary, body) for summary, body in cases],
        )
    }


def _path_id(
    pattern: str, description: str, *cases: tuple[str, str]
) -> OpenApiParameter:
    """The documented path ``id`` of a detail route.

    A string, as the generated one was: the route matches it by ``pattern``.

    Args:
        pattern: the route's ``lookup_value_regex`` (kept as the schema pattern).
        description: the forms accepted and what a miss answers.
        *cases: (summary, value) examples.

    Returns:
        The OpenApiParameter replacing the generated one.
    """
    return OpenApiParameter(
        "id",
        OpenApiTypes.STR,
        OpenApiParameter.PATH,
        description=description,
        pattern=f"^{pattern}$",
        examples=[_example(summary, value) for summary, value in cases],
    )


def _numeric_id(description: str) -> OpenApiParameter:
    """A numeric path ``id`` with the example ``1``."""
    return _path_id(NUMERIC_LOOKUP, description, ("Our id", "1"))


PAPER_ID = _path_id(
    PAPER_LOOKUP,
    "The paper: our numeric id (`1`); its arXiv id, new or old style, with or "
    "without a version or an `arXiv:` prefix (`0704.0038`, `0704.0038v1`, "
    "`hep-th/9901001`); or its DOI, bare, with `doi:` or as a https://doi.org/ "
    "URL, compared case-insensitively (`10.1016/j.jqsrt.2007.01.034`). A paper "
    "that is hidden or unknown answers 404.",
    ("Our id", "1"),
    ("arXiv id", "0704.0038"),
    ("arXiv id with a version", "0704.0038v1"),
    ("Old-style arXiv id", "hep-th/9901001"),
    ("DOI", "10.1016/j.jqsrt.2007.01.034"),
)
RESEARCHER_ID = _numeric_id(
    "Our numeric researcher id, e.g. `1`. An id merged away into another profile "
    "answers 301 to the same URL of the survivor, query string kept; a retired "
    "one (the decision that created it was undone, or a curator moved every "
    "paper it held elsewhere) 410, naming the researchers "
    "that hold its papers now."
)
FOLLOW_RESEARCHER_ID = _numeric_id(
    "Our numeric researcher id, e.g. `1`; a merged-away id acts on its survivor."
)
CLAIM_RESEARCHER_ID = _numeric_id(
    "Our numeric id of a live researcher, e.g. `1`; a merged-away or retired "
    "profile answers 404."
)
INSTITUTION_ID = _path_id(
    INSTITUTION_LOOKUP,
    "The institution: our numeric id (`1`) or its ROR id without the "
    "https://ror.org/ prefix (`04dkp9463`).",
    ("Our id", "1"),
    ("ROR id", "04dkp9463"),
)
AUTHORSHIP_ID = _numeric_id("Our numeric authorship (byline slot) id, e.g. `1`.")
PROPOSAL_ID = _numeric_id("Our numeric proposal id, e.g. `1`.")
FOLLOW_ID = _numeric_id(
    "Numeric id of one of your follows, e.g. `1` (the follow's own id, not the "
    "researcher's); someone else's answers 404."
)
# Actions that never read the search text do not document it.
NO_SEARCH = OpenApiParameter("search", exclude=True)

INVALID_QUERY = "A filter, `fields`, `search` or `page_size` value is invalid."
INVALID_BODY = "The request body has invalid fields."
DECIDED = (
    "The proposal was decided already, is stale (its authorships or researchers "
    "changed since it was made), would merge two different ORCID iDs, moves an "
    "empty or whole split partition, or changed while being decided."
)


def _list_and_detail(
    serializer: type[serializers.Serializer],
    example: tuple[str, dict],
    *,
    path_id: OpenApiParameter,
    not_found: dict,
    invalid: tuple[str, dict] | None = None,
    list_parameters: tuple[OpenApiParameter, ...] = (),
) -> dict:
    """``extend_schema_view`` arguments documenting a viewset's list and retrieve.

    Args:
        serializer: the item's serializer (the list is a cursor page of them).
        example: (summary, body) of one item, shown by both operations.
        path_id: the detail route's ``id``.
        not_found: the detail's 404 entry (from :func:`_problem`).
        invalid: (summary, body) of the list's 400, when its query is validated.
        list_parameters: parameter overrides of the list.

    Returns:
        ``{"list": extend_schema(...), "retrieve": extend_schema(...)}``.
    """
    items = [_example(*example)]
    listed = {200: serializer}
    if invalid:
        listed |= _problem(400, INVALID_QUERY, invalid)
    return {
        "list": extend_schema(
            parameters=list(list_parameters), responses=listed, examples=items
        ),
        "retrieve": extend_schema(
            parameters=[path_id],
            responses={200: serializer, **not_found},
            examples=items,
        ),
    }


LOGIN_LOCKED = (
    "Too many failed sign-ins for this username from your address; try again later."
)


class TokenObtainView(ObtainAuthToken):
    """``POST /api/token/``: DRF's token exchange, answering a lockout with 429.

    django-axes refuses a username+address after too many failures (settings,
    ``AXES_*``) by failing ``authenticate``; it marks the DRF request, which its
    middleware does not see, so the refusal would read as a wrong password (400).

    Raises:
        Throttled: the username+address is locked out (HTTP 429,
            :data:`LOGIN_LOCKED`, ``Retry-After`` the cool-off in seconds).
    """

    # ObtainAuthToken names DRF's own parsers; ours answers a body nested too
    # deep with 400 (api.parsers).
    parser_classes = (parsers.FormParser, parsers.MultiPartParser, JSONParser)

    def post(self, request: Request, *args, **kwargs) -> Response:
        """The token, or 400 for wrong credentials, or 429 when locked out."""
        try:
            return super().post(request, *args, **kwargs)
        except ValidationError:
            if getattr(request, "axes_locked_out", False):
                wait = settings.AXES_COOLOFF_TIME.total_seconds()
                raise Throttled(wait=wait, detail=LOGIN_LOCKED) from None
            raise


class ObtainAuthTokenSchema(OpenApiViewExtension):
    """Documents ``POST /api/token/`` (:class:`TokenObtainView`)."""

    target_class = "api.views.TokenObtainView"
    # Above drf-spectacular's own extension for this view, which only fixes it up.
    priority = 1

    def view_replacement(self):
        """The view with its description and examples (a subclass, DRF's intact)."""

        class DocumentedObtainAuthToken(self.target):
            pass

        return extend_schema_view(
            post=extend_schema(
                description=(
                    "Exchange a username and password for your API token: "
                    '`{"token": "<key>"}`. The key is the same on every '
                    "call until it is revoked. Send it on later requests as "
                    "`Authorization: Token <key>`; following, the feed and claims "
                    "need one, proposals need a curator's."
                ),
                responses={
                    200: AuthTokenSerializer,
                    **_problem(
                        400,
                        "The username or password is missing or wrong.",
                        ("Wrong password", examples.TOKEN_REFUSED),
                    ),
                    **_problem(
                        429,
                        "Too many failed sign-ins for this username from this "
                        "address (10 by default); refused for 15 minutes.",
                        ("Locked out", examples.TOKEN_LOCKED),
                    ),
                },
                examples=[
                    _example("Credentials", examples.TOKEN_REQUEST, request_only=True),
                    _example("Token", examples.TOKEN, response_only=True),
                ],
            )
        )(DocumentedObtainAuthToken)


class IsCurator(permissions.BasePermission):
    """Curators only (``curation.view_proposal``); deciding needs
    ``curation.decide_proposal``."""

    message = "only curators may see or decide proposals"

    def has_permission(self, request: Request, view) -> bool:
        user = request.user
        if not (
            user and user.is_authenticated and user.has_perm("curation.view_proposal")
        ):
            return False
        if view.action in ("approve", "reject"):
            return user.has_perm("curation.decide_proposal")
        return True


@extend_schema_view(
    **_list_and_detail(
        PaperSerializer,
        ("arXiv 0704.0038", examples.PAPER),
        path_id=PAPER_ID,
        not_found=_problem(
            404,
            "No visible paper has that id.",
            ("Unknown arXiv id", examples.PAPER_NOT_FOUND),
        ),
        invalid=("Invalid date", examples.PAPERS_INVALID),
    )
)
class PaperViewSet(viewsets.ReadOnlyModelViewSet):
    """Papers with their byline; an authorship's researcher is the applied one only."""

    serializer_class = PaperSerializer
    filterset_class = PaperFilter
    lookup_value_regex = PAPER_LOOKUP
    search_fields = ("title", "abstract", "=arxiv_id", "authorships__raw_name")
    permission_classes = [permissions.AllowAny]

    filter_backends = [
        *api_settings.DEFAULT_FILTER_BACKENDS,
        AliasOrderingFilter,
    ]

    def get_queryset(self):
        if self.action == "list":  # bylines come from one values query a page
            return Paper.objects.filter(hidden=False).annotate(
                sort_date=Coalesce("published", Value(selectors.UNDATED)),
                # A signed integer: as the positive column's type, a cursor
                # at -1 (unknown counts) matched nothing (Django drops a
                # lookup past a field's range), so the list ended early.
                cited_sort=Coalesce(
                    "cited_by_count", Value(-1), output_field=IntegerField()
                ),
            )
        return selectors.paper_list()

    def list(self, request: Request, *args, **kwargs) -> Response:
        """One cursor page of papers, each byline cut at 100 slots (flagged)."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        fields = request.query_params.get("fields")
        if not fields or "authorships" in fields or "authors_truncated" in fields:
            bylines = selectors.list_bylines(p.pk for p in page)
            for paper in page:
                paper.list_byline = bylines.get(paper.pk, ([], False))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def retrieve(self, request: Request, *args, **kwargs) -> Response:
        """One paper with its byline; ``ETag`` and ``If-None-Match`` supported."""
        return conditional(request, self.get_serializer(self.get_object()).data)

    def get_object(self):
        """The paper by id, arXiv id (``2201.05500``, ``hep-th/9901001``) or DOI."""
        paper = selectors.paper_by_identifier(self.kwargs["pk"])
        if paper is None:
            raise Http404("no visible paper has that id, arXiv id or DOI")
        return paper


# Papers one similar-papers answer lists by default, and at most.
SIMILAR_DEFAULT = 10
SIMILAR_MOST = 50
# Papers a page of an API search, by default and at most (the API's page_size).
SEARCH_PAGE_SIZE = 25
SEARCH_PAGE_MOST = 200


def _bounded(raw: str, *, default: int, least: int, most: int) -> int | None:
    """A whole-number query parameter within bounds; None when it is not one."""
    raw = raw.strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) < 10):
        return None
    value = int(raw)
    return value if least <= value <= most else None


class ServiceUnavailable(APIException):
    """HTTP 503: a part the answer needs is down (the embedding model)."""

    status_code = 503
    default_detail = "Service unavailable."
    default_code = "unavailable"


class PaperSimilarView(APIView):
    """``GET /api/papers/<id>/similar/``: the papers nearest a paper in meaning."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        operation_id="papers_similar",
        parameters=[
            PAPER_ID,
            OpenApiParameter(
                "limit",
                OpenApiTypes.INT,
                description=f"How many papers (1 to {SIMILAR_MOST}; default "
                f"{SIMILAR_DEFAULT}).",
            ),
        ],
        responses={
            200: SimilarPaperSerializer(many=True),
            **_problem(400, "`limit` is not a whole number from 1 to 50."),
            **_problem(404, "No visible paper has that id."),
        },
        examples=[_example("Similar to arXiv 0704.0001", examples.SIMILAR_PAPER)],
    )
    def get(self, request: Request, pk: str) -> Response:
        """Visible papers most similar to this one (title and abstract
        embeddings, cosine), most similar first, the paper itself left out; an
        empty list while the paper is not embedded yet."""
        paper = selectors.paper_by_identifier(pk)
        if paper is None:
            raise Http404("no visible paper has that id, arXiv id or DOI")
        limit = _bounded(
            request.query_params.get("limit", ""),
            default=SIMILAR_DEFAULT,
            least=1,
            most=SIMILAR_MOST,
        )
        if limit is None:
            raise ValidationError({"limit": f"a whole number from 1 to {SIMILAR_MOST}"})
        papers = similar_papers(paper=paper, limit=limit)
        return Response(
            SimilarPaperSerializer(papers, many=True, context={"request": request}).data
        )


class PaperSearchView(APIView):
    """``GET /api/search/papers/``: the site's paper search, by words, by meaning
    or both."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        operation_id="search_papers",
        parameters=[
            OpenApiParameter(
                "q",
                OpenApiTypes.STR,
                required=True,
                description="The search text (at most 200 characters, 10 words; "
                "keyword search reads quotes for phrases, `or` and `-word`).",
            ),
            OpenApiParameter(
                "mode",
                OpenApiTypes.STR,
                enum=list(MODES),
                description="`hybrid` (the default unless the site's "
                "`SEARCH_DEFAULT_MODE` says otherwise): papers matching the words and "
                "papers near in meaning, fused by reciprocal rank fusion; "
                "`keyword`: full-text search; `semantic`: the 100 papers whose "
                "title-and-abstract embedding is nearest the text's.",
            ),
            OpenApiParameter(
                "category",
                OpenApiTypes.STR,
                description="Keep papers carrying this arXiv category (`hep-th`).",
            ),
            OpenApiParameter(
                "year", OpenApiTypes.INT, description="Keep papers of this year."
            ),
            OpenApiParameter(
                "page",
                OpenApiTypes.INT,
                description="Page number from 1; a page past the last is a 404.",
            ),
            OpenApiParameter(
                "page_size",
                OpenApiTypes.INT,
                description=f"Papers a page (1 to {SEARCH_PAGE_MOST}; default "
                f"{SEARCH_PAGE_SIZE}).",
            ),
        ],
        responses={
            200: PaperSearchSerializer,
            **_problem(
                400, "The text, mode, category, year, page or page_size is invalid."
            ),
            **_problem(404, "The page is past the last page of the search."),
            **_problem(503, "Search by meaning is not available now (mode=semantic)."),
        },
        examples=[_example("Hybrid search", examples.PAPER_SEARCH)],
    )
    def get(self, request: Request) -> Response:
        """One page of papers for a search text, best first; a text that is an
        arXiv id or a DOI answers its paper alone."""
        query = request.query_params.get("q", "")
        mode = request.query_params.get("mode", "").strip().lower() or default_mode()
        category, year, errors = search_filters(request.query_params)
        problems = {}
        if not query.strip():
            problems["q"] = "a search text is required"
        if mode not in MODES:
            problems["mode"] = "one of hybrid, keyword, semantic"
        for error in errors:  # the category's or the year's, by their messages
            problems["year" if error == BAD_YEAR else "category"] = error
        number = _bounded(
            request.query_params.get("page", ""), default=1, least=1, most=10**6
        )
        if number is None:
            problems["page"] = "a whole number from 1"
        size = _bounded(
            request.query_params.get("page_size", ""),
            default=SEARCH_PAGE_SIZE,
            least=1,
            most=SEARCH_PAGE_MOST,
        )
        if size is None:
            problems["page_size"] = f"a whole number from 1 to {SEARCH_PAGE_MOST}"
        if problems:
            raise ValidationError(problems)
        named = paper_named_by(query)
        if named is not None and not category and not year:
            # An arXiv id or a DOI names its paper, as on the search page.
            return Response(
                {
                    "query": " ".join(query.split()),
                    "mode": mode,
                    "count": 1,
                    "count_is": "exact",
                    "page": 1,
                    "pages": 1,
                    "results": PaperRefSerializer(
                        [named], many=True, context={"request": request}
                    ).data,
                }
            )
        try:
            result = search_results(
                query=query,
                category=category,
                year=year,
                number=number,
                size=size,
                mode=mode,
            )
        except SemanticUnavailable as exc:
            raise ServiceUnavailable(str(exc)) from exc
        except SearchQueryError as exc:
            raise ValidationError({"q": str(exc)}) from exc
        if number > max(1, -(-result["listed"] // size)):
            raise NotFound(f"page {number} is past the last page of this search")
        # A paper hidden since the ranked head was cached is left out.
        rows = Paper.objects.filter(hidden=False).in_bulk(result["ids"])
        papers = [rows[pk] for pk in result["ids"] if pk in rows]
        return Response(
            {
                "query": " ".join(query.split()),
                "mode": result["mode"],
                "count": result["count"],
                "count_is": result["count_is"],
                "page": result["number"],
                "pages": max(1, -(-result["listed"] // size)),
                "results": PaperRefSerializer(
                    papers, many=True, context={"request": request}
                ).data,
            }
        )


RESEARCHER_NOT_FOUND = _problem(
    404,
    "No researcher has that id.",
    ("Unknown researcher", examples.RESEARCHER_NOT_FOUND),
)
# Reading a merged-away or retired researcher (_moved_or_gone).
RESEARCHER_MOVED = {
    301: OpenApiResponse(
        description="The researcher was merged away: `Location` is the same URL "
        "of the survivor, query string kept."
    )
}
RESEARCHER_GONE = _problem(
    410,
    "The researcher was retired (the decision that created it was undone, or "
    "a curator moved every paper it held elsewhere); "
    "`holders` says which researchers hold its papers now.",
    ("Retired researcher", examples.RESEARCHER_RETIRED),
)


@extend_schema_view(
    **_list_and_detail(
        ResearcherSerializer,
        ("Maxim A. Yurkin", examples.RESEARCHER),
        path_id=RESEARCHER_ID,
        not_found={**RESEARCHER_MOVED, **RESEARCHER_NOT_FOUND, **RESEARCHER_GONE},
        invalid=("Unknown field", examples.RESEARCHERS_INVALID),
    )
)
class ResearcherViewSet(viewsets.ReadOnlyModelViewSet):
    """Live researchers (merged-away profiles are not listed) and their papers."""

    serializer_class = ResearcherSerializer
    filterset_class = ResearcherFilter
    lookup_value_regex = NUMERIC_LOOKUP
    search_fields = ("display_name", "=orcid")
    permission_classes = [permissions.AllowAny]

    def get_queryset(self):
        return selectors.researcher_list()

    def retrieve(self, request: Request, *args, **kwargs) -> Response:
        """One researcher, cached until a curation change touches it.

        The cache key carries the researcher's cache version
        (:mod:`wovepaper.cache`), which every committed merge, split, move or undo
        bumps, so a response never outlives the state it shows.
        """
        # Only ``fields=`` changes the rendering; other parameters are ignored,
        # so they neither split the cache nor let one rendering answer another.
        # The serializer refuses unknown names (400) before anything is cached.
        fields = ",".join(
            sorted(
                {n.strip() for n in request.query_params.get("fields", "").split(",")}
                - {""}
            )
        )
        key = site_cache.researcher_key(int(kwargs["pk"]), f"api-detail?{fields}")
        data = cache.get(key)
        if data is None:
            # Only a live researcher is ever cached, and a merge bumps the version.
            moved = _moved_or_gone(request, int(kwargs["pk"]), "researcher-detail")
            if moved:
                return moved
            data = super().retrieve(request, *args, **kwargs).data
            cache.set(key, data, timeout=RESEARCHER_CACHE_SECONDS)
        return conditional(request, data)

    @extend_schema(
        methods=["POST"],
        description="Follow the researcher (a merged-away one through its "
        "survivor). Following again changes nothing and answers the same 201.",
        request=None,
        parameters=[FOLLOW_RESEARCHER_ID],
        responses={201: FollowSerializer, **RESEARCHER_NOT_FOUND},
        examples=[_example("Following Maxim A. Yurkin", examples.FOLLOW)],
    )
    @extend_schema(
        methods=["DELETE"],
        description="Stop following the researcher (or its survivor; a retired "
        "one too); 204 whether or not you followed it.",
        request=None,
        parameters=[FOLLOW_RESEARCHER_ID],
        responses={204: None, **RESEARCHER_NOT_FOUND},
    )
    @action(
        detail=True,
        methods=["post", "delete"],
        permission_classes=[permissions.IsAuthenticated],
        filterset_class=None,
    )
    def follow(self, request: Request, pk: str | None = None) -> Response:
        """Follow (POST) or stop following (DELETE) the researcher."""
        return _follow(request, pk)

    @extend_schema(
        request=ClaimSerializer,
        parameters=[CLAIM_RESEARCHER_ID],
        responses={
            201: ClaimSerializer,
            **_problem(400, INVALID_BODY, ("No ORCID iD", examples.CLAIM_INVALID)),
            **RESEARCHER_NOT_FOUND,
            **_problem(
                409,
                "The ORCID iD is invalid or differs from the profile's, the "
                "profile is claimed by someone else, or you have a pending claim "
                "on it.",
                ("Pending already", examples.CLAIM_DUPLICATE),
            ),
        },
        examples=[
            _example(
                "Claim with an ORCID URL", examples.CLAIM_REQUEST, request_only=True
            ),
            _example("Pending claim", examples.CLAIM, response_only=True),
        ],
    )
    @action(
        detail=True,
        methods=["post"],
        permission_classes=[permissions.IsAuthenticated],
        filterset_class=None,
    )
    def claim(self, request: Request, pk: str | None = None) -> Response:
        """Claim the profile as yours, with your ORCID iD; a curator decides."""
        researcher = get_object_or_404(Researcher.objects.live(), pk=pk)
        body = ClaimSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        claim = claim_submit(
            user=request.user,
            researcher=researcher,
            orcid=body.validated_data["orcid"],
            message=body.validated_data.get("message", ""),
        )
        return Response(ClaimSerializer(claim).data, status=201)

    @extend_schema(
        responses={
            200: CoauthorSerializer(many=True),
            **RESEARCHER_MOVED,
            **RESEARCHER_NOT_FOUND,
            **RESEARCHER_GONE,
        },
        parameters=[
            RESEARCHER_ID,
            OpenApiParameter(
                "limit", int, description="How many (1 to 200, default 50)."
            ),
            NO_SEARCH,
        ],
        examples=[_example("Alfons G. Hoekstra", examples.COAUTHOR)],
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def coauthors(self, request: Request, pk: str | None = None) -> Response:
        """Curated researchers sharing the most papers with this one, most first."""
        moved = _moved_or_gone(request, int(pk), "researcher-coauthors")
        if moved:
            return moved
        researcher = get_object_or_404(Researcher.objects.live(), pk=pk)
        raw = request.query_params.get("limit", "50")
        limit = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 4 else 50
        rows = selectors.researcher_coauthors(researcher=researcher, limit=limit)
        return Response(CoauthorSerializer(rows, many=True).data)

    @extend_schema(
        responses={
            200: PaperRefSerializer(many=True),
            **RESEARCHER_MOVED,
            **RESEARCHER_NOT_FOUND,
            **RESEARCHER_GONE,
        },
        parameters=[RESEARCHER_ID, NO_SEARCH],
        examples=[_example("arXiv 0704.0038", examples.PAPER_REF)],
    )
    @action(detail=True, methods=["get"], filterset_class=None)
    def papers(self, request: Request, pk: str | None = None) -> Response:
        """The researcher's papers, newest first (cursor-paged)."""
        moved = _moved_or_gone(request, int(pk), "researcher-papers")
        if moved:
            return moved
        researcher = get_object_or_404(Researcher.objects.live(), pk=pk)
        queryset = selectors.researcher_papers(researcher=researcher)
        self.paginator.ordering = ("-sort_date", "-id")
        # One indexed count of the researcher's papers: cheap, so given.
        self.paginator.total = queryset.count()
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(
            PaperRefSerializer(page, many=True, context={"request": request}).data
        )


def _follow(request: Request, pk: str) -> Response:
    """Follow (POST) or unfollow (DELETE) researcher ``pk`` through the
    services; a retired researcher can be unfollowed, not followed (404)."""
    researcher = get_object_or_404(Researcher, pk=pk)
    if request.method == "DELETE":
        core_services.follow_delete(user=request.user, researcher=researcher)
        return Response(status=204)
    try:
        follow = core_services.follow_create(user=request.user, researcher=researcher)
    except ValueError as exc:  # retired, or merged into one that is gone
        raise Http404(str(exc)) from exc
    return Response(FollowSerializer(follow).data, status=201)


def _moved_or_gone(request: Request, pk: int, route: str) -> HttpResponse | None:
    """The answer for researcher ``pk`` when it is not live, else None.

    Merged away: 301 to the same view of the survivor, the query string kept,
    so a client's filters and cursor follow the move. Retired (the split or
    ``new`` decision that created it was undone, or a curator moved every
    paper it held elsewhere): 410 problem details whose
    ``holders`` say where its papers went, ``[{"id", "name", "papers",
    "url"}]``, most papers first (the researcher page answers 410 with the
    same list).
    """
    survivor = selectors.researcher_survivor(pk)
    if survivor is not None:
        url = reverse(route, args=[survivor])
        if request.META.get("QUERY_STRING"):
            url += "?" + request.META["QUERY_STRING"]
        moved = HttpResponsePermanentRedirect(url)
        # A curator can undo the merge: clients ask again before reusing it
        # (RFC 9111 5.2.2.4), as the researcher page's redirect says.
        moved["Cache-Control"] = "no-cache"
        return moved
    retired = Researcher.objects.filter(
        pk=pk, retired=True, merged_into__isnull=True
    ).first()
    if retired is None:
        return None
    # The page's holders, each with its API URL in place of its page's.
    holders = [
        {
            **holder,
            "url": request.build_absolute_uri(
                reverse("researcher-detail", args=[holder["id"]])
            ),
        }
        for holder in profile.former_holders(retired)
    ]
    because = profile.retired_because(retired)
    went = (
        ("its papers are on" if because == "emptied" else "its papers went back to")
        + " the researchers in 'holders'"
        if holders
        else "none of its papers is on a researcher at the moment"
    )
    return problem(
        410,
        f"researcher {pk} was retired: {profile.RETIRED_WHY[because]}, and {went}",
        slug="researcher-retired",
        holders=holders,
    )


PROPOSAL_NOT_FOUND = _problem(
    404,
    "No proposal has that id.",
    ("Unknown proposal", examples.PROPOSAL_NOT_FOUND),
)


def _decision_schema(request: tuple[str, dict], response: tuple[str, dict]):
    """``extend_schema`` of a decision (approve, reject) with its two examples.

    Args:
        request: (summary, body) of the request.
        response: (summary, body) of the decided proposal.

    Returns:
        The decorator.
    """
    return extend_schema(
        request=ProposalDecisionSerializer,
        parameters=[PROPOSAL_ID],
        responses={
            200: ProposalSerializer,
            **_problem(400, INVALID_BODY, ("Not an id", examples.DECISION_INVALID)),
            **PROPOSAL_NOT_FOUND,
            **_problem(409, DECIDED, ("Decided already", examples.PROPOSAL_DECIDED)),
        },
        examples=[
            _example(*request, request_only=True),
            _example(*response, response_only=True),
        ],
    )


@extend_schema_view(
    **_list_and_detail(
        ProposalSerializer,
        ("New researcher, pending", examples.PROPOSAL_PENDING),
        path_id=PROPOSAL_ID,
        not_found=PROPOSAL_NOT_FOUND,
        invalid=("Unknown status", examples.PROPOSALS_INVALID),
    )
)
class ProposalViewSet(viewsets.ReadOnlyModelViewSet):
    """Pending and decided matcher proposals, for curators; approve and reject.

    Deciding calls the same services as the admin; a proposal decided already,
    stale, or changed by someone else at the same moment answers 409 with the
    reason.
    """

    serializer_class = ProposalSerializer
    filterset_class = ProposalFilter
    lookup_value_regex = NUMERIC_LOOKUP
    permission_classes = [IsCurator]
    search_fields = ("block_key", "authorships__raw_name")

    def get_queryset(self):
        # The queue reads the active matcher model; schema generation needs no rows.
        if getattr(self, "swagger_fake_view", False):
            return Proposal.objects.none()
        return curation_selectors.proposal_queue().prefetch_related("authorships")

    def list(self, request: Request, *args, **kwargs) -> Response:
        """One cursor page of the queue, with the filtered total (``count``)."""
        queryset = self.filter_queryset(self.get_queryset())
        self.paginator.total = queryset.count()
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @_decision_schema(
        ("Approve as proposed", examples.PROPOSAL_APPROVE_REQUEST),
        ("Applied", examples.PROPOSAL_APPLIED),
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, pk: str | None = None) -> Response:
        """Apply the proposal (for a split, ``moving`` edits the partition)."""
        body = ProposalDecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        proposal = curation_services.proposal_apply(
            proposal=self.get_object(),
            actor=request.user,
            split_ids=body.validated_data.get("moving"),
        )
        return Response(self.get_serializer(self._fresh(proposal)).data)

    @_decision_schema(
        ("Reject with a reason", examples.PROPOSAL_REJECT_REQUEST),
        ("Rejected", examples.PROPOSAL_REJECTED),
    )
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, pk: str | None = None) -> Response:
        """Reject the proposal, with an optional ``reason``; it never comes back."""
        body = ProposalDecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        proposal = curation_services.proposal_reject(
            proposal=self.get_object(),
            actor=request.user,
            reason=body.validated_data.get("reason", ""),
        )
        return Response(self.get_serializer(self._fresh(proposal)).data)

    def _fresh(self, proposal):
        return self.get_queryset().get(pk=proposal.pk)


@extend_schema_view(
    **_list_and_detail(
        FollowSerializer,
        ("Following Maxim A. Yurkin", examples.FOLLOW),
        path_id=FOLLOW_ID,
        not_found=_problem(
            404,
            "You have no follow with that id.",
            ("Unknown follow", examples.FOLLOW_NOT_FOUND),
        ),
        list_parameters=(NO_SEARCH,),
    )
)
class FollowViewSet(viewsets.ReadOnlyModelViewSet):
    """The researchers the signed-in user follows."""

    lookup_value_regex = NUMERIC_LOOKUP

    serializer_class = FollowSerializer
    permission_classes = [permissions.IsAuthenticated]
    filterset_class = None
    search_fields = ()

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation
            return Follow.objects.none()
        return Follow.objects.filter(user=self.request.user).select_related(
            "researcher"
        )

    def get_serializer_context(self) -> dict:
        """Where the user's follows of merged-away researchers lead now
        (``survivors``, for ``FollowSerializer.following``), as the pages
        and the feed read it (:func:`wovepaper.selectors.follows_leading`)."""
        context = super().get_serializer_context()
        if (
            getattr(self, "swagger_fake_view", False)
            or not self.request.user.is_authenticated
        ):
            return context
        moved = {
            pk: to
            for pk, to in selectors.follows_leading(self.request.user).items()
            if to != pk
        }
        live = Researcher.objects.in_bulk(set(moved.values()))
        context["survivors"] = {pk: live[to] for pk, to in moved.items() if to in live}
        return context


@extend_schema_view(
    list=extend_schema(
        parameters=[NO_SEARCH],
        examples=[_example("arXiv 0704.0038", examples.PAPER_REF)],
    ),
)
class FeedViewSet(viewsets.GenericViewSet):
    """New papers of the researchers the signed-in user follows, newest first."""

    serializer_class = PaperRefSerializer
    permission_classes = [permissions.IsAuthenticated]
    filterset_class = None
    search_fields = ()

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation
            return Paper.objects.none()
        return selectors.feed_papers(self.request.user)

    def list(self, request: Request) -> Response:
        """One cursor page of the feed."""
        self.paginator.ordering = ("-sort_date", "-id")
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


@extend_schema_view(
    **_list_and_detail(
        InstitutionSerializer,
        ("University of Amsterdam", examples.INSTITUTION),
        path_id=INSTITUTION_ID,
        not_found=_problem(
            404,
            "No institution has that id or ROR id.",
            ("Unknown ROR id", examples.INSTITUTION_NOT_FOUND),
        ),
    )
)
class InstitutionViewSet(viewsets.ReadOnlyModelViewSet):
    """Research organisations; the detail answers to our id or a ROR id."""

    serializer_class = InstitutionSerializer
    lookup_value_regex = INSTITUTION_LOOKUP
    search_fields = ("name",)
    filterset_class = None
    permission_classes = [permissions.AllowAny]

    def get_queryset(self):
        return Institution.objects.all()

    def get_object(self):
        """By id (digits) or ROR id (``05a28rw58``, 9 characters)."""
        key = self.kwargs["pk"]
        field = "pk" if key.isdigit() else "ror_id"
        return get_object_or_404(self.get_queryset(), **{field: key})

    def retrieve(self, request: Request, *args, **kwargs) -> Response:
        """One institution; ``ETag`` and ``If-None-Match`` supported."""
        return conditional(request, self.get_serializer(self.get_object()).data)


@extend_schema_view(
    **_list_and_detail(
        AuthorshipDetailSerializer,
        ("Maxim A. Yurkin on 0704.0038", examples.AUTHORSHIP),
        path_id=AUTHORSHIP_ID,
        not_found=_problem(
            404,
            "No visible authorship has that id.",
            ("Unknown authorship", examples.AUTHORSHIP_NOT_FOUND),
        ),
        invalid=("Paper not a number", examples.AUTHORSHIPS_INVALID),
    )
)
class AuthorshipViewSet(viewsets.ReadOnlyModelViewSet):
    """Byline slots with their applied researcher; curators also see the evidence."""

    serializer_class = AuthorshipDetailSerializer
    filterset_class = AuthorshipFilter
    lookup_value_regex = NUMERIC_LOOKUP
    search_fields = ("raw_name",)
    permission_classes = [permissions.AllowAny]

    def get_queryset(self):
        queryset = Authorship.objects.filter(paper__hidden=False).select_related(
            "researcher"
        )
        user = self.request.user
        if user and user.has_perm("curation.view_proposal"):
            queryset = queryset.prefetch_related(
                Prefetch(
                    "proposals",
                    queryset=Proposal.objects.filter(status="applied").order_by("pk"),
                    to_attr="applied_proposals",
                )
            )
        return queryset
