"""The curators' admin: the proposal queue with approve and reject actions.

Actions are thin: one service call per proposal, errors caught per proposal, one
message "N applied, M skipped (reasons)". ``status`` is read-only; nothing here
``update()``s a curated model.
"""

from __future__ import annotations

import json

from django.contrib import admin, messages
from django.contrib.admin.views.main import ERROR_FLAG, SEARCH_VAR, ChangeList
from django.contrib.humanize.templatetags.humanize import ordinal
from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Q, QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
)
from django.shortcuts import get_object_or_404
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from curation import block_review, selectors, services
from curation.admin.common import SafeActionsMixin
from curation.admin.events import event_links
from curation.exceptions import CurationError
from curation.matching import scoring
from curation.models import Proposal
from curation.proposal_search import SEARCH_HELP, proposals_matching
from wovepaper.models import Paper
from wovepaper.profile import feature_words, json_object, rule_said
from wovepaper.text import latex_to_text


def _review(proposal: Proposal) -> dict:
    """The side-by-side context of the review page: one dossier per researcher."""
    moving = [a.pk for a in proposal.authorships.all()]
    sides = []
    if proposal.researcher_id:
        title = {
            Proposal.Kind.MERGE: "survives",
            Proposal.Kind.SPLIT: "to split",
        }.get(proposal.kind, "receives the authorships")
        sides.append(
            (
                title,
                selectors.researcher_dossier(
                    proposal.researcher, limit=25, highlight=moving
                ),
            )
        )
    if proposal.other_researcher_id:
        title = "merged into it" if proposal.kind == "merge" else "split off into"
        sides.append(
            (title, selectors.researcher_dossier(proposal.other_researcher, limit=25))
        )
    incoming = []
    if proposal.kind in (Proposal.Kind.ATTACH, Proposal.Kind.NEW):
        incoming = selectors.incoming_papers(
            proposal.authorships.select_related("paper", "researcher").order_by(
                "-paper__published", "pk"
            )
        )
    return {
        "sides": sides,
        "incoming": incoming,
        "moving_ids": set(moving),
        "is_split": proposal.kind == Proposal.Kind.SPLIT,
    }


class ScoreBandFilter(admin.SimpleListFilter):
    """Filter proposals by score band: at least :data:`HIGH`, from the
    matcher's joining threshold to :data:`HIGH`, and below the threshold.

    The threshold is the active model's (0.4 for a model ``train_matcher``
    made with its default), else ``CURATION_ATTACH_THRESHOLD`` (0.6 for the
    default weights): with fixed bands a trained model's attaches, all at or
    above 0.4, would mostly fall in "low".
    """

    title = "score"
    parameter_name = "score_band"
    HIGH = 0.9

    def _bands(self) -> dict[str, tuple[float, float, str]]:
        t = min(selectors.joining_threshold(remembered=True), self.HIGH)
        return {
            "high": (self.HIGH, 1.01, f"≥ {self.HIGH:g}"),
            "mid": (t, self.HIGH, f"{t:g} – {self.HIGH:g}"),
            "low": (
                0.0,
                t,
                f"< {t:g} (an attach or merge below the joining threshold)",
            ),
        }

    def lookups(self, request, model_admin):
        return [(k, v[2]) for k, v in self._bands().items()]

    def queryset(self, request, queryset):
        band = self._bands().get(self.value() or "")
        if not band:
            return queryset
        return queryset.filter(score__gte=band[0], score__lt=band[1])


# The queue's order: most papers moved first, then the most borderline score.
QUEUE_ORDER = ("-impact", "uncertainty", "id")
# Merge rows a block's review page offers at most (one fewer than its
# profiles, at least one); a block needing more merges is applied and
# reviewed again.
MERGE_ROWS = 10


class QueueChangeList(ChangeList):
    """Marks the queue's real order in the column headers (not Meta.ordering)."""

    def _get_default_ordering(self):
        return list(QUEUE_ORDER)


class BlockFilter(admin.SimpleListFilter):
    """Filter proposals by block; lists the blocks with the most pending work.

    Any block key works as ``?block=<key>`` (the list shows the busiest 20; the
    search box also matches block keys).
    """

    title = "block"
    parameter_name = "block"
    MAX_CHOICES = 20

    def lookups(self, request, model_admin):
        busiest = (
            Proposal.objects.filter(status=Proposal.Status.PENDING)
            .exclude(block_key="")
            .values("block_key")
            .annotate(n=Count("id"))
            .order_by("-n", "block_key")[: self.MAX_CHOICES]
        )
        return [
            (row["block_key"], f"{row['block_key']} ({row['n']})") for row in busiest
        ]

    def queryset(self, request, queryset):
        value = self.value()
        return queryset.filter(block_key=value[:200]) if value else queryset


def _block_url(block_key: str) -> str:
    return reverse("admin:curation_proposal_block", args=[block_key])


def _review_permissions(review: block_review.Review) -> list[str]:
    """What a block review needs of its curator: to decide proposals, to move
    papers, to split them off into a new profile, to merge profiles: the
    permissions of the admin's own pages for each (a hostile trial merged
    with the decide permission alone)."""
    needed = ["curation.decide_proposal"] if review.decisions else []
    if any(target != block_review.NEW for target in review.moves.values()):
        needed.append("wovepaper.move_authorship")
    if block_review.NEW in review.moves.values():
        needed += ["wovepaper.split_researcher", "wovepaper.move_authorship"]
    if review.merges:
        needed.append("wovepaper.merge_researcher")
    return needed or ["curation.decide_proposal"]


# The block page's "approve the waiting ones, apply, next block" button.
APPROVE_NEXT = "approve-next"


def _review_of(post) -> tuple[block_review.Review, list[int]] | None:
    """The Review a block page posted: ``decision-<proposal>`` (approve,
    reject, wait), ``move-<authorship>`` (a researcher id, ``new`` or empty),
    with ``on-<authorship>`` (the researcher whose list shows it; optional),
    ``tick-<authorship>`` (the id of the researcher whose list shows it) with
    that researcher's ``move-ticked-<researcher>`` (a researcher id, ``new``
    or empty: every ticked paper of the profile moves there),
    ``merge-a-<n>`` with ``merge-b-<n>`` (two researcher ids),
    ``one-person`` (the researcher ids of profiles ticked as one person,
    two or more: merged into one), ``reason``, and ``then``: with
    ``approve-next``, every proposal the page showed and the curator left
    waiting is approved ("approve and next": the matcher's proposals as
    shown, after the curator's corrections). None when a value is none of
    those (an id is written as the page writes it: no leading zero), half a
    merge is given, a single profile is ticked as one person, or a paper is
    moved both by its own menu and by its tick to two places. A ticked
    paper's profile is kept (``shown_on``), so a stale page is refused.

    Returns:
        ``(the review, the authorships ticked on a profile whose "move the
        ticked papers" menu chose no place, ascending)``, or None.
    """
    review = block_review.Review(reason=post.get("reason", "")[:2000])
    approve_rest = post.get("then") == APPROVE_NEXT

    def number(text: str) -> int | None:
        # Written as the page writes ids: "050" is no second name of field 50.
        whole = text.isascii() and text.isdigit() and len(text) <= 18
        return int(text) if whole and text == str(int(text)) else None

    for key in post:
        if (
            key.startswith(("decision-", "move-", "merge-", "tick-", "on-"))
            and len(post.getlist(key)) > 1
        ):
            return None  # one field twice: which one was meant?
    for key, value in post.items():
        if key.startswith("decision-"):
            pk = number(key.removeprefix("decision-"))
            if pk is None or value not in ("approve", "reject", "wait"):
                return None
            if value != "wait" or approve_rest:
                review.decisions[pk] = value != "reject"
            if value == "wait" and approve_rest:
                review.if_waiting.add(pk)
        elif key.startswith("move-ticked-"):
            continue  # read with the ticks below
        elif key.startswith("move-") and value:
            pk = number(key.removeprefix("move-"))
            target = block_review.NEW if value == block_review.NEW else number(value)
            shown = post.get(f"on-{pk}", "")
            if pk is None or target is None or (shown and number(shown) is None):
                return None
            review.moves[pk] = target
            if shown:
                review.shown_on[pk] = number(shown)
        elif key.startswith("merge-b-") and value:
            if not post.get("merge-a-" + key.removeprefix("merge-b-"), ""):
                return None  # half a merge: with whom?
        elif key.startswith("merge-a-") and value:
            other = post.get("merge-b-" + key.removeprefix("merge-a-"), "")
            a, b = number(value), number(other)
            if a is None or b is None:
                return None
            if a != b:
                review.merges.append((a, b))
    one_person = [number(value) for value in post.getlist("one-person")]
    if None in one_person or len(set(one_person)) == 1:
        return None  # a profile is one person with which other?
    ticked = sorted(set(one_person))
    review.merges += [(ticked[0], other) for other in ticked[1:]]
    nowhere: list[int] = []
    for key, value in post.items():
        if not key.startswith("tick-"):
            continue
        pk, holder = number(key.removeprefix("tick-")), number(value)
        if pk is None or holder is None:
            return None
        chosen = post.get(f"move-ticked-{holder}", "")
        if not chosen:
            nowhere.append(pk)
            continue
        target = block_review.NEW if chosen == block_review.NEW else number(chosen)
        if target is None or review.moves.get(pk, target) != target:
            return None
        if review.shown_on.get(pk, holder) != holder:
            return None
        review.moves[pk] = target
        review.shown_on[pk] = holder
    return review, sorted(nowhere)


class LaneFilter(admin.SimpleListFilter):
    """The queue's lanes: proposals holding a slot of a large collaboration's
    paper (over 100 authors: ``selectors.LARGE_COLLABORATION`` in their
    evidence) have a lane of their own, and the queue opens on the other.

    Such slots were 51% of the demo's proposals (issue 47), and print little
    beyond a name and the collaboration's shared affiliation: reviewed among
    the rest, they buried the proposals a curator can decide on evidence.
    """

    title = "lane"
    parameter_name = "lane"
    MAIN, LARGE, ALL = "main", "large", "all"

    def lookups(self, request, model_admin):
        return [
            (self.MAIN, "main (no paper over 100 authors)"),
            (self.LARGE, "large collaborations (papers over 100 authors)"),
            (self.ALL, "all"),
        ]

    def value(self):
        # "main" by default, but a search (?q=) covers every lane unless one
        # was chosen: an arXiv id or a name of a large collaboration's slot
        # found nothing in "main" (new-user trial).
        if super().value() is None and self.request.GET.get(SEARCH_VAR, "").strip():
            return self.ALL
        return super().value() or self.MAIN

    def choices(self, changelist):
        # As SimpleListFilter's, less its "All" entry: "main" is the default,
        # and "all" a lane of its own.
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == str(lookup),
                "query_string": changelist.get_query_string(
                    {self.parameter_name: lookup}
                ),
                "display": title,
            }

    def queryset(self, request, queryset):
        # The key is only ever written as true: has_key excludes the rest
        # on PostgreSQL and SQLite alike (a missing key's NULL would not).
        large = Q(evidence__has_key=selectors.LARGE_COLLABORATION)
        if self.value() == self.LARGE:
            return queryset.filter(large)
        if self.value() == self.MAIN:
            return queryset.exclude(large)
        return queryset


class FieldFilter(admin.SimpleListFilter):
    """Filter proposals by the primary arXiv category of the papers involved.

    A proposal matches when one of its authorships' papers, or one of its
    researcher's papers (for merges and splits), has that primary category.
    """

    title = "field"
    parameter_name = "field"
    MAX_CHOICES = 40

    def lookups(self, request, model_admin):
        top = (
            Paper.objects.exclude(primary_category="")
            .values("primary_category")
            .annotate(n=Count("id"))
            .order_by("-n", "primary_category")[: self.MAX_CHOICES]
        )
        return [(row["primary_category"], row["primary_category"]) for row in top]

    def queryset(self, request, queryset):
        value = self.value()
        if not value:
            return queryset
        matching = Proposal.objects.filter(
            Q(authorships__paper__primary_category=value)
            | Q(researcher__authorships__paper__primary_category=value)
        ).values("pk")
        return queryset.filter(pk__in=matching)


def _decide(
    modeladmin, request, queryset: QuerySet[Proposal], approve: bool
) -> HttpResponseRedirect:
    """Decide the selected proposals as one bulk action with one ``batch``
    event, run by a worker (:func:`curation.services.bulk_decide_start`):
    the request returns at once, to the action's progress page."""
    ids = list(queryset.order_by("pk").values_list("pk", flat=True))
    if not ids:
        modeladmin.message_user(
            request, "None of the selected proposals is in this list.", messages.WARNING
        )
        return HttpResponseRedirect(request.get_full_path())
    batch = services.bulk_decide_start(
        proposal_ids=ids, approve=approve, actor=request.user
    )
    return HttpResponseRedirect(
        reverse("admin:curation_curationevent_progress", args=[batch.pk])
    )


# What a proposal's score measures, by kind (curation.services makes them).
SCORE_MEANING = {
    Proposal.Kind.ATTACH: "the pairwise score of the authorship and the researcher",
    Proposal.Kind.NEW: (
        "the cluster's cohesion, the mean of the pairwise scores clustering "
        "computed for it: every pair of its authorships in a block of up to 50, "
        "in a bigger block the pairs within each chunk and one score for each "
        "two chunk clusters it joined (1.0 for one authorship)"
    ),
    Proposal.Kind.MERGE: "the pairwise score of the two researchers",
    Proposal.Kind.SPLIT: (
        "how sure the matcher is that the parts are two people: 1 minus the "
        "pairwise score of the moving part and the rest, or 0.99 for two ORCID "
        "iDs or given names that cannot be one person's"
    ),
}


def _ranked_label(n: int) -> str:
    """The label of recorded pair ``n`` (from 0) of a ranked record: the
    strongest, then the weakest, "2nd weakest" ... (a cluster recording all
    its pairs records high-scoring ones too, which "weak pair 7" belied)."""
    if n == 0:
        return "strongest pair"
    return "weakest pair" if n == 1 else f"{ordinal(n)} weakest pair"


def _cluster_evidence(proposal: Proposal) -> str:
    """Explain a ``new`` proposal: its cohesion and its recorded pairs (the
    strongest, then the weakest, :func:`curation.proposing.drafts.recorded_pairs`),
    each with its score, the authorships it joined and its features."""
    evidence = proposal.evidence
    printed = {
        a.pk: f"{a.raw_name} on "
        + (a.paper.arxiv_id or a.paper.doi or latex_to_text(a.paper.title))
        for a in proposal.authorships.select_related("paper")
    }
    stored = evidence.get("pairs")
    recorded = (
        [p for p in stored if isinstance(p, dict)] if isinstance(stored, list) else []
    )
    # Recorded with their sides, several pairs lead with the strongest; before,
    # the first pairs of the first members, in no order.
    ranked = len(recorded) > 1 and "between" in recorded[0]
    pairs = [
        (
            _ranked_label(n)
            if ranked
            else ("the pair" if len(recorded) == 1 else f"pair {n + 1}"),
            _pair_score(p),
            _between(p.get("between"), printed),
            _rule(p.get("rule"))
            + feature_words(p.get("features"), p.get("contributions")),
            ", ".join(
                f"{k}={_rounded(v)}" for k, v in json_object(p.get("features")).items()
            ),
        )
        for n, p in enumerate(recorded)
    ]
    members = evidence.get("members", len(printed))
    gone = members - len(printed) if isinstance(members, int) else 0
    if gone > 0:
        # Its authorships go with a deleted paper (or a re-harvest that dropped
        # an author); approving places those left.
        gone_said = (
            f" {gone} of them no longer exist{'s' if gone == 1 else ''} (a paper "
            f"deleted or re-harvested without them); approving places the "
            f"{len(printed)} left."
        )
    else:
        gone_said = ""
    if not pairs:
        said = ""
    elif ranked:
        said = (
            " The strongest pair it joined, then the weakest, lowest score first "
            f"({len(pairs)} pairs recorded). Clusters join when the mean score "
            "of all the pairs between them reaches the threshold, so one pair "
            "may score below it:"
        )
    else:
        said = " The pair recorded:" if len(pairs) == 1 else " The pairs recorded:"
    flag = evidence.get("flag")
    return format_html(
        "{}<p>Cohesion {} over {} authorship{}: {}.{}{}</p>{}{}",
        format_html("<p><strong>flagged:</strong> {}</p>", rule_said(flag))
        if flag
        else "",
        evidence.get("cohesion", proposal.score),
        members,
        "" if members == 1 else "s",
        "1.0 for one authorship that matches no researcher in its block"
        if members == 1
        else "the mean pairwise score of the pairs clustering joined",
        gone_said,
        said,
        format_html_join("", "<p>{}, score {}{}: {} <small>({})</small></p>", pairs),
        _likeliest(evidence.get("likeliest")),
    )


def _merge_rule(evidence: dict) -> str:
    """What a merge a rule proposed says first (``curation.services``: one
    ORCID iD under two family names, spelling variants, initials with one
    expansion): the rule; "" for one its score proposed."""
    rule = rule_said(evidence.get("rule"))
    if not rule:
        return ""
    return format_html("<p><strong>Proposed by a rule</strong>: {}.</p>", rule)


def _attach_rule(evidence: dict) -> str:
    """What an attach a rule proposed says first: that its score is below the
    threshold, the rule, and who holds the name; "" for one its score
    proposed (or a rule that is not text: edited by hand)."""
    rule = rule_said(evidence.get("rule"))
    if not rule:
        return ""
    found = json_object(evidence.get("likeliest"))
    holds, of = found.get("holds"), found.get("of")
    share = (
        f" (they held {holds} of the {of} mentions of that name that carry evidence)"
        if _counts(holds, of) and holds <= of
        else ""
    )
    return format_html(
        "<p><strong>Proposed by a rule</strong>, its score having fallen short of "
        "the attach threshold of the run that proposed it: {}{}.</p>",
        rule,
        share,
    )


def _reading_said(proposal: Proposal) -> str:
    """What a merge or an attach met across two blocks says first: whose
    name (one of its researchers', or its authorship's) was read another
    way, how, and into which block; "" for any other proposal, or a
    ``reading`` edited by hand (not an object of texts, or naming someone
    the proposal does not hold). Each text is isolated (``<bdi>``), so a
    direction mark in one cannot turn the rest of the line around."""
    reading = json_object(json_object(proposal.evidence).get("reading"))
    texts = [rule_said(reading.get(k)) for k in ("printed", "read_as", "rule", "block")]
    researcher, authorship = reading.get("researcher"), reading.get("authorship")
    if _counts(researcher) and researcher in (
        proposal.researcher_id,
        proposal.other_researcher_id,
    ):
        whose = f"researcher #{researcher}"
    elif _counts(authorship) and proposal.authorships.filter(pk=authorship).exists():
        whose = f"authorship #{authorship}"
    else:
        return ""
    if not all(texts):
        return ""
    printed, read_as, rule, block = texts
    return format_html(
        "<p><strong>Met across blocks:</strong> {} prints "
        "&ldquo;<bdi>{}</bdi>&rdquo;, read as &ldquo;<bdi>{}</bdi>&rdquo; "
        "(<bdi>{}</bdi>), which lands in block &ldquo;<bdi>{}</bdi>&rdquo;; "
        "the features below score that reading.</p>",
        whose,
        printed,
        read_as,
        rule,
        block,
    )


def _frame_said(proposal: Proposal) -> str:
    """What an attach to a researcher of another block that holds authorships
    printed in this one says first (evidence ``frame``: ``{researcher, block,
    home, holds}``, :func:`curation.proposing.attach._attach_candidates`): the
    researcher's own block, how many authorships it holds printed here, and
    that it was scored as read here; "" for any other proposal, or a
    ``frame`` edited by hand (not an object of texts and counts, naming a
    researcher the proposal does not hold, or a block not its own). Each
    text is isolated (``<bdi>``)."""
    frame = json_object(json_object(proposal.evidence).get("frame"))
    researcher, holds = frame.get("researcher"), frame.get("holds")
    block, home = rule_said(frame.get("block")), rule_said(frame.get("home"))
    if not (
        _counts(researcher, holds)
        and researcher == proposal.researcher_id
        and proposal.kind == Proposal.Kind.ATTACH
        and block == proposal.block_key.split("/", 1)[0]
        and home
        and home != block
    ):
        return ""
    return format_html(
        "<p><strong>Held across blocks:</strong> researcher #{} lives in block "
        "&ldquo;<bdi>{}</bdi>&rdquo; and holds {} authorship{} printed in "
        "this one, &ldquo;<bdi>{}</bdi>&rdquo;; the features below score "
        "the researcher as read here.</p>",
        researcher,
        home,
        holds,
        pluralize(holds),
        block,
    )


def _tied_said(proposal: Proposal) -> str:
    """What an attach whose researcher scored alike with others says first
    (evidence ``tied``: ``{papers, with: [{researcher, papers}], others}``,
    :func:`curation.proposing.attach._untied`): that the score could not tell them
    apart, each other researcher with a link and its papers, and that the
    one holding most papers was chosen; "" for any other proposal, or a
    ``tied`` edited by hand into another shape."""
    tied = json_object(json_object(proposal.evidence).get("tied"))
    papers, others = tied.get("papers"), tied.get("others")
    rows = tied.get("with")
    if not (
        proposal.kind == Proposal.Kind.ATTACH
        and _counts(papers, others)
        and isinstance(rows, list)
        and rows
        and len(rows) <= others
    ):
        return ""
    shown = []
    for row in rows:
        row = json_object(row)
        researcher, held = row.get("researcher"), row.get("papers")
        if not _counts(researcher, held) or researcher == proposal.researcher_id:
            return ""
        shown.append(
            (
                reverse("admin:wovepaper_researcher_change", args=[researcher]),
                researcher,
                held,
                pluralize(held),
            )
        )
    more = others - len(shown)
    return format_html(
        "<p><strong>Tied:</strong> {} other researcher{} scored the same "
        "against this authorship: {}{}. It is proposed to the one holding the "
        "most papers ({} when proposed), the likeliest with nothing else to go "
        "on. If it is another's, reject it: the next run proposes it to the "
        "next of them.</p>",
        others,
        pluralize(others),
        format_html_join(", ", '<a href="{}">researcher #{}</a> ({} paper{})', shown),
        f" and {more} more" if more else "",
        papers,
    )


def _counts(*values: object) -> bool:
    """Whether each value is a count a curation step could store: an integer
    (not a boolean) from 1 to the database's largest."""
    return all(
        isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**31 for v in values
    )


def _likeliest(likeliest: object) -> str:
    """What a ``new`` proposal's ``likeliest`` (its authorships print nothing
    but a name that one researcher holds most of:
    :attr:`curation.matching.pipeline.Cluster.likeliest`) tells the curator,
    with a link to that researcher; "" without one, or for one edited by hand
    into another shape."""
    found = json_object(likeliest)
    researcher, holds, of = (found.get(k) for k in ("researcher", "holds", "of"))
    if not _counts(researcher, holds, of) or holds > of:
        return ""
    return format_html(
        "<p><strong>Likeliest person:</strong> it prints nothing but the name "
        '(no affiliation, co-author or identifier), and <a href="{}">researcher '
        "#{}</a> held {} of the {} mentions of that name that carry evidence "
        "when this was proposed, more than all others together. Its score "
        "fell short of the attach threshold, and the rule could not propose it "
        "to them (a given name, or another slot of its paper, was proposed to "
        "them already). If it is theirs, assign it by hand ('assign to "
        "another researcher…' in the authorships list).</p>",
        reverse("admin:wovepaper_researcher_change", args=[researcher]),
        researcher,
        holds,
        of,
    )


# JSON's names for what a JSON column can hold besides an object.
_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number"}
_JSON_KINDS |= {bool: "boolean", type(None): "null"}
# The stored evidence shown, at most, when it cannot be read.
UNREADABLE_SHOWN = 300


def _unreadable(evidence: object) -> str:
    """What the proposal page says of evidence that is not a JSON object
    (edited by hand: a list, a string, a number), quoting its start; "" when
    it is one. Django shows a display that raises as "-", which would hide it."""
    if isinstance(evidence, dict):
        return ""
    try:
        shown = json.dumps(evidence, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):  # nested past Python's recursion limit
        shown = "(nested too deep to quote)"
    return format_html(
        "<p><strong>Unreadable evidence:</strong> stored as a JSON {}, not an "
        "object, so nothing can be said of it: <code>{}</code></p>",
        _JSON_KINDS.get(type(evidence), "value"),
        shown[:UNREADABLE_SHOWN] + ("…" if len(shown) > UNREADABLE_SHOWN else ""),
    )


# Authorships named on each side of a recorded pair at most.
SIDE_NAMED = 3


def _rule(rule: object) -> str:
    """What a recorded pair joined by a rule says first (its ``rule``, e.g.
    :data:`curation.matching.pipeline.EVIDENCE_FREE_RULE`); "" for a pair
    its score joined, or a rule that is not text (edited by hand); a rule is
    cut at :data:`wovepaper.profile.RULE_SHOWN` characters (:func:`rule_said`)."""
    said = rule_said(rule)
    if not said:
        return ""
    return (
        "clustering left it apart (the mean of its pairwise scores with the "
        "cluster's authorships was below the threshold; the score shown is the "
        f"cluster's against it as a whole); joined by a rule: {said}; "
    )


def _between(sides: object, printed: dict[int, str]) -> str:
    """``", between A and B"`` for a recorded pair's ``between`` (the
    authorship ids on either side, :func:`curation.proposing.drafts.recorded_pairs`),
    each side its printed names and papers; "" for evidence recorded without
    it (before it was) or edited into another shape."""
    if not (
        isinstance(sides, list)
        and len(sides) == 2
        and all(
            isinstance(side, list)
            and side
            and all(isinstance(i, int) and not isinstance(i, bool) for i in side)
            for side in sides
        )
    ):
        return ""

    def named(side: list[int]) -> str:
        shown = "; ".join(
            printed.get(i, f"authorship #{i} (no longer on the proposal)")
            for i in side[:SIDE_NAMED]
        )
        if len(side) == 1:
            return shown
        more = f"; and {len(side) - SIDE_NAMED} more" if len(side) > SIDE_NAMED else ""
        return f"{len(side)} authorships ({shown}{more})"

    return f", between {named(sides[0])} and {named(sides[1])}"


def _pair_score(pair: dict) -> str:
    """A recorded pair's pairwise score, from its bias and contributions
    (the logistic model of curation.matching.scoring), or "?" if unreadable."""
    if pair.get("veto"):
        return f"0 ({pair['veto']})"
    try:
        logit = float(pair.get("bias", 0.0)) + sum(
            float(c) for c in (pair.get("contributions") or {}).values()
        )
        return f"{scoring.sigmoid(logit):.2f}"
    except (TypeError, ValueError, AttributeError):
        return "?"


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


def _rounded(value: object) -> object:
    """A stored number as the evidence table shows it: a float to 3 places
    (``0.3333333333333333`` reads ``0.333``); anything else as it is."""
    # + 0.0: a contribution of -0.0 reads 0.0.
    return round(value, 3) + 0.0 if isinstance(value, float) else value


def _assign_link(authorship) -> str:
    """For an unassigned authorship: a link to give it to a researcher by
    hand instead of what the proposal says (none once it is assigned)."""
    if authorship.researcher_id is not None:
        return ""
    url = reverse("admin:wovepaper_researcher_assign", args=[authorship.pk])
    return format_html(' <a href="{}">assign to another researcher…</a>', url)
