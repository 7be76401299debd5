"""Read-only viewsets over the curated state; each ``get_queryset`` is a selector."""

from __future__ import annotations

from django.core.cache import cache
from django.db.models import Prefetch
from django.http import Http404, HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from api.conditional import conditional
from api.filters import (
    AuthorshipFilter,
    PaperFilter,
    ProposalFilter,
    ResearcherFilter,
)
from api.serializers import (
    AuthorshipDetailSerializer,
    ClaimSerializer,
    CoauthorSerializer,
    FollowSerializer,
    InstitutionSerializer,
    PaperRefSerializer,
    PaperSerializer,
    ProposalDecisionSerializer,
    ProposalSerializer,
    ResearcherSerializer,
)
from curation import selectors as curation_selectors
from curation import services as curation_services
from curation.claims import claim_submit
from curation.models import Proposal
from wovepaper import cache as site_cache
from wovepaper import selectors
from wovepaper import services as core_services
from wovepaper.models import Authorship, Follow, Institution, Paper, Researcher

# A cached researcher response lives at most this long (seconds) even if no bump
# arrives (a cache restart loses versions; the timeout bounds what that can show).
RESEARCHER_CACHE_SECONDS = 300


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


class PaperViewSet(viewsets.ReadOnlyModelViewSet):
    """Papers with their byline; an authorship's researcher is the applied one only."""

    serializer_class = PaperSerializer
    filterset_class = PaperFilter
    # Our id, an arXiv id (old-style ones hold a slash) or a DOI (slashes too).
    lookup_value_regex = r"[^?#]{1,300}"
    search_fields = ("title", "abstract", "=arxiv_id", "authorships__raw_name")
    permission_classes = [permissions.AllowAny]

    def get_queryset(self):
        if self.action == "list":  # bylines come from one values query a page
            return Paper.objects.filter(hidden=False)
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


class ResearcherViewSet(viewsets.ReadOnlyModelViewSet):
    """Live researchers (merged-away profiles are not listed) and their papers."""

    serializer_class = ResearcherSerializer
    filterset_class = ResearcherFilter
    lookup_value_regex = r"\d{1,18}"
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
        # The query string (``fields=``) is part of the rendering's identity.
        query = request.META.get("QUERY_STRING", "")[:300]
        key = site_cache.researcher_key(int(kwargs["pk"]), f"api-detail?{query}")
        data = cache.get(key)
        if data is None:
            # Only a live researcher is ever cached, and a merge bumps the version.
            moved = _survivor_redirect(request, int(kwargs["pk"]), "researcher-detail")
            if moved:
                return moved
            data = super().retrieve(request, *args, **kwargs).data
            cache.set(key, data, timeout=RESEARCHER_CACHE_SECONDS)
        return conditional(request, data)

    @extend_schema(request=None, responses={201: FollowSerializer, 204: None})
    @action(
        detail=True,
        methods=["post", "delete"],
        permission_classes=[permissions.IsAuthenticated],
        filterset_class=None,
    )
    def follow(self, request: Request, pk: str | None = None) -> Response:
        """Follow (POST) or stop following (DELETE) the researcher."""
        return _follow(request, pk)

    @extend_schema(request=ClaimSerializer, responses={201: ClaimSerializer})
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
        responses=CoauthorSerializer(many=True),
        parameters=[
            OpenApiParameter(
                "limit", int, description="How many (1 to 200, default 50)."
            )
        ],
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def coauthors(self, request: Request, pk: str | None = None) -> Response:
        """Curated researchers sharing the most papers with this one, most first."""
        moved = _survivor_redirect(request, int(pk), "researcher-coauthors")
        if moved:
            return moved
        researcher = get_object_or_404(Researcher.objects.live(), pk=pk)
        raw = request.query_params.get("limit", "50")
        limit = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 4 else 50
        rows = selectors.researcher_coauthors(researcher=researcher, limit=limit)
        return Response(CoauthorSerializer(rows, many=True).data)

    @extend_schema(responses=PaperRefSerializer(many=True))
    @action(detail=True, methods=["get"], filterset_class=None)
    def papers(self, request: Request, pk: str | None = None) -> Response:
        """The researcher's papers, newest first (cursor-paged)."""
        moved = _survivor_redirect(request, int(pk), "researcher-papers")
        if moved:
            return moved
        researcher = get_object_or_404(Researcher.objects.live(), pk=pk)
        queryset = selectors.researcher_papers(researcher=researcher)
        self.paginator.ordering = ("-sort_date", "-id")
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(PaperRefSerializer(page, many=True).data)


def _follow(request: Request, pk: str) -> Response:
    """Follow (POST) or unfollow (DELETE) researcher ``pk`` through the services."""
    researcher = get_object_or_404(Researcher.objects.filter(retired=False), pk=pk)
    if request.method == "DELETE":
        core_services.follow_delete(user=request.user, researcher=researcher)
        return Response(status=204)
    follow = core_services.follow_create(user=request.user, researcher=researcher)
    return Response(FollowSerializer(follow).data, status=201)


def _survivor_redirect(
    request: Request, pk: int, route: str
) -> HttpResponsePermanentRedirect | None:
    """301 to the same view of the survivor when researcher ``pk`` was merged away.

    The query string is kept, so a client's filters and cursor follow the move.
    """
    survivor = selectors.researcher_survivor(pk)
    if survivor is None:
        return None
    url = reverse(route, args=[survivor])
    if request.META.get("QUERY_STRING"):
        url += "?" + request.META["QUERY_STRING"]
    return HttpResponsePermanentRedirect(url)


class ProposalViewSet(viewsets.ReadOnlyModelViewSet):
    """Pending and decided matcher proposals, for curators; approve and reject.

    Deciding calls the same services as the admin; a proposal decided already,
    stale, or changed by someone else at the same moment answers 409 with the
    reason.
    """

    serializer_class = ProposalSerializer
    filterset_class = ProposalFilter
    lookup_value_regex = r"\d{1,18}"
    permission_classes = [IsCurator]
    search_fields = ("block_key", "authorships__raw_name")

    def get_queryset(self):
        return curation_selectors.proposal_queue().prefetch_related("authorships")

    @extend_schema(request=ProposalDecisionSerializer, responses=ProposalSerializer)
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

    @extend_schema(request=ProposalDecisionSerializer, responses=ProposalSerializer)
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


class FollowViewSet(viewsets.ReadOnlyModelViewSet):
    """The researchers the signed-in user follows."""

    lookup_value_regex = r"\d{1,18}"

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


class InstitutionViewSet(viewsets.ReadOnlyModelViewSet):
    """Research organisations; the detail answers to our id or a ROR id."""

    serializer_class = InstitutionSerializer
    lookup_value_regex = r"[0-9a-z]{1,18}"
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


class AuthorshipViewSet(viewsets.ReadOnlyModelViewSet):
    """Byline slots with their applied researcher; curators also see the evidence."""

    serializer_class = AuthorshipDetailSerializer
    filterset_class = AuthorshipFilter
    lookup_value_regex = r"\d{1,18}"
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
