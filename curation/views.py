"""Public curation pages: a signed-in researcher claims their profile."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from curation.claims import claim_submit
from curation.exceptions import CurationError
from curation.models import ClaimRequest
from wovepaper.models import Researcher
from wovepaper.selectors import researcher_survivor


@login_required
def claim_create(request: HttpRequest, pk: int) -> HttpResponse:
    """GET the claim form for researcher ``pk``; POST ``orcid`` (+ ``message``).

    Responds 200 with the form (and the error, 400, if the claim is refused) or
    with a confirmation once the claim is recorded; 301 to the survivor's page for
    a merged-away researcher; 404 for an unknown or retired one.
    """
    survivor = researcher_survivor(pk)
    if survivor:
        return redirect("claim-page", pk=survivor, permanent=True)
    researcher = get_object_or_404(Researcher.objects.live(), pk=pk)
    context = {
        "researcher": researcher,
        "paper_count": researcher.authorships.count(),
        "orcid": request.POST.get("orcid", "")[:60],
        "message": request.POST.get("message", "")[:2000],
    }
    status = 200
    context["submitted"] = ClaimRequest.objects.filter(
        user=request.user,
        researcher=researcher,
        status=ClaimRequest.Status.PENDING,
    ).first()
    if request.method == "POST" and context["submitted"] is None:
        try:
            context["submitted"] = claim_submit(
                user=request.user,
                researcher=researcher,
                orcid=context["orcid"],
                message=context["message"],
            )
        except CurationError as exc:
            context["error"] = str(exc)
            status = 400
    return render(request, "curation/claim_form.html", context, status=status)
