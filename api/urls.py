from __future__ import annotations

from django.urls import path
from rest_framework.routers import DefaultRouter

from api.views import (
    AuthorshipViewSet,
    FeedViewSet,
    FollowViewSet,
    InstitutionViewSet,
    PaperSearchView,
    PaperSimilarView,
    PaperViewSet,
    ProposalViewSet,
    ResearcherViewSet,
    TokenObtainView,
)

router = DefaultRouter()
router.register("papers", PaperViewSet, basename="paper")
router.register("researchers", ResearcherViewSet, basename="researcher")
router.register("institutions", InstitutionViewSet, basename="institution")
router.register("authorships", AuthorshipViewSet, basename="authorship")
router.register("proposals", ProposalViewSet, basename="proposal")
router.register("follows", FollowViewSet, basename="follow")
router.register("feed", FeedViewSet, basename="feed")

urlpatterns = [
    path("token/", TokenObtainView.as_view(), name="api-token"),
    # Before the router: a paper's id may hold slashes (a DOI), and the detail
    # route would take "<id>/similar" for an id.
    path(
        "papers/<path:pk>/similar/",
        PaperSimilarView.as_view(),
        name="paper-similar",
    ),
    path("search/papers/", PaperSearchView.as_view(), name="search-papers"),
    *router.urls,
]
