from __future__ import annotations

from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import (
    SpectacularJSONAPIView,
    SpectacularSwaggerSplitView,
)

from curation.views import claim_create
from wovepaper import feeds, sitemaps
from wovepaper.views import accounts, browse, follow, health, machines, pages, search

urlpatterns = [
    path("", pages.home, name="home"),
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path(
        "accounts/password_reset/",
        accounts.PasswordResetView.as_view(),
        name="password_reset",
    ),
    path(
        "accounts/confirm/", accounts.email_confirm_resend, name="email-confirm-resend"
    ),
    path(
        "accounts/confirm/<str:token>/",
        accounts.email_confirm_view,
        name="email-confirm",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    # --- browsing (wovepaper/views/browse.py) ---
    path("researchers/", browse.researchers_index, name="researchers"),
    path("institutions/", browse.institutions_index, name="institutions"),
    path("papers/", browse.papers_index, name="papers"),
    path("categories/<str:category>/", browse.category_index, name="category"),
    # --- public pages (wovepaper/views/pages.py) ---
    path(
        "researchers/<int:pk>-<slug:slug>", pages.researcher_detail, name="researcher"
    ),
    path("researchers/<int:pk>", pages.researcher_detail, name="researcher-bare"),
    # Hand-typed spellings with a trailing slash answer 301 to the canonical URL.
    path("researchers/<int:pk>/", pages.researcher_detail),
    path("researchers/<int:pk>-<slug:slug>/", pages.researcher_detail),
    path(
        "researchers/<int:pk>/coauthors.json",
        pages.researcher_network,
        name="researcher-network",
    ),
    path("researchers/<int:pk>/claim/", claim_create, name="claim-page"),
    re_path(r"^papers/(?P<ref>.+)$", pages.paper_detail, name="paper"),
    re_path(
        r"^institutions/(?P<ref>.+)$", pages.institution_detail, name="institution"
    ),
    # --- following (wovepaper/views/follow.py) ---
    path(
        "researchers/<int:pk>/follow",
        follow.researcher_follow,
        name="follow-researcher",
    ),
    path(
        "categories/<str:category>/follow",
        follow.category_follow,
        name="follow-category",
    ),
    path("following/", follow.following, name="following"),
    path(
        "following/categories",
        follow.category_follow_form,
        name="follow-category-form",
    ),
    # --- search (wovepaper/views/search.py) ---
    path("search/", search.search, name="search"),
    # --- for machines: robots, llms.txt, sitemaps, feeds ---
    path("robots.txt", machines.robots_txt, name="robots-txt"),
    path("llms.txt", machines.llms_txt, name="llms-txt"),
    path("sitemap.xml", sitemaps.sitemap_index, name="sitemap-index"),
    path("sitemap-<str:section>.xml", sitemaps.sitemap_section, name="sitemap-section"),
    path("feeds/latest.rss", feeds.latest_papers, name="feed-latest"),
    path(
        "researchers/<int:pk>/feed.rss", feeds.researcher_papers, name="feed-researcher"
    ),
    path(
        "categories/<str:category>/feed.rss",
        feeds.category_papers,
        name="feed-category",
    ),
    # --- API ---
    path("api/", include("api.urls")),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    # The split view serves Swagger UI's start-up script as a file, so the
    # page runs under a Content-Security-Policy without inline scripts.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="openapi"),
        name="api-docs",
    ),
]

handler400 = "wovepaper.views.pages.bad_request"
handler404 = "wovepaper.views.pages.page_not_found"
