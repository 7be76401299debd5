"""The daily digest: one e-mail per follower with the papers new that UTC day."""

from __future__ import annotations

import datetime as dt
import io
import smtplib

import pytest
from django.core.mail import EmailMultiAlternatives
from django.utils import timezone

from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from tests.wovepaper.test_feeds import curated_corpus
from wovepaper.digest import digest_send
from wovepaper.models import (
    CategoryFollow,
    DigestDelivery,
    Follow,
    Paper,
    Researcher,
)
from wovepaper.tasks import digest_send_task

pytestmark = pytest.mark.django_db

SITE = "https://wovepaper.example"


@pytest.fixture(autouse=True)
def site_url(settings):
    settings.SITE_URL = SITE + "/"


@pytest.fixture
def today() -> dt.date:
    return timezone.now().astimezone(dt.UTC).date()


@pytest.fixture
def corpus(db, arxiv_dir) -> Researcher:
    """Real records harvested today, curated, with attach proposals pending."""
    return curated_corpus(arxiv_dir)


def links(message) -> list[str]:
    """The paper links of a digest's plain-text part, in order."""
    return [
        line.strip()
        for line in message.body.splitlines()
        if line.strip().startswith(f"{SITE}/papers/")
    ]


def page(paper: Paper) -> str:
    return SITE + paper.get_absolute_url()


def test_followers_get_one_email_with_their_curated_new_papers(
    corpus, today, mailoutbox
):
    from curation.models import Proposal

    pending = set(
        Paper.objects.filter(
            authorships__proposals__status="pending",
            authorships__proposals__researcher=corpus,
        )
    )
    assert pending
    fan = UserFactory(email="fan@example.org")
    Follow.objects.create(user=fan, researcher=corpus)
    reader = UserFactory(email="reader@example.org")
    CategoryFollow.objects.create(user=reader, category="cond-mat.str-el")
    CategoryFollow.objects.create(user=reader, category="cond-mat.quant-gas")
    both = UserFactory(email="both@example.org")
    Follow.objects.create(user=both, researcher=corpus)
    CategoryFollow.objects.create(user=both, category="cond-mat.str-el")
    quiet = UserFactory(email="quiet@example.org")
    CategoryFollow.objects.create(user=quiet, category="hep-th")

    counts = digest_send(day=today)

    curated = list(
        Paper.objects.filter(authorships__researcher=corpus).order_by(
            "-published", "-id"
        )
    )
    str_el = [
        p
        for p in Paper.objects.order_by("-published", "-id")
        if {"cond-mat.str-el", "cond-mat.quant-gas"} & set(p.categories)
    ]
    assert len(curated) == 7  # every "Adrian Del Maestro" authorship
    assert len(str_el) == 5
    by_user = {m.to[0]: m for m in mailoutbox}
    assert set(by_user) == {"fan@example.org", "reader@example.org", "both@example.org"}
    assert links(by_user["fan@example.org"]) == [page(p) for p in curated]
    assert not {page(p) for p in pending} & set(links(by_user["fan@example.org"]))
    assert links(by_user["reader@example.org"]) == [page(p) for p in str_el]
    union = sorted(
        set(curated) | {p for p in str_el if "cond-mat.str-el" in p.categories},
        key=lambda p: (p.published, p.pk),
        reverse=True,
    )
    assert links(by_user["both@example.org"]) == [page(p) for p in union]
    assert "7 new papers" in by_user["fan@example.org"].subject
    assert f"Because you follow: {corpus.display_name}" in (
        by_user["fan@example.org"].body
    )
    assert counts == {
        "users": 3,
        "sent": 3,
        "papers": len(curated) + len(str_el) + len(union),
        "skipped_no_email": 0,
        "skipped_unconfirmed": 0,
        "already_sent": 0,
        "failed": 0,
    }
    deliveries = dict(
        DigestDelivery.objects.filter(day=today).values_list(
            "user__email", "paper_count"
        )
    )
    assert deliveries == {
        "fan@example.org": 7,
        "reader@example.org": 5,
        "both@example.org": len(union),
    }
    assert not Proposal.objects.filter(status="pending", kind="new").exists()


def test_second_run_for_the_same_day_sends_nothing(corpus, today, mailoutbox):
    fan = UserFactory(email="fan@example.org")
    Follow.objects.create(user=fan, researcher=corpus)
    assert digest_send(day=today)["sent"] == 1

    again = digest_send(day=today)

    assert len(mailoutbox) == 1
    assert again["sent"] == 0
    assert again["already_sent"] == 1
    assert DigestDelivery.objects.get().paper_count == 7


def test_only_papers_harvested_that_utc_day_count(corpus, today, mailoutbox):
    fan = UserFactory(email="fan@example.org")
    Follow.objects.create(user=fan, researcher=corpus)
    curated = Paper.objects.filter(authorships__researcher=corpus)
    late = curated.order_by("id").first()
    yesterday = dt.datetime.combine(
        today - dt.timedelta(days=1), dt.time(23, 59, 59), tzinfo=dt.UTC
    )
    Paper.objects.filter(pk=late.pk).update(created=yesterday)

    assert digest_send(day=today)["papers"] == 6
    assert page(late) not in links(mailoutbox[0])
    assert digest_send(day=today - dt.timedelta(days=1))["papers"] == 1
    assert links(mailoutbox[1]) == [page(late)]
    assert digest_send(day=today + dt.timedelta(days=1))["users"] == 0


def test_follow_of_a_merged_researcher_reaches_the_survivor(corpus, today, mailoutbox):
    merged = ResearcherFactory(merged_into=corpus)
    old_fan = UserFactory(email="old@example.org")
    Follow.objects.create(user=old_fan, researcher=merged)

    assert digest_send(day=today)["sent"] == 1
    assert len(links(mailoutbox[0])) == 7


def test_nothing_new_means_no_email_and_no_row(today, mailoutbox):
    researcher = ResearcherFactory()
    old = AuthorshipFactory(researcher=researcher).paper
    Paper.objects.filter(pk=old.pk).update(
        created=timezone.now() - dt.timedelta(days=3)
    )
    Follow.objects.create(
        user=UserFactory(email="a@example.org"), researcher=researcher
    )
    PaperFactory(hidden=True, categories=["hep-ph"])
    CategoryFollow.objects.create(
        user=UserFactory(email="b@example.org"), category="hep-ph"
    )

    counts = digest_send(day=today)

    assert counts["users"] == counts["sent"] == 0
    assert mailoutbox == []
    assert not DigestDelivery.objects.exists()


def test_users_without_an_address_are_skipped_and_counted(today, mailoutbox):
    PaperFactory(categories=["hep-th"])
    CategoryFollow.objects.create(user=UserFactory(email=""), category="hep-th")
    CategoryFollow.objects.create(
        user=UserFactory(email="c@example.org"), category="hep-th"
    )

    counts = digest_send(day=today)

    assert counts["users"] == 2
    assert counts["sent"] == 1
    assert counts["skipped_no_email"] == 1
    assert [m.to for m in mailoutbox] == [["c@example.org"]]
    assert DigestDelivery.objects.get().user.email == "c@example.org"


def test_html_part_escapes_source_text(today, mailoutbox):
    researcher = ResearcherFactory(display_name="<i>Eve</i>")
    paper = PaperFactory(title='<script>alert("x")</script> & <b>bold</b>')
    AuthorshipFactory(paper=paper, researcher=researcher, raw_name="<img src=x>")
    Follow.objects.create(
        user=UserFactory(email="d@example.org"), researcher=researcher
    )

    digest_send(day=today)

    (message,) = mailoutbox
    assert isinstance(message, EmailMultiAlternatives)
    ((body, mimetype),) = message.alternatives
    assert mimetype == "text/html"
    assert "<script>" not in body
    assert "<b>bold" not in body
    assert "<img" not in body
    assert "<i>Eve" not in body
    assert "&lt;script&gt;" in body
    assert "&lt;img src=x&gt;" in body
    assert f'<a href="{page(paper)}">' in body
    assert f"{SITE}/following/" in body
    assert '<script>alert("x")</script> & <b>bold</b>' in message.body


def test_refused_send_leaves_no_row_so_a_later_run_retries(
    today, mailoutbox, monkeypatch
):
    PaperFactory(categories=["hep-th"])
    CategoryFollow.objects.create(
        user=UserFactory(email="e@example.org"), category="hep-th"
    )

    def refuse(self, fail_silently=False):
        raise smtplib.SMTPRecipientsRefused({"e@example.org": (550, b"no")})

    with monkeypatch.context() as patch:
        patch.setattr(EmailMultiAlternatives, "send", refuse)
        assert digest_send(day=today)["failed"] == 1
    assert not DigestDelivery.objects.exists()

    assert digest_send(day=today)["sent"] == 1
    assert len(mailoutbox) == 1


def test_task_defaults_to_yesterday_utc(mailoutbox):
    paper = PaperFactory(categories=["hep-th"])
    Paper.objects.filter(pk=paper.pk).update(
        created=timezone.now() - dt.timedelta(days=1)
    )
    CategoryFollow.objects.create(
        user=UserFactory(email="f@example.org"), category="hep-th"
    )

    assert digest_send_task.delay().get()["sent"] == 1
    assert digest_send_task.delay().get()["already_sent"] == 1
    day = DigestDelivery.objects.get().day
    assert digest_send_task.delay(day.isoformat()).get()["sent"] == 0
    assert len(mailoutbox) == 1


def test_send_digest_command_sends_a_days_digest_once(corpus, today, mailoutbox):
    """The demo runs no beat: the command sends a day's digest by hand. A
    day not over yet is refused without --unfinished: its digest goes out
    once, so later papers of the day would never be sent (hostile trial)."""
    from django.core.management import CommandError, call_command

    fan = UserFactory(email="fan@example.org")
    Follow.objects.create(user=fan, researcher=corpus)
    out = io.StringIO()

    with pytest.raises(CommandError, match="is not over yet"):
        call_command("send_digest", "--day", today.isoformat())
    assert mailoutbox == []
    call_command("send_digest", stdout=out)  # yesterday: nothing harvested
    call_command("send_digest", "--day", today.isoformat(), "--unfinished", stdout=out)
    call_command("send_digest", "--day", today.isoformat(), "--unfinished", stdout=out)

    assert [m.to for m in mailoutbox] == [["fan@example.org"]]
    yesterday, first, second = out.getvalue().splitlines()
    assert yesterday.startswith(
        f"digest of {today - dt.timedelta(days=1)}: 0 sent to 0 followers"
    )
    assert first.startswith(f"digest of {today.isoformat()}: 1 sent to 1 followers")
    assert "0 sent to 1 followers" in second
    assert "1 sent before" in second
    with pytest.raises(CommandError, match="is not a date"):
        call_command("send_digest", "--day", "yesterday")
