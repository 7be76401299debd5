"""What the public page views share: Markdown negotiation, rendering, the
canonical redirect and reading a page number."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import render


def wants_markdown(request: HttpRequest) -> bool:
    """Whether the client prefers Markdown to HTML (``Accept``, RFC 9110 12.5.1)."""
    return request.get_preferred_type(["text/html", "text/markdown"]) == (
        "text/markdown"
    )


def render_page(
    request: HttpRequest, name: str, context: dict, *, status: int = 200
) -> HttpResponse:
    """Render ``pages/<name>.html``, or ``pages/<name>.md`` for Markdown clients.

    Returns:
        The response, ``Vary: Accept, Cookie``.
    """
    if wants_markdown(request):
        response = render(
            request,
            f"pages/{name}.md",
            context,
            content_type="text/markdown; charset=utf-8",
            status=status,
        )
    else:
        response = render(request, f"pages/{name}.html", context, status=status)
    response["Vary"] = "Accept, Cookie"
    return response


def canonical_redirect(
    request: HttpRequest, path: str
) -> HttpResponsePermanentRedirect:
    """301 to ``path`` with the request's query string kept."""
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(f"{path}?{query}" if query else path)


def page_number(text: str) -> int:
    """A page number as typed (spaces around it ignored).

    Returns:
        The number; 1 unless ASCII digits; past 9 digits 10**9, "the last"
        (a paginator clamps it): int() of a 4,301-digit string raises
        (Python's integer string limit).
    """
    text = text.strip()
    if not (text.isascii() and text.isdigit()):
        return 1
    return int(text) if len(text) <= 9 else 10**9
