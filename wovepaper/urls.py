from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView

from curation.views import claim_create
from wovepaper.views import home

urlpatterns = [
    path("", home, name="home"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("researchers/<int:pk>/claim/", claim_create, name="claim-page"),
    path("api/", include("api.urls")),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path(
        "api/docs/", SpectacularSwaggerView.as_view(url_name="openapi"), name="api-docs"
    ),
]
