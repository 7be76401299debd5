"""Follow buttons (researchers, categories) and the signed-in user's Following page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from wovepaper import profile, selectors, services
from wovepaper.accounts import may_email
from wovepaper.models import CategoryFollow, Researcher

PAGE_SIZE = 24


def _back(request: HttpRequest, fallback: str) -> HttpResponse:
    """Redirect to the form's ``next`` when it is on this site, else ``fallback``."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect(fallback)


@require_POST
@login_required
def researcher_follow(request: HttpRequest, pk: int) -> HttpResponse:
    """POST ``action=follow|unfollow`` for researcher ``pk``; back to ``next``.

    A merged-away researcher is followed through its survivor; an unknown one
    is a 404, and so is following a retired one, which its followers can still
    unfollow (a hostile trial: they could not, and the API kept listing it);
    any other action a 400.
    """
    researcher = get_object_or_404(Researcher, pk=pk)
    action = request.POST.get("action")
    if action == "follow":
        try:
            follow = services.follow_create(user=request.user, researcher=researcher)
        except ValueError as exc:  # retired, or merged into one that is gone
            raise Http404(str(exc)) from exc
        messages.success(
            request,
            f"You follow {follow.researcher.display_name}: new papers "
            "appear on your Following page and in your daily digest.",
        )
    elif action == "unfollow":
        services.follow_delete(user=request.user, researcher=researcher)
        messages.success(request, f"You no longer follow {researcher.display_name}.")
    else:
        return HttpResponseBadRequest("action must be follow or unfollow")
    back = "/following/" if researcher.retired else researcher.get_absolute_url()
    return _back(request, back)


@require_POST
@login_required
def category_follow(request: HttpRequest, category: str) -> HttpResponse:
    """POST ``action=follow|unfollow`` for an arXiv category; back to ``next``.

    Following a category no visible paper carries is a 404; a bad action a 400.
    """
    action = request.POST.get("action")
    if action == "follow":
        try:
            services.category_follow_create(user=request.user, category=category)
        except ValueError as exc:
            return render(request, "pages/404.html", {"reason": str(exc)}, status=404)
        messages.success(request, f"You follow the category {category}.")
    elif action == "unfollow":
        services.category_follow_delete(user=request.user, category=category)
        messages.success(request, f"You no longer follow the category {category}.")
    else:
        return HttpResponseBadRequest("action must be follow or unfollow")
    return _back(request, f"{request.build_absolute_uri('/following/')}")


@require_POST
@login_required
def category_follow_form(request: HttpRequest) -> HttpResponse:
    """POST ``category`` from the Following page's form: follow that category."""
    category = request.POST.get("category", "").strip()[:40]
    if not category:
        return HttpResponseBadRequest("name a category, e.g. hep-th")
    return category_follow(request, category)


@login_required
def following(request: HttpRequest) -> HttpResponse:
    """The signed-in user's researchers and categories and their newest papers.

    Papers are newest first, :data:`PAGE_SIZE` a page (``?page=N``).
    """
    categories = list(
        CategoryFollow.objects.filter(user=request.user).values_list(
            "category", flat=True
        )
    )
    papers = selectors.following_papers(request.user, categories=categories)
    page = Paginator(papers, PAGE_SIZE).get_page(request.GET.get("page"))
    page.object_list = profile.paper_rows(page.object_list)
    return render(
        request,
        "pages/following.html",
        {
            "researchers": selectors.followed_researchers(request.user),
            "categories": categories,
            "page": page,
            "emailable": may_email(request.user),
        },
    )
