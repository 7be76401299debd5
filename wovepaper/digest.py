"""The daily digest: one e-mail per user with the new papers of what they follow.

"New" means harvested that UTC day: a paper counts for the day its row was
created (``Paper.created``), if it is visible now. The publication date would
not do: arXiv announces a paper a day or more after its submission date, and a
harvest catches up on older papers, so a paper published on a day can reach us
days later and a digest by publication date would never mention it. By
``created`` every paper reaches a follower exactly once, on the day it became
visible here.

Delivery is at most once. The (user, day) :class:`DigestDelivery` row is
committed before the e-mail is sent, so a redelivered or concurrent task finds
the row and sends nothing. A worker killed between the commit and the send
loses that user's digest for the day (missing one digest is better than
sending it twice); a send the mail server refuses removes the row again, so a
later run of the task retries that user.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import transaction
from django.db.models import F
from django.utils.html import format_html, format_html_join

from wovepaper.accounts import emailable
from wovepaper.models import (
    Authorship,
    CategoryFollow,
    DigestDelivery,
    Follow,
    Paper,
    Researcher,
)
from wovepaper.selectors import researcher_survivors
from wovepaper.text import latex_to_text

logger = logging.getLogger(__name__)

# Papers listed in one e-mail; the rest are counted and wait on the Following page.
DIGEST_MAX_PAPERS = 100
# Names printed per paper before "et al.".
DIGEST_AUTHOR_NAMES = 10


@dataclass
class _Fresh:
    """The papers new on the day, with what ties a follower to each.

    ``papers`` is newest first (undated last); ``byline`` maps a paper id to its
    printed names in byline order; ``by_researcher`` maps a researcher id to
    the ids of its new papers (applied authorships only); ``by_category`` maps
    an arXiv category to the ids of its new papers.
    """

    papers: list[Paper]
    byline: dict[int, list[str]] = field(default_factory=dict)
    by_researcher: dict[int, set[int]] = field(default_factory=dict)
    by_category: dict[str, set[int]] = field(default_factory=dict)


def _fresh_papers(day: dt.date) -> _Fresh:
    """The visible papers created (harvested) on ``day`` (UTC), in two queries."""
    start = dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)
    fresh = Paper.objects.filter(
        hidden=False, created__gte=start, created__lt=start + dt.timedelta(days=1)
    )
    found = _Fresh(
        papers=list(
            fresh.only(
                "id", "arxiv_id", "slug", "title", "published", "categories"
            ).order_by(F("published").desc(nulls_last=True), "-id")
        )
    )
    if not found.papers:
        return found
    byline: dict[int, list[str]] = defaultdict(list)
    by_researcher: dict[int, set[int]] = defaultdict(set)
    rows = (
        Authorship.objects.filter(paper__in=fresh)
        .order_by("paper_id", "position")
        .values_list("paper_id", "raw_name", "researcher_id")
    )
    for paper_id, raw_name, researcher_id in rows:
        byline[paper_id].append(raw_name)
        if researcher_id is not None:  # the applied, curated assignment
            by_researcher[researcher_id].add(paper_id)
    by_category: dict[str, set[int]] = defaultdict(set)
    for paper in found.papers:
        for category in paper.category_list:
            by_category[category].add(paper.pk)
    found.byline, found.by_researcher = dict(byline), dict(by_researcher)
    found.by_category = dict(by_category)
    return found


# Why a paper reaches a user: a followed researcher's id, or a followed category.
Reason = int | str


def _wanted(fresh: _Fresh) -> dict[int, dict[int, list[Reason]]]:
    """Which new papers each follower gets, and why.

    A follow of a researcher merged away since counts for its survivor
    (:func:`wovepaper.selectors.researcher_survivors`).

    Returns:
        ``{user id: {paper id: [researcher id or category, ...]}}``, each reason
        once, researchers before categories.
    """
    wanted: dict[int, dict[int, list[Reason]]] = defaultdict(lambda: defaultdict(list))
    follows = list(
        Follow.objects.filter(researcher_id__in=list(fresh.by_researcher)).values_list(
            "user_id", "researcher_id"
        )
    )
    moved = list(
        Follow.objects.filter(researcher__merged_into__isnull=False).values_list(
            "user_id", "researcher_id"
        )
    )
    survivors = researcher_survivors(pk for _, pk in moved)
    follows += [(user, survivors[pk]) for user, pk in moved if pk in survivors]
    for user_id, researcher_id in follows:
        for paper_id in fresh.by_researcher.get(researcher_id, ()):
            reasons = wanted[user_id][paper_id]
            if researcher_id not in reasons:
                reasons.append(researcher_id)
    category_follows = CategoryFollow.objects.filter(
        category__in=list(fresh.by_category)
    ).values_list("user_id", "category")
    for user_id, category in category_follows:
        for paper_id in fresh.by_category[category]:
            wanted[user_id][paper_id].append(category)
    return wanted


def _one_line(text: str) -> str:
    """Source text on one line, its LaTeX markup as Unicode text (as on the pages)."""
    return " ".join(latex_to_text(text).split())


def _authors(names: list[str]) -> str:
    shown = ", ".join(names[:DIGEST_AUTHOR_NAMES])
    return f"{shown} et al." if len(names) > DIGEST_AUTHOR_NAMES else shown


def _message(
    *,
    email: str,
    day: dt.date,
    papers: list[tuple[Paper, list[str]]],
    total: int,
    byline: dict[int, list[str]],
) -> EmailMultiAlternatives:
    """One digest e-mail: plain text, and HTML with every source string escaped.

    Args:
        email: the recipient's address.
        day: the UTC day covered.
        papers: ``[(paper, [why, ...])]`` newest first, at most
            :data:`DIGEST_MAX_PAPERS`; a why is a researcher's name or a category.
        total: how many papers are new for this user (``>= len(papers)``).
        byline: printed names per paper id.

    Returns:
        The message, not sent.
    """
    site = settings.SITE_URL.rstrip("/")
    following = f"{site}/following/"
    subject = (
        f"wovepaper: {total} new paper{'s' if total != 1 else ''} "
        f"for you on {day.isoformat()}"
    )
    lines = [f"New on wovepaper on {day.isoformat()} (UTC), from what you follow:", ""]
    for number, (paper, why) in enumerate(papers, start=1):
        lines += [
            f"{number}. {_one_line(paper.title)}",
            f"   {_authors(byline.get(paper.pk, []))}",
            f"   {site}{paper.get_absolute_url()}",
            f"   Because you follow: {'; '.join(why)}",
            "",
        ]
    if total > len(papers):
        lines += [f"... and {total - len(papers)} more: {following}", ""]
    lines += ["--", f"Manage what you follow: {following}"]
    items = format_html_join(
        "\n",
        '<li><a href="{}">{}</a><br>{}<br><small>Because you follow: {}</small></li>',
        (
            (
                f"{site}{paper.get_absolute_url()}",
                _one_line(paper.title),
                _authors(byline.get(paper.pk, [])),
                "; ".join(why),
            )
            for paper, why in papers
        ),
    )
    more = (
        format_html(
            '<p>… and {} more on <a href="{}">your Following page</a>.</p>',
            total - len(papers),
            following,
        )
        if total > len(papers)
        else ""
    )
    html = format_html(
        "<p>New on wovepaper on {} (UTC), from what you follow:</p>\n<ol>\n{}\n</ol>"
        '{}\n<p><a href="{}">Manage what you follow</a></p>',
        day.isoformat(),
        items,
        more,
        following,
    )
    message = EmailMultiAlternatives(
        subject, "\n".join(lines), settings.DEFAULT_FROM_EMAIL, [email]
    )
    message.attach_alternative(html, "text/html")
    return message


def digest_send(*, day: dt.date) -> dict[str, int]:
    """Send each follower one e-mail with the papers new on ``day`` (UTC).

    A user gets the visible papers harvested that day (see the module docstring)
    that carry an applied authorship of a researcher they follow (through merges)
    or a category they follow. Users with nothing new get no e-mail and no row;
    inactive users are left out; users without an e-mail address, or whose
    address is not confirmed (:func:`wovepaper.accounts.emailable`), are
    skipped and counted. A :class:`DigestDelivery` row is committed before each send, so
    running this twice for a day sends nothing twice (at most once, see the
    module docstring).

    Args:
        day: the UTC day whose new papers are sent.

    Returns:
        ``{"users": users with something new, "sent": e-mails sent now,
        "papers": papers in those e-mails (counted per e-mail), "skipped_no_email":
        users without an address, "skipped_unconfirmed": users whose address
        is not confirmed, "already_sent": users whose digest for the day went
        out before, "failed": sends the mail server refused (row removed)}``.
    """
    counts = dict.fromkeys(
        (
            "users",
            "sent",
            "papers",
            "skipped_no_email",
            "skipped_unconfirmed",
            "already_sent",
            "failed",
        ),
        0,
    )
    fresh = _fresh_papers(day)
    if not fresh.papers:
        return counts
    wanted = _wanted(fresh)
    followed = {r for papers in wanted.values() for rs in papers.values() for r in rs}
    names = dict(
        Researcher.objects.filter(
            pk__in=[r for r in followed if isinstance(r, int)]
        ).values_list("pk", "display_name")
    )
    users = get_user_model().objects.filter(pk__in=list(wanted), is_active=True)
    confirmed = set(emailable(users).values_list("pk", flat=True))
    with get_connection() as connection:
        for user in users.order_by("pk"):
            counts["users"] += 1
            if not user.email:
                counts["skipped_no_email"] += 1
                continue
            if user.pk not in confirmed:
                counts["skipped_unconfirmed"] += 1
                continue
            picked = wanted[user.pk]
            papers = [p for p in fresh.papers if p.pk in picked]
            with transaction.atomic():
                delivery, created = DigestDelivery.objects.get_or_create(
                    user=user, day=day, defaults={"paper_count": len(papers)}
                )
            if not created:
                counts["already_sent"] += 1
                continue
            shown = [
                (
                    p,
                    [
                        names.get(r, "") if isinstance(r, int) else r
                        for r in picked[p.pk]
                    ],
                )
                for p in papers[:DIGEST_MAX_PAPERS]
            ]
            message = _message(
                email=user.email,
                day=day,
                papers=shown,
                total=len(papers),
                byline=fresh.byline,
            )
            message.connection = connection
            try:
                message.send()
            except OSError:  # smtplib.SMTPException included
                logger.exception("digest for user %s on %s not sent", user.pk, day)
                delivery.delete()
                counts["failed"] += 1
                continue
            counts["sent"] += 1
            counts["papers"] += len(papers)
    logger.info("digest for %s: %s", day, counts)
    return counts
