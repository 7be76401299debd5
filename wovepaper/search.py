"""Public search: papers by full text, researchers by name.

On PostgreSQL, papers match a stored ``tsvector`` (``Paper.search_vector``, GIN
indexed) of the title (weight A), the byline's names as printed (B) and the abstract
(C), accent-folded and stemmed with the ``english`` configuration, against the
user's text read as a web search (``websearch_to_tsquery``: quoted phrases, ``or``,
``-word``), ranked by ``ts_rank``. Researchers match by trigram word similarity
(``pg_trgm``) of the folded query to their folded display name and name variants,
so a typo or a missing accent still finds them. The vectors are written by
:func:`search_vectors_refresh`, which the harvest upsert calls for every paper it
creates or changes; migration 0005 filled the rows that existed before.

On SQLite (the embedded demo) there is neither ``tsvector`` nor ``pg_trgm``: every
word must occur, case-insensitively, in the title, the abstract or an author's name
(papers, newest first) or in the name or a variant (researchers).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from django.contrib.postgres.lookups import TrigramWordSimilar
from django.contrib.postgres.search import (
    SearchQuery,
    SearchRank,
    TrigramWordSimilarity,
)
from django.core.cache import cache
from django.db import connection
from django.db.models import (
    Count,
    Exists,
    F,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.functions import Cast, Coalesce

from api.search import MAX_SEARCH_CHARS, MAX_SEARCH_TERMS
from wovepaper.models import Authorship, Paper, Researcher
from wovepaper.selectors import paper_by_identifier, paper_list, papers_in_category

# Text search configuration of the stored vectors and of the queries: both sides
# must stem alike, so the names are stemmed too (a name stored unstemmed under
# 'simple' would never meet an English-stemmed query word: Hawking -> 'hawk').
SEARCH_CONFIG = "english"

QUERY_TOO_LONG = f"The search text is too long: at most {MAX_SEARCH_CHARS} characters."
QUERY_TOO_MANY_WORDS = (
    f"The search text has too many words: at most {MAX_SEARCH_TERMS}."
)

# Most researchers one search returns.
MAX_RESEARCHERS = 50


class SearchQueryError(ValueError):
    """The search text is out of bounds; the message says which bound, for users."""


class Fold(Func):
    """``wovepaper_fold(text)``: the text without accents (PostgreSQL, migration 0004).

    Immutable, so an index can hold it; ``unaccent`` itself is only stable.
    """

    function = "wovepaper_fold"
    output_field = TextField()


def _researcher_names() -> Func:
    """A researcher's folded display name and variants, as the trigram index has it.

    The expression must stay the one of the index ``wovepaper_researcher_names_trgm``
    (migration 0004): ``wovepaper_fold(display_name || ' ' || name_variants::text)``;
    PostgreSQL uses an expression index only for the same expression.
    """
    return Fold(
        Func(
            F("display_name"),
            Value(" "),
            Cast(F("name_variants"), TextField()),
            template="(%(expressions)s)",
            arg_joiner=" || ",
            output_field=TextField(),
        )
    )


# A run of web-search operators ("----", "!-!-") nests one tsquery operator per
# character and overflows PostgreSQL's parser stack past about 32 ("tsquery stack
# too small"); one operator means the same.
_OPERATOR_RUN = re.compile(r"([-!&|:*<>()]\s*){2,}")


def search_query_clean(query: str) -> str:
    """The search text with its whitespace collapsed, after checking its bounds.

    Runs of operator characters (``----``, ``!-!-``) shrink to their first one.

    Args:
        query: the text the user typed (any length).

    Returns:
        The words joined by single spaces; "" for blank input.

    Raises:
        SearchQueryError: the text is longer than ``MAX_SEARCH_CHARS`` characters
            (:data:`QUERY_TOO_LONG`) or has more than ``MAX_SEARCH_TERMS`` words
            (:data:`QUERY_TOO_MANY_WORDS`); the API's bounds (api/search.py).
    """
    if len(query) > MAX_SEARCH_CHARS:
        raise SearchQueryError(QUERY_TOO_LONG)
    words = query.split()
    if len(words) > MAX_SEARCH_TERMS:
        raise SearchQueryError(QUERY_TOO_MANY_WORDS)
    return _OPERATOR_RUN.sub(
        lambda m: m.group(1).strip() + " ", " ".join(words)
    ).strip()


def paper_named_by(query: str) -> Paper | None:
    """The visible paper a search text names by arXiv id or DOI, or None.

    ``2201.05500``, ``arXiv:hep-th/9901001v2``, ``10.1103/...``, ``doi:...`` or a
    doi.org URL (:func:`wovepaper.selectors.paper_by_identifier`). Text with a
    space, and a bare number (more likely a year than our id), name no paper.
    """
    text = query.strip()
    if not text or len(text) > 300 or text.isdigit() or len(text.split()) > 1:
        return None
    return paper_by_identifier(text)


def paper_search(
    *, query: str, category: str | None = None, year: int | None = None
) -> QuerySet[Paper]:
    """Visible papers matching a search text, best first, bylines prefetched.

    Args:
        query: the user's text (web search syntax on PostgreSQL: ``"exact
            phrase"``, ``or``, ``-excluded``).
        category: keep papers carrying this arXiv category (primary or cross-list),
            as :func:`wovepaper.selectors.papers_in_category`; None or "" for all.
        year: keep papers first published in this year (1 to 9999); None for all.

    Returns:
        On PostgreSQL, papers annotated with ``rank`` (``ts_rank``, title matches
        weigh most, then authors, then the abstract) ordered by ``-rank``, newest
        first among equals; on SQLite, matching papers newest first. Empty for a
        blank query. The stored vector itself is not loaded.

    Raises:
        SearchQueryError: the query is out of bounds (see :func:`search_query_clean`).
    """
    papers, search = _paper_matches(query=query, category=category, year=year)
    if search is None:
        return papers
    return papers.annotate(rank=SearchRank(F("search_vector"), search)).order_by(
        "-rank", F("published").desc(nulls_last=True), "-id"
    )


def paper_search_categories(
    *, query: str, year: int | None = None
) -> list[tuple[str, int]]:
    """The primary categories of the papers a search finds, for a category filter.

    Args:
        query: the user's text, as for :func:`paper_search`.
        year: the year filter, as for :func:`paper_search`.

    Returns:
        ``[(primary category, papers), ...]`` over every match (whatever its
        category), most papers first, then by name; papers without a primary
        category count under "". The counts add up to the number of papers
        :func:`paper_search` finds without a category filter. One query.

    Raises:
        SearchQueryError: the query is out of bounds (see :func:`search_query_clean`).
    """
    papers, _ = _paper_matches(query=query, category=None, year=year)
    rows = (
        papers.order_by()
        .values("primary_category")
        .annotate(n=Count("pk"))
        .order_by("-n", "primary_category")
        .values_list("primary_category", "n")
    )
    return list(rows)


def _paper_matches(
    *, query: str, category: str | None, year: int | None
) -> tuple[QuerySet[Paper], SearchQuery | None]:
    """The filtered matching papers (unordered) and the full-text query, if any.

    Returns:
        ``(papers, search)``: ``search`` is the PostgreSQL query to rank with, or
        None when there is nothing to rank (blank text, or SQLite, whose papers
        come ordered newest first).
    """
    text = search_query_clean(query)
    papers = papers_in_category(category) if category else paper_list()
    if year is not None:
        papers = papers.filter(published__year=year)
    if not text:
        return papers.none(), None
    if connection.vendor != "postgresql":
        return paper_search_fallback(papers, text=text), None
    search = SearchQuery(
        Fold(Value(text)), config=SEARCH_CONFIG, search_type="websearch"
    )
    return papers.defer("search_vector").filter(search_vector=search), search


def paper_search_fallback(papers: QuerySet[Paper], *, text: str) -> QuerySet[Paper]:
    """Papers where every word occurs in the title, the abstract or an author's name.

    The portable search (SQLite has no ``tsvector``): case-insensitive substrings,
    web-search quotes dropped.

    Args:
        papers: the papers to search in (already filtered).
        text: the cleaned search text (see :func:`search_query_clean`).

    Returns:
        The matching papers, newest first (undated last), each once.
    """
    for word in text.replace('"', " ").split():
        named = Authorship.objects.filter(
            paper=OuterRef("pk"), raw_name__icontains=word
        )
        papers = papers.filter(
            Q(title__icontains=word) | Q(abstract__icontains=word) | Exists(named)
        )
    return papers.order_by(F("published").desc(nulls_last=True), "-id")


def _paper_count() -> Coalesce:
    """How many visible papers a researcher's applied authorships are on."""
    counted = (
        Authorship.objects.filter(researcher=OuterRef("pk"), paper__hidden=False)
        .order_by()
        .values("researcher")
        .annotate(n=Count("paper", distinct=True))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def researcher_search(*, query: str, limit: int = 10) -> list[Researcher]:
    """Live researchers whose name or a name variant is like the search text.

    Args:
        query: a name as the user typed it; typos and missing accents are
            tolerated on PostgreSQL.
        limit: how many at most (clamped to 1 to :data:`MAX_RESEARCHERS`).

    Returns:
        The first ``limit`` of :func:`researcher_matches`; empty for a blank
        query. One query.

    Raises:
        SearchQueryError: the query is out of bounds (see :func:`search_query_clean`).
    """
    limit = max(1, min(limit, MAX_RESEARCHERS))
    return list(researcher_matches(query=query)[:limit])


def researcher_matches(*, query: str) -> QuerySet[Researcher]:
    """Live researchers whose name or a variant is like the search text, best first.

    Args:
        query: a name as the user typed it.

    Returns:
        Researchers annotated with ``paper_count`` (visible papers) and, on
        PostgreSQL, ``name_similarity`` (trigram word similarity of the folded
        text to the folded display name and variants, in [0, 1], above
        ``pg_trgm.word_similarity_threshold``: 0.6 unless configured); the most
        similar first, then the most papers, then by name. On SQLite, those whose
        name or variants contain every word, most papers first. None for a blank
        query.

    Raises:
        SearchQueryError: the query is out of bounds (see :func:`search_query_clean`).
    """
    text = search_query_clean(query)
    researchers = Researcher.objects.live().annotate(paper_count=_paper_count())
    if not text:
        return researchers.none()
    if connection.vendor != "postgresql":
        return researcher_search_fallback(researchers, text=text)
    names = _researcher_names()
    folded = Fold(Value(text))
    return (
        researchers.annotate(name_similarity=TrigramWordSimilarity(folded, names))
        .filter(TrigramWordSimilar(names, folded))
        .order_by("-name_similarity", "-paper_count", "display_name", "id")
    )


def researcher_search_fallback(
    researchers: QuerySet[Researcher], *, text: str
) -> QuerySet[Researcher]:
    """Researchers whose display name or variants contain every word of ``text``.

    Args:
        researchers: the researchers to search in, annotated with ``paper_count``.
        text: the cleaned search text.

    Returns:
        The matches, most papers first, then by name.
    """
    for word in text.replace('"', " ").split():
        researchers = researchers.filter(
            Q(display_name__icontains=word) | Q(name_variants__icontains=word)
        )
    return researchers.order_by("-paper_count", "display_name", "id")


# One statement for a set of papers: the byline's names gathered per paper, then
# every vector rewritten. Each part is cut to VECTOR_TEXT_CHARS first: a tsvector
# holds at most 1 MB (PostgreSQL docs, 8.11.1), and a hostile 1 MB abstract of
# distinct words would otherwise fail the harvest of its record; no real title,
# byline or abstract comes near the cut. The expression is repeated by migration
# 0005 (which fills the rows that existed before), as migrations do not import app
# code.
_REFRESH_SQL = """
UPDATE wovepaper_paper AS p
SET search_vector =
    setweight(to_tsvector('english', wovepaper_fold(left(p.title, 100000))), 'A')
    || setweight(to_tsvector('english', wovepaper_fold(left(n.names, 100000))), 'B')
    || setweight(
        to_tsvector('english', wovepaper_fold(left(p.abstract, 100000))), 'C'
    )
FROM (
    SELECT q.id,
           coalesce(string_agg(a.raw_name, ' ' ORDER BY a.position), '') AS names
    FROM wovepaper_paper AS q
    LEFT JOIN wovepaper_authorship AS a ON a.paper_id = q.id
    WHERE q.id = ANY(%s)
    GROUP BY q.id
) AS n
WHERE p.id = n.id
"""


def search_vectors_refresh(*, paper_ids: Iterable[int]) -> int:
    """Rewrite the stored search vectors of some papers from their text and byline.

    Call it after a paper's title, abstract or authorships' names were written
    (the harvest upsert does); it is idempotent. Nothing happens on SQLite.

    Args:
        paper_ids: ids of the papers touched (any order, repeats allowed; unknown
            ids are ignored).

    Returns:
        How many papers were rewritten (0 on SQLite).
    """
    ids = sorted({int(pk) for pk in paper_ids})
    if not ids or connection.vendor != "postgresql":
        return 0
    with connection.cursor() as cursor:
        cursor.execute(_REFRESH_SQL, [ids])
        return cursor.rowcount


# How long the ranked head of a search is reused (seconds), and how many ranked
# ids it keeps (10 pages of 24). Ranking a broad query reads every match (up to
# ~29,000 of 100,000 papers, ~150 ms; bench/search.py); readers repeat queries
# and page through them, so the head is computed once and pages are sliced from
# it. A paper harvested meanwhile appears within this many seconds.
SEARCH_CACHE_SECONDS = 600
CACHED_RESULTS = 240


def search_results(
    *, query: str, category: str | None, year: int | None, number: int, size: int
) -> dict:
    """One page of a paper search: ids in rank order, the total and the facets.

    The first :data:`CACHED_RESULTS` ranked ids, the total and the primary
    category counts of a (text, category, year) are cached for
    :data:`SEARCH_CACHE_SECONDS`; pages past them are ranked on demand.

    Args:
        query: the user's text (see :func:`paper_search`).
        category: the category filter, or None / "".
        year: the year filter, or None.
        number: 1-based page number (clamped to the pages there are).
        size: papers a page.

    Returns:
        ``{"ids": [paper id] (this page, best first), "count": total,
        "categories": [(primary category, papers)], "number": page shown}``.

    Raises:
        SearchQueryError: the query is out of bounds (see :func:`search_query_clean`).
    """
    text = search_query_clean(query)
    digest = hashlib.sha256(f"{text}\x1f{category or ''}\x1f{year or ''}".encode())
    key = f"search:{connection.vendor}:{digest.hexdigest()}"
    head = cache.get(key)
    if head is None:
        counts = paper_search_categories(query=text, year=year)
        ranked = paper_search(query=text, category=category, year=year)
        # Without a category filter the category counts add up to the matches:
        # no second scan to count them.
        count = sum(n for _, n in counts) if not category else ranked.count()
        head = {
            "count": count,
            "categories": counts,
            "ids": list(ranked.values_list("pk", flat=True)[:CACHED_RESULTS]),
        }
        cache.set(key, head, SEARCH_CACHE_SECONDS)
    pages = max(1, -(-head["count"] // size))
    number = min(max(1, number), pages)
    start = (number - 1) * size
    if start + size <= len(head["ids"]) or len(head["ids"]) >= head["count"]:
        ids = head["ids"][start : start + size]
    else:
        ranked = paper_search(query=text, category=category, year=year)
        ids = list(ranked.values_list("pk", flat=True)[start : start + size])
    return {
        "ids": ids,
        "count": head["count"],
        "categories": head["categories"],
        "number": number,
    }
