"""The proposal admin (:class:`ProposalAdmin`): the queue, bulk actions run by
a worker, the block review page, and the review page's views.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.views.main import ERROR_FLAG
from django.core.exceptions import PermissionDenied
from django.db.models import F, QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
)
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from curation import block_review, selectors, services
from curation.admin.common import SafeActionsMixin
from curation.admin.events import event_links
from curation.admin.proposals.evidence import (
    SCORE_MEANING,
    _attach_rule,
    _cluster_evidence,
    _frame_said,
    _merge_rule,
    _reading_said,
    _rounded,
    _tied_said,
    _unreadable,
)
from curation.admin.proposals.filters import (
    MERGE_ROWS,
    QUEUE_ORDER,
    BlockFilter,
    FieldFilter,
    LaneFilter,
    QueueChangeList,
    ScoreBandFilter,
)
from curation.admin.proposals.review import (
    APPROVE_NEXT,
    _block_url,
    _decide,
    _review,
    _review_of,
    _review_permissions,
)
from curation.exceptions import CurationError
from curation.models import Proposal
from curation.proposal_search import SEARCH_HELP, proposals_matching
from wovepaper.profile import feature_words, json_object
from wovepaper.text import latex_to_text


@admin.register(Proposal)
class ProposalAdmin(SafeActionsMixin, admin.ModelAdmin):
    """The proposal queue: filter by kind, status and score; approve or reject."""

    change_form_template = "admin/curation/proposal/change_form.html"

    list_display = (
        "id",
        "kind",
        "status",
        "impact",
        "score_shown",
        "subject",
        "block_key",
        "created",
    )
    list_filter = (
        "kind",
        "status",
        LaneFilter,
        ScoreBandFilter,
        BlockFilter,
        FieldFilter,
    )
    # Read by get_search_results below, not by Django's icontains search.
    search_fields = ("block_key",)
    search_help_text = SEARCH_HELP
    actions = ("approve_selected", "reject_selected")
    readonly_fields = (
        "kind",
        "status",
        "score_meaning",
        "model_version",
        "block_key",
        "identifier_proven",
        "researcher",
        "other_researcher",
        "authorship_list",
        "evidence_table",
        "created",
        "decided_at",
        "decided_by",
        "reason",
        "event_list",
        "fingerprint",
        "researcher_revisions",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Proposal]:
        # Not super(): its ordering names the annotations the selector adds.
        return selectors.proposal_queue().prefetch_related("authorships")

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Proposal], search_term: str
    ) -> tuple[QuerySet[Proposal], bool]:
        """The proposals the term names, each kind of term through its index
        (:func:`curation.proposal_search.proposals_matching`); never
        duplicates, so the list needs no DISTINCT."""
        if not search_term.strip():
            return queryset, False
        return queryset.filter(proposals_matching(search_term)), False

    def get_ordering(self, request: HttpRequest) -> tuple[str, ...]:
        # Annotations of selectors.proposal_queue (so not a class attribute, which
        # the system check reads as model fields): most papers, then borderline.
        return QUEUE_ORDER

    def get_changelist(self, request: HttpRequest, **kwargs):
        return QueueChangeList

    def changelist_view(self, request: HttpRequest, extra_context=None):
        """Open on the pending proposals: the work still to do; also after
        a filter the list could not apply (Django's error flag ``?e=1`` alone,
        kept so that a queue failing even so is not redirected again)."""
        if request.method == "GET" and set(request.GET) <= {ERROR_FLAG}:
            flag = f"&{ERROR_FLAG}=1" if request.GET else ""
            return HttpResponseRedirect(f"{request.path}?status__exact=pending{flag}")
        return super().changelist_view(request, extra_context)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url="", extra_context=None
    ):
        """The proposal page; a pending proposal that no longer fits the
        applied state says so before a curator approves it (from the new-user
        trial: an attach to a researcher merged away read as any other until
        the click said it was stale)."""
        proposal = (
            Proposal.objects.filter(pk=object_id).first()
            if str(object_id).isdigit()
            else None
        )
        reason = services.proposal_no_longer_fits(proposal) if proposal else ""
        if request.method == "GET" and reason:
            messages.warning(
                request,
                f"This proposal no longer fits: {reason}. Approving it marks it "
                "stale instead of applying it.",
            )
        return super().change_view(request, object_id, form_url, extra_context)

    def get_fieldsets(self, request: HttpRequest, obj=None):
        main = [
            "kind",
            "status",
            "score_meaning",
            "identifier_proven",
            "researcher",
            "other_researcher",
        ]
        if obj is not None and obj.kind != Proposal.Kind.MERGE:
            main.append("authorship_list")
        main += ["evidence_table", "decided_at", "decided_by", "reason", "event_list"]
        return [
            (None, {"fields": main}),
            (
                "Technical",
                {
                    "classes": ["collapse"],
                    "fields": [
                        "model_version",
                        "block_key",
                        "fingerprint",
                        "researcher_revisions",
                        "created",
                    ],
                },
            ),
        ]

    @admin.display(description="papers", ordering="impact")
    def impact(self, obj: Proposal) -> int:
        return obj.impact

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        # Nothing on a proposal is edited by hand: it is approved or rejected.
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path(
                "<int:object_id>/decide/",
                self.admin_site.admin_view(self.decide_view),
                name=f"{info[0]}_{info[1]}_decide",
            ),
            path(
                "blocks/",
                self.admin_site.admin_view(self.blocks_view),
                name=f"{info[0]}_{info[1]}_blocks",
            ),
            path(
                "blocks/<path:block_key>/",
                self.admin_site.admin_view(self.block_view),
                name=f"{info[0]}_{info[1]}_block",
            ),
            *super().get_urls(),
        ]

    def blocks_view(self, request: HttpRequest) -> HttpResponse:
        """The queue of name blocks to review, largest expected gain first
        (:func:`curation.block_review.block_queue`)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        every = block_review.block_queue(limit=None)
        size = block_review.QUEUE_SHOWN
        pages = max(1, -(-len(every) // size))
        asked = request.GET.get("page", "1")
        number = int(asked) if asked.isascii() and asked.isdigit() else 1
        number = min(max(number, 1), pages)
        start = (number - 1) * size
        return TemplateResponse(
            request,
            "admin/curation/proposal/blocks.html",
            {
                **self.admin_site.each_context(request),
                "title": "Review by name block",
                "blocks": every[start : start + size],
                "total": len(every),
                "first": start + 1,
                "last": min(start + size, len(every)),
                "number": number,
                "pages": pages,
            },
        )

    def block_view(self, request: HttpRequest, block_key: str) -> HttpResponse:
        """One block's review page; on POST, the review applied in one
        transaction (:func:`curation.block_review.review_apply`), then this
        block again or, with ``then=next``, the queue's next block."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        block_key = block_key[:200]
        if not block_review.name_block(block_key):
            raise Http404("no such name block")
        if block_review.name_block(block_key) != block_key:
            # A sub-block's key (a proposal's "Review its block" link): its
            # name block is reviewed as one.
            return HttpResponseRedirect(_block_url(block_review.name_block(block_key)))
        if request.method == "POST":
            read = _review_of(request.POST)
            if read is None:
                return HttpResponseBadRequest(
                    "decisions are approve, reject or wait; moves name a "
                    "researcher id or 'new'; merges two researcher ids, or two "
                    "or more profiles ticked as one person; each field once"
                )
            review, nowhere = read
            if not request.user.has_perms(_review_permissions(review)):
                raise PermissionDenied
            if not review and nowhere:
                # A new user's trial: "decides nothing" did not say why.
                self.message_user(
                    request,
                    f"Nothing applied: {len(nowhere)} paper(s) were ticked, but "
                    "no place was chosen in their profile's \"Move the ticked "
                    'papers of this profile to" menu.',
                    messages.ERROR,
                )
                return HttpResponseRedirect(_block_url(block_key))
            try:
                batch = block_review.review_apply(
                    block_key=block_key, review=review, actor=request.user
                )
            except CurationError as exc:
                self.message_user(request, f"Nothing applied: {exc}", messages.ERROR)
            else:
                retired = batch.extra.get("retired", [])
                stale = batch.extra.get("stale_before", [])
                stale_after = batch.extra.get("stale_after", [])
                self.message_user(
                    request,
                    f"Review of {block_key} applied: {batch.extra['done']} "
                    f"change(s), audit entry event {batch.pk}."
                    + (
                        f" Proposal(s) {', '.join(map(str, stale))} named a "
                        "profile merged away or retired since they were made: "
                        "made stale, and your decisions on them passed over."
                        if stale
                        else ""
                    )
                    + (
                        f" Proposal(s) {', '.join(map(str, stale_after))} named a "
                        "profile this review merged away or retired: made stale "
                        "(the next match proposes their papers again)."
                        if stale_after
                        else ""
                    )
                    + (
                        f" Researcher(s) {', '.join(map(str, retired))} held no "
                        "paper after it and were retired (undo their "
                        "'researcher retired' change to bring them back)."
                        if retired
                        else ""
                    ),
                    messages.SUCCESS,
                )
                if request.POST.get("then") in ("next", APPROVE_NEXT):
                    following = block_review.next_block(block_key)
                    if following is not None:
                        return HttpResponseRedirect(_block_url(following))
                    return HttpResponseRedirect(
                        reverse("admin:curation_proposal_blocks")
                    )
            return HttpResponseRedirect(_block_url(block_key))
        block = block_review.block_of(block_key)
        return TemplateResponse(
            request,
            "admin/curation/proposal/block.html",
            {
                **self.admin_site.each_context(request),
                "title": f"Review block {block_key}",
                # Not "block": inside a template's blocks that name is
                # Django's own ({{ block.super }}).
                "name_block": block,
                "targets": [d.researcher for d in block.profiles],
                # One merge row per pair a review may need, up to MERGE_ROWS.
                "merge_rows": range(
                    1, min(max(len(block.profiles) - 1, 1), MERGE_ROWS) + 1
                ),
                "can_decide": self.has_decide_permission(request),
                # The page offers only what the curator may do (a hostile
                # trial: a decide-only user saw the merge ticks and got 403).
                "can_move": request.user.has_perm("wovepaper.move_authorship"),
                "can_split": request.user.has_perms(
                    ["wovepaper.move_authorship", "wovepaper.split_researcher"]
                ),
                "can_merge": request.user.has_perm("wovepaper.merge_researcher"),
                "next_block": block_review.next_block(block_key),
            },
        )

    def decide_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """POST ``decision=approve|reject`` (and ``reason``) from the review page."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_decide_permission(request):
            raise PermissionDenied
        proposal = get_object_or_404(Proposal, pk=object_id)
        decision = request.POST.get("decision")
        split_ids = None
        if proposal.kind == Proposal.Kind.SPLIT and "partition" in request.POST:
            split_ids = [
                int(v)
                for v in request.POST.getlist("moving")
                if v.isascii() and v.isdigit() and len(v) <= 18
            ]
        try:
            if decision == "approve":
                services.proposal_apply(
                    proposal=proposal, actor=request.user, split_ids=split_ids
                )
                self.message_user(
                    request, f"Proposal {proposal.pk} applied.", messages.SUCCESS
                )
            elif decision == "reject":
                services.proposal_reject(
                    proposal=proposal,
                    actor=request.user,
                    reason=request.POST.get("reason", "")[:2000],
                )
                self.message_user(
                    request, f"Proposal {proposal.pk} rejected.", messages.SUCCESS
                )
            else:
                return HttpResponseBadRequest("decision must be approve or reject")
        except CurationError as exc:
            self.message_user(request, str(exc), messages.ERROR)
        else:
            if request.POST.get("then") == "next":
                following = selectors.next_pending(proposal.pk)
                if following is not None:
                    return HttpResponseRedirect(
                        reverse("admin:curation_proposal_change", args=[following])
                    )
                self.message_user(request, "The queue is empty.", messages.INFO)
                return HttpResponseRedirect(
                    reverse("admin:curation_proposal_changelist")
                )
        return HttpResponseRedirect(
            reverse("admin:curation_proposal_change", args=[proposal.pk])
        )

    def render_change_form(self, request, context, *args, **kwargs):
        obj = context.get("original")
        context["can_decide"] = bool(
            obj
            and obj.status == Proposal.Status.PENDING
            and self.has_decide_permission(request)
        )
        if obj is not None:
            context.update(_review(obj))
            context["next_pending"] = selectors.next_pending(obj.pk)
        return super().render_change_form(request, context, *args, **kwargs)

    def has_decide_permission(self, request: HttpRequest) -> bool:
        """Whether the user may approve or reject (``curation.decide_proposal``)."""
        return request.user.has_perm("curation.decide_proposal")

    @admin.display(description="score", ordering="score")
    def score_shown(self, obj: Proposal) -> str:
        return f"{obj.score:.3f}"

    @admin.display(description="score")
    def score_meaning(self, obj: Proposal) -> str:
        """The score with what it measures for this kind of proposal."""
        meaning = SCORE_MEANING.get(obj.kind)
        shown = f"{obj.score:.3f}: {meaning}" if meaning else f"{obj.score:.3f}"
        evidence = obj.evidence if isinstance(obj.evidence, dict) else {}
        weakest = evidence.get("weakest")
        if obj.kind == Proposal.Kind.NEW and isinstance(weakest, int | float):
            # What the auto-apply policy weighs, not the mean (new-user trial:
            # a 0.996 that was not applied read as a bug).
            shown += (
                f"; its weakest link {weakest:.3f}, which the auto-apply policy weighs"
            )
        return shown

    @admin.display(description="about")
    def subject(self, obj: Proposal) -> str:
        if obj.kind == Proposal.Kind.MERGE:
            return f"{obj.researcher} + {obj.other_researcher}"
        printed = list(dict.fromkeys(a.raw_name for a in obj.authorships.all()))
        names = ", ".join(printed[:3]) + (" …" if len(printed) > 3 else "")
        if obj.kind == Proposal.Kind.ATTACH:
            return f"{names} → {obj.researcher}"
        return names

    @admin.display(description="authorships")
    def authorship_list(self, obj: Proposal) -> str:
        """The proposal's authorships, newest paper first (as the review's
        sides list them; undated last)."""
        rows = obj.authorships.select_related("paper").order_by(
            F("paper__published").desc(nulls_last=True), "pk"
        )
        return format_html(
            "<ul>{}</ul>",
            format_html_join(
                "",
                "<li>{} (position {}) on {}: {}{}</li>",
                (
                    (
                        a.raw_name,
                        a.position,
                        a.paper.arxiv_id or a.paper.doi,
                        latex_to_text(a.paper.title),
                        _assign_link(a),
                    )
                    for a in rows
                ),
            ),
        )

    @admin.display(description="events")
    def event_list(self, obj: Proposal) -> str:
        """The curation events about this proposal (applied, rejected, made
        stale, undone), oldest first, each linked to its page, where a
        curator undoes it: a rejected ``new`` has no researcher whose history
        would lead there (new-user trial)."""
        events = list(obj.events.select_related("actor").order_by("pk"))
        if not events:
            return "none yet"
        return event_links(
            events,
            lambda e: f" on {e.created:%Y-%m-%d %H:%M} by {e.actor or 'automation'}",
        )

    @admin.display(description="evidence")
    def evidence_table(self, obj: Proposal) -> str:
        evidence = obj.evidence
        unreadable = _unreadable(evidence)
        if unreadable:
            return unreadable
        model = format_html(
            "<p><small>model {}</small></p>", evidence.get("model_version", "")
        )
        if "features" not in evidence and obj.kind == Proposal.Kind.NEW:
            return format_html("{}{}", _cluster_evidence(obj), model)
        if "features" not in evidence:
            rows = [(k, v) for k, v in evidence.items() if k != "model_version"]
            return format_html(
                "<table>{}</table>{}",
                format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", rows),
                model,
            )
        contributions = json_object(evidence.get("contributions"))
        rows = [
            (k, _rounded(v), _rounded(contributions.get(k, "")))
            for k, v in json_object(evidence["features"]).items()
        ]
        rows.append(("bias", "", _rounded(evidence.get("bias", ""))))
        notes = format_html_join(
            "",
            "<p><strong>{}:</strong> {}</p>",
            [
                (label, evidence[key])
                for key, label in (("flag", "flagged"), ("veto", "not scored"))
                if evidence.get(key)
            ],
        )
        if evidence.get("veto"):
            # A vetoed pair is never scored: its zeros are not evidence.
            return format_html("{}{}", notes, model)
        return format_html(
            "{}{}{}{}{}<p>In words: {}.</p><table><tr><th>feature</th><th>value</th>"
            "<th>contribution (logit)</th></tr>{}</table>{}",
            notes,
            _merge_rule(evidence)
            if obj.kind == Proposal.Kind.MERGE
            else _attach_rule(evidence),
            _reading_said(obj),
            _frame_said(obj),
            _tied_said(obj),
            feature_words(evidence["features"], contributions),
            format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td></tr>", rows),
            model,
        )

    @admin.action(
        description="Approve and apply selected proposals", permissions=["decide"]
    )
    def approve_selected(
        self, request: HttpRequest, queryset: QuerySet
    ) -> HttpResponseRedirect:
        return _decide(self, request, queryset, approve=True)

    @admin.action(description="Reject selected proposals", permissions=["decide"])
    def reject_selected(
        self, request: HttpRequest, queryset: QuerySet
    ) -> HttpResponseRedirect:
        return _decide(self, request, queryset, approve=False)


def _assign_link(authorship) -> str:
    """For an unassigned authorship: a link to give it to a researcher by
    hand instead of what the proposal says (none once it is assigned)."""
    if authorship.researcher_id is not None:
        return ""
    url = reverse("admin:wovepaper_researcher_assign", args=[authorship.pk])
    return format_html(' <a href="{}">assign to another researcher…</a>', url)
