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

A search reads at most :data:`SEARCH_SAMPLE` matching papers
(:func:`search_head`): exact below that, an estimated total and a title-first
ranked sample above it, so a broad word costs a bounded amount whatever the
corpus size.

On SQLite (the embedded demo) there is neither ``tsvector`` nor ``pg_trgm``:
papers are found through SQLite's FTS5 index of the same three fields
(:mod:`wovepaper.paper_fts`: stemmed, accent-folded, ranked by bm25), and
researchers when every word occurs in their name or a variant.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date

from django.contrib.postgres.lookups import TrigramWordSimilar
from django.contrib.postgres.search import (
    SearchQuery,
    SearchRank,
    SearchVectorField,
    TrigramWordSimilarity,
)
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.db import (
    DataError,
    InternalError,
    OperationalError,
    connection,
    transaction,
)
from django.db.models import (
    Count,
    F,
    FloatField,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast, Coalesce

from api.search import MAX_SEARCH_CHARS, MAX_SEARCH_TERMS
from wovepaper import paper_fts, search_sql
from wovepaper.cache import searches_version
from wovepaper.identifiers import ARXIV_CATEGORY
from wovepaper.models import Authorship, Paper, Researcher
from wovepaper.paper_fts import fts_query, fts_refresh
from wovepaper.selectors import (
    category_spelled,
    in_category,
    paper_by_identifier,
    paper_list,
    papers_in_category,
)
from wovepaper.semantic import (
    BAD_MODE,
    MIN_SIMILARITY,
    MODES,
    nearest,
    nearest_rows,
    query_vector,
    rank_fusion,
)

logger = logging.getLogger(__name__)

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


BAD_CATEGORY = "The category is not an arXiv category name (such as hep-th or cs.LG)."
BAD_YEAR = "The year must be a number from 1 to 9999."


class SearchQueryError(ValueError):
    """The search text is out of bounds; the message says which bound, for users."""


class SemanticUnavailable(SearchQueryError):
    """A search by meaning was asked and the embedding model cannot be loaded:
    the site's fault, not the text's (HTTP 503)."""


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
# Characters PostgreSQL's unaccent (wovepaper_fold) turns into "-" after this
# cleaning has run: dashes, the minus sign, the soft hyphen (Unicode general
# category Pd and U+2212, U+00AD). Folded here first, so their runs shrink too.
_DASHES = re.compile(r"[\u00ad\u2010-\u2015\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d]")


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
    text = _DASHES.sub("-", " ".join(words))
    # The run's first operator is the one meant: "-(quantum)" and "-!quantum"
    # exclude quantum; keeping the last one ("(", "!") would include it.
    # The whitespace that ended the run stays; none is added ("-(x" is "-x").
    # One Unicode form, as every stored text is (harvest.records.clean_text):
    # a decomposed "Bala\u0301zs" finds "Balázs".
    text = unicodedata.normalize("NFC", text)
    return _OPERATOR_RUN.sub(
        lambda m: m.group(0)[0] + (" " if m.group(0)[-1].isspace() else ""), text
    ).strip()


def search_filters(params: Mapping[str, str]) -> tuple[str, int | None, list[str]]:
    """The category and year filters of a search's query parameters, and what
    is wrong with them (the search page and the API read them alike).

    Args:
        params: the query parameters (``request.GET``).

    Returns:
        ``(category or "", year or None, error messages)``.
    """
    errors = []
    category = params.get("category", "").strip()
    if category and not ARXIV_CATEGORY.fullmatch(category):
        errors.append(BAD_CATEGORY)
        category = ""
    elif category:
        category = category_spelled(category)
    year_text = params.get("year", "").strip()
    year = None
    if year_text:
        if (
            len(year_text) <= 4
            and year_text.isascii()
            and year_text.isdigit()
            and 1 <= int(year_text) <= 9999
        ):
            year = int(year_text)
        else:
            errors.append(BAD_YEAR)
    return category, year, errors


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
        first among equals; on SQLite, annotated ``fts_rank`` (FTS5's bm25)
        and ordered by it, newest first among equals. Empty for a
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


def _paper_matches(
    *, query: str, category: str | None, year: int | None
) -> tuple[QuerySet[Paper], SearchQuery | None]:
    """The filtered matching papers (unordered) and the full-text query, if any.

    Returns:
        ``(papers, search)``: ``search`` is the PostgreSQL query to rank with, or
        None when there is none (blank text, or SQLite, whose papers come
        annotated with their FTS5 rank and ordered by it).
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


def only_common_words(query: str) -> bool:
    """Whether PostgreSQL ignores every word of the text ("the of", "a").

    The ``english`` configuration drops stop words; a text of nothing else
    matches no paper (PostgreSQL docs, 12.6.6 "Simple Dictionary" and
    ``numnode``). False on SQLite, whose FTS5 index keeps every word.

    Args:
        query: the user's text.

    Returns:
        True when the text is not blank and leaves no word to search for.

    Raises:
        SearchQueryError: the query is out of bounds (see :func:`search_query_clean`).
    """
    text = search_query_clean(query)
    if not text or connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT numnode(websearch_to_tsquery(%s::regconfig, wovepaper_fold(%s)))",
            [SEARCH_CONFIG, text],
        )
        return cursor.fetchone()[0] == 0


def paper_search_fallback(papers: QuerySet[Paper], *, text: str) -> QuerySet[Paper]:
    """The embedded SQLite setup's search: SQLite's FTS5 index of titles,
    byline names and abstracts (:mod:`wovepaper.paper_fts`), stemmed and
    accent-folded, in web-search syntax (words, "phrases", -exclusions, or).

    Args:
        papers: the papers to search in (already filtered).
        text: the cleaned search text (see :func:`search_query_clean`).

    Returns:
        The matching papers annotated ``fts_rank`` (-bm25, higher is better;
        title words weigh most, then names, then the abstract), best first,
        then newest; none when the text names no word to find.
    """
    query = fts_query(text)
    if not query:
        return papers.none()
    # Both statements are constants; the query is a bound parameter.
    rank = RawSQL(paper_fts.RANK_SQL, [query], output_field=FloatField())  # noqa: S611
    matching = RawSQL(paper_fts.MATCHING_SQL, [query])  # noqa: S611
    return (
        papers.filter(pk__in=matching)
        .annotate(fts_rank=rank)
        .order_by("-fts_rank", F("published").desc(nulls_last=True), "-id")
    )


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
    if connection.vendor == "postgresql":
        text = search_query_clean(query)
        return _researchers_by_name(text, limit) if text else []
    return list(researcher_matches(query=query)[:limit])


# researcher_matches' statement, written out: building and compiling that
# queryset (a subquery, two folded expressions, four orderings) cost more than
# PostgreSQL's answer (bench/pages.py, a never-seen search: 4.6 ms of Python to
# build, 3.7 ms to run). The name expression must stay the trigram index's
# (migration 0004, :func:`_researcher_names`); the order is researcher_matches'.
# The text is bound as a literal (Django's client-side binding), so the immutable
# wovepaper_fold of it is folded at planning and the index is used.
_RESEARCHERS_BY_NAME_SQL = """
SELECT r.id, r.display_name, r.name_variants, r.orcid, r.slug,
       coalesce((SELECT count(DISTINCT a.paper_id)
                 FROM wovepaper_authorship a
                 JOIN wovepaper_paper p ON p.id = a.paper_id
                 WHERE a.researcher_id = r.id AND NOT p.hidden), 0) AS paper_count,
       word_similarity(wovepaper_fold(%(text)s),
           wovepaper_fold((r.display_name || ' ' || (r.name_variants)::text)))
           AS name_similarity
FROM wovepaper_researcher r
WHERE r.merged_into_id IS NULL AND NOT r.retired
  AND wovepaper_fold((r.display_name || ' ' || (r.name_variants)::text))
      %%> wovepaper_fold(%(text)s)
ORDER BY name_similarity DESC, paper_count DESC, r.display_name, r.id
LIMIT %(limit)s
"""


def _researchers_by_name(text: str, limit: int) -> list[Researcher]:
    """The first ``limit`` of :func:`researcher_matches` for a cleaned, non-blank
    text, read by one plain statement (PostgreSQL).

    Returns:
        Researchers holding ``id``, ``display_name``, ``name_variants``,
        ``orcid`` and ``slug`` (other fields deferred: reading one costs a
        query), annotated with ``paper_count`` and ``name_similarity``.
    """
    found = []
    with connection.cursor() as cursor:
        cursor.execute(_RESEARCHERS_BY_NAME_SQL, {"text": text, "limit": limit})
        for pk, name, variants, orcid, slug, papers, similarity in cursor:
            # Django reads jsonb as text and decodes it in JSONField.from_db_value.
            variants = json.loads(variants) if isinstance(variants, str) else variants
            # from_db takes the values in the model's field order.
            r = Researcher.from_db(
                connection.alias,
                ["id", "display_name", "name_variants", "orcid", "slug"],
                [pk, name, variants, orcid, slug],
            )
            r.paper_count, r.name_similarity = papers, similarity
            found.append(r)
    return found


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
        The matches, most papers first, then by name; none when the text holds
        no word (letters or digits: punctuation alone matched every name's
        JSON text).
    """
    words = re.findall(r"\w+", text)
    if not words:
        return researchers.none()
    for word in words:
        # The variants are stored as JSON text, non-ASCII letters escaped.
        escaped = json.dumps(word)[1:-1]
        researchers = researchers.filter(
            Q(display_name__icontains=word) | Q(name_variants__icontains=escaped)
        )
    return researchers.order_by("-paper_count", "display_name", "id")


# A paper's search vector from its title, the byline's names as printed and its
# abstract (SQL expressions put in for {title}, {names}, {abstract}). Each part is
# cut to 100,000 characters first: a tsvector holds at most 1 MB (PostgreSQL docs,
# 8.11.1), and a hostile 1 MB abstract of distinct words would otherwise fail the
# harvest of its record; no real title, byline or abstract comes near the cut. The
# expression is repeated by migration 0005 (which fills the rows that existed
# before), as migrations do not import app code; the bulk harvest path
# (harvest.services.copy_rows) computes it as it inserts.
VECTOR_SQL = (
    "setweight(to_tsvector('english', wovepaper_fold(left({title}, 100000))), 'A')"
    " || setweight(to_tsvector('english', wovepaper_fold(left({names}, 100000))),"
    " 'B')"
    " || setweight(to_tsvector('english', wovepaper_fold(left({abstract}, 100000))),"
    " 'C')"
)

# One statement for a set of papers: the byline's names gathered per paper, then
# every vector rewritten (table and column names only are put in, no input).
_REFRESH_VECTOR = VECTOR_SQL.format(
    title="p.title", names="n.names", abstract="p.abstract"
)
_REFRESH_SQL = f"""
UPDATE wovepaper_paper AS p
SET search_vector = {_REFRESH_VECTOR}
FROM (
    SELECT q.id,
           coalesce(string_agg(a.raw_name, ' ' ORDER BY a.position), '') AS names
    FROM wovepaper_paper AS q
    LEFT JOIN wovepaper_authorship AS a ON a.paper_id = q.id
    WHERE q.id = ANY(%s)
    GROUP BY q.id
) AS n
WHERE p.id = n.id
"""  # noqa: S608


def search_vectors_refresh(*, paper_ids: Iterable[int]) -> int:
    """Rewrite the stored search vectors of some papers from their text and byline.

    Call it after a paper's title, abstract or authorships' names were written
    (the harvest upsert does); it is idempotent. On SQLite it rewrites the
    papers' FTS5 rows instead (:func:`wovepaper.paper_fts.fts_refresh`).

    Args:
        paper_ids: ids of the papers touched (any order, repeats allowed; unknown
            ids are ignored).

    Returns:
        How many papers were rewritten.
    """
    ids = sorted({int(pk) for pk in paper_ids})
    if not ids:
        return 0
    if connection.vendor == "sqlite":
        return fts_refresh(ids)
    if connection.vendor != "postgresql":
        return 0
    with connection.cursor() as cursor:
        cursor.execute(_REFRESH_SQL, [ids])
        return cursor.rowcount


# How long the ranked head of a search is reused (seconds). Readers repeat
# queries and page through them, so the head is computed once and pages are
# sliced from it. A paper harvested meanwhile appears within this many seconds.
SEARCH_CACHE_SECONDS = 600

# The most matching papers one search reads, its sample. Reading a match costs
# about 2.5 us (a paper row is about 3 KB: the abstract and the stored vector),
# so a broad word matching 50,000 of 100,000 papers ("model") took 100-300 ms to
# count, facet and rank exactly, which no worker can afford at 100 req/s on two
# cores; any exact method reads every match (bench/search.py). Up to this many
# matches a search is exact; past it, the total is PostgreSQL's estimate and the
# listed papers are a ranked sample (see :func:`search_head`). With 2,000 the
# distinct-query load of bench/pages.py at 30 req/s gave p99 303 ms, with 1,000
# 120 ms (the same run's baseline 6-8 ms); below 1,000 too many ordinary
# two-word searches would lose their exact count. Bounded totals
# follow Elasticsearch's ``track_total_hits`` (exact up to 10,000, then a lower
# bound; Elasticsearch reference, "Search your data", track total hits).
SEARCH_SAMPLE = 1000
# A broad search counts its matches exactly up to this many; past that it shows
# PostgreSQL's estimate ("about"), or "more than" this when the estimate is
# lower. Counting reads each match: on the 100,000-paper bench database
# (bench/pages.py) counting up to 10,000, Elasticsearch's default
# track_total_hits, took 45-56 ms, half a broad search and the slowest
# searches' whole lead; up to 2,000 about 10 ms.
COUNT_CAP = 2_000

# Longest one statement of a search may run (milliseconds, PostgreSQL's
# statement_timeout); past it the search is refused with :data:`SEARCH_TOO_SLOW`
# rather than hold a worker.
SEARCH_TIMEOUT_MS = 3000
SEARCH_TOO_SLOW = (
    "This search took too long. Add words, a category or a year to narrow it."
)
SEMANTIC_UNAVAILABLE = (
    "Search by meaning is not available on this site now; search by keyword."
)
SEARCH_UNREADABLE = (
    "This search text could not be read. Use words, quotes for phrases, or and -word."
)


class TitleVector(Func):
    """The title's own search vector, as the index of migration 0006 has it.

    ``to_tsvector('english', wovepaper_fold(left(title, 100000)))``: PostgreSQL
    uses an expression index only for the same expression.
    """

    template = (
        "to_tsvector('english'::regconfig, wovepaper_fold(left(%(expressions)s, "
        "100000)))"
    )
    output_field = SearchVectorField()


@dataclass(frozen=True)
class _Match:
    """One matching paper as the search head reads it (no text, no byline)."""

    pk: int
    primary_category: str
    categories: list | None
    published: date | None
    rank: float


def _matches(
    papers: QuerySet[Paper],
    search: SearchQuery | None,
    *,
    limit: int,
    with_categories: bool = False,
) -> list[_Match]:
    """At most ``limit`` matches in storage order (PostgreSQL) or newest first.

    Unordered on PostgreSQL so the scan stops after ``limit`` rows. The category
    lists are read only when asked (``with_categories``): decoding 1,000 JSON
    lists was a fifth of a broad search's time.
    """
    if search is None and "fts_rank" in papers.query.annotations:
        rank = F("fts_rank")  # SQLite: FTS5's bm25 (paper_search_fallback)
    elif search is None:
        rank = Value(0.0, output_field=FloatField())
    else:
        papers = papers.order_by()
        rank = SearchRank(F("search_vector"), search)
    if with_categories:
        rows = papers.annotate(match_rank=rank).values_list(
            "pk", "primary_category", "categories", "published", "match_rank"
        )
        return [_Match(*row) for row in rows[:limit]]
    rows = papers.annotate(match_rank=rank).values_list(
        "pk", "primary_category", "published", "match_rank"
    )
    return [_Match(pk, primary, None, day, r) for pk, primary, day, r in rows[:limit]]


def _ranked(matches: Iterable[_Match]) -> list[int]:
    """Paper ids best first: rank, then newest (undated last), then newest id.

    The order of :func:`paper_search`, applied in Python to a read sample.
    """
    return [
        m.pk
        for m in sorted(
            matches,
            key=lambda m: (
                -m.rank,
                m.published is None,
                -(m.published.toordinal() if m.published else 0),
                -m.pk,
            ),
        )
    ]


def _estimate(papers: QuerySet[Paper]) -> int:
    """PostgreSQL's estimate of how many rows ``papers`` holds (planner rows)."""
    plan = json.loads(papers.order_by().values("pk").explain(format="json"))
    return int(plan[0]["Plan"]["Plan Rows"])


def _two_figures(n: int) -> int:
    """``n`` rounded to two significant figures (49,579 -> 50,000), for "about"."""
    return int(round(n, 2 - len(str(n)))) if n >= 100 else n


def search_head(*, query: str, category: str | None, year: int | None) -> dict:
    """The whole ranked answer of a paper search, bounded by :data:`SEARCH_SAMPLE`.

    At most :data:`SEARCH_SAMPLE` + 1 matches are read per query:

    - **Exact** (at most :data:`SEARCH_SAMPLE` matches, most searches of two
      words or more): every match ranked as :func:`paper_search` ranks them, the
      exact total and the primary categories with counts. One query.
    - **Broad** (more matches, a common word): the listed papers are the papers
      whose *title* matches (up to :data:`SEARCH_SAMPLE`, read through the title
      index of migration 0006, ranked), then other matches of the sample,
      ranked; the categories are those of the sample, commonest first, without
      counts. The total: the matches counted up to :data:`COUNT_CAP` (exact);
      past it, PostgreSQL's estimate to two significant figures ("about") when
      that is above the cap, else "more than" :data:`COUNT_CAP`. The
      planner's estimate of a common word is within about 10%, but of a word
      pair or a middling word it can be a quarter of the truth (bench corpus:
      "dark matter" 4,375 matches, estimated 1,000) or three times it, so it
      is never shown for a total the count could give.

    On PostgreSQL one statement computes it (:mod:`wovepaper.search_sql`); the
    ORM path (:func:`_search_head`) gives the same head and serves SQLite (the
    demo), where a broad search counts exactly and lists the best ranked
    :data:`SEARCH_SAMPLE` by FTS5's bm25.

    Args:
        query: the cleaned search text (:func:`search_query_clean`), not blank.
        category: keep papers carrying this category (as
            :func:`wovepaper.selectors.in_category`); None or "" for all.
        year: keep papers first published this year; None for all.

    Returns:
        ``{"ids": [paper id, best first] (at most SEARCH_SAMPLE), "count": papers
        found, "count_is": "exact" | "about" | "more", "categories": [(primary
        category, papers or None)]}``; the categories are counted over every
        match whatever the category filter, so the filter can be switched. The
        ids hold every match when ``count_is`` is "exact" and ``count`` equals
        their number.

    Raises:
        SearchQueryError: a query ran past :data:`SEARCH_TIMEOUT_MS`.
    """
    try:
        with transaction.atomic(), _statement_timeout(SEARCH_TIMEOUT_MS):
            if connection.vendor == "postgresql":
                head = search_sql.search_head(
                    search_query_clean(query),
                    category=category,
                    year=year,
                    sample=SEARCH_SAMPLE,
                    cap=COUNT_CAP,
                )
                if head["count_is"] == "about":
                    head["count"] = _two_figures(head["count"])
                return head
            everything, search = _paper_matches(query=query, category=None, year=year)
            return _search_head(everything, search, category=category, year=year)
    except OperationalError as exc:  # psycopg's QueryCanceled is one
        logger.warning(
            "search over its time budget",
            extra={"query": query[:200], "error": type(exc).__name__},
        )
        raise SearchQueryError(SEARCH_TOO_SLOW) from exc
    except (InternalError, DataError) as exc:  # "tsquery stack too small" and kin
        logger.warning(
            "search text PostgreSQL cannot read",
            extra={"query": query[:200], "error": str(exc)[:200]},
        )
        raise SearchQueryError(SEARCH_UNREADABLE) from exc


def _search_head(
    everything: QuerySet[Paper],
    search: SearchQuery | None,
    *,
    category: str | None,
    year: int | None,
) -> dict:
    """:func:`search_head` through the ORM, inside its transaction: SQLite's
    path, and on PostgreSQL what the statement of :mod:`wovepaper.search_sql`
    is tested against. One query for an exact search, three to five for a
    broad one."""
    sample = _matches(
        everything, search, limit=SEARCH_SAMPLE + 1, with_categories=bool(category)
    )
    broad = len(sample) > SEARCH_SAMPLE
    primaries = Counter(m.primary_category for m in sample)
    categories = sorted(primaries.items(), key=lambda item: (-item[1], item[0]))
    if broad:
        categories = [(name, None) for name, _ in categories]
    chosen, chosen_matches = everything, sample
    if category:
        chosen = everything.filter(in_category(category))
        chosen_matches = (
            _matches(chosen, search, limit=SEARCH_SAMPLE + 1)
            if broad
            else [m for m in sample if category in m.categories]
        )
    if len(chosen_matches) <= SEARCH_SAMPLE:
        return {
            "ids": _ranked(chosen_matches),
            "count": len(chosen_matches),
            "count_is": "exact",
            "categories": categories,
        }
    if search is None:
        return {
            "ids": [m.pk for m in chosen_matches[:SEARCH_SAMPLE]],
            "count": chosen.count(),
            "count_is": "exact",
            "categories": categories,
        }
    titled = _matches(
        chosen.alias(title_vector=TitleVector(F("title"))).filter(title_vector=search),
        search,
        limit=SEARCH_SAMPLE,
    )
    listed = _ranked(titled)
    seen = set(listed)
    listed += [pk for pk in _ranked(chosen_matches) if pk not in seen]
    count = chosen.order_by().values("pk")[: COUNT_CAP + 1].count()
    if count <= COUNT_CAP:
        count_is = "exact"
    else:
        estimate = _estimate(chosen)
        count, count_is = (
            (_two_figures(estimate), "about")
            if estimate > COUNT_CAP
            else (COUNT_CAP, "more")
        )
    return {
        "ids": listed[:SEARCH_SAMPLE],
        "count": count,
        "count_is": count_is,
        "categories": categories,
    }


@contextmanager
def _statement_timeout(milliseconds: int) -> Iterator[None]:
    """Cap each statement of the current transaction (PostgreSQL; else nothing).

    ``SET LOCAL`` lasts until the transaction ends: :func:`search_head` opens
    one of its own for it (inside a test's transaction, a savepoint: the cap
    then lasts for the rest of that test).
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL statement_timeout = %s", [int(milliseconds)])
    yield


def search_results(
    *,
    query: str,
    category: str | None,
    year: int | None,
    number: int,
    size: int,
    version: int | None = None,
    mode: str = "keyword",
) -> dict:
    """One page of a paper search: ids in rank order, the total and the facets.

    The head (:func:`search_head`, :func:`semantic_head` or :func:`hybrid_head`,
    by ``mode``) of a (mode, text, category, year) is cached for
    :data:`SEARCH_CACHE_SECONDS` under the searches' cache version (a
    curator's paper edit bumps it: :func:`wovepaper.cache.searches_changed`);
    every page is sliced from it.

    Args:
        query: the user's text (see :func:`paper_search`).
        category: the category filter, or None / "".
        year: the year filter, or None.
        number: 1-based page number (clamped to the pages listed).
        size: papers a page.
        version: the searches' cache version when the caller read it already
            (:func:`wovepaper.cache.searches_version`); None reads it.
        mode: "keyword" (full text), "semantic" (nearest embeddings) or
            "hybrid" (both, fused); :data:`wovepaper.semantic.MODES`.

    Returns:
        ``{"ids": [paper id] (this page, best first), "count": papers found,
        "count_is": "exact", "about" (PostgreSQL's estimate), "more" (more
        than ``count``) or "nearest" (a semantic search lists the nearest
        ``count`` papers), "listed": how many papers the pages list (at most
        :data:`SEARCH_SAMPLE`), "categories": [(primary category, papers or
        None)], "number": page shown, "mode": the mode that answered}``. When
        the embedding model cannot be loaded, a hybrid search answers by
        keyword alone (``mode`` says so, and a warning is logged). A hybrid
        answer adds ``by_words``, the keyword matches among ``count`` (else
        None).

    Raises:
        SearchQueryError: the query is out of bounds (see
            :func:`search_query_clean`), took longer than
            :data:`SEARCH_TIMEOUT_MS`, or ``mode`` is unknown.
    """
    if mode not in MODES:
        raise SearchQueryError(BAD_MODE)
    text = search_query_clean(query)
    # Text search folds case, so "Model" and "model" share one entry; the
    # database is named so two sites on one Redis never answer for each other.
    scope = f"{connection.settings_dict['NAME']}\x1f{text.lower()}"
    digest = hashlib.sha256(
        f"{scope}\x1f{category or ''}\x1f{year or ''}\x1f{mode}".encode()
    )
    if version is None:
        version = searches_version()
    key = f"search:v4:{connection.vendor}:{version}:{digest.hexdigest()}"
    head = cache.get(key)
    if head is None:
        if not text:
            head = {"ids": [], "count": 0, "count_is": "exact", "categories": []}
        elif mode == "keyword":
            head = search_head(query=text, category=category, year=year)
        else:
            head = _head_by_meaning(text, category=category, year=year, mode=mode)
        head.setdefault("mode", mode)
        cache.set(key, head, SEARCH_CACHE_SECONDS)
    listed = len(head["ids"])
    pages = max(1, -(-listed // size))
    number = min(max(1, number), pages)
    start = (number - 1) * size
    return {
        "ids": head["ids"][start : start + size],
        "count": head["count"],
        "count_is": head["count_is"],
        "listed": listed,
        "categories": head["categories"],
        "number": number,
        "mode": head["mode"],
        "by_words": head.get("by_words"),
    }


def _head_by_meaning(text: str, *, category: str | None, year: int | None, mode: str):
    """:func:`semantic_head` or :func:`hybrid_head`; a hybrid search whose model
    cannot be loaded answers by keyword (logged), a semantic one is refused."""
    try:
        if mode == "semantic":
            return semantic_head(query=text, category=category, year=year)
        return hybrid_head(query=text, category=category, year=year)
    except ImproperlyConfigured as exc:
        logger.warning("semantic search unavailable", extra={"error": str(exc)})
        if mode == "semantic":
            raise SemanticUnavailable(SEMANTIC_UNAVAILABLE) from exc
        return {
            **search_head(query=text, category=category, year=year),
            "mode": "keyword",
        }


# A web-search exclusion ("-graphene", "-\"phase transition\""), as the keyword
# search reads it; the text embedded for meaning leaves these out.
_EXCLUDED = re.compile(r'(?:^|\s)-\s*(?:"([^"]+)"|([^\s"]+))')
# Web-search syntax that is no part of a text's meaning: quotes and a lone "or".
_SYNTAX = re.compile(r'"|(?<!\S)or(?!\S)', re.IGNORECASE)


def meaning_of(query: str) -> tuple[str, list[str]]:
    """The text a search by meaning embeds, and the words it must leave out.

    ``"spin -graphene"`` is ``("spin", ["graphene"])``: an excluded word is
    excluded from every mode, and embedding "-graphene" would find graphene.

    Args:
        query: the cleaned search text.

    Returns:
        ``(text without exclusions and web-search syntax, excluded words and
        phrases in order)``.
    """
    excluded = [a or b for a, b in _EXCLUDED.findall(query)]
    text = _EXCLUDED.sub(" ", query)
    return " ".join(_SYNTAX.sub(" ", text).split()), [e for e in excluded if e]


def _matching_words(ids: Iterable[int], query: str) -> set[int]:
    """Which of some papers the keyword search finds for ``query`` (any
    category or year): one query, whatever the number of matches."""
    ids = list(ids)
    if not ids:
        return set()
    papers, _ = _paper_matches(query=query, category=None, year=None)
    return set(papers.filter(pk__in=ids).values_list("pk", flat=True))


def _excluded_papers(ids: Iterable[int], words: list[str]) -> set[int]:
    """Which of some papers hold an excluded word or phrase (as the keyword
    search would find it)."""
    ids = list(ids)
    if not ids or not words:
        return set()
    out: set[int] = set()
    for word in words:
        quoted = f'"{word}"' if " " in word else word
        out |= _matching_words(ids, quoted)
    return out


def _semantic(
    text: str, *, category: str | None, year: int | None
) -> tuple[list[int], dict[int, str]]:
    """The nearest papers to a text (filtered), at least
    :data:`wovepaper.semantic.MIN_SIMILARITY` similar and holding no excluded
    word, and the primary category of each of the nearest papers unfiltered by
    category (for the facets)."""
    meaning, excluded = meaning_of(text)
    if not meaning:
        return [], {}
    vector = query_vector(meaning)
    rows = nearest_rows(vector=vector, year=year, floor=MIN_SIMILARITY)
    everything = [pk for pk, _, _ in rows]
    chosen = (
        [
            pk
            for pk, _ in nearest(
                vector=vector, category=category, year=year, floor=MIN_SIMILARITY
            )
        ]
        if category
        else everything
    )
    dropped = _excluded_papers(set(everything) | set(chosen), excluded)
    return (
        [pk for pk in chosen if pk not in dropped],
        {pk: primary for pk, _, primary in rows if pk not in dropped},
    )


def _every_match(head: dict, *, category: str | None, year: int | None) -> bool:
    """Whether a keyword head (:func:`search_head`) lists every paper the
    words match, in any category and year: unfiltered, and exact with every
    match among its ids. Then which of some papers the words match is read
    from it, not asked of the database again (:func:`_matching_words`: 2 to
    3 ms of a hybrid search's 38 on bench/pages.py's corpus)."""
    return (
        not category
        and year is None
        and head["count_is"] == "exact"
        and head["count"] == len(head["ids"])
    )


def _facets(primaries: Iterable[str]) -> list[tuple[str, int]]:
    counts = Counter(primaries)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def semantic_head(*, query: str, category: str | None, year: int | None) -> dict:
    """The ranked answer of a search by meaning: the nearest papers to the text.

    Args:
        query: the cleaned search text, not blank.
        category: keep papers carrying this category; None or "" for all.
        year: keep papers first published this year; None for all.

    Returns:
        As :func:`search_head`: at most :data:`wovepaper.semantic.SEMANTIC_LIMIT`
        ids nearest first, ``count`` their number, ``count_is`` "nearest", and
        the primary categories of the nearest papers (any category) with counts.

    Raises:
        ImproperlyConfigured: the embedding model is missing.
    """
    chosen, primaries = _semantic(query, category=category, year=year)
    return {
        "ids": chosen,
        "count": len(chosen),
        "count_is": "nearest",
        "categories": _facets(primaries.values()),
    }


def hybrid_head(*, query: str, category: str | None, year: int | None) -> dict:
    """Keyword and semantic rankings fused by reciprocal rank fusion.

    The keyword head (:func:`search_head`, up to :data:`SEARCH_SAMPLE`) and the
    nearest papers (:func:`semantic_head`) are fused with
    :func:`wovepaper.semantic.rank_fusion`: a paper both rank high comes first,
    and a paper only one of them finds still appears (a paraphrase, a synonym,
    a misspelling keyword search misses).

    Returns:
        As :func:`search_head`. ``count`` is the keyword matches plus the
        nearest papers the words do not match (checked against every match,
        not the head alone); ``count_is`` is the keyword head's ("about" and
        "more" stay so); ``by_words`` is the keyword count alone. Category
        counts add those papers' primaries to the keyword counts when these
        are exact, whatever the category filter.

    Raises:
        SearchQueryError: as :func:`search_head`.
        ImproperlyConfigured: the embedding model is missing.
    """
    words = search_head(query=query, category=category, year=year)
    chosen, primaries = _semantic(query, category=category, year=year)
    nearest = set(chosen) | set(primaries)
    if _every_match(words, category=category, year=year):
        by_words = nearest & set(words["ids"])
    else:
        by_words = _matching_words(nearest, query)
    extra_chosen = [pk for pk in chosen if pk not in by_words]
    extra_any = [pk for pk in primaries if pk not in by_words]
    ids = rank_fusion([words["ids"], chosen])[:SEARCH_SAMPLE]
    exact = all(n is not None for _, n in words["categories"])
    counts = Counter({name: n for name, n in words["categories"] if n is not None})
    known = {name for name, _ in words["categories"]}
    if exact:
        counts.update(primaries[pk] for pk in extra_any)
        categories = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    else:
        categories = list(words["categories"]) + [
            (name, None) for name, _ in _facets(primaries.values()) if name not in known
        ]
    return {
        "ids": ids,
        "count": words["count"] + len(extra_chosen),
        "count_is": words["count_is"],
        "categories": categories,
        "by_words": words["count"],
    }
