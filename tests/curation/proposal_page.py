"""The admin page of a proposal as a curator reads it, for the tests."""

from __future__ import annotations

from html import unescape

from django.urls import reverse


def proposal_page_words(client, proposal) -> str:
    """The proposal's admin change page (``client`` logged in as a curator),
    HTML entities read, ``<strong>`` tags dropped, white space made single."""
    url = reverse("admin:curation_proposal_change", args=[proposal.pk])
    page = unescape(client.get(url).content.decode())
    return " ".join(page.replace("<strong>", "").replace("</strong>", "").split())
