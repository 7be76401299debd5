"""Reads behind the public researcher and paper pages, in a fixed number of queries.

Everything here shows the applied, curated state only (``Authorship.researcher``
is set by applied curation alone). Results are plain dicts and lists so a page can
cache them under the researcher's cache version (:mod:`wovepaper.cache`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import connection
from django.db.models import (
    Count,
    F,
    IntegerField,
    Max,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Window,
)
from django.db.models.functions import Coalesce, DenseRank

from wovepaper import profile_sql, selectors, stats
from wovepaper.models import Authorship, Institution, Paper, Researcher
from wovepaper.models.paper import date_shown
from wovepaper.selectors import UNDATED, researcher_coauthors
from wovepaper.text import strings_in

# Names printed per paper in a list; the rest is "and N more" (a paper may have
# thousands of authors, and a list page must not read them all).
BYLINE_SHOWN = 10
# Papers per page, as DESIGN.md asks for the researcher page and search.
PAGE_SIZE = 24
# Researcher page sort orders, as sort keys of researcher_paper_keys rows
# (id, published, cited_by_count, categories, title rank). Newest and oldest go
# by first-version date (undated papers as selectors.UNDATED), cited by
# citations (unknown last), each then by date and id; title by the database's
# collation (the rank), then id.
SORTS: dict[str, Callable[[tuple], tuple]] = {
    "newest": lambda k: (-(k[1] or UNDATED).toordinal(), -k[0]),
    "oldest": lambda k: ((k[1] or UNDATED).toordinal(), k[0]),
    "cited": lambda k: (
        k[2] is None,
        -(k[2] or 0),
        -(k[1] or UNDATED).toordinal(),
        -k[0],
    ),
    "title": lambda k: (k[4], k[0]),
}
# Institutions listed on a researcher page, most recent first.
INSTITUTIONS = 20
# Co-authors drawn in the network (the centre plus this many).
NETWORK_SIZE = 15
# Papers with more authors than this are left out of the co-author network by
# default (the page has a switch): one 2,831-author byline made everyone on it
# a co-author and the graph a hairball.
NETWORK_MAX_BYLINE = 100


def researcher_paper_ids(researcher: Researcher) -> QuerySet:
    """Ids of the visible papers applied to ``researcher`` (a subquery)."""
    return Authorship.objects.filter(researcher=researcher, paper__hidden=False).values(
        "paper_id"
    )


def researcher_paper_keys(researcher: Researcher) -> list[tuple]:
    """The sort keys of a researcher's visible papers; one query.

    Returns:
        ``[(paper id, published | None, cited_by_count | None, categories,
        title rank)]``, as :func:`researcher_summary` gives them under
        ``"papers"``; the title rank orders them by title in the database's
        collation, then id.
    """
    return list(
        Paper.objects.filter(pk__in=researcher_paper_ids(researcher))
        .annotate(title_rank=_TITLE_RANK)
        .values_list("id", "published", "cited_by_count", "categories", "title_rank")
    )


# A paper's place among a researcher's papers by title (the database's
# collation: Python's string order is another), then id.
_TITLE_RANK = Window(DenseRank(), order_by=[F("title").asc(), F("id").asc()])


def researcher_papers_page(
    researcher: Researcher,
    *,
    category: str = "",
    sort: str = "newest",
    number: int = 1,
    keys: list[tuple] | None = None,
    checked: Iterable[int] | None = None,
) -> dict:
    """One page of a researcher's papers with short bylines and why each is here.

    Args:
        researcher: a live researcher.
        category: only papers carrying this arXiv category ("" for all).
        sort: a key of :data:`SORTS` (unknown keys sort newest first).
        number: 1-based page number; out of range shows the last page.
        keys: the researcher's paper sort keys, when the caller has them (the
            summary's ``"papers"``); None reads them (:func:`researcher_paper_keys`).
        checked: the ids of the papers whose slot a curator checked, when the
            caller has them (the summary's ``"checked_papers"``); None reads
            the page's (:func:`wovepaper.selectors.checked_slots`).

    Returns:
        ``{"papers": [paper dict], "count": n, "number": k, "num_pages": m}``
        where each paper dict is built by :func:`paper_rows`, with its
        ``abstract`` (:func:`with_abstracts`), the reason the
        paper is on this profile under ``"why"`` and who placed it under
        ``"placement"`` (:data:`wovepaper.selectors.CHECKED` or
        ``AUTOMATIC``). The papers are ordered here from ``keys``; then one
        statement on PostgreSQL
        (:func:`profile_sql.paper_rows`), three queries elsewhere, read the
        page; whatever the researcher's paper count.
    """
    if keys is None:
        keys = researcher_paper_keys(researcher)
    if category:
        keys = [k for k in keys if category in (k[3] or [])]
    ids = [k[0] for k in sorted(keys, key=SORTS.get(sort, SORTS["newest"]))]
    count = len(ids)
    num_pages = max(1, -(-count // PAGE_SIZE))
    number = min(max(1, number), num_pages)
    start = (number - 1) * PAGE_SIZE
    ids = ids[start : start + PAGE_SIZE]
    if connection.vendor == "postgresql":
        fetched = {
            row["id"]: row
            for row in profile_sql.paper_rows(
                ids, keep=researcher.pk, shown=BYLINE_SHOWN, new_pairs=NEW_PAIRS_READ
            )
        }
        rows = with_abstracts(
            [_paper_row(fetched[pk], researcher.pk) for pk in ids if pk in fetched]
        )
        placed = {
            row["own_authorship"]: _placed_by(fetched[row["id"]]["placed_by"])
            for row in rows
            if row["own_authorship"]
        }
    else:
        position = {pk: n for n, pk in enumerate(ids)}
        rows = with_abstracts(
            sorted(
                paper_rows(
                    Paper.objects.filter(pk__in=ids, hidden=False), keep=researcher.pk
                ),
                key=lambda row: position[row["id"]],
            )
        )
        placed = _placements([p["own_authorship"] for p in rows if p["own_authorship"]])
    if checked is None:
        slots = selectors.checked_slots(placed)
        checked = {row["id"] for row in rows if row["own_authorship"] in slots}
    checked = set(checked)
    for row in rows:
        own = row["own_authorship"]
        row["why"] = (
            _reason(researcher, *placed[own], own, checked=row["id"] in checked)
            if own
            else ""
        )
        if own:
            row["placement"] = (
                selectors.CHECKED if row["id"] in checked else selectors.AUTOMATIC
            )
    return {"papers": rows, "count": count, "number": number, "num_pages": num_pages}


def paper_rows(papers: QuerySet[Paper], *, keep: int | None = None) -> list[dict]:
    """Papers as dicts with a short byline, in the queryset's order.

    Args:
        papers: a sliced or filtered queryset of papers (evaluated once).
        keep: a researcher id whose own slot is always in the byline, even past
            :data:`BYLINE_SHOWN`.

    Returns:
        ``[{"id", "url", "title", "published", "published_precision",
        "published_shown", "primary_category", "categories",
        "cited_by_count", "arxiv_id", "doi", "author_count", "byline":
        [{"position", "name", "researcher_id", "researcher_url"}], "more": n,
        "own_authorship": id | None}]``. Two queries.
    """
    author_count = Subquery(
        Authorship.objects.filter(paper=OuterRef("pk"))
        .order_by()
        .values("paper")
        .annotate(n=Count("*"))
        .values("n"),
        output_field=IntegerField(),
    )
    rows = list(
        papers.annotate(author_count=Coalesce(author_count, 0)).values(
            *profile_sql.PAPER_COLUMNS
        )
    )
    wanted = Q(position__lte=BYLINE_SHOWN)
    if keep is not None:
        wanted |= Q(researcher_id=keep)
    slots = defaultdict(list)
    for slot in (
        Authorship.objects.filter(wanted, paper_id__in=[r["id"] for r in rows])
        .order_by("paper_id", "position")
        .values(
            "id",
            "paper_id",
            "position",
            "raw_name",
            "researcher_id",
            "researcher__slug",
        )
    ):
        slots[slot["paper_id"]].append(slot)
    return [_paper_row({**row, "slots": slots[row["id"]]}, keep) for row in rows]


def with_abstracts(rows: list[dict]) -> list[dict]:
    """Set each paper row's ``abstract``, in one query: a researcher's paper
    list shows it folded (the other lists leave it out: converting 50
    abstracts' LaTeX was most of a 117 ms page in bench/pages.py).

    Args:
        rows: paper rows (``id``), changed in place.

    Returns:
        ``rows``; a paper gone since has "".
    """
    if rows:
        found = dict(
            Paper.objects.filter(pk__in=[r["id"] for r in rows]).values_list(
                "id", "abstract"
            )
        )
        for row in rows:
            row["abstract"] = found.get(row["id"], "")
    return rows


def _paper_row(row: dict, keep: int | None) -> dict:
    """A paper row of :func:`paper_rows` from the paper's columns and ``slots``
    (its shown byline slots by position, as ``.values()`` dicts)."""
    byline = [
        {
            "id": s["id"],
            "position": s["position"],
            "name": s["raw_name"],
            "researcher_id": s["researcher_id"],
            "researcher_url": (
                f"/researchers/{s['researcher_id']}-"
                f"{s['researcher__slug'] or 'researcher'}"
                if s["researcher_id"]
                else ""
            ),
        }
        for s in row["slots"]
    ]
    own = next((s["id"] for s in byline if s["researcher_id"] == keep), None)
    key = row["arxiv_id"] or str(row["id"])
    return {
        **{k: row[k] for k in _ROW_KEYS},
        "url": f"/papers/{key}-{row['slug'] or 'paper'}",
        "published_shown": date_shown(row["published"], row["published_precision"]),
        "byline": byline,
        "more": max(0, (row["author_count"] or 0) - len(byline)),
        "own_authorship": own if keep is not None else None,
    }


# The paper columns a row of :func:`paper_rows` carries as they are.
_ROW_KEYS = tuple(c for c in profile_sql.PAPER_COLUMNS if c != "slug")


def paper_rows_by_id(ids: list[int]) -> list[dict]:
    """:func:`paper_rows` of the visible papers among ``ids``, in the order given.

    Args:
        ids: paper ids in display order (a ranked search page).

    Returns:
        Paper rows in the order of ``ids``; hidden or unknown ids are left out.
    """
    order = {pk: i for i, pk in enumerate(ids)}
    if connection.vendor == "postgresql":
        rows = [
            _paper_row(row, None)
            for row in profile_sql.paper_rows(
                ids, keep=None, shown=BYLINE_SHOWN, new_pairs=0
            )
        ]
    else:
        rows = paper_rows(Paper.objects.filter(pk__in=ids, hidden=False))
    return sorted(rows, key=lambda row: order[row["id"]])


# Plain words for the matcher's features (curation.matching.features.Features).
_FEATURE_WORDS = {
    "orcid": "the same ORCID iD",
    "coauthors": "shared co-authors",
    "rare_name": "a rare given name printed the same way",
    "rare_family": "a family name few others carry",
    "source_id": "the same OpenAlex or Semantic Scholar author",
    "title_similarity": "titles and abstracts on close subjects",
}


def _placements(authorship_ids: list[int]) -> dict[int, tuple]:
    """``{authorship id: (its latest applied proposal or None, whether a curator
    applied it)}``: the ORM path of :func:`profile_sql.paper_rows`'s
    ``placed_by``; two queries. A proposal counts as applied by a curator when
    any of its applied events names one."""
    from curation.models import CurationEvent, Proposal

    links = (
        Proposal.authorships.through.objects.filter(
            authorship_id__in=authorship_ids, proposal__status=Proposal.Status.APPLIED
        )
        .select_related("proposal")
        .order_by("proposal__decided_at", "proposal_id")
    )
    latest: dict[int, Proposal] = {}
    for link in links:
        latest[link.authorship_id] = link.proposal
    by_curator = set(
        CurationEvent.objects.filter(
            proposal__in=[p.pk for p in latest.values()],
            kind=CurationEvent.Kind.PROPOSAL_APPLIED,
            actor__isnull=False,
        ).values_list("proposal_id", flat=True)
    )
    return {
        aid: (latest.get(aid), aid in latest and latest[aid].pk in by_curator)
        for aid in authorship_ids
    }


def _placed_by(found: dict | None) -> tuple:
    """:func:`_placements`'s pair from a row of :func:`profile_sql.paper_rows`."""
    from curation.models import Proposal

    if found is None:
        return None, False
    proposal = Proposal(
        pk=found["id"],
        kind=found["kind"],
        researcher_id=found["researcher_id"],
        decided_at=found["decided_at"],
        score=found["score"],
        evidence={
            "features": found["features"],
            "contributions": found["contributions"],
            "members": found["members"],
            "pairs": found["pairs"],
            "reading": found.get("reading"),
        },
    )
    return proposal, found["by_curator"]


def _reason(
    researcher: Researcher,
    proposal,
    by_curator: bool,
    authorship_id: int,
    *,
    checked: bool = False,
) -> str:
    """Why an authorship is on this researcher's profile, in plain words.

    The reason is the applied proposal that last moved the authorship here
    (``proposal``, None when there is none): who applied it (a curator, or the
    identifier policy) and its strongest evidence (features with a positive
    logit contribution, largest first). An authorship with no applied proposal
    for this researcher was placed by a curator directly (a merge, a move, an
    approved claim). ``authorship_id`` is the researcher's slot on the paper.
    The matcher's placement a curator has confirmed since (``checked``: a
    merge keeps the survivor's papers so) says so too: the row read "✓
    checked by a curator" beside "Placed automatically" (a new user's trial).
    """
    if proposal is None or proposal.researcher_id not in (researcher.pk, None):
        return (
            "A curator placed this paper on the profile directly (a merge, a "
            "move or a confirmed claim)."
        )
    who = (
        "A curator approved the match"
        if by_curator
        else "Placed automatically by the matcher, sure of it"
    )
    when = proposal.decided_at.date().isoformat() if proposal.decided_at else ""
    since = (
        " A curator has checked it since (a merge that kept it, say)."
        if checked and not by_curator
        else ""
    )
    return (
        f"{who}{' on ' + when if when else ''}: "
        f"{_evidence_words(proposal, authorship_id)} (score {proposal.score:.2f})."
        f"{since}"
    )


# Pairs of a ``new`` proposal's evidence read to explain it besides those that
# hold the paper's own slot (the proposal keeps up to 20, the strongest first:
# curation.services.PAIRS_RECORDED; profile_sql reads this many).
NEW_PAIRS_READ = 5
# The most of a recorded pair's ``rule`` said (a rule is one sentence of
# curation.matching.pipeline; a longer one was edited by hand).
RULE_SHOWN = 200


def rule_said(rule: object) -> str:
    """The ``rule`` of a recorded pair or an attach's evidence as the pages
    say it (:data:`curation.matching.pipeline.EVIDENCE_FREE_RULE` and its
    attach twin).

    Args:
        rule: the stored value.

    Returns:
        The text stripped and cut at :data:`RULE_SHOWN` characters; "" for
        none, blank text or a value that is not text (edited by hand).
    """
    return rule.strip()[:RULE_SHOWN] if isinstance(rule, str) else ""


def _holds(pair: dict, authorship_id: int) -> bool:
    """Whether a recorded pair has ``authorship_id`` on a side (its
    ``"between"``: ``[[ids], [ids]]``; pairs recorded before it have none)."""
    between = pair.get("between")
    return isinstance(between, list) and any(
        isinstance(side, list) and authorship_id in side for side in between
    )


def _joined(pair: object) -> bool:
    """Whether a recorded pair is one clustering joined (a dict, not a veto)."""
    return isinstance(pair, dict) and not pair.get("veto")


def json_object(value: object) -> dict:
    """``value`` when it is a JSON object, else ``{}``: evidence edited by
    hand (a list, a string, a number where an object belongs) explains
    nothing rather than breaking the page that reads it (the researcher page
    here, the admin's proposal page)."""
    return value if isinstance(value, dict) else {}


def _number(value: object) -> float | None:
    """``value`` when it is a finite JSON number (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _numbers(value: object) -> dict[str, float]:
    """The finite numbers of a JSON object of features or contributions
    (``{}`` for anything else): what the words below can read."""
    pairs = ((k, _number(v)) for k, v in json_object(value).items())
    return {k: v for k, v in pairs if v is not None}


def _strength(pair: dict) -> float:
    """A pair's positive logit contributions, summed (numbers only)."""
    return sum(c for c in _numbers(pair.get("contributions")).values() if c > 0)


def _evidence_words(proposal, authorship_id: int) -> str:
    """The evidence of a proposal in words: strongest positive features first.

    A ``new`` proposal of several papers says what joined this paper (the
    authorship ``authorship_id``) to the others: the words of its strongest
    recorded pair holding it. A proposal records at most 20 of a cluster's
    pairs; when none holds it, the words of the strongest of the first
    :data:`NEW_PAIRS_READ` say what joined the new profile most surely, as
    that ("the strongest link among them"), not as this paper's.
    """
    evidence = json_object(proposal.evidence)
    if proposal.kind == "new":
        members = _number(evidence.get("members"))
        members = int(members) if members is not None and members >= 1 else 1
        recorded = evidence.get("pairs")
        recorded = recorded if isinstance(recorded, list) else []
        holding = [p for p in recorded if _joined(p) and _holds(p, authorship_id)]
        pairs = holding or [p for p in recorded[:NEW_PAIRS_READ] if _joined(p)]
        if members < 2 or not pairs:
            return "no existing profile matched, so this paper started a new one"
        strongest = max(pairs, key=_strength)
        others = members - 1
        words = feature_words(strongest.get("features"), strongest.get("contributions"))
        rule = rule_said(strongest.get("rule")) if holding else ""
        if rule:
            # Its score was below the threshold: the features did not join it
            # (curation.matching.pipeline.attach_evidence_free did).
            words = f"a rule after clustering left it apart ({rule}); {words}"
        return (
            f"no existing profile matched; this paper and {others} "
            f"other{'s' if others != 1 else ''} started a new one, "
            + (
                f"joined by {words}"
                if holding
                else f"the strongest link among them: {words}"
            )
        )
    words = feature_words(evidence.get("features"), evidence.get("contributions"))
    reading = json_object(evidence.get("reading"))
    printed = rule_said(reading.get("printed"))
    read_as = rule_said(reading.get("read_as"))
    if printed and read_as and reading.get("authorship") == authorship_id:
        # An attach met across blocks (curation.proposing.attach._best_elsewhere): say
        # how this paper's name was read, each name isolated (FSI ... PDI), so
        # a direction mark in one cannot turn the sentence around.
        return (
            f"printed \u201c\u2068{printed}\u2069\u201d, read as "
            f"\u201c\u2068{read_as}\u2069\u201d; {words}"
        )
    return words


# Plain words for the features that count against a match.
_AGAINST_WORDS = {
    "orcid": "different ORCID iDs",
    "field_conflict": "no field in common",
    "affiliation_conflict": "affiliations with no word in common",
    "years_apart": "papers 20 or more years apart",
    "source_id_conflict": "different OpenAlex or Semantic Scholar authors",
    "title_similarity": "titles and abstracts on distant subjects",
}
# The smallest logit contribution, either way, worth saying: it moves the odds
# by a factor of e**0.5, about 1.65. Smaller ones ("Liu" as a rare family
# name, 0.25) would read as reasons they are not.
WORTH_SAYING = 0.5


# The name features: one phrase says what they found (:func:`name_words`).
_NAME_FEATURES = ("name", "same_given", "same_initials")
# The lowest ``name`` value of two compatible given names
# (curation.names.given_name_similarity: 0.35 and up); below it they are
# incompatible, and only the family names agree.
COMPATIBLE_NAME = 0.35


def name_words(features: object) -> str:
    """What a pair's name features found, in words.

    Args:
        features: ``{feature: value}`` of a proposal's evidence.

    Returns:
        ``"the same given name printed alike"`` (``same_given``), ``"the same
        initials, with no full given name on both sides"`` (``same_initials``:
        two "J." are many people's), ``"the same given name"`` (equal once
        folded, printed apart: "José" and "Jose"), ``"compatible given names
        (initials or a variant of a full name)"`` (``name`` in
        [:data:`COMPATIBLE_NAME`, 1)), else ``"the same family name"``.
        A value that is not a number (evidence edited by hand) counts as absent.
    """
    features = _numbers(features)
    name = features.get("name") or 0.0
    if features.get("same_given"):
        return "the same given name printed alike"
    if features.get("same_initials"):
        return "the same initials, with no full given name on both sides"
    if name >= 1.0:
        return "the same given name"
    if name >= COMPATIBLE_NAME:
        return "compatible given names (initials or a variant of a full name)"
    return "the same family name"


def _overlap_words(name: str, value: float) -> str:
    """``categories`` or ``affiliation`` (a Jaccard overlap in [0, 1]) in words."""
    if name == "categories":
        return (
            "the same fields"
            if value >= 1.0
            else f"fields in common ({value:.0%} overlap)"
        )
    return (
        "the same affiliation words"
        if value >= 1.0
        else f"similar affiliations ({value:.0%} overlap)"
    )


def feature_words(features: object, contributions: object) -> str:
    """The evidence of a pair in words: up to four features that counted for
    it, strongest first, then up to two that counted against it, each with a
    logit contribution of at least :data:`WORTH_SAYING` in size.

    The name features (``name``, ``same_given``, ``same_initials``) are said
    once, by :func:`name_words`, at the place of the strongest of them; not
    at all when ``rare_name`` is said (a rare given name printed the same
    way says it). Overlaps say how much: "fields in common (33% overlap)",
    "the same fields" only when all are shared.

    Args:
        features: ``{feature: value}`` of a proposal's evidence.
        contributions: ``{feature: logit}`` of the same evidence. Either read
            as ``{}`` when it is not an object, and values that are not finite
            numbers as absent (evidence edited by hand explains less; it never
            breaks the page).

    Returns:
        e.g. ``"the same initials, with no full given name on both sides,
        shared co-authors; against it: no field in common"``; what the names
        found (:func:`name_words`) when nothing is worth saying. Used by the
        public "Why is this paper here?" and the admin's proposal pages.
    """

    features, contributions = _numbers(features), _numbers(contributions)

    def said(sign: int) -> list[str]:
        return sorted(
            (
                name
                for name, c in contributions.items()
                if sign * c >= WORTH_SAYING and features.get(name)
            ),
            key=lambda name: -sign * contributions[name],
        )

    reasons = said(+1)
    words = []
    for name in reasons:
        if name in _NAME_FEATURES:
            if "rare_name" not in reasons and name == next(
                n for n in reasons if n in _NAME_FEATURES
            ):
                words.append(name_words(features))
        elif name == "coauthors":
            n = int(features[name])
            words.append(f"{n} shared co-author{'s' if n != 1 else ''}")
        elif name in ("categories", "affiliation"):
            words.append(_overlap_words(name, float(features[name])))
        elif name in _FEATURE_WORDS:
            words.append(_FEATURE_WORDS[name])
    against = [_AGAINST_WORDS[n] for n in said(-1) if n in _AGAINST_WORDS][:2]
    text = ", ".join(words[:4]) or name_words(features)
    return f"{text}; against it: {', '.join(against)}" if against else text


@dataclass(frozen=True)
class Histogram:
    """Author positions over the papers whose every author is matched.

    Attributes:
        first, middle, last, solo: papers in each position.
        counted: papers counted (every non-collaboration slot assigned).
        total: the researcher's visible papers.
    """

    first: int
    middle: int
    last: int
    solo: int
    counted: int
    total: int

    def bars(self) -> list[tuple[str, int, int]]:
        """``[(label, papers, percent of counted)]`` for drawing."""
        top = max(1, self.counted)
        return [
            (label, n, round(100 * n / top))
            for label, n in (
                ("First author", self.first),
                ("Middle author", self.middle),
                ("Last author", self.last),
                ("Solo author", self.solo),
            )
        ]


def position_histogram(researcher: Researcher) -> Histogram:
    """Count the researcher's author positions (first / middle / last / solo).

    Only papers whose every person slot (collaborations excepted) is assigned to
    a researcher count: on a paper with unmatched authors the byline may be
    partly unknown to us, and we state how many papers were counted. One query.
    """
    slots = Authorship.objects.filter(paper=OuterRef("paper_id")).order_by()
    n_slots = Subquery(
        slots.values("paper").annotate(n=Count("*")).values("n"),
        output_field=IntegerField(),
    )
    unmatched = Subquery(
        slots.filter(researcher__isnull=True, is_collaboration=False)
        .values("paper")
        .annotate(n=Count("*"))
        .values("n"),
        output_field=IntegerField(),
    )
    return _histogram(
        Authorship.objects.filter(researcher=researcher, paper__hidden=False)
        .annotate(n=n_slots, missing=Coalesce(unmatched, 0))
        .values_list("position", "n", "missing")
    )


def _histogram(slots: Iterable[tuple[int, int, int]]) -> Histogram:
    """:class:`Histogram` of ``(position, slots on the paper, unmatched person
    slots)`` over a researcher's visible authorships."""
    counts = Counter()
    total = 0
    for position, n, missing in slots:
        total += 1
        if missing:
            continue
        if n == 1:
            counts["solo"] += 1
        elif position == 1:
            counts["first"] += 1
        elif position == n:
            counts["last"] += 1
        else:
            counts["middle"] += 1
    return Histogram(
        first=counts["first"],
        middle=counts["middle"],
        last=counts["last"],
        solo=counts["solo"],
        counted=sum(counts.values()),
        total=total,
    )


def researcher_summary(researcher: Researcher) -> dict:
    """Everything on the researcher page except the list of papers.

    Returns:
        ``{"paper_count", "citations" (sum of the papers' cited_by_count),
        "citations_known" (whether any paper has a count),
        "h_index", "per_year": [YearFigures]
        (:func:`wovepaper.stats.publication_figures`),
        "checked_papers": [paper id] (those whose slot a
        curator confirmed: :func:`wovepaper.selectors.checked_slot`),
        "papers": [(id, published, cited_by_count,
        categories, title rank)] (the sort keys of
        :func:`researcher_paper_keys`),
        "years": (first, last) | None, "categories": [(cat, n)]
        most first, "histogram": Histogram, "institutions": [{"name", "url",
        "ror_id", "first", "last", "papers"}] latest first, "affiliations":
        [{"text", "first", "last", "papers"}] (printed strings, when no
        institution is linked), "identifiers": [{"label", "value", "url",
        "via"}], "split_into": [{"id", "name", "url", "when"}]}``. One statement on
        PostgreSQL (:func:`profile_sql.summary_parts`; two when profiles were
        split off it), six queries elsewhere; whatever the paper count.
    """
    if connection.vendor == "postgresql":
        parts = profile_sql.summary_parts(researcher.pk, institutions=INSTITUTIONS)
        rows = parts["rows"]
        histogram = _histogram(row[9:12] for row in rows)
        found = parts["institutions"]
        split_events = parts["split_events"]
    else:
        rows = list(
            Authorship.objects.filter(researcher=researcher, paper__hidden=False)
            .annotate(
                checked=selectors.checked_slot(),
                title_rank=Window(
                    DenseRank(),
                    order_by=[F("paper__title").asc(), F("paper_id").asc()],
                ),
            )
            .values_list(
                "paper_id",
                "paper__published",
                "paper__cited_by_count",
                "paper__categories",
                "title_rank",
                "affiliations",
                "orcid",
                "s2_author_id",
                "openalex_author_id",
                "checked",
            )
        )
        histogram = position_histogram(researcher)
        found = [
            {
                **row,
                "first": row["first"].year if row["first"] else None,
                "last": row["last"].year if row["last"] else None,
            }
            for row in Authorship.institutions.through.objects.filter(
                authorship__researcher=researcher, authorship__paper__hidden=False
            )
            .values(
                "institution_id",
                "institution__name",
                "institution__slug",
                "institution__ror_id",
            )
            .annotate(
                first=Min("authorship__paper__published"),
                last=Max("authorship__paper__published"),
                papers=Count("authorship__paper", distinct=True),
            )
            .order_by(F("last").desc(nulls_last=True), "institution__name")[
                :INSTITUTIONS
            ]
        ]
        split_events = _split_events(researcher)
    categories = Counter()
    affiliations: dict[str, list] = {}
    years = [published.year for _, published, *_ in rows if published]
    printed = Counter()
    # One researcher may hold two slots of one paper: papers count once.
    papers = {row[0]: row[:5] for row in rows}
    for _, _, _, cats, _ in papers.values():
        categories.update(set(strings_in(cats)))
    for _, published, _, _, _, affs, orcid, s2, openalex, *_ in rows:
        year = published.year if published else None
        for text in strings_in(affs):
            text = " ".join(text.split())[:300]
            if not text:
                continue
            span = affiliations.setdefault(text, [None, None, 0])
            if year:
                span[0] = min(filter(None, (span[0], year)))
                span[1] = max(filter(None, (span[1], year)))
            span[2] += 1
        printed.update({("orcid", orcid): 1, ("s2", s2): 1, ("openalex", openalex): 1})
    institutions = [
        {
            "name": row["institution__name"],
            "url": Institution(
                pk=row["institution_id"], slug=row["institution__slug"]
            ).get_absolute_url(),
            "ror_id": row["institution__ror_id"],
            "first": row["first"],
            "last": row["last"],
            "papers": row["papers"],
        }
        for row in found
    ]
    return {
        "paper_count": len(papers),
        "citations": sum(p[2] or 0 for p in papers.values()),
        # No source gave a citation count for any paper: "not known", not 0.
        "citations_known": any(p[2] is not None for p in papers.values()),
        "h_index": stats.h_index(p[2] for p in papers.values()),
        "per_year": stats.publication_figures(list(papers.values())),
        # The papers whose slot a curator checked (the rows end with it).
        "checked_papers": sorted({row[0] for row in rows if row[-1]}),
        "papers": sorted(papers.values()),
        "years": (min(years), max(years)) if years else None,
        "categories": sorted(categories.items(), key=lambda kv: (-kv[1], kv[0])),
        "histogram": histogram,
        "institutions": institutions,
        "affiliations": [
            {"text": text, "first": first, "last": last, "papers": n}
            for text, (first, last, n) in sorted(
                affiliations.items(), key=lambda kv: (-(kv[1][1] or 0), -kv[1][2])
            )[:10]
        ],
        "identifiers": _identifiers(researcher, printed),
        "split_into": _split_into(researcher, split_events),
    }


def _identifiers(researcher: Researcher, printed: Counter) -> list[dict]:
    """The profile's identifiers, each with how we know it is this person."""
    out = []
    for label, field, kind, url in (
        ("ORCID", "orcid", "orcid", "https://orcid.org/{}"),
        (
            "Semantic Scholar",
            "s2_author_id",
            "s2",
            "https://www.semanticscholar.org/author/{}",
        ),
        ("OpenAlex", "openalex_author_id", "openalex", "https://openalex.org/{}"),
    ):
        value = getattr(researcher, field)
        if not value:
            continue
        n = printed[(kind, value)]
        if kind == "orcid" and researcher.claimed_by_id:
            via = "the researcher's claim, checked by a curator"
        elif n:
            via = f"the sources of {n} of these papers"
        else:
            via = "a curator"
        out.append(
            {"label": label, "value": value, "url": url.format(value), "via": via}
        )
    return out


def _split_events(researcher: Researcher) -> list[tuple]:
    """The latest 200 split events that may have moved authorships off this
    researcher, as ``(created, moves, fields)``, newest first; one query.

    PostgreSQL finds them by JSON containment; SQLite (no JSON containment)
    reads the latest split events, which :func:`_split_into` checks.
    """
    from curation.models import CurationEvent, Proposal

    # A split proposal a curator approved splits as the admin's Split does.
    events = CurationEvent.objects.filter(
        Q(kind=CurationEvent.Kind.SPLIT)
        | Q(
            kind=CurationEvent.Kind.PROPOSAL_APPLIED,
            proposal__kind=Proposal.Kind.SPLIT,
        )
    )
    if connection.vendor == "postgresql":
        events = events.filter(moves__contains=[{"before": researcher.pk}])
    return list(
        events.order_by("-created").values_list("created", "moves", "fields")[:200]
    )


def _split_into(researcher: Researcher, events: list[tuple]) -> list[dict]:
    """Profiles split off this one (still live), newest first: one query when
    a split moved authorships off it.

    A split event moved authorships off this researcher (``moves[].before``) to
    a researcher it created (``fields[<id>]["retired"]``).
    """
    found = []
    for created, moves, fields in events:
        if not any(m.get("before") == researcher.pk for m in moves):
            continue
        for pk, changed in fields.items():
            if pk != str(researcher.pk) and "retired" in changed:
                found.append((int(pk), created))
    if not found:
        return []
    live = Researcher.objects.live().in_bulk([pk for pk, _ in found])
    return [
        {
            "id": pk,
            "name": live[pk].display_name,
            "url": live[pk].get_absolute_url(),
            "when": when.date().isoformat(),
        }
        for pk, when in found[:10]
        if pk in live
    ]


def coauthor_network(
    researcher: Researcher, *, max_byline: int | None = NETWORK_MAX_BYLINE
) -> dict:
    """The closest co-authors as a small graph, for drawing client-side.

    Args:
        max_byline: leave out papers with more authors than this (a large
            collaboration's byline makes thousands co-authors and the graph
            a hairball); None counts every paper.

    Returns:
        ``{"nodes": [{"id", "name", "url", "papers", "centre": bool}], "links":
        [{"source": id, "target": id, "papers": n}], "max_byline": the bound
        or None, "left_out": visible papers over the bound}``: the researcher
        and its :data:`NETWORK_SIZE` co-authors with the most shared papers
        within the bound; a co-author's ``papers`` is how many it shares, the
        centre's how many papers within the bound it has; links join every
        pair of them with the number of the centre's papers they share. Four
        queries.
    """
    within = selectors.researcher_paper_ids_within(researcher, max_byline=max_byline)
    closest = researcher_coauthors(
        researcher=researcher, limit=NETWORK_SIZE, max_byline=max_byline
    )
    nodes = [
        {
            "id": researcher.pk,
            "name": researcher.display_name,
            "url": researcher.get_absolute_url(),
            "papers": None,
            "centre": True,
        }
    ] + [
        {
            "id": c["researcher"].pk,
            "name": c["researcher"].display_name,
            "url": c["researcher"].get_absolute_url(),
            "papers": c["shared_papers"],
            "centre": False,
        }
        for c in closest
    ]
    ids = [n["id"] for n in nodes]
    by_paper = defaultdict(set)
    for paper_id, pk in Authorship.objects.filter(
        paper_id__in=within, researcher_id__in=ids
    ).values_list("paper_id", "researcher_id"):
        by_paper[paper_id].add(pk)
    nodes[0]["papers"] = sum(researcher.pk in members for members in by_paper.values())
    pairs = Counter()
    for members in by_paper.values():
        ordered = sorted(members)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                pairs[(a, b)] += 1
    left_out = (
        0
        if max_byline is None
        else researcher_paper_ids(researcher)
        .exclude(paper_id__in=within)
        .distinct()
        .count()
    )
    return {
        "nodes": nodes,
        "links": [
            {"source": a, "target": b, "papers": n}
            for (a, b), n in sorted(pairs.items())
        ],
        "max_byline": max_byline,
        "left_out": left_out,
    }


def former_holders(researcher: Researcher) -> list[dict]:
    """Where a retired researcher's papers went: the live profiles holding them now.

    A researcher is retired when the split or ``new`` decision that created it
    is undone (the undo moved its authorships, ``moves[].before``, back), or
    when a curator moved or detached every paper it held. The
    events naming it are found by JSON containment on PostgreSQL and by the
    text of ``moves`` on SQLite, then read move by move: a move edited by
    hand into another shape (not an object, no authorship id) is passed
    over. Hidden papers are not counted.

    Returns:
        ``[{"id", "name", "url", "papers"}]``, most papers first; empty when
        none of its papers is on a live profile.
    """
    from curation.history import MAX_ID
    from curation.models import CurationEvent

    pk = researcher.pk
    if connection.vendor == "postgresql":
        events = CurationEvent.objects.filter(moves__contains=[{"before": pk}])
    else:
        # The stored JSON text names it as '"before": <id>' (also '<id>5':
        # the moves themselves are checked below).
        events = CurationEvent.objects.filter(moves__icontains=f'"before": {pk}')
    ids = {
        m["authorship"]
        for moves in events.values_list("moves", flat=True)
        if isinstance(moves, list)
        for m in moves
        if isinstance(m, dict)
        and m.get("before") == pk
        and isinstance(m.get("authorship"), int)
        and not isinstance(m.get("authorship"), bool)
        and 0 < m["authorship"] <= MAX_ID
    }
    holders = Counter(
        Authorship.objects.filter(
            pk__in=ids, researcher__isnull=False, paper__hidden=False
        )
        .exclude(researcher=researcher)
        .values_list("researcher_id", flat=True)
    )
    survivors = selectors.researcher_survivors(holders)
    merged = Counter()
    for pk, n in holders.items():
        merged[survivors.get(pk, pk)] += n
    live = Researcher.objects.live().in_bulk(list(merged))
    return [
        {
            "id": pk,
            "name": live[pk].display_name,
            "url": live[pk].get_absolute_url(),
            "papers": n,
        }
        for pk, n in merged.most_common()
        if pk in live
    ]


# Why a profile was retired, by retired_because's answer, in the words the
# API's 410, the followers' notice and the admin's state all use.
RETIRED_WHY = {
    "emptied": "a curator took every paper it held off it",
    "undone": "the curation decision that created it was undone",
}


def retired_why(researcher: Researcher) -> str:
    """:func:`retired_because` in words (:data:`RETIRED_WHY`), such as "a
    curator took every paper it held off it"."""
    return RETIRED_WHY[retired_because(researcher)]


def retired_because(researcher: Researcher) -> str:
    """Why a retired researcher was retired, for its 410 page, the API and
    the admin.

    Read from the latest event that retired it
    (:func:`curation.history.retiring_event`): a curator's change that took
    its last paper (a move, *not this person…*, a block review's ``retired``
    event, the rejection of the claim that kept it), or a redo of one, says
    ``"emptied"``; an undo of the split or ``new`` decision that created it
    (or a redo of that undo) says ``"undone"``.

    Returns:
        ``"emptied"`` or ``"undone"`` (also when no event says: a row
        retired by hand).
    """
    from curation.history import retiring_event
    from curation.models import CurationEvent

    emptying = {
        CurationEvent.Kind.MOVED,
        CurationEvent.Kind.DETACHED,
        CurationEvent.Kind.RETIRED,
        CurationEvent.Kind.CLAIM_REJECTED,
    }
    event = retiring_event(researcher.pk)
    if event is None:
        return "undone"
    first, _ = event.undo_chain_root()
    return "emptied" if first.kind in emptying else "undone"


def institution_summary(institution: Institution) -> dict:
    """What the institution page shows besides the institution itself.

    Returns:
        ``{"researchers": [Researcher with .papers] (live, most papers first, at
        most 50), "recent": paper rows (:func:`paper_rows`, newest first, one
        page), "paper_count": visible papers with an authorship there}``. Five
        queries.
    """
    authorships = Authorship.objects.filter(
        institutions=institution, paper__hidden=False
    )
    return {
        "researchers": list(
            Researcher.objects.live()
            .filter(authorships__in=authorships)
            .annotate(papers=Count("authorships__paper", distinct=True))
            .order_by("-papers", "display_name")[:50]
        ),
        "recent": paper_rows(
            Paper.objects.filter(pk__in=authorships.values("paper_id")).order_by(
                "-published", "-id"
            )[:PAGE_SIZE]
        ),
        "paper_count": authorships.values("paper_id").distinct().count(),
    }
