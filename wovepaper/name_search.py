"""Researchers and institutions found by name, ranked as a reader means a name.

A name search gathers candidates from the blocks the name reads as
(:func:`name_candidates`) and by name likeness
(:func:`wovepaper.search.researcher_search`: trigram word similarity on
PostgreSQL, every word contained on SQLite), then ranks them by how the name
matches before how active the researcher is:

0. **exact**: the text is the researcher's display name or a printed variant
   (folded: case, accents, punctuation and word order of "Family, Given" aside);
1. **compatible**: same family name and a compatible given name ("J. Wang" and
   "Jun Wang", "Bill" and "William": :func:`curation.names.given_names_compatible`);
2. **surname**: the text is a family name alone, or its family name matches and
   the given names do not;
3. **similar**: any other likeness (a typo, a name inside a longer one).

Within a tier, the most papers first, then the latest active, then by name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Case, F, Q, Value, When

from curation.names import (
    block_key,
    family_core,
    fold,
    given_names_compatible,
    parse_name,
)
from wovepaper.cache import researchers_version
from wovepaper.models import Institution, Researcher, ResearcherStats

EXACT, COMPATIBLE, SURNAME, SIMILAR = range(4)
TIER_WORDS = {
    EXACT: "this name",
    COMPATIBLE: "a compatible form",
    SURNAME: "the family name",
    SIMILAR: "a similar name",
}
# Candidates read per search before ranking: from the name's blocks (each of
# the two kinds), and by name likeness (a typo, a name inside a longer one).
CANDIDATES = 200
SIMILAR_CANDIDATES = 50
# How long a ranked name search is reused (seconds), under the researchers'
# cache version: a curation change shows at once.
RANKED_SECONDS = 300


def _printed(researcher: Researcher) -> list[str]:
    names = [researcher.display_name, *(researcher.name_variants or [])]
    return [n for n in names if isinstance(n, str) and n.strip()]


def _whole(name: str) -> str:
    """A name folded with its words sorted: "Wang, Jun" and "Jun Wang" alike."""
    return " ".join(sorted(fold(name).split()))


def name_tier(query: str, researcher: Researcher) -> int:
    """How a researcher's names match a searched name (see the module's tiers).

    Args:
        query: the searched text, as typed.
        researcher: a researcher with ``display_name`` and ``name_variants``.

    Returns:
        :data:`EXACT`, :data:`COMPATIBLE`, :data:`SURNAME` or :data:`SIMILAR`.
    """
    wanted = parse_name(query)
    whole = _whole(query)
    wanted_family = family_core(wanted.family)
    single_word = len(fold(query).split()) == 1
    best = SIMILAR
    for printed in _printed(researcher):
        if _whole(printed) == whole:
            return EXACT
        name = parse_name(printed)
        core = family_core(name.family)
        if single_word:
            words = fold(printed).split()
            if fold(query) == core or (words and fold(query) == words[-1]):
                best = min(best, SURNAME)
            continue
        if not core or core != wanted_family:
            continue
        if (
            wanted.given
            and name.given
            and given_names_compatible(wanted.given, name.given)
        ):
            best = min(best, COMPATIBLE)
        else:
            best = min(best, SURNAME)
    return best


@dataclass(frozen=True)
class Found:
    """One researcher found by name, with what tells namesakes apart."""

    researcher: Researcher
    tier: int
    stats: ResearcherStats | None

    @property
    def paper_count(self) -> int:
        """Visible papers (0 before the figures are computed)."""
        return self.stats.paper_count if self.stats else 0

    @property
    def matched_by(self) -> str:
        """The tier in words ("this name", "a compatible form", ...)."""
        return TIER_WORDS[self.tier]

    @property
    def other_variants(self) -> list[str]:
        """Up to 5 printed names besides the display name."""
        return [
            v
            for v in self.researcher.name_variants or []
            if v != self.researcher.display_name
        ][:5]


def rank(query: str, researchers: Iterable[Researcher]) -> list[Found]:
    """Rank researchers found by name: tier, then papers, latest year, name.

    Args:
        query: the searched text, as typed.
        researchers: candidates (any order).

    Returns:
        Every candidate as :class:`Found`, best first. One query (the figures).
    """
    listed = list(researchers)
    stats = ResearcherStats.objects.in_bulk([r.pk for r in listed])
    found = [Found(r, name_tier(query, r), stats.get(r.pk)) for r in listed]
    return sorted(
        found,
        key=lambda f: (
            f.tier,
            -f.paper_count,
            -((f.stats.last_year or 0) if f.stats else 0),
            f.researcher.display_name.casefold(),
            f.researcher.pk,
        ),
    )


def researchers_ranked(*, query: str) -> list[Found]:
    """Every researcher a name search finds (its blocks' and the most alike by
    name: :func:`name_candidates`, :func:`wovepaper.search.researcher_search`), ranked
    (:func:`rank`); cached :data:`RANKED_SECONDS` under the researchers' cache
    version.

    Raises:
        SearchQueryError: the query is out of bounds
            (:func:`wovepaper.search.search_query_clean`).
    """
    from wovepaper.search import researcher_search

    if not any(ch.isalnum() for ch in query):
        return []
    digest = hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()
    key = f"researchers-ranked:v{researchers_version()}:{digest}"
    found = cache.get(key)
    if found is None:
        candidates = {
            r.pk: r for r in researcher_search(query=query, limit=SIMILAR_CANDIDATES)
        }
        for r in name_candidates(query):
            candidates.setdefault(r.pk, r)
        found = rank(query, candidates.values())
        cache.set(key, found, RANKED_SECONDS)
    return found


def name_candidates(query: str, *, limit: int = CANDIDATES) -> list[Researcher]:
    """Live researchers in the blocks a searched name reads as: the block of
    its family name and first initial, then every block of its family name
    (:func:`curation.names.block_key`, an indexed column), most papers first.

    Name likeness alone misses them where many names hold the text: "Li"
    is inside thousands of names, and a substring match ranked by papers
    cut off every Li with one paper.

    Args:
        query: the searched text, as typed.
        limit: how many of each kind at most.

    Returns:
        At most ``2 * limit`` researchers, the first initial's block first;
        [] when the text reads as no family name. One query.
    """
    wanted = parse_name(query)
    core = family_core(wanted.family)
    if not core:
        return []
    exact = block_key(wanted.given, wanted.family) if wanted.given else ""
    blocks = Q(block_key=core) | Q(block_key__startswith=f"{core} ")
    first = Value(1)
    if exact:
        blocks |= Q(block_key=exact)
        first = Case(When(block_key=exact, then=Value(0)), default=Value(1))
    return list(
        Researcher.objects.live()
        .filter(blocks)
        .annotate(first=first)
        .order_by("first", F("stats__paper_count").desc(nulls_last=True), "id")[
            : 2 * limit
        ]
    )


def institutions_named(*, query: str, limit: int = 5) -> list[Institution]:
    """Institutions whose name or an alias holds every word of the text: the
    name itself first, then names starting with it, then the shortest; cached
    :data:`RANKED_SECONDS` (institutions change with a ROR harvest).

    Args:
        query: the searched text.
        limit: how many at most.

    Returns:
        Institutions, best first; [] for a text with no word of 2 letters or
        more. One query when not cached.
    """
    words = [w for w in query.replace('"', " ").split() if len(w) >= 2][:6]
    if not words:
        return []
    digest = hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()
    key = f"institutions-named:{limit}:{digest}"
    found = cache.get(key)
    if found is None:
        found = _institutions_named(words, limit)
        cache.set(key, found, RANKED_SECONDS)
    return found


def _institutions_named(words: list[str], limit: int) -> list[Institution]:
    found = Institution.objects.all()
    for word in words:
        found = found.filter(Q(name__icontains=word) | Q(aliases__icontains=word))
    text = " ".join(words).casefold()
    return sorted(
        found[: limit * 20],
        key=lambda i: (
            i.name.casefold() != text,
            not i.name.casefold().startswith(text),
            len(i.name),
            i.pk,
        ),
    )[:limit]
