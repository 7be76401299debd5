"""Template filters for source text: ``latex``, ``md``, ``ld_json``, ``byline``
and ``paper_item``.

``latex`` and ``md`` return plain strings that autoescaping still escapes;
``ld_json`` writes escaped JSON for a JSON-LD script element; ``byline`` writes
a paper row's byline, and ``paper_item`` a whole paper row, as escaped HTML.
"""

from __future__ import annotations

import json
import re
from html import escape
from urllib.parse import quote

from django import template
from django.utils.safestring import SafeString, mark_safe

from wovepaper.text import latex_math_parts, latex_to_text

register = template.Library()


@register.filter
def math(value: str | None) -> SafeString:
    """``{{ paper.title|math }}``: LaTeX text as HTML whose maths KaTeX renders.

    Text outside maths is converted to Unicode (:func:`latex`); each maths
    span becomes ``<span class="math" data-tex="...">`` holding its Unicode
    reading, which ``static/wovepaper/math.js`` replaces with KaTeX's
    rendering of ``data-tex`` (``data-display="1"`` for ``$$...$$`` and
    ``\\[...\\]``). Without scripts, or where KaTeX cannot read the source
    (an author's own macro), the Unicode reading stays.

    Returns:
        Safe HTML: every piece of the source escaped.
    """
    out = []
    for kind, text in latex_math_parts(value or ""):
        if kind == "text":
            out.append(escape(text))
            continue
        tex, shown = text
        # TeX reads a line break as a space; linebreaksbr must not put a <br>
        # inside the attribute.
        tex, shown = " ".join(tex.split()), " ".join(shown.split())
        display = ' data-display="1"' if kind == "display" else ""
        out.append(
            f'<span class="math" data-tex="{escape(tex)}"{display}>'
            f"{escape(shown)}</span>"
        )
    return mark_safe("".join(out))  # noqa: S308 - every piece is escaped


@register.filter
def latex(value: str | None) -> str:
    """``{{ paper.title|latex }}``: LaTeX markup as Unicode text (still escaped)."""
    return latex_to_text(value or "")


# What can start Markdown syntax inside a line: emphasis, code, links and images
# (an escaped ``[`` is enough to stop both), raw HTML, tables, strikethrough, and
# a heading mark. Parentheses, plus signs and braces are left alone: they only
# matter after one of these.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")


_BARE_LINK = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.-]*:(?=//)|\bwww\.)")


@register.filter
def md(value: str | None) -> str:
    """Escape Markdown syntax in source text (CommonMark 2.4 backslash escapes).

    For the Markdown renderings of pages (``Accept: text/markdown``): a title
    such as ``[Click](javascript:...)`` shows as text, not a link. Newlines
    become spaces so a value never starts a new block, and a bare URL or
    ``www.`` name is broken (``https\\://``) so GitHub-flavoured Markdown does
    not link it.
    """
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(value or "").split()))
    # GitHub-flavoured Markdown links bare URLs and www. names (GFM 6.9,
    # autolinks extension); an escaped colon or dot stops it.
    return _BARE_LINK.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], text)


_JSON_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


@register.filter
def ld_json(value: dict) -> str:
    """A dict as the body of ``<script type="application/ld+json">``.

    ``<``, ``>`` and ``&`` are written as JSON escapes (as Django's
    ``json_script`` does), so source text cannot close the script element.
    """
    return mark_safe(  # noqa: S308 - the JSON is escaped above for a script body
        json.dumps(value, ensure_ascii=False, default=str).translate(_JSON_ESCAPES)
    )


@register.filter
def byline(row: dict) -> SafeString:
    """``{{ p|byline }}``: a paper row's shown authors as HTML, each linked to
    their researcher page when applied, "and N more" after them.

    Args:
        row: a paper row of :func:`wovepaper.profile.paper_rows` (``byline``:
            dicts with ``name`` and ``researcher_url`` or None; ``more``: the
            authors not shown).

    Returns:
        Safe HTML; every name and URL escaped, "and N more" a number. Written
        here rather than as a template loop: a search page's 24 bylines were
        most of its rendering time.
    """
    # html.escape is what django.utils.html.escape applies (Django 3.0+),
    # without its lazy-string wrapping per call.
    names = ", ".join(
        f'<a href="{escape(a["researcher_url"])}">{escape(a["name"])}</a>'
        if a["researcher_url"]
        else escape(a["name"])
        for a in row["byline"]
    )
    more = row.get("more")
    return mark_safe(f"{names} and {more} more" if more else names)  # noqa: S308


@register.filter
def paper_item(row: dict) -> SafeString:
    """``{{ p|paper_item }}``: one paper row as the ``<li>`` of a paper list
    (search, researcher, institution, home and following pages): its title
    (LaTeX as text) linked to the paper, its byline (:func:`byline`), date,
    arXiv id, primary category, citation count, arXiv, PDF and DOI links, its
    abstract folded (``<details>``), and "Why is this paper here?" when the
    row says.

    Args:
        row: a paper row of :func:`wovepaper.profile.paper_rows` (``url``,
            ``title``, ``published_shown``, ``arxiv_id``, ``primary_category``,
            ``cited_by_count``, ``why``, ``placement`` (on a researcher's
            page: who placed their slot), ``byline``, ``more``).

    Returns:
        Safe HTML, every value from the row escaped. Written here rather than
        as an included template: including one per row was about a third of
        an uncached search page's time (bench/pages.py).
    """
    meta = escape(row.get("published_shown") or "undated")
    if row.get("arxiv_id"):
        meta += f" · arXiv:{escape(row['arxiv_id'])}"
    if row.get("primary_category"):
        meta += f" · {escape(row['primary_category'])}"
    if row.get("cited_by_count") is not None:
        meta += f" · cited by {escape(str(row['cited_by_count']))}"
    if row.get("placement"):
        meta += f' · <span class="placement">{escape(row["placement"])}</span>'
    links = []
    if row.get("arxiv_id"):
        arxiv = quote(row["arxiv_id"], safe="/.")
        links.append(f'<a href="https://arxiv.org/abs/{arxiv}">arXiv</a>')
        links.append(f'<a href="https://arxiv.org/pdf/{arxiv}">PDF</a>')
    if row.get("doi"):
        links.append(
            f'<a href="https://doi.org/{escape(quote(row["doi"], safe="/"))}">DOI</a>'
        )
    if links:
        meta += ' · <span class="links">' + " · ".join(links) + "</span>"
    abstract = row.get("abstract")
    abstract_html = (
        '<details class="abstract"><summary>Abstract</summary>'
        f"<p>{math(abstract)}</p></details>"
        if abstract
        else ""
    )
    why = row.get("why")
    why_html = (
        '<details class="why"><summary>Why is this paper here?</summary>'
        f"<p>{escape(str(why))}</p></details>"
        if why
        else ""
    )
    return mark_safe(  # noqa: S308 - every value above is escaped
        "<li>\n"
        f'  <a class="paper-title" href="{escape(row["url"])}">'
        f"{math(row.get('title'))}</a>\n"
        f'  <div class="byline">{byline(row)}</div>\n'
        f'  <div class="meta">{meta}</div>\n'
        f"  {abstract_html}{why_html}\n"
        "</li>\n"
    )


# The year chart's drawing box (SVG user units; it scales to its container).
_CHART_WIDTH, _CHART_HEIGHT, _CHART_AXIS, _CHART_TOP, _CHART_BAR = 600, 120, 18, 16, 48


@register.filter
def year_chart(per_year: list, field: str) -> SafeString:
    """``{{ summary.per_year|year_chart:"papers" }}``: a bar chart of one figure
    per year as an inline SVG, drawn on the server (no script, no chart service).

    Args:
        per_year: :class:`wovepaper.stats.YearFigures`, oldest first, every year.
        field: "papers" or "citations".

    Returns:
        An ``<svg role="img">`` with a title, one ``<rect>`` per year (its
        ``<title>`` says the year and the figure, for a hover and for screen
        readers), the first and last year and the highest value as labels;
        "" when there is nothing to draw.
    """
    if field not in {"papers", "citations"} or not per_year:
        return mark_safe("")  # noqa: S308 - empty
    values = [getattr(y, field) for y in per_year]
    top = max(values)
    if top <= 0:
        return mark_safe("")  # noqa: S308 - empty
    # A bar is at most _CHART_BAR wide: one year alone is a bar, not a slab.
    width = min(_CHART_WIDTH / len(values), _CHART_BAR)
    gap = min(2.0, width * 0.2)
    body = _CHART_HEIGHT - _CHART_AXIS - _CHART_TOP
    bars = []
    for figures, value in zip(per_year, values, strict=True):
        x = (figures.year - per_year[0].year) * width
        height = body * value / top
        bars.append(
            f'<rect x="{x + gap / 2:.1f}" y="{_CHART_TOP + body - height:.1f}" '
            f'width="{width - gap:.1f}" height="{height:.1f}">'
            f"<title>{figures.year}: {value} "
            f"{escape(field if value != 1 else field[:-1])}</title></rect>"
        )
    right = min(_CHART_WIDTH, width * len(values))
    first, last = per_year[0].year, per_year[-1].year
    label = f"{escape(field.capitalize())} per year, {first} to {last}"
    return mark_safe(  # noqa: S308 - every value is a number or escaped
        f'<svg class="year-chart {escape(field)}" viewBox="0 0 {_CHART_WIDTH} '
        f'{_CHART_HEIGHT}" role="img" aria-label="{label}"><title>{label}</title>'
        + "".join(bars)
        + f'<text x="0" y="{_CHART_HEIGHT - 4}">{per_year[0].year}</text>'
        f'<text x="{right:.1f}" y="{_CHART_HEIGHT - 4}" text-anchor="end">'
        f"{per_year[-1].year if len(per_year) > 1 else ''}</text>"
        f'<text x="{_CHART_WIDTH}" y="12" text-anchor="end">most in a year: '
        f"{top}</text></svg>"
    )


@register.filter
def thousands(value: int | None) -> str:
    """``{{ n|thousands }}``: a count with thousands separators (6,721); "" for
    None."""
    return "" if value is None else f"{int(value):,}"
