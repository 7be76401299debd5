"""A reader creates an account from the public site."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db

GOOD = {
    "username": "reader",
    "email": "Reader@Example.org",
    "password1": "a-long enough passphrase 7",
    "password2": "a-long enough passphrase 7",
}


def test_signup_creates_the_account_and_signs_in(client):
    assert client.get("/accounts/signup/").status_code == 200
    response = client.post("/accounts/signup/", {**GOOD, "next": "/following/"})
    assert (response.status_code, response["Location"]) == (302, "/following/")
    user = get_user_model().objects.get(username="reader")
    assert user.email == "reader@example.org"
    assert client.get("/following/").status_code == 200  # signed in


def test_signup_refuses_bad_input_and_never_redirects_off_site(client):
    get_user_model().objects.create_user("other", email="reader@example.org")
    taken = client.post("/accounts/signup/", GOOD)
    assert taken.status_code == 400
    assert "already exists" in taken.content.decode()
    weak = client.post(
        "/accounts/signup/",
        {**GOOD, "email": "new@example.org", "password1": "123", "password2": "123"},
    )
    assert weak.status_code == 400
    assert get_user_model().objects.count() == 1
    ok = client.post(
        "/accounts/signup/",
        {**GOOD, "email": "new@example.org", "next": "https://evil.example/"},
    )
    assert ok["Location"] == "/"
