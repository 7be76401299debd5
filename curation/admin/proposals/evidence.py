"""What a proposal's review page says of its evidence, in words: what the
score measures, the clusters and pairs, the rule that proposed it, the
readings, frames and ties, and evidence that cannot be read.
"""

from __future__ import annotations

import json

from django.contrib.humanize.templatetags.humanize import ordinal
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from curation.matching import scoring
from curation.models import Proposal
from wovepaper.profile import feature_words, json_object, rule_said
from wovepaper.text import latex_to_text

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
_JSON_KINDS = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
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


def _rounded(value: object) -> object:
    """A stored number as the evidence table shows it: a float to 3 places
    (``0.3333333333333333`` reads ``0.333``); anything else as it is."""
    # + 0.0: a contribution of -0.0 reads 0.0.
    return round(value, 3) + 0.0 if isinstance(value, float) else value
