"""Public pages: home, paper, researcher, institution, the co-author network, 404.

Every page shows only the applied, curated state. Canonical URLs are
``/papers/<arXiv id or our id>-<slug>``, ``/researchers/<id>-<slug>`` and
``/institutions/<id>-<slug>``; any other spelling that names a record (the id
alone, a stale slug, a version suffix, a DOI, a ROR id, an institution's name, a
merged-away researcher) answers 301 to the canonical URL, with the query string
kept. Paper, researcher and institution pages answer Markdown to clients that
prefer ``text/markdown`` (``Accept``).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from django.core.cache import cache
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.shortcuts import render
from django.urls import reverse
from django.views import defaults
from django.views.decorators.http import require_safe

from api.errors import is_api_path, problem_json
from curation.history import MAX_ID
from wovepaper import browse, profile, selectors
from wovepaper.cache import researcher_key, researcher_version
from wovepaper.identifiers import ARXIV_CATEGORY
from wovepaper.models import Paper, Researcher
from wovepaper.semantic import similar_papers
from wovepaper.text import latex_to_text
from wovepaper.views import page_cache
from wovepaper.views.responses import (
    canonical_redirect,
    page_number,
    render_page,
    wants_markdown,
)

# Cached researcher page parts live at most this long (seconds) even without a
# curation bump; the papers list also shows other researchers' names and the
# harvest's latest titles, which do not bump this researcher's version.
SUMMARY_SECONDS = 1800
PAPERS_SECONDS = 60
# Byline slots a paper page shows before "Show all N authors" (a 2,831-author
# page weighed 264 KB and took up to 5.9 s with every slot).
BYLINE_FIRST = 50

# ASCII digits only: ``\d`` would also take full-width and other Unicode digits.
_PAPER_REF = re.compile(
    r"(?P<key>[0-9]{4}\.[0-9]{4,5}"
    r"|[a-z]{1,10}(?:-[a-z]{1,10})?(?:\.[A-Za-z]{2})?/[0-9]{7}"
    r"|[0-9]{1,18})(?:v[1-9][0-9]{0,3})?(?:-(?P<slug>.*))?"
)


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """The home page: what the archive holds (papers, researchers,
    institutions, its commonest fields), a search box and the newest papers."""
    papers = Paper.objects.filter(hidden=False)
    return render(
        request,
        "pages/home.html",
        {
            "paper_count": f"{papers.count():,}",
            "researcher_count": f"{Researcher.objects.live().count():,}",
            "institution_count": f"{len(browse.institution_listing()):,}",
            "fields": browse.paper_fields(),
            "latest": profile.paper_rows(papers.order_by("-published", "-id")[:20]),
            "canonical_url": request.build_absolute_uri("/"),
        },
    )


@require_safe
def paper_detail(request: HttpRequest, ref: str) -> HttpResponse:
    """A paper: title, authors in order with their researchers, abstract, links,
    and the papers most similar in meaning (:func:`wovepaper.semantic.similar_papers`).

    ``ref`` is ``<arXiv id>-<slug>`` (new or old style), ``<our id>-<slug>`` for a
    paper without an arXiv id, either without the slug or with a version, or a
    DOI; a trailing slash is read without it (the researcher pages answer one
    with a redirect, and so do these). Hidden (deleted at the source) and
    unknown papers are 404.
    """
    ref = ref.rstrip("/") or ref
    match = _PAPER_REF.fullmatch(ref)
    paper = None
    if match:
        key = match.group("key")
        papers = Paper.objects.filter(hidden=False)
        paper = (
            papers.filter(pk=int(key)).first()
            if key.isdigit()
            else papers.filter(arxiv_id=key).first()
        )
    if paper is None:
        paper = selectors.paper_by_identifier(ref)  # a DOI, or arXiv:<id>
        if paper is None:
            raise Http404(f"no paper here is called {ref[:100]}")
    canonical = paper.get_absolute_url()
    if request.path != canonical:
        return canonical_redirect(request, canonical)
    whole = request.GET.get("authors") == "all"
    byline = selectors.paper_byline(paper, limit=None if whole else BYLINE_FIRST)
    author_count = (
        len(byline)
        if whole or len(byline) < BYLINE_FIRST
        else paper.authorships.count()
    )
    category = paper.primary_category or ""
    category = category if ARXIV_CATEGORY.fullmatch(category) else ""
    return render_page(
        request,
        "paper",
        {
            "paper": paper,
            "byline": byline,
            "author_count": author_count,
            "byline_cut": len(byline) < author_count,
            "canonical_url": request.build_absolute_uri(canonical),
            "json_ld": _paper_json_ld(request, paper, byline),
            "category_crumb": category,
            "breadcrumbs": _breadcrumbs(
                request,
                [
                    ("Papers", reverse("papers")),
                    *(
                        [(category, reverse("category", kwargs={"category": category}))]
                        if category
                        else []
                    ),
                    (latex_to_text(paper.title)[:200], canonical),
                ],
            ),
            "citation_authors": [a.raw_name for a in byline if not a.is_collaboration],
            "similar": similar_papers(paper=paper),
        },
    )


def _breadcrumbs(request: HttpRequest, trail: list[tuple[str, str]]) -> dict:
    """schema.org BreadcrumbList JSON-LD of a page's trail (home first).

    Args:
        trail: ``(name, path)`` from the top down, the page itself last.

    Returns:
        The JSON-LD object (https://schema.org/BreadcrumbList).
    """
    items = [("wovepaper", "/"), *trail]
    return {
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            {
                "@type": "ListItem",
                "position": n,
                "name": name,
                "item": request.build_absolute_uri(path),
            }
            for n, (name, path) in enumerate(items, start=1)
        ],
    }


def _paper_json_ld(request: HttpRequest, paper: Paper, byline: list) -> dict:
    """schema.org ScholarlyArticle for a paper (https://schema.org/ScholarlyArticle)."""
    authors = []
    for a in byline[:BYLINE_FIRST]:
        person = {"@type": "Organization" if a.is_collaboration else "Person"}
        person["name"] = a.raw_name
        if a.researcher_id:
            person["url"] = request.build_absolute_uri(a.researcher.get_absolute_url())
        if a.orcid:
            person["sameAs"] = f"https://orcid.org/{a.orcid}"
        authors.append(person)
    data = {
        "@context": "https://schema.org",
        "@type": "ScholarlyArticle",
        "headline": latex_to_text(paper.title)[:300],
        "name": latex_to_text(paper.title),
        "url": request.build_absolute_uri(paper.get_absolute_url()),
        "author": authors,
        "abstract": latex_to_text(paper.abstract[:5000]),
        "keywords": paper.category_list,
    }
    if paper.published:
        data["datePublished"] = paper.published_shown
    identifiers = []
    if paper.arxiv_id:
        identifiers.append(f"arXiv:{paper.arxiv_id}")
    if paper.doi:
        # Percent-encoded as a path (RFC 3986), as the DOI Handbook's URL
        # form asks: "%2e%2e" or "\\" in a DOI must not climb out of it.
        identifiers.append(f"https://doi.org/{quote(paper.doi, safe='/')}")
    if identifiers:
        data["identifier"] = identifiers
    return data


def _undoable(response: HttpResponse) -> HttpResponse:
    """A merged-away researcher's redirect, which a curator's undo can end:
    still a 301 (the profile moved, as far as anyone knows now), but browsers
    must ask again before reusing it (``Cache-Control: no-cache``, RFC 9111
    5.2.2.4). Without it Chromium kept sending a visitor from a profile to its
    survivor after the merge was undone (browser test of issue 47)."""
    response["Cache-Control"] = "no-cache"
    return response


def _live_researcher(request: HttpRequest, pk: int) -> Researcher | HttpResponse:
    """The live researcher ``pk``, or the response for a merged-away or retired one."""
    researcher = Researcher.objects.filter(pk=pk).first()
    if researcher is None:
        raise Http404(f"no researcher here has the id {pk}")
    if researcher.merged_into_id:
        survivor = selectors.researcher_survivor(pk)
        if survivor is None:
            raise Http404(f"researcher {pk} was merged into a profile that is gone")
        return _undoable(
            canonical_redirect(
                request, Researcher.objects.get(pk=survivor).get_absolute_url()
            )
        )
    if researcher.retired:
        return render_page(
            request,
            "researcher_retired",
            {
                "researcher": researcher,
                "holders": profile.former_holders(researcher),
                "because": profile.retired_because(researcher),
            },
            status=410,
        )
    return researcher


# The query parameters the researcher page reads; a page asked with others is
# rendered but not cached.
_PAGE_PARAMETERS = frozenset({"category", "sort", "page"})


def _page_format(request: HttpRequest) -> str:
    return "md" if wants_markdown(request) else "html"


@require_safe
def researcher_detail(request: HttpRequest, pk: int, slug: str = "") -> HttpResponse:
    """A researcher profile: identity, papers (24 a page), fields, positions, network.

    Query parameters: ``category`` (only papers in it), ``sort`` (newest,
    oldest, cited, title), ``page``. A merged-away researcher answers 301 to its
    survivor; a retired one (an undone split or new profile, or one a curator
    emptied) 410 with where its papers went. The summary (with the papers'
    sort keys) is cached until a curation change bumps the researcher's cache
    version (or
    :data:`SUMMARY_SECONDS`), a papers page for :data:`PAPERS_SECONDS`, and so
    is the whole rendered page for visitors with no session and no messages.
    """
    found = _live_researcher(request, pk)
    if isinstance(found, HttpResponse):
        return found
    researcher = found
    canonical = researcher.get_absolute_url()
    if request.path != canonical:
        return canonical_redirect(request, canonical)
    category = request.GET.get("category", "")
    category = category if ARXIV_CATEGORY.fullmatch(category) else ""
    sort = request.GET.get("sort", "newest")
    sort = sort if sort in profile.SORTS else "newest"
    number = page_number(request.GET.get("page", "1"))
    version = researcher_version(pk)
    # A visitor with no session and no messages sees what every such visitor
    # sees: the rendered page is cached whole, for as long as a papers page.
    page_key = None
    if page_cache.stateless(request, _PAGE_PARAMETERS):
        page_key = researcher_key(
            pk,
            "page-" + page_cache.url_digest(request, _page_format(request)),
            version=version,
        )
        cached = page_cache.cached_page(page_key)
        if cached is not None:
            return cached
    summary = cache.get_or_set(
        # v3: the summary carries the citation figures; summaries cached by
        # the code before (no "papers") must not be read.
        researcher_key(pk, "page-summary-v3", version=version),
        lambda: profile.researcher_summary(researcher),
        SUMMARY_SECONDS,
    )
    # A category typed in another letter case is the one the papers carry.
    spelled = {name.lower(): name for name, _ in summary["categories"]}
    if category:
        category = spelled.get(category.lower(), category)
    papers = cache.get_or_set(
        researcher_key(pk, f"page-papers:{category}:{sort}:{number}", version=version),
        lambda: profile.researcher_papers_page(
            researcher,
            category=category,
            sort=sort,
            number=number,
            keys=summary["papers"],
            checked=summary.get("checked_papers"),
        ),
        PAPERS_SECONDS,
    )
    # A follow of a profile merged away since counts for this one.
    following = request.user.is_authenticated and researcher.pk in set(
        selectors.follows_leading(request.user).values()
    )
    absolute = request.build_absolute_uri(canonical)
    response = render_page(
        request,
        "researcher",
        {
            "researcher": researcher,
            "variants": [
                v for v in researcher.name_variants if v != researcher.display_name
            ],
            "summary": summary,
            "papers": papers,
            "category": category,
            "sort": sort,
            "sorts": list(profile.SORTS),
            "following": following,
            "canonical_url": absolute,
            "breadcrumbs": _breadcrumbs(
                request,
                [
                    ("Researchers", reverse("researchers")),
                    (researcher.display_name, canonical),
                ],
            ),
            "json_ld": {
                "@context": "https://schema.org",
                "@type": "Person",
                "name": researcher.display_name,
                "alternateName": [
                    v for v in researcher.name_variants if v != researcher.display_name
                ][:20],
                "url": absolute,
                "sameAs": [i["url"] for i in summary["identifiers"]],
            },
        },
    )
    if page_key is not None:
        page_cache.keep_page(page_key, response, PAPERS_SECONDS)
    return response


@require_safe
def researcher_network(request: HttpRequest, pk: int) -> HttpResponse:
    """JSON of the researcher's closest co-authors (see profile.coauthor_network):
    papers of over :data:`wovepaper.profile.NETWORK_MAX_BYLINE` authors left
    out unless ``?large=1``.

    A merged-away researcher answers 301 to its survivor's network; cached like
    the page summary.
    """
    if pk > MAX_ID:  # no row has it, and SQLite cannot even compare it
        raise Http404(f"researcher {pk} is not a live profile")
    survivor = selectors.researcher_survivor(pk)
    if survivor is not None:
        return _undoable(
            HttpResponsePermanentRedirect(
                reverse("researcher-network", kwargs={"pk": survivor})
            )
        )
    found = Researcher.objects.live().filter(pk=pk).first()
    if found is None:
        raise Http404(f"researcher {pk} is not a live profile")
    every = request.GET.get("large") == "1"
    network = cache.get_or_set(
        researcher_key(pk, "network-v2-all" if every else "network-v2"),
        lambda: profile.coauthor_network(
            found, max_byline=None if every else profile.NETWORK_MAX_BYLINE
        ),
        SUMMARY_SECONDS,
    )
    return JsonResponse(network)


@require_safe
def institution_detail(request: HttpRequest, ref: str) -> HttpResponse:
    """An institution: name, ROR, country, its researchers and recent papers.

    ``ref`` is ``<id>-<slug>``, the id alone, a ROR id (bare or as a ror.org
    URL) or the institution's name (any case); all but the canonical form
    answer 301.
    """
    institution = selectors.institution_by_ref(ref)
    if institution is None:
        raise Http404(f"no institution here is called {ref[:100]}")
    canonical = institution.get_absolute_url()
    if request.path != canonical:
        return canonical_redirect(request, canonical)
    return render_page(
        request,
        "institution",
        {
            "institution": institution,
            **profile.institution_summary(institution),
            "canonical_url": request.build_absolute_uri(canonical),
            "breadcrumbs": _breadcrumbs(
                request,
                [
                    ("Institutions", reverse("institutions")),
                    (institution.name, canonical),
                ],
            ),
            "json_ld": {
                "@context": "https://schema.org",
                "@type": "Organization",
                "name": institution.name,
                "alternateName": institution.aliases[:20],
                "url": request.build_absolute_uri(canonical),
                "sameAs": (
                    [f"https://ror.org/{institution.ror_id}"]
                    if institution.ror_id
                    else []
                ),
            },
        },
    )


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 400 (a body past ``DATA_UPLOAD_MAX_MEMORY_SIZE``, too many
    fields, a bad Host), as a problem on API paths: the API answered a 3 MB
    body with an HTML page while every other API error is problem+json
    (hostile trial). The site keeps Django's own page.
    """
    if is_api_path(request.path):
        return problem_json(400, "the request was refused: too large or malformed")
    return defaults.bad_request(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The 404 page: says what was not found and offers a search of the archive.

    The search box is filled with words from the missing URL, so a mistyped
    paper or researcher link is one click from its search.
    """
    reason = ""
    if exception and exception.args and isinstance(exception.args[0], str):
        reason = exception.args[0][:200]
    if is_api_path(request.path):
        # No route of the API takes the path (a researcher id that is no
        # number): a problem, as every other API error is.
        return problem_json(
            404, f"no API resource at {request.path[:200]} (see /openapi.json)"
        )
    words = re.sub(r"[^\w]+", " ", request.path.rsplit("/", 1)[-1]).strip()[:100]
    return render(
        request,
        "pages/404.html",
        {"reason": reason, "query": words},
        status=404,
    )
