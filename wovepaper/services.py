"""Writes of the core app: following researchers and categories."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from wovepaper.models import CategoryFollow, Follow, Researcher
from wovepaper.selectors import follows_leading, researcher_survivor


def follow_create(*, user: AbstractBaseUser, researcher: Researcher) -> Follow:
    """Follow a researcher; a merged-away one is followed through its survivor.

    Idempotent: following twice returns the existing Follow.

    Args:
        user: the signed-in user.
        researcher: any researcher (a merged-away id resolves to the survivor).

    Returns:
        The Follow of the live researcher.

    Raises:
        ValueError: the researcher (or where its merges lead) is retired, or
            the merge chain names no live survivor.
    """
    if researcher.retired:
        raise ValueError(f"researcher {researcher.pk} was retired")
    survivor = researcher_survivor(researcher.pk)
    target_id = survivor or researcher.pk
    if not Researcher.objects.live().filter(pk=target_id).exists():
        raise ValueError(f"researcher {researcher.pk} is not a live profile")
    # Already followed through a profile merged away since: that follow
    # counts (a second one would outlive an unfollow of this page).
    through = [pk for pk, to in follows_leading(user).items() if to == target_id]
    if through and target_id not in through:
        return Follow.objects.get(user=user, researcher_id=through[0])
    try:
        with transaction.atomic():
            follow, _ = Follow.objects.get_or_create(user=user, researcher_id=target_id)
    except IntegrityError:  # a concurrent identical request won
        follow = Follow.objects.get(user=user, researcher_id=target_id)
    return follow


def follow_delete(*, user: AbstractBaseUser, researcher: Researcher) -> int:
    """Stop following a researcher: the follow of it, of its survivor if it
    was merged away, and of every profile merged away since that leads to
    either (:func:`wovepaper.selectors.follows_leading`), so the page's
    *Unfollow* ends the papers in the feed and the digest.

    Returns:
        Rows deleted (0, 1, or more for follows through merges).
    """
    ends = {researcher.pk}
    survivor = researcher_survivor(researcher.pk)
    if survivor:
        ends.add(survivor)
    ids = [pk for pk, to in follows_leading(user).items() if to in ends or pk in ends]
    deleted, _ = Follow.objects.filter(user=user, researcher_id__in=ids).delete()
    return deleted


def category_follow_create(*, user: AbstractBaseUser, category: str) -> CategoryFollow:
    """Follow an arXiv category (``hep-th``, ``cs.LG``); idempotent.

    Args:
        user: the signed-in user.
        category: a category some visible paper carries, in any letter case
            (stored as the papers spell it, so ``cs.se`` and ``cs.SE`` are one
            follow).

    Returns:
        The CategoryFollow (the existing one when already followed).

    Raises:
        ValueError: no visible paper carries ``category`` (the message names it).
    """
    from wovepaper.selectors import category_canonical

    name = category_canonical(category)
    if name is None:
        raise ValueError(f"no paper here is in the category {category!r}")
    category = name
    try:
        with transaction.atomic():
            follow, _ = CategoryFollow.objects.get_or_create(
                user=user, category=category
            )
    except IntegrityError:  # a concurrent identical request won
        follow = CategoryFollow.objects.get(user=user, category=category)
    return follow


def category_follow_delete(*, user: AbstractBaseUser, category: str) -> int:
    """Stop following a category. Returns rows deleted (0 or 1)."""
    deleted, _ = CategoryFollow.objects.filter(user=user, category=category).delete()
    return deleted
