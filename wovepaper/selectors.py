"""Reads of the public, curated state (used by the API and the public pages)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date

from django.core.cache import cache
from django.db import connection
from django.db.models import (
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from wovepaper.identifiers import ROR_ID_RE
from wovepaper.models import Authorship, Follow, Institution, Paper, Researcher

# What a placement is called in the API and on the pages (DESIGN.md, "API":
# each link marked curator-checked or automatic).
CHECKED = "checked by a curator"
AUTOMATIC = "automatic"


def _curator_must_links():
    """Active must-links a curator made (automation makes none; those the
    identifier policy made before issue 47 name no actor, and are not a
    curator's word)."""
    from curation.models import Constraint

    return Constraint.objects.filter(
        kind=Constraint.Kind.MUST_LINK, active=True, event__actor__isnull=False
    )


def checked_slot() -> Exists:
    """An expression for an Authorship query: whether a curator confirmed
    the slot on the researcher it is applied to (an active must-link of
    theirs; approving, merging, moving and claims write them), as against
    the matcher placing it (the auto-apply policy writes none)."""
    return Exists(
        _curator_must_links().filter(
            authorship_id=OuterRef("pk"), researcher_id=OuterRef("researcher_id")
        )
    )


def checked_paper_count() -> Coalesce:
    """An expression for a Researcher query: how many of the researcher's
    visible papers a curator confirmed on them (:func:`checked_slot`)."""
    return Coalesce(
        Subquery(
            _curator_must_links()
            .filter(
                researcher_id=OuterRef("pk"),
                authorship__researcher_id=OuterRef("pk"),
                authorship__paper__hidden=False,
            )
            .order_by()
            .values("researcher_id")
            .annotate(n=Count("authorship__paper_id", distinct=True))
            .values("n"),
            output_field=IntegerField(),
        ),
        0,
    )


def checked_slots(authorship_ids: Iterable[int]) -> set[int]:
    """The ids among these of the slots a curator confirmed on the researcher
    they are applied to (:func:`checked_slot`). One query."""
    return set(
        Authorship.objects.filter(pk__in=list(authorship_ids), researcher__isnull=False)
        .filter(checked_slot())
        .values_list("pk", flat=True)
    )


def placement(checked: int, papers: int) -> str:
    """A researcher's placement in words: :data:`CHECKED` when a curator
    confirmed every visible paper, ``"partly checked by a curator"`` when
    some, :data:`AUTOMATIC` when none (the matcher placed them all)."""
    if papers and checked >= papers:
        return CHECKED
    return "partly checked by a curator" if checked else AUTOMATIC


def paper_list() -> QuerySet[Paper]:
    """Visible papers with their byline and applied researchers prefetched.

    The byline rows load only what a byline shows (not the matching keys,
    timestamps or the researcher's other fields): a list page holds hundreds of
    them, and building model instances was a third of its time (bench/api.py).
    """
    return Paper.objects.filter(hidden=False).prefetch_related(
        Prefetch(
            "authorships",
            queryset=Authorship.objects.select_related("researcher")
            .only(*BYLINE_FIELDS)
            .annotate(checked=checked_slot())
            .order_by("position"),
        )
    )


# A byline slot's own fields, in the API's order.
SLOT_FIELDS = (
    "position",
    "raw_name",
    "given_name",
    "family_name",
    "suffix",
    "is_collaboration",
    "orcid",
    "affiliations",
)
# What a byline shows: the slot's fields and its researcher's name.
BYLINE_FIELDS = (
    "paper_id",
    *SLOT_FIELDS,
    "researcher__id",
    "researcher__display_name",
    "researcher__orcid",
)


# Byline slots a paper list carries per paper; longer bylines are cut and flagged
# (OpenAlex does the same on its lists: ``is_authors_truncated`` past 100 authors,
# https://docs.openalex.org/api-entities/works/work-object). The paper detail
# always carries every slot.
LIST_BYLINE_LIMIT = 100


def list_bylines(
    paper_ids: Iterable[int], *, limit: int = LIST_BYLINE_LIMIT
) -> dict[int, tuple[list[dict], bool]]:
    """The bylines of a page of papers as plain dicts, in one query.

    Reads rows with ``values_list`` rather than model instances: on a list page of
    25 papers building ~200 Authorship and Researcher objects was most of the
    request's time (bench/api.py).

    Args:
        paper_ids: the papers of one list page.
        limit: slots kept per paper (positions 1 to ``limit``).

    Returns:
        ``{paper id: (slots, truncated)}``: slots in position order, each
        ``{"position", "raw_name", "given_name", "family_name", "suffix",
        "is_collaboration", "orcid", "affiliations", "researcher": {"id",
        "display_name", "orcid", "placement"} | None}`` (the API's byline
        shape; ``placement`` :data:`CHECKED` or :data:`AUTOMATIC`); ``truncated``
        when the paper has more than ``limit`` slots.
    """
    out: dict[int, tuple[list[dict], bool]] = {}
    rows = (
        Authorship.objects.filter(paper_id__in=list(paper_ids), position__lte=limit + 1)
        .order_by("paper_id", "position")
        .annotate(checked=checked_slot())
        .values(*BYLINE_FIELDS, "checked")
    )
    for row in rows:
        slots, truncated = out.setdefault(row["paper_id"], ([], False))
        if row["position"] > limit:
            out[row["paper_id"]] = (slots, True)
            continue
        rid = row["researcher__id"]
        slots.append(
            {
                **{name: row[name] for name in SLOT_FIELDS},
                "researcher": (
                    {
                        "id": rid,
                        "display_name": row["researcher__display_name"],
                        "orcid": row["researcher__orcid"],
                        "placement": CHECKED if row["checked"] else AUTOMATIC,
                    }
                    if rid is not None
                    else None
                ),
            }
        )
    return out


def researcher_list() -> QuerySet[Researcher]:
    """Live researchers (not merged away) with their applied paper count, how
    many of those a curator checked (``checked_paper_count``) and their
    figures (``stats``, :class:`wovepaper.models.ResearcherStats`, joined)."""
    return (
        Researcher.objects.live()
        .select_related("stats")
        .annotate(
            paper_count=Count(
                "authorships", filter=Q(authorships__paper__hidden=False), distinct=True
            ),
            checked_paper_count=checked_paper_count(),
        )
    )


# Undated papers sort as the oldest: a cursor needs a value on every row.
UNDATED = date(1, 1, 1)


def researcher_papers(*, researcher: Researcher) -> QuerySet[Paper]:
    """The visible papers applied to a researcher, newest first.

    Returns:
        Papers annotated with ``sort_date`` (``published``, or :data:`UNDATED`) and
        ordered by ``-sort_date``, ``-id``: what cursor pagination pages on.
    """
    return (
        Paper.objects.filter(hidden=False, authorships__researcher=researcher)
        .distinct()
        .annotate(sort_date=Coalesce("published", Value(UNDATED)))
        .order_by("-sort_date", "-id")
    )


# Merge chains are short (a survivor merged again later); the cap guards a cycle.
MAX_MERGE_HOPS = 50


def researcher_survivors(pks: Iterable[int]) -> dict[int, int]:
    """Where merged-away researchers now live: ``{merged id: live survivor id}``.

    Follows ``merged_into`` (A merged into B, later B into C: A's survivor is C)
    with one query per hop for the whole set, not per researcher. Ids that were
    never merged away (or do not exist) are left out.
    """
    current = dict(
        Researcher.objects.filter(
            pk__in=set(pks), merged_into__isnull=False
        ).values_list("pk", "merged_into")
    )
    for _ in range(MAX_MERGE_HOPS):
        onward = dict(
            Researcher.objects.filter(
                pk__in=set(current.values()), merged_into__isnull=False
            ).values_list("pk", "merged_into")
        )
        if not onward:
            return current
        current = {pk: onward.get(target, target) for pk, target in current.items()}
    return {}  # a cycle: no survivor can be named


def researcher_survivor(pk: int) -> int | None:
    """The live researcher a merged-away researcher ``pk`` now lives on, or None.

    Returns:
        The survivor's id; None when ``pk`` does not exist or was not merged away.
    """
    return researcher_survivors([pk]).get(pk)


def follows_leading(user) -> dict[int, int]:
    """Where each of a user's follows leads: ``{followed researcher id: the
    researcher it counts for}``, itself, or the live survivor of one merged
    away since (a split may have sent it on with its papers:
    ``curation.edits``). Two queries and one a link of merge chains.
    """
    followed = list(
        Follow.objects.filter(user=user).values_list("researcher_id", flat=True)
    )
    survivors = researcher_survivors(followed)
    return {pk: survivors.get(pk, pk) for pk in followed}


def followed_researchers(user) -> QuerySet[Researcher]:
    """The live researchers a user follows, by name (with their paper counts),
    each once: a follow of a researcher merged away since counts for its
    survivor, as in the feed (:func:`follows_leading`)."""
    leads = set(follows_leading(user).values())
    return researcher_list().filter(pk__in=leads).order_by("display_name", "id")


def feed_papers(user) -> QuerySet[Paper]:
    """Visible papers of the researchers a user follows, newest first.

    Follows of a researcher merged away since count for its survivor; the
    API's feed (category follows are the Following page's, not the feed's).
    """
    return following_papers(user)


def paper_by_identifier(value: str) -> Paper | None:
    """A visible paper by our id, arXiv id (new or old style, any version) or DOI.

    Accepts ``1273``, ``2201.05500``, ``2201.05500v2``, ``arXiv:2201.05500``,
    ``hep-th/9901001``, ``10.1103/PhysRevD.1.1``, ``doi:10.1103/...`` or a
    doi.org URL. DOIs compare lower-cased (DOIs are case-insensitive: DOI Handbook
    2.4).

    Returns:
        The paper with its byline prefetched, or None.
    """
    from harvest.records import RecordError
    from harvest.sources.arxiv_abs import split_arxiv_id

    text = value.strip()
    papers = paper_list()
    if text.isascii() and text.isdigit() and len(text) <= 18:
        return papers.filter(pk=int(text)).first()
    lowered = text.lower()
    for prefix in ("https://doi.org/", "http://doi.org/", "doi:"):
        if lowered.startswith(prefix):
            return papers.filter(doi=lowered[len(prefix) :]).first()
    if lowered.startswith("10."):
        return papers.filter(doi=lowered).first()
    if lowered.startswith("arxiv:"):
        text = text[len("arxiv:") :]
    try:
        arxiv_id, _ = split_arxiv_id(text, "lookup")
    except RecordError:
        return None
    return papers.filter(arxiv_id=arxiv_id).first()


def researcher_paper_ids_within(
    researcher: Researcher, *, max_byline: int | None
) -> QuerySet:
    """The ids of a researcher's visible papers, as a subquery, leaving out
    papers with more than ``max_byline`` authors (None: none left out).

    Returns:
        A ``paper_id`` values queryset of :class:`Authorship`.
    """
    papers = Authorship.objects.filter(
        researcher=researcher, paper__hidden=False
    ).values("paper_id")
    if max_byline is None:
        return papers
    large = (
        Authorship.objects.filter(paper_id__in=papers)
        .values("paper_id")
        .annotate(n=Count("*"))
        .filter(n__gt=max_byline)
        .values("paper_id")
    )
    return papers.exclude(paper_id__in=large)


def researcher_coauthors(
    *, researcher: Researcher, limit: int = 50, max_byline: int | None = None
) -> list[dict]:
    """The curated researchers who share the most visible papers with this one.

    Args:
        researcher: a live researcher.
        limit: how many, at most (1 to 200).
        max_byline: count only papers with at most this many authors (a
            collaboration paper of 3,000 authors makes everyone a co-author);
            None counts every paper.

    Returns:
        ``[{"researcher": Researcher, "shared_papers": n}]``, most shared first,
        then by id; two queries.
    """
    papers = researcher_paper_ids_within(researcher, max_byline=max_byline)
    rows = list(
        Authorship.objects.filter(paper_id__in=papers, researcher__isnull=False)
        .exclude(researcher=researcher)
        .values("researcher_id")
        .annotate(shared=Count("paper_id", distinct=True))
        .order_by("-shared", "researcher_id")[: max(1, min(limit, 200))]
    )
    found = Researcher.objects.in_bulk([r["researcher_id"] for r in rows])
    return [
        {"researcher": found[r["researcher_id"]], "shared_papers": r["shared"]}
        for r in rows
        if r["researcher_id"] in found
    ]


def in_category(category: str) -> Q:
    """A paper filter: the paper carries ``category`` (primary or cross-list).

    On PostgreSQL a JSON containment test; SQLite has no JSON containment
    (Django docs, "contains" on JSONField), so there the quoted category is
    matched inside the stored JSON text, which is exact because categories
    never contain a quote.
    """
    if connection.vendor == "postgresql":
        return Q(categories__contains=[category])
    return Q(categories__icontains=json.dumps(category))


def papers_in_category(category: str) -> QuerySet[Paper]:
    """Visible papers that carry ``category``, bylines prefetched."""
    return paper_list().filter(in_category(category))


def category_canonical(category: str) -> str | None:
    """The category as the papers spell it (``cs.se`` → ``cs.SE``), or None.

    arXiv category names are case-sensitive; a reader typing one in any case
    means the one the papers carry. An exact match is tried first (JSON
    containment on PostgreSQL), then the primary categories ignoring case.
    """
    if not category or len(category) > 40:
        return None
    for cats in Paper.objects.filter(in_category(category), hidden=False).values_list(
        "categories", flat=True
    )[:1]:
        for name in cats:
            if name.lower() == category.lower():
                return name
    return (
        Paper.objects.filter(hidden=False, primary_category__iexact=category)
        .values_list("primary_category", flat=True)
        .first()
    )


# How long a category's spelling is remembered (seconds).
CATEGORY_SPELLING_SECONDS = 3600


def category_spelled(category: str) -> str:
    """:func:`category_canonical`, cached, falling back to the category as given.

    For a filter read on every request (search): an unknown category costs a scan
    to rule out, so each spelling's answer is kept for
    :data:`CATEGORY_SPELLING_SECONDS`.

    Returns:
        The category as the papers spell it (``cs.lg`` → ``cs.LG``), or
        ``category`` unchanged when no visible paper carries it.
    """
    key = f"category-spelling:{category.lower()}"
    spelled = cache.get(key)
    if spelled is None:
        spelled = category_canonical(category) or ""
        cache.set(key, spelled, CATEGORY_SPELLING_SECONDS)
    return spelled or category


def category_exists(category: str) -> bool:
    """Whether any visible paper carries ``category`` (at most 40 characters)."""
    return len(category) <= 40 and papers_in_category(category).exists()


def following_papers(user, *, categories: Iterable[str] = ()) -> QuerySet[Paper]:
    """Visible papers of the researchers a user follows or of followed categories.

    Args:
        user: the signed-in user.
        categories: the arXiv categories the user follows.

    Returns:
        Papers newest first (undated last), each once (no byline loaded: a
        page builds short bylines with :func:`wovepaper.profile.paper_rows`).
    """
    wanted = Q(authorships__researcher_id__in=set(follows_leading(user).values()))
    for category in categories:
        wanted |= in_category(category)
    ids = Paper.objects.filter(wanted, hidden=False).values("pk")
    return (
        Paper.objects.filter(pk__in=ids)
        .annotate(sort_date=Coalesce("published", Value(UNDATED)))
        .order_by("-sort_date", "-id")
    )


def paper_byline(paper: Paper, *, limit: int | None = None) -> list[Authorship]:
    """A paper's byline slots in order, with researcher and institutions.

    Args:
        limit: the first this many slots; None for every slot.

    Returns:
        Authorships by position, each annotated ``checked``
        (:func:`checked_slot`); three queries whatever the byline's length.
    """
    slots = (
        Authorship.objects.filter(paper=paper)
        .select_related("researcher")
        .prefetch_related("institutions")
        .annotate(checked=checked_slot())
        .order_by("position")
    )
    return list(slots if limit is None else slots[:limit])


def institution_by_ref(ref: str) -> Institution | None:
    """An institution by ``<id>-<slug>``, our id, ROR id (bare or URL) or its name.

    Args:
        ref: what the URL holds after ``/institutions/``.

    Returns:
        The institution, trying in that order; None when nothing matches. The
        name matches exactly, in any case, or as a slug.
    """
    head = ref.split("-", 1)[0]
    if head.isascii() and head.isdigit() and len(head) < 18:
        found = Institution.objects.filter(pk=int(head)).first()
        if found:
            return found
    ror = ref.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    if ROR_ID_RE.fullmatch(ror):
        found = Institution.objects.filter(ror_id=ror).first()
        if found:
            return found
    name = " ".join(ref.split())[:500]
    return (
        Institution.objects.filter(Q(name__iexact=name) | Q(slug=name.lower()))
        .order_by("pk")
        .first()
    )
