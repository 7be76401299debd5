"""An admin list filtered by a lookup the database refuses (an invalid
regular expression) shows the list
unfiltered with a message that names the filter, not a 500."""

from __future__ import annotations

import pytest

from tests.factories import UserFactory

# transaction=True: PostgreSQL aborts a transaction after a refused query, and
# the admin's list is read again after the redirect, as a browser does.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    "url",
    [
        "/admin/curation/matchermodel/?version__regex=(",
        "/admin/curation/proposal/?kind__iregex=[",
        "/admin/wovepaper/paper/?title__regex=(",
        "/admin/wovepaper/researcher/?display_name__regex=*",
        "/admin/auth/user/?username__regex=(",
    ],
)
def test_a_refused_filter_shows_the_list_unfiltered_with_why(client, url):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.get(url)
    assert response.status_code == 302
    path, query = url.split("?")
    assert response["Location"] == path
    # The proposal queue goes on to its default filter (pending).
    page = client.get(path, follow=True)
    assert page.status_code == 200
    text = page.content.decode()
    assert "This list could not be filtered by" in text
    assert query.split("=")[0] in text
    assert "The list is shown unfiltered." in text


def test_a_list_with_a_usable_filter_is_filtered(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.get("/admin/wovepaper/paper/?title__regex=^a")
    assert response.status_code == 200
    assert "could not be filtered" not in response.content.decode()
