from __future__ import annotations

from rest_framework.routers import DefaultRouter

from api.views import PaperViewSet, ResearcherViewSet

router = DefaultRouter()
router.register("papers", PaperViewSet, basename="paper")
router.register("researchers", ResearcherViewSet, basename="researcher")

urlpatterns = router.urls
