"""Cache versions of researcher views: bumped when curation changes a researcher.

Cached renderings of a researcher (the API detail, later the public page) put
:func:`researcher_version` in their cache key; :func:`researchers_changed` bumps it
after a curation transaction commits, so nothing shows a profile as it was before a
merge, split, move or undo. Versions live in the configured cache (Redis in
production, local memory in development), so every web process sees the bump.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.core.cache import cache
from django.db import transaction

from wovepaper.failsafe_cache import CacheUnavailable

VERSION_KEY = "researcher-version:{pk}"
# Bumped with any researcher's: the version of views that list researchers found
# by name (the search page's researchers).
ANY_VERSION_KEY = "researcher-version:any"
# The version of every cached search (ranked heads, whole pages): bumped when a
# curator edits, hides or deletes a paper.
SEARCH_VERSION_KEY = "search-version"


def researcher_version(pk: int) -> int:
    """The current cache version of researcher ``pk`` (1 when never bumped)."""
    return cache.get_or_set(VERSION_KEY.format(pk=pk), 1, timeout=None)


def researchers_changed(pks: Iterable[int], *, listed: bool = True) -> None:
    """Invalidate every cached view of these researchers (bump their versions).

    Never raises for the cache: the versions a down Redis refused are bumped
    later by a worker (:func:`versions_bump` through the outbox), so a
    curation step that committed still answers success and no page stays
    stale once Redis is back.

    Args:
        pks: researcher ids touched by a committed curation change.
        listed: also drop every cached list of researchers found by name
            (:data:`ANY_VERSION_KEY`: the search page, whole browse pages,
            ranked name searches), so a curator's merge or rename shows there
            at once. Automation passes False: the profiles a matching run
            founds or fills after a harvest reach those lists when they
            expire (60 s for a page, 300 s for a ranked name search), as the
            papers a harvest brings reach cached searches. Bumped with every
            batch of a matching run, that version left every search page
            cold at once: in ``bench/soak.py`` (one Redis for the broker and
            the cache, as production has) p50 45 ms and search p50 42 ms,
            against 26 ms and 10 ms with automation passing False.
    """
    keys = [VERSION_KEY.format(pk=pk) for pk in set(pks)]
    if keys:
        _bump_or_queue([*keys, ANY_VERSION_KEY] if listed else keys)


def _bump_or_queue(keys: list[str]) -> None:
    """Bump these version keys; hand the ones the cache refused to the outbox."""
    try:
        versions_bump(keys)
    except CacheUnavailable:
        from wovepaper.outbox import outbox_send

        outbox_send(task="wovepaper.cache_versions_bump", kwargs={"keys": keys})


def versions_bump(keys: list[str]) -> None:
    """Bump each version key (set to 2 when absent: 1 is its unbumped value).

    Bumping twice is harmless (a cached rendering is made once more), so a
    redelivered bump may repeat the keys already bumped.

    Args:
        keys: cache keys of versions (:data:`VERSION_KEY`, ...).

    Raises:
        CacheUnavailable: the cache could not be reached
            (:class:`wovepaper.failsafe_cache.FailOpenRedisCache`).
    """
    for key in keys:
        cache.add(key, 1, timeout=None)
        try:
            cache.incr(key)
        except ValueError:  # evicted between add and incr, or add refused
            cache.set(key, 2, timeout=None)


def papers_changed(paper_ids: Iterable[int], *, listed: bool = True) -> None:
    """Invalidate the cached views of the researchers these papers are applied
    to, once the current transaction commits (at once outside one).

    For writes that change a paper itself (hidden, deleted, its date, fields or
    citations: a researcher page orders, filters and counts its papers from a
    cached summary). Reads the researchers now, so call it before a delete.

    Args:
        paper_ids: papers written by the caller.
        listed: drop the lists of researchers found by name too (a curator's
            edit); a harvest passes False (see :func:`researchers_changed`).
    """
    from wovepaper.models import Authorship

    ids = list(
        Authorship.objects.filter(
            paper_id__in=list(paper_ids), researcher__isnull=False
        )
        .values_list("researcher_id", flat=True)
        .distinct()
    )
    if ids:
        from wovepaper.stats import researcher_stats_queue

        transaction.on_commit(lambda: researchers_changed(ids, listed=listed))
        researcher_stats_queue(ids)


def researchers_version() -> int:
    """The cache version of every view that lists researchers found by name;
    any researcher's curation change bumps it (1 when never bumped)."""
    return cache.get_or_set(ANY_VERSION_KEY, 1, timeout=None)


def researcher_key(pk: int, view: str, *, version: int | None = None) -> str:
    """The cache key of one rendering (``view``) of researcher ``pk`` now.

    Args:
        version: the researcher's :func:`researcher_version` when the caller
            read it already (a page reads several keys); None reads it.
    """
    if version is None:
        version = researcher_version(pk)
    return f"researcher:{pk}:v{version}:{view}"


def searches_version() -> int:
    """The cache version of every cached search (1 when never bumped)."""
    return cache.get_or_set(SEARCH_VERSION_KEY, 1, timeout=None)


def searches_changed() -> None:
    """Invalidate every cached search once the current transaction commits (at
    once outside one): a curator's edit of a paper (its title, hiding it,
    deleting it) shows in searches at once. A harvest does not call it; the
    papers it brings appear when a cached search expires
    (:data:`wovepaper.search.SEARCH_CACHE_SECONDS`)."""
    transaction.on_commit(lambda: _bump_or_queue([SEARCH_VERSION_KEY]))
