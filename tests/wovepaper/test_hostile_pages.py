"""Hostile requests and source text the public pages, feeds and API must survive.

Each case was found by trying to break the site (a 500, a wrong cache hit, a
link smuggled into Markdown); each answer is now a clear refusal or a safe page.
"""

from __future__ import annotations

import pytest
from lxml import etree
from rest_framework.test import APIClient

from tests.factories import (
    AuthorshipFactory,
    PaperFactory,
    ResearcherFactory,
    UserFactory,
)
from wovepaper.models import Follow

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    ["/papers/10.1%00x", "/institutions/%00", "/categories/a%00b/feed.rss"],
)
def test_nul_in_the_path_is_refused(client, path):
    response = client.get(path)
    assert response.status_code == 400
    assert b"NUL" in response.content


@pytest.mark.parametrize(
    "url",
    [
        "/api/papers/?cursor=cD1hYmM%3D",  # p=abc where an id belongs
        "/api/researchers/?cursor=cD0xLjU%3D",  # p=1.5
        "/api/researchers/{pk}/papers/?cursor=cD1hYmM%3D",  # p=abc for a date
    ],
)
def test_hand_made_cursor_is_invalid_not_a_server_error(url):
    r = ResearcherFactory()
    AuthorshipFactory(researcher=r)
    response = APIClient().get(url.format(pk=r.pk))
    assert response.status_code == 404
    assert response.json()["detail"] == "Invalid cursor"


def test_feeds_survive_control_characters_in_names_and_categories(client):
    r = ResearcherFactory(display_name="Ctrl\x0bName")
    paper = PaperFactory(
        categories=["ctrlcat", "bad\x0ccat"], primary_category="ctrlcat"
    )
    AuthorshipFactory(paper=paper, raw_name="Form\x0cFeed Author", researcher=r)
    for url in (
        "/feeds/latest.rss",
        "/categories/ctrlcat/feed.rss",
        f"/researchers/{r.pk}/feed.rss",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        channel = etree.fromstring(response.content).find("channel")
        assert channel.find("item/title").text == paper.title


def test_markdown_never_links_a_bare_url_from_a_title(client):
    paper = PaperFactory(title="See https://evil.example/x and www.evil.example")
    text = client.get(
        paper.get_absolute_url(), HTTP_ACCEPT="text/markdown"
    ).content.decode()
    assert text.splitlines()[0] == (
        r"# See https\://evil.example/x and www\.evil.example"
    )


def test_latex_that_renders_to_nothing_keeps_the_title(client):
    paper = PaperFactory(title=r"\def\x{\x\x}\x")
    body = client.get(paper.get_absolute_url()).content.decode()
    assert r"<h1>\def\x{\x\x}\x</h1>" in body


@pytest.mark.parametrize(
    "ref", ["1\uff12", "\u0661\u0662", "2101.\uff10\uff10\uff10\uff11"]
)
def test_unicode_digits_are_not_ids(client, ref):
    PaperFactory()
    assert client.get(f"/papers/{ref}").status_code == 404


def test_category_filter_in_another_case_counts_right(client):
    r = ResearcherFactory()
    AuthorshipFactory(
        researcher=r,
        paper=PaperFactory(categories=["hep-th"], primary_category="hep-th"),
    )
    body = client.get(r.get_absolute_url(), {"category": "HEP-TH"}).content.decode()
    assert "Showing 1 in <strong>hep-th</strong>" in body


def test_following_a_profile_merged_into_a_retired_one_is_refused(client):
    gone = ResearcherFactory(retired=True)
    merged = ResearcherFactory(merged_into=gone)
    client.force_login(UserFactory())
    response = client.post(f"/researchers/{merged.pk}/follow", {"action": "follow"})
    assert response.status_code == 404
    api = APIClient()
    api.force_authenticate(UserFactory())
    assert api.post(f"/api/researchers/{merged.pk}/follow/").status_code == 404
    assert not Follow.objects.exists()


def test_api_researcher_cache_keys_on_fields_only():
    r = ResearcherFactory(display_name="Cache Key")
    api = APIClient()
    padded = "p=" + "x" * 298
    assert api.get(f"/api/researchers/{r.pk}/?{padded}&fields=id").json() == {
        "id": r.pk
    }
    assert api.get(f"/api/researchers/{r.pk}/?{padded}&fields=display_name").json() == {
        "display_name": "Cache Key"
    }
    # Other parameters share one entry with the plain rendering.
    plain = api.get(f"/api/researchers/{r.pk}/").json()
    assert api.get(f"/api/researchers/{r.pk}/?x=1").json() == plain


def test_byline_names_with_markup_are_escaped_and_linked_only_when_applied(client):
    r = ResearcherFactory(display_name='Q. "Quote" <b>Bold</b>')
    paper = PaperFactory(title="Escaped bylines")
    AuthorshipFactory(paper=paper, position=1, raw_name="<script>x</script> Ann")
    AuthorshipFactory(
        paper=paper, position=2, raw_name='Q. "Quote" <b>Bold</b>', researcher=r
    )
    AuthorshipFactory(paper=paper, position=3, raw_name="O'Brien & Sons")

    body = client.get(paper.get_absolute_url()).content.decode()
    home = client.get("/").content.decode()

    for page in (body, home):
        assert "<script>x" not in page
        assert "<b>Bold" not in page
    # The home page lists the paper with the byline of a paper row.
    (byline,) = [
        line for line in home.split('<div class="byline">')[1:] if "Ann" in line
    ]
    byline = byline.split("</div>")[0]
    assert byline == (
        "&lt;script&gt;x&lt;/script&gt; Ann, "
        f'<a href="{r.get_absolute_url()}">Q. &quot;Quote&quot; '
        "&lt;b&gt;Bold&lt;/b&gt;</a>, O&#x27;Brien &amp; Sons"
    )


def test_a_paper_row_escapes_every_value_a_source_gave():
    from wovepaper.templatetags.wovepaper_text import paper_item

    row = {
        "url": '/papers/x"><script>1</script>',
        "title": r"<img src=x onerror=alert(1)> $\alpha$",
        "published_shown": "<b>2021</b>",
        "arxiv_id": "2101.0<1>",
        "doi": '10.1/"><x>',
        "primary_category": "hep&th",
        "cited_by_count": 0,
        "why": "<i>applied</i> by a curator",
        "abstract": "<b>abs</b> $x<y$",
        "byline": [{"name": "<Ann>", "researcher_url": None}],
        "more": 0,
    }
    assert str(paper_item(row)) == (
        "<li>\n"
        '  <a class="paper-title" '
        'href="/papers/x&quot;&gt;&lt;script&gt;1&lt;/script&gt;">'
        "&lt;img src=x onerror=alert(1)&gt; "
        '<span class="math" data-tex="\\alpha">α</span></a>\n'
        '  <div class="byline">&lt;Ann&gt;</div>\n'
        '  <div class="meta">&lt;b&gt;2021&lt;/b&gt; · arXiv:2101.0&lt;1&gt;'
        " · hep&amp;th · cited by 0 · "
        '<span class="links"><a href="https://arxiv.org/abs/2101.0%3C1%3E">arXiv</a>'
        ' · <a href="https://arxiv.org/pdf/2101.0%3C1%3E">PDF</a>'
        ' · <a href="https://doi.org/10.1/%22%3E%3Cx%3E">DOI</a></span></div>\n'
        '  <details class="abstract"><summary>Abstract</summary>'
        "<p>&lt;b&gt;abs&lt;/b&gt; "
        '<span class="math" data-tex="x&lt;y">x&lt;y</span></p></details>'
        '<details class="why"><summary>Why is this paper here?</summary>'
        "<p>&lt;i&gt;applied&lt;/i&gt; by a curator</p></details>\n"
        "</li>\n"
    )
