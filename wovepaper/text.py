"""Source text (titles, abstracts, names) made readable: LaTeX to Unicode text.

arXiv titles and abstracts are written in LaTeX (``$\\alpha$-decay``,
``Schr\\"odinger``). The public pages show them as plain Unicode text that the
templates then escape like any other string: nothing from a source is ever
rendered as HTML.
"""

from __future__ import annotations

import functools
import logging
import re

from anyascii import anyascii
from django.core.exceptions import ValidationError
from django.utils.text import slugify
from pylatexenc.latex2text import (
    LatexNodes2Text,
    MacroTextSpec,
    get_default_latex_context_db,
)

logger = logging.getLogger(__name__)

# Longer text is shown as printed: pylatexenc's cost grows faster than the text
# (a hostile 20,000-character field took 0.2 s), and a page or feed converts up
# to a hundred fields. Real abstracts stay under 2,000 characters (arXiv limits
# abstracts to 1,920: arXiv submission help, "Abstract"); the longest of the
# 2,546 real fields in shared/data converts in 8 ms.
MAX_CONVERTED_CHARS = 4_000

# A bare % starts a LaTeX comment and would swallow the rest of the line
# ("at 50% of ..."); a bare & is a table column separator and # a macro
# parameter, both dropped. In titles and abstracts they mean per cent, "and" and
# "number", so they are escaped before conversion.
_BARE_SPECIAL = re.compile(r"(?<!\\)([%&#])")
# What makes text worth converting: a LaTeX special character, or TeX's quote
# ligatures (``quoted'', which arXiv titles print with nothing else of LaTeX).
_LATEXISH = re.compile(r"[\\$^_{}~]|``")
# TeX ends a control word at the first non-letter, but pylatexenc counts any
# Unicode letter as part of it, so ``\mathbfθ`` (bold theta, as arXiv abstracts
# write it) would be one unknown macro and vanish. A space ends the name, as
# TeX reads it.
_MACRO_THEN_UNICODE = re.compile(r"(\\[A-Za-z]+)(?=[^\x00-\x7f])")
# Citations and cross-references point into a paper we do not show.
_CONTEXT = get_default_latex_context_db()
_CONTEXT.add_context_category(
    "wovepaper-references",
    prepend=True,
    macros=[
        MacroTextSpec(name, simplify_repl="[ref]")
        for name in ("cite", "citep", "citet", "ref", "eqref", "autoref")
    ],
)
# Shorthands for the number sets that math papers define in their preamble
# (``\newcommand{\R}{\mathbb{R}}``), which an arXiv abstract uses without the
# definition: 15 ``\R``, 5 ``\Z``, 3 ``\C``, 2 ``\Q``, 2 ``\NN`` in the
# bundled abstracts. Font switches, size and spacing commands pylatexenc does
# not know (``{\rm GeV}``, ``\left(``, ``\displaystyle``: 33, 6 and 3 of
# them there) show nothing of their own, as in TeX; their text stays.
_SHORTHANDS = {
    **dict.fromkeys(("R", "RR"), "ℝ"),
    **dict.fromkeys(("N", "NN"), "ℕ"),
    **dict.fromkeys(("Z", "ZZ"), "ℤ"),
    **dict.fromkeys(("C", "CC"), "ℂ"),
    **dict.fromkeys(("Q", "QQ"), "ℚ"),
    "LaTeX": "LaTeX",
    "TeX": "TeX",
    "colon": ":",
    "thinspace": " ",
    "ne": "≠",
    "arg": "arg",
    "over": "/",
}
_SILENT = (
    "rm it bf em sf tt sl sc cal bold boldsymbol bm mathrm operatorname "
    "displaystyle textstyle scriptstyle scriptscriptstyle left right middle "
    "big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr nonumber "
    "limits nolimits Bbb frak stackrel displaylines"
).split()


def _as_printed(node) -> str:
    """An unknown macro (an author's own ``\\Dh``, ``\\msun``) as printed, not
    dropped: "Let $\\Dh$ and $A$ be" read "Let and A be". Its arguments are
    not known, so a group after it is shown as text of its own, a space
    apart (``\\foo{bar}`` is ``\\foo bar``)."""
    source, end = node.parsing_state.s, node.pos + node.len
    return "\\" + node.macroname + (" " if source[end : end + 1] == "{" else "")


_CONTEXT.add_context_category(
    "wovepaper-shorthands",
    prepend=True,
    macros=[MacroTextSpec(name, simplify_repl=s) for name, s in _SHORTHANDS.items()]
    + [MacroTextSpec(name, discard=True) for name in _SILENT],
)
_CONTEXT.set_unknown_macro_spec(MacroTextSpec("", simplify_repl=_as_printed))
# TeX drops the space after a control word ("\\gamma and"), but source text
# written for a reader means it: "Z^0 \\to 2\\gamma and" read "Z^0 →2γand".
# The space after a macro stays as the source prints it; the space between
# two constructs stays too ("\\textbf{a} \\emph{b}" is "a b", not "ab").
# pylatexenc's keys: latex2text.LatexNodes2Text, strict_latex_spaces.
_SPACES = {
    "between-macro-and-chars": False,
    "between-latex-constructs": True,
    "after-comment": False,
    "in-equations": None,
}
# Definitions are not run ("\\def\\x{\\x\\x}\\x"): what they would print
# cannot be told, so text holding one is shown as printed.
_DEFINITION = re.compile(
    r"\\(?:[egx]?def|let|(?:re)?newcommand|providecommand|DeclareMathOperator)"
    r"(?![A-Za-z])"
)
# What pylatexenc leaves of a macro whose arguments are missing
# ("$\\frac{" read "%s/%s"): the text is shown as printed instead.
_FAILED_SUBSTITUTION = "%s"


@functools.lru_cache(maxsize=4096)
def latex_to_text(value: str) -> str:
    """Render LaTeX markup in source text as Unicode text.

    Math is kept as readable text (``$\\mathcal{N}=4$`` → ``𝒩=4``), accents become
    letters, ``\\%`` and bare ``%`` stay per cent signs. Uses pylatexenc's
    ``LatexNodes2Text`` (https://pylatexenc.readthedocs.io/, latex2text).

    Args:
        value: text as a source printed it (any length).

    Returns:
        Plain text, not HTML-safe (templates escape it). Text without LaTeX
        characters, text longer than :data:`MAX_CONVERTED_CHARS`, text
        holding a macro definition (``\\def``, ``\\newcommand``), text
        pylatexenc cannot parse, a macro left without its arguments
        (``$\\frac{``) and text that would render to nothing come back
        unchanged. A macro pylatexenc does not know is shown as printed.
    """
    if not value or len(value) > MAX_CONVERTED_CHARS or not _LATEXISH.search(value):
        return value
    if _DEFINITION.search(value):
        return value
    try:
        prepared = _MACRO_THEN_UNICODE.sub(r"\1 ", _BARE_SPECIAL.sub(r"\\\1", value))
        text = LatexNodes2Text(
            latex_context=_CONTEXT, math_mode="text", strict_latex_spaces=_SPACES
        ).latex_to_text(prepared)
    except Exception:  # noqa: BLE001 - any parser failure shows the text as printed
        logger.warning("LaTeX not converted", extra={"text": value[:200]})
        return value
    if _FAILED_SUBSTITUTION in text and _FAILED_SUBSTITUTION not in value:
        return value
    text = " ".join(text.split()) if "\n" not in value else text.strip()
    # Markup that renders to nothing (silent switches alone, empty groups)
    # must not blank a title: show it as printed.
    return text or value


# Maths in source text: $$...$$, $...$, \(...\) and \[...\] (an escaped \$ is
# a dollar sign, not a delimiter).
_MATH = re.compile(
    r"(?<!\\)\$\$(?P<dd>.+?)(?<!\\)\$\$"
    r"|(?<!\\)\$(?P<d>.+?)(?<!\\)\$"
    r"|\\\((?P<p>.+?)\\\)"
    r"|\\\[(?P<b>.+?)\\\]",
    re.DOTALL,
)


def _with_edges(source: str, converted: str) -> str:
    """``converted`` with a space on each side where ``source`` had
    whitespace there (:func:`latex_to_text` trims its result)."""
    converted = converted.strip()
    if not converted:
        return " " if source else ""
    head = " " if source[:1].isspace() else ""
    tail = " " if source[-1:].isspace() else ""
    return f"{head}{converted}{tail}"


def latex_math_parts(value: str) -> list[tuple[str, object]]:
    """Source text cut into text and maths, for a page that renders maths.

    Args:
        value: text as a source printed it.

    Returns:
        ``[("text", unicode text) | ("inline" | "display", (TeX source,
        its Unicode reading))]`` in order; text parts are converted by
        :func:`latex_to_text`. Text that :func:`latex_to_text` would show
        as printed (too long, holding a definition) is one text part,
        unconverted.
    """
    if not value:
        return []
    if len(value) > MAX_CONVERTED_CHARS or _DEFINITION.search(value):
        return [("text", value)]
    parts: list[tuple[str, object]] = []
    last = 0
    for found in _MATH.finditer(value):
        text = value[last : found.start()]
        if text:
            parts.append(("text", _with_edges(text, latex_to_text(text))))
        tex = next(g for g in found.groups() if g is not None)
        kind = "display" if found.group("dd") or found.group("b") else "inline"
        parts.append((kind, (tex.strip(), latex_to_text(f"${tex}$"))))
        last = found.end()
    rest = value[last:]
    if rest:
        parts.append(("text", _with_edges(rest, latex_to_text(rest))))
    return parts


def slug_for(text: str, *, fallback: str, max_length: int = 120) -> str:
    """A URL slug for a title or name: LaTeX rendered, transliterated, cut at a word.

    ``"Search for $CP$ violation in $D_{(s)}^{+}$"`` gives
    ``"search-for-cp-violation-in-d_s"``, ``"Florian Kroiß"`` gives
    ``"florian-kroiss"`` (anyascii tables), ``"gravity/coset"`` gives
    ``"gravity-coset"``.

    Args:
        text: the title or display name as stored.
        fallback: the slug when nothing is left (``"paper"``, ``"researcher"``).
        max_length: longest slug; a longer one is cut at the last hyphen.

    Returns:
        ASCII letters, digits, hyphens and underscores; never empty.
    """
    plain = anyascii(latex_to_text(text or ""))
    slug = slugify(re.sub(r"[/\\|.,;:]+", " ", plain))
    if len(slug) > max_length:
        cut = slug[:max_length]
        slug = cut.rsplit("-", 1)[0] if "-" in cut else cut
    return slug.strip("-_") or fallback


def strings_in(value: object) -> list[str]:
    """The strings of a stored JSON list (paper categories, printed affiliations).

    Args:
        value: what a ``JSONField`` holds: normally a list of strings. A list's
            items that are not strings are left out, a bare string is one item,
            anything else (a number, an object, null) gives none.

    Returns:
        The strings, in order: ``["hep-th", 5]`` gives ``["hep-th"]``,
        ``"hep-th"`` gives ``["hep-th"]``, ``5`` gives ``[]``. The readers
        that scan a whole corpus (matching's tables and views, the dossier, the
        profile) read through this, so one row edited by hand costs that row's
        evidence, not the run; :func:`validate_string_list` keeps such rows
        out of the admin.
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def validate_string_list(value: object) -> None:
    """Model validator of a JSON list of strings (``Paper.categories``,
    ``Authorship.affiliations``), run by the admin's forms and ``full_clean``.

    Raises:
        django.core.exceptions.ValidationError: naming the first item that is
            not a string and its Python type, or the value's type when it is not
            a list.
    """
    if not isinstance(value, list):
        raise ValidationError(
            "must be a JSON list of strings, not %(kind)s",
            code="not_a_list",
            params={"kind": type(value).__name__},
        )
    for position, item in enumerate(value, start=1):
        if not isinstance(item, str):
            raise ValidationError(
                "item %(position)s is %(kind)s %(item)s, not a string",
                code="not_a_string",
                params={
                    "position": position,
                    "kind": type(item).__name__,
                    "item": str(item)[:40],
                },
            )


def count_shown(count: int | None) -> str:
    """A stored count as shown on a page or a command's listing: the number,
    or "?" where the row holds none that can be read (``None``, as
    ``MatcherModel.learned_from`` gives for a count edited by hand)."""
    return "?" if count is None else str(count)
