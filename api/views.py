"""Read-only viewsets over the curated state; each ``get_queryset`` is a selector."""

from __future__ import annotations

from django.core.cache import cache
from django.http import HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from api.filters import PaperFilter, ResearcherFilter
from api.serializers import PaperRefSerializer, PaperSerializer, ResearcherSerializer
from wovepaper import cache as site_cache
from wovepaper import selectors
from wovepaper.models import Researcher

# A cached researcher response lives at most this long (seconds) even if no bump
# arrives (a cache restart loses versions; the timeout bounds what that can show).
RESEARCHER_CACHE_SECONDS = 300


class PaperViewSet(viewsets.ReadOnlyModelViewSet):
    """Papers with their byline; an authorship's researcher is the applied one only."""

    serializer_class = PaperSerializer
    filterset_class = PaperFilter
    lookup_value_regex = r"\d{1,18}"
    search_fields = ("title", "abstract", "=arxiv_id", "authorships__raw_name")
    permission_classes = [permissions.AllowAny]

    def get_queryset(self):
        return selectors.paper_list()


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
        key = site_cache.researcher_key(int(kwargs["pk"]), "api-detail")
        data = cache.get(key)
        if data is None:
            # Only a live researcher is ever cached, and a merge bumps the version.
            moved = _survivor_redirect(request, int(kwargs["pk"]), "researcher-detail")
            if moved:
                return moved
            data = super().retrieve(request, *args, **kwargs).data
            cache.set(key, data, timeout=RESEARCHER_CACHE_SECONDS)
        return Response(data)

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
