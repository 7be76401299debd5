"""A reader's address is confirmed before any digest or alert is e-mailed to it,
and password-reset e-mails are limited (issue 48, item 6)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail, signing
from django.core.mail.backends.base import BaseEmailBackend

from curation.edits import researcher_merge
from curation.models import CurationEvent
from curation.notify import followers_notify
from tests.factories import AuthorshipFactory, ResearcherFactory, UserFactory
from tests.wovepaper.test_accounts import GOOD as SIGNUP
from wovepaper import accounts
from wovepaper.accounts import SALT, emailable
from wovepaper.models import EmailConfirmation, Follow, Notification

pytestmark = pytest.mark.django_db


def _link(message) -> str:
    return re.search(r"https?://\S+(/accounts/confirm/\S+/)", message.body).group(1)


def test_signup_sends_a_link_and_mail_waits_until_it_is_followed(client):
    client.post("/accounts/signup/", SIGNUP)
    reader = get_user_model().objects.get(username="reader")
    [sent] = mail.outbox
    assert sent.to == ["reader@example.org"]
    assert "Confirm your e-mail address" in sent.subject
    assert not emailable(get_user_model().objects.filter(pk=reader.pk)).exists()
    page = client.get("/following/").content.decode()
    assert "is not confirmed yet" in page

    confirmed = client.get(_link(sent))

    assert confirmed.status_code == 200
    assert "reader@example.org is confirmed" in confirmed.content.decode()
    assert emailable(get_user_model().objects.filter(pk=reader.pk)).exists()
    assert "is not confirmed yet" not in client.get("/following/").content.decode()


def test_an_alert_is_written_but_not_e_mailed_to_an_unconfirmed_address(client):
    client.post("/accounts/signup/", SIGNUP)
    reader = get_user_model().objects.get(username="reader")
    kept, merged = ResearcherFactory(), ResearcherFactory()
    for researcher in (kept, merged):
        AuthorshipFactory(researcher=researcher)
    staff_made = UserFactory(email="staff-made@example.org")
    for user in (reader, staff_made):
        Follow.objects.create(user=user, researcher=merged)
    researcher_merge(researchers=[kept, merged], actor=UserFactory())
    mail.outbox.clear()

    followers_notify(event_id=CurationEvent.objects.get(kind="merged").pk)

    assert set(Notification.objects.values_list("user__username", flat=True)) == {
        "reader",
        staff_made.username,
    }
    assert [m.to for m in mail.outbox] == [["staff-made@example.org"]]


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        ("nonsense", accounts.BAD_LINK),
        (signing.dumps({"user": 1}, salt="another.salt"), accounts.BAD_LINK),
    ],
)
def test_a_link_that_is_not_ours_confirms_nothing(client, token, problem):
    answer = client.get(f"/accounts/confirm/{token}/")
    assert answer.status_code == 400
    assert problem in answer.content.decode()


def test_a_link_for_an_address_changed_since_confirms_nothing(client):
    client.post("/accounts/signup/", SIGNUP)
    [sent] = mail.outbox
    get_user_model().objects.filter(username="reader").update(email="new@example.org")

    answer = client.get(_link(sent))

    assert answer.status_code == 400
    assert accounts.OTHER_ADDRESS in answer.content.decode()
    assert EmailConfirmation.objects.get().confirmed_at is None


def test_a_link_asked_again_is_sent_within_its_rate(client, settings):
    settings.EMAIL_CONFIRM_RATE = "2/hour"
    client.post("/accounts/signup/", SIGNUP)
    for _ in range(3):
        client.post("/accounts/confirm/")

    assert len(mail.outbox) == 3  # the sign-up's and two asked for
    assert "try again in" in client.get("/following/").content.decode()


def test_the_sign_in_page_leads_to_the_password_reset(client):
    page = client.get("/accounts/login/").content.decode()
    assert 'href="/accounts/password_reset/">Forgot your password?' in page


def test_password_reset_mails_an_address_at_most_its_rate(client, settings):
    settings.PASSWORD_RESET_ADDRESS_RATE = "3/hour"
    settings.PASSWORD_RESET_CLIENT_RATE = "100/hour"
    UserFactory(email="victim@example.org")
    answers = [
        client.post("/accounts/password_reset/", {"email": "victim@example.org"})
        for _ in range(6)
    ]

    # Past the limit the page is the same: it tells no one what happened.
    assert {(a.status_code, a["Location"]) for a in answers} == {
        (302, "/accounts/password_reset/done/")
    }
    assert len(mail.outbox) == 3


def test_password_reset_takes_a_client_at_most_its_rate(client, settings):
    settings.PASSWORD_RESET_CLIENT_RATE = "4/hour"
    answers = [
        client.post("/accounts/password_reset/", {"email": f"x{i}@example.org"})
        for i in range(5)
    ]

    assert [a.status_code for a in answers] == [302] * 4 + [429]
    assert int(answers[-1]["Retry-After"]) > 0


class RefusingBackend(BaseEmailBackend):
    """A mail server that refuses every connection."""

    def send_messages(self, email_messages):
        raise ConnectionRefusedError(111, "Connection refused")


def test_a_refused_confirmation_mail_keeps_the_account_and_says_so(client, settings):
    settings.EMAIL_BACKEND = f"{__name__}.RefusingBackend"

    answer = client.post("/accounts/signup/", SIGNUP, follow=True)

    assert answer.status_code == 200
    assert "could not be sent just now" in answer.content.decode()
    reader = get_user_model().objects.get(username="reader")
    assert EmailConfirmation.objects.get(user=reader).confirmed_at is None


def test_the_link_names_the_site_the_reader_signed_up_on(client):
    client.post("/accounts/signup/", SIGNUP, HTTP_HOST="127.0.0.1:8098")
    [sent] = mail.outbox
    assert "http://127.0.0.1:8098/accounts/confirm/" in sent.body


def test_a_signed_token_naming_no_account_id_confirms_nothing(client):
    token = signing.dumps({"user": {"pk": 1}, "email": "x@example.org"}, salt=SALT)
    answer = client.get(f"/accounts/confirm/{token}/")
    assert answer.status_code == 400
    assert accounts.BAD_LINK in answer.content.decode()


def test_look_alike_spellings_of_an_address_share_its_reset_limit(client, settings):
    settings.PASSWORD_RESET_ADDRESS_RATE = "3/hour"
    settings.PASSWORD_RESET_CLIENT_RATE = "100/hour"
    UserFactory(email="kiss@example.org")
    # PostgreSQL folds the long s (U+017F) to "S": Django's form finds the
    # account under every spelling.
    for typed in ["kiss@example.org"] * 3 + [
        "ki\u017fs@example.org",
        "KISS@example.org",
    ]:
        client.post("/accounts/password_reset/", {"email": typed})

    assert len(mail.outbox) == 3


def test_an_account_without_an_address_is_told_so(client):
    client.force_login(UserFactory(email=""))
    answer = client.post("/accounts/confirm/", follow=True)
    assert answer.status_code == 200
    assert "no e-mail address to confirm" in answer.content.decode()
    assert mail.outbox == []
