"""Login throttling (django-axes): guessing passwords locks the username+address.

The site's login page, the admin's and the API token endpoint all count failures;
after LOGIN_FAILURE_LIMIT of them the pair is refused with 429, even with the right
password, while the same user from another address still signs in.
"""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.conf import settings

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "a-Correct-horse-9"


@pytest.fixture
def user():
    u = UserFactory(username="reader")
    u.set_password(PASSWORD)
    u.save()
    return u


def _guess(client, url, *, password, address):
    return client.post(
        url,
        {"username": "reader", "password": password},
        REMOTE_ADDR=address,
    )


@pytest.mark.parametrize(
    ("url", "refused", "accepted"),
    [
        ("/accounts/login/", 200, 302),
        ("/admin/login/", 200, 200),  # a plain user is refused by the admin form
        ("/api/token/", 400, 200),
    ],
)
def test_guessing_passwords_locks_the_username_from_that_address(
    client, user, url, refused, accepted
):
    limit = settings.AXES_FAILURE_LIMIT
    for _ in range(limit - 1):
        assert _guess(
            client, url, password="wrong", address="10.0.0.1"
        ).status_code == (refused)
    assert _guess(client, url, password="wrong", address="10.0.0.1").status_code in (
        refused,
        429,
    )

    locked = _guess(client, url, password=PASSWORD, address="10.0.0.1")

    assert locked.status_code == 429
    cooloff = int(settings.AXES_COOLOFF_TIME.total_seconds())
    assert int(locked["Retry-After"]) == cooloff
    if url != "/api/token/":
        assert f"Try again in {cooloff // 60} minutes" in locked.content.decode()
    assert "_auth_user_id" not in client.session
    # Every refused attempt counts, the locked one with the right password too.
    assert AccessAttempt.objects.get(username="reader").failures_since_start > limit
    elsewhere = _guess(client, url, password=PASSWORD, address="10.0.0.2")
    assert elsewhere.status_code == accepted
