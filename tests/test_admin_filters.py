"""An admin list filtered by a lookup that cannot be run (an invalid regular
expression, a range of one value, a year past the calendar's) shows the list
unfiltered with a message that names the filter, not a 500; and never loops."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from curation.admin.proposals import QueueChangeList
from tests.factories import PaperFactory, UserFactory

# transaction=True: PostgreSQL aborts a transaction after a refused query, and
# the admin's list is read again after the redirect, as a browser does.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def superuser(client):
    user = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(user)
    return user


@pytest.mark.parametrize(
    "url",
    [
        "/admin/curation/matchermodel/?version__regex=(",
        "/admin/curation/proposal/?kind__iregex=[",
        "/admin/wovepaper/paper/?title__regex=(",
        "/admin/wovepaper/researcher/?display_name__regex=*",
        "/admin/auth/user/?username__regex=(",
        "/admin/wovepaper/paper/?title__range=1",
        "/admin/wovepaper/paper/?published__year=99999",
        "/admin/wovepaper/researcher/?created__iso_year=0",
    ],
)
def test_a_refused_filter_shows_the_list_unfiltered_with_why(client, superuser, url):
    response = client.get(url)
    assert response.status_code == 302
    path, query = url.split("?")
    assert response["Location"] == f"{path}?e=1"
    page = client.get(response["Location"], follow=True)
    assert page.status_code == 200
    text = page.content.decode()
    assert f"This list could not be filtered by &#x27;{query}&#x27;" in text
    assert "it names a field the list does not have, or a value that field" in text
    assert "The list is shown without it." in text


def test_every_value_of_a_repeated_parameter_is_named(client, superuser):
    response = client.get(
        "/admin/wovepaper/paper/?title__regex=(&title__regex=hep", follow=True
    )
    assert "filtered by &#x27;title__regex=(&amp;title__regex=hep&#x27;" in (
        response.content.decode()
    )


def test_an_action_posted_on_a_refused_filter_is_stopped(client, superuser):
    paper = PaperFactory()
    response = client.post(
        "/admin/wovepaper/paper/?title__regex=(",
        {"action": "delete_selected", "_selected_action": [paper.pk]},
        follow=True,
    )
    assert "A selected action was stopped." in response.content.decode()
    assert type(paper).objects.filter(pk=paper.pk).exists()


def test_a_list_failing_unfiltered_too_is_a_500_not_a_redirect_loop(
    client, superuser, monkeypatch
):
    # As a statement timeout on the queue would: the failure is not the filter's.
    def timed_out(self, request):
        raise OperationalError("canceling statement due to statement timeout")

    monkeypatch.setattr(QueueChangeList, "get_results", timed_out)
    response = client.get("/admin/curation/proposal/?status__exact=pending")
    assert response["Location"] == "/admin/curation/proposal/?e=1"
    # The queue's own default filter, once, with the flag: then the error.
    response = client.get(response["Location"])
    assert response["Location"] == "/admin/curation/proposal/?status__exact=pending&e=1"
    with pytest.raises(OperationalError, match="statement timeout"):
        client.get(response["Location"])


def test_a_list_with_a_usable_filter_is_filtered(client, superuser):
    response = client.get("/admin/wovepaper/paper/?title__regex=^a")
    assert response.status_code == 200
    assert "could not be filtered" not in response.content.decode()


@pytest.mark.parametrize(
    "url",
    [
        "/admin/curation/proposal/?score=zzz",
        "/admin/curation/proposal/?nosuchfield=1",
        "/admin/wovepaper/paper/?published__range=1",
    ],
)
def test_a_filter_django_refuses_itself_is_named_too(client, superuser, url):
    # Django redirects these to ?e=1 in silence: the curator is told why.
    page = client.get(url, follow=True)
    text = page.content.decode()
    query = url.split("?")[1]
    assert f"This list could not be filtered by &#x27;{query}&#x27;" in text
    if url.startswith("/admin/curation/proposal/"):
        # The queue falls back on its pending proposals, not on every one.
        assert page.redirect_chain[-1][0].endswith("?status__exact=pending&e=1")
