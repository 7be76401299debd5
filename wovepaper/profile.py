"""Reads behind the public researcher and paper pages, in a fixed number of queries.

Everything here shows the applied, curated state only (``Authorship.researcher``
is set by applied curation alone). Results are plain dicts and lists so a page can
cache them under the researcher's cache version (:mod:`wovepaper.cache`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
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
    Value,
)
from django.db.models.functions import Coalesce

from wovepaper import selectors
from wovepaper.models import Authorship, Institution, Paper, Researcher
from wovepaper.selectors import UNDATED, in_category, researcher_coauthors

# Names printed per paper in a list; the rest is "and N more" (a paper may have
# thousands of authors, and a list page must not read them all).
BYLINE_SHOWN = 10
# Papers per page, as DESIGN.md asks for the researcher page and search.
PAGE_SIZE = 24
# Researcher page sort orders: key -> ORDER BY.
SORTS = {
    "newest": ("-sort_date", "-id"),
    "oldest": ("sort_date", "id"),
    "cited": (F("cited_by_count").desc(nulls_last=True), "-sort_date", "-id"),
    "title": ("title", "id"),
}
# Co-authors drawn in the network (the centre plus this many).
NETWORK_SIZE = 15


def researcher_paper_ids(researcher: Researcher) -> QuerySet:
    """Ids of the visible papers applied to ``researcher`` (a subquery)."""
    return Authorship.objects.filter(researcher=researcher, paper__hidden=False).values(
        "paper_id"
    )


def researcher_papers_page(
    researcher: Researcher,
    *,
    category: str = "",
    sort: str = "newest",
    number: int = 1,
    count: int | None = None,
) -> dict:
    """One page of a researcher's papers with short bylines and why each is here.

    Args:
        researcher: a live researcher.
        category: only papers carrying this arXiv category ("" for all).
        sort: a key of :data:`SORTS` (unknown keys sort newest first).
        number: 1-based page number; out of range shows the last page.
        count: how many papers match, when the caller knows it already (the
            researcher summary counts every category); None counts them.

    Returns:
        ``{"papers": [paper dict], "count": n, "number": k, "num_pages": m}``
        where each paper dict is built by :func:`paper_rows` with the reason the
        paper is on this profile under ``"why"``. Four queries (five without
        ``count``) whatever the researcher's paper count.
    """
    papers = Paper.objects.filter(pk__in=researcher_paper_ids(researcher))
    if category:
        papers = papers.filter(in_category(category))
    if count is None:
        count = papers.count()
    num_pages = max(1, -(-count // PAGE_SIZE))
    number = min(max(1, number), num_pages)
    ordered = papers.annotate(sort_date=Coalesce("published", Value(UNDATED))).order_by(
        *SORTS.get(sort, SORTS["newest"])
    )
    start = (number - 1) * PAGE_SIZE
    rows = paper_rows(ordered[start : start + PAGE_SIZE], keep=researcher.pk)
    why = attachment_reasons(
        researcher, [p["own_authorship"] for p in rows if p["own_authorship"]]
    )
    for row in rows:
        row["why"] = why.get(row["own_authorship"], "")
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
            "id",
            "arxiv_id",
            "doi",
            "slug",
            "title",
            "published",
            "published_precision",
            "primary_category",
            "categories",
            "cited_by_count",
            "author_count",
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
    out = []
    for row in rows:
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
            for s in slots[row["id"]]
        ]
        own = next((s["id"] for s in byline if s["researcher_id"] == keep), None)
        key = row["arxiv_id"] or str(row["id"])
        out.append(
            {
                **{k: v for k, v in row.items() if k != "slug"},
                "url": f"/papers/{key}-{row['slug'] or 'paper'}",
                "published_shown": Paper(
                    published=row["published"],
                    published_precision=row["published_precision"],
                ).published_shown,
                "byline": byline,
                "more": max(0, row["author_count"] - len(byline)),
                "own_authorship": own if keep is not None else None,
            }
        )
    return out


def paper_rows_by_id(ids: list[int]) -> list[dict]:
    """:func:`paper_rows` of the visible papers among ``ids``, in the order given.

    Args:
        ids: paper ids in display order (a ranked search page).

    Returns:
        Paper rows in the order of ``ids``; hidden or unknown ids are left out.
    """
    order = {pk: i for i, pk in enumerate(ids)}
    rows = paper_rows(Paper.objects.filter(pk__in=ids, hidden=False))
    return sorted(rows, key=lambda row: order[row["id"]])


# Plain words for the matcher's features (curation.matching.features.Features).
_FEATURE_WORDS = {
    "orcid": "the same ORCID iD",
    "coauthors": "shared co-authors",
    "categories": "the same fields",
    "affiliation": "similar affiliations",
    "rare_name": "a rare given name printed the same way",
    "rare_family": "a family name few others carry",
    "source_id": "the same OpenAlex or Semantic Scholar author",
}


def attachment_reasons(researcher: Researcher, authorship_ids: list[int]) -> dict:
    """Why each authorship is on this researcher's profile, in plain words.

    The reason is the applied proposal that last moved the authorship here: who
    applied it (a curator, or the identifier policy) and its strongest evidence
    (features with a positive logit contribution, largest first). An authorship
    with no applied proposal for this researcher was placed by a curator directly
    (a merge, a move, an approved claim).

    Args:
        researcher: the profile shown.
        authorship_ids: its authorships on the page.

    Returns:
        ``{authorship id: "sentence"}``; two queries.
    """
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
    by_curator = dict(
        CurationEvent.objects.filter(
            proposal__in=[p.pk for p in latest.values()],
            kind=CurationEvent.Kind.PROPOSAL_APPLIED,
        ).values_list("proposal_id", "actor_id")
    )
    reasons = {}
    for authorship_id in authorship_ids:
        proposal = latest.get(authorship_id)
        if proposal is None or proposal.researcher_id not in (researcher.pk, None):
            reasons[authorship_id] = (
                "A curator placed this paper on the profile directly (a merge, a "
                "move or a confirmed claim)."
            )
            continue
        who = (
            "A curator approved the match"
            if by_curator.get(proposal.pk)
            else "Applied automatically because an identifier proves it"
        )
        when = proposal.decided_at.date().isoformat() if proposal.decided_at else ""
        reasons[authorship_id] = (
            f"{who}{' on ' + when if when else ''}: "
            f"{_evidence_words(proposal)} (score {proposal.score:.2f})."
        )
    return reasons


def _evidence_words(proposal) -> str:
    """The evidence of a proposal in words: strongest positive features first."""
    if proposal.kind == "new":
        return "no existing profile matched, so this paper started a new one"
    features = proposal.evidence.get("features", {})
    contributions = proposal.evidence.get("contributions", {})
    positive = sorted(
        (name for name, c in contributions.items() if c > 0 and features.get(name)),
        key=lambda name: -contributions[name],
    )
    words = []
    for name in positive:
        if name == "name":
            words.append(f"the names agree ({features[name]:.0%} similar)")
        elif name == "coauthors":
            n = int(features[name])
            words.append(f"{n} shared co-author{'s' if n != 1 else ''}")
        elif name in _FEATURE_WORDS:
            words.append(_FEATURE_WORDS[name])
    return ", ".join(words[:4]) or "the names agree"


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
    counts = Counter()
    total = 0
    for position, n, missing in (
        Authorship.objects.filter(researcher=researcher, paper__hidden=False)
        .annotate(n=n_slots, missing=Coalesce(unmatched, 0))
        .values_list("position", "n", "missing")
    ):
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
        ``{"paper_count", "years": (first, last) | None, "categories": [(cat, n)]
        most first, "histogram": Histogram, "institutions": [{"name", "url",
        "ror_id", "first", "last", "papers"}] latest first, "affiliations":
        [{"text", "first", "last", "papers"}] (printed strings, when no
        institution is linked), "identifiers": [{"label", "value", "url",
        "via"}], "split_into": [{"id", "name", "url", "when"}]}``. Six queries
        whatever the paper count.
    """
    rows = list(
        Authorship.objects.filter(
            researcher=researcher, paper__hidden=False
        ).values_list(
            "paper__published",
            "paper__categories",
            "affiliations",
            "orcid",
            "s2_author_id",
            "openalex_author_id",
        )
    )
    categories = Counter()
    affiliations: dict[str, list] = {}
    years = [d.year for d, *_ in rows if d]
    printed = Counter()
    for published, cats, affs, orcid, s2, openalex in rows:
        categories.update(set(cats or []))
        for text in affs or []:
            text = " ".join(str(text).split())[:300]
            if not text:
                continue
            span = affiliations.setdefault(text, [None, None, 0])
            if published:
                span[0] = min(filter(None, (span[0], published.year)))
                span[1] = max(filter(None, (span[1], published.year)))
            span[2] += 1
        printed.update({("orcid", orcid): 1, ("s2", s2): 1, ("openalex", openalex): 1})
    institutions = [
        {
            "name": row["institution__name"],
            "url": Institution(
                pk=row["institution_id"], slug=row["institution__slug"]
            ).get_absolute_url(),
            "ror_id": row["institution__ror_id"],
            "first": row["first"].year if row["first"] else None,
            "last": row["last"].year if row["last"] else None,
            "papers": row["papers"],
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
        .order_by(F("last").desc(nulls_last=True), "institution__name")[:20]
    ]
    return {
        "paper_count": len(rows),
        "years": (min(years), max(years)) if years else None,
        "categories": sorted(categories.items(), key=lambda kv: (-kv[1], kv[0])),
        "histogram": position_histogram(researcher),
        "institutions": institutions,
        "affiliations": [
            {"text": text, "first": first, "last": last, "papers": n}
            for text, (first, last, n) in sorted(
                affiliations.items(), key=lambda kv: (-(kv[1][1] or 0), -kv[1][2])
            )[:10]
        ],
        "identifiers": _identifiers(researcher, printed),
        "split_into": _split_into(researcher),
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


def _split_into(researcher: Researcher) -> list[dict]:
    """Profiles split off this one (still live), newest first: two queries.

    A split event moved authorships off this researcher (``moves[].before``) to
    a researcher it created (``fields[<id>]["retired"]``). PostgreSQL finds the
    events by JSON containment; SQLite (no JSON containment) reads the latest
    split events and checks them here.
    """
    from curation.models import CurationEvent

    events = CurationEvent.objects.filter(kind=CurationEvent.Kind.SPLIT)
    if connection.vendor == "postgresql":
        events = events.filter(moves__contains=[{"before": researcher.pk}])
    found = []
    for event in events.order_by("-created")[:200]:
        if not any(m.get("before") == researcher.pk for m in event.moves):
            continue
        for pk, fields in event.fields.items():
            if pk != str(researcher.pk) and "retired" in fields:
                found.append((int(pk), event.created))
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


def coauthor_network(researcher: Researcher) -> dict:
    """The closest co-authors as a small graph, for drawing client-side.

    Returns:
        ``{"nodes": [{"id", "name", "url", "papers", "centre": bool}], "links":
        [{"source": id, "target": id, "papers": n}]}``: the researcher and its
        :data:`NETWORK_SIZE` co-authors with the most shared visible papers; links
        join every pair of them with the number of the centre's papers they
        share. Three queries.
    """
    closest = researcher_coauthors(researcher=researcher, limit=NETWORK_SIZE)
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
        paper_id__in=researcher_paper_ids(researcher), researcher_id__in=ids
    ).values_list("paper_id", "researcher_id"):
        by_paper[paper_id].add(pk)
    pairs = Counter()
    for members in by_paper.values():
        ordered = sorted(members)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                pairs[(a, b)] += 1
    return {
        "nodes": nodes,
        "links": [
            {"source": a, "target": b, "papers": n}
            for (a, b), n in sorted(pairs.items())
        ],
    }


def former_holders(researcher: Researcher) -> list[dict]:
    """Where a retired researcher's papers went: the live profiles holding them now.

    A researcher is retired when the split or ``new`` decision that created it
    is undone; the undo moved its authorships (``moves[].before``) back. Two
    queries on PostgreSQL (JSON containment); SQLite reads the latest 500 events.

    Returns:
        ``[{"id", "name", "url", "papers"}]``, most papers first.
    """
    from curation.models import CurationEvent

    events = CurationEvent.objects.all()
    if connection.vendor == "postgresql":
        events = events.filter(moves__contains=[{"before": researcher.pk}])
    ids = {
        m["authorship"]
        for moves in events.order_by("-id").values_list("moves", flat=True)[:500]
        for m in moves
        if m.get("before") == researcher.pk
    }
    holders = Counter(
        Authorship.objects.filter(pk__in=ids, researcher__isnull=False)
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
