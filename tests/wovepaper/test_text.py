"""LaTeX in source text shown as Unicode text (wovepaper.text.latex_to_text)."""

from __future__ import annotations

import pytest

from wovepaper.text import MAX_CONVERTED_CHARS, latex_to_text, slug_for, strings_in


@pytest.mark.parametrize(
    ("printed", "shown"),
    [
        (r"The $\alpha$-decay of $^{8}$Be", "The α-decay of ^8Be"),
        (r"Schr\"odinger operators", "Schrödinger operators"),
        (r"$\mathcal{N}=4$ SYM at 50% of $T_c$", "𝒩=4 SYM at 50% of T_c"),
        (r"R&D of the #1 detector, 10\% better", "R&D of the #1 detector, 10% better"),
        ("AT&T", "AT&T"),
        ("plain title, no markup", "plain title, no markup"),
        ("<script>alert(1)</script>", "<script>alert(1)</script>"),
        (r"unbalanced {brace $x", "unbalanced brace x"),
        ("", ""),
        # TeX ends a macro name at a non-letter; pylatexenc would eat the θ.
        (r"X \sim N(\mathbfθ, I)", "X ∼ N(θ, I)"),
        # The space after a control word stays as printed; TeX would drop it.
        (r"$Z^0 \to 2\gamma$ and more", "Z^0 → 2γ and more"),
        (r"\textbf{bold} \emph{x}", "bold x"),
        # Real abstracts: number-set shorthands, an author's own macro kept as
        # printed (it vanished: "Let and A be"), font and size switches silent.
        (
            r"an o-minimal structure over $\R$, $T \subset \R^{k}$",
            "an o-minimal structure over ℝ, T ⊂ℝ^k",
        ),
        (r"Let $\Dh$ and $A$ be unital", r"Let \Dh and A be unital"),
        (r"$j\in \N$ on $\Z^2$", "j∈ℕ on ℤ^2"),
        (r"$m = 5\,{\rm GeV}$, $\left( x \right)$", "m = 5 GeV, ( x )"),
        (r"\foo{bar} baz", r"\foo bar baz"),
        # A definition is not run: shown as printed.
        (r"\newcommand{\R}{x} over $\R$", r"\newcommand{\R}{x} over $\R$"),
        # A macro missing its arguments: shown as printed, not "%s/%s".
        (r"abstract $\frac{", r"abstract $\frac{"),
        (
            r"defined in \cite{a,b} as in Theorem \ref{t1}",
            "defined in [ref] as in Theorem [ref]",
        ),
        (r"D{\'e}cembre {\em Lie algebras}", "Décembre Lie algebras"),
        # TeX's quote ligatures with nothing else of LaTeX around them.
        ("Planets ``beyond the snowline''", "Planets “beyond the snowline”"),
        ("it's a ``don't'' case", "it's a “don't” case"),
    ],
)
def test_latex_to_text(printed, shown):
    assert latex_to_text(printed) == shown


def test_latex_to_text_leaves_huge_text_as_printed():
    huge = r"$\alpha$ " * (MAX_CONVERTED_CHARS // 8)
    assert latex_to_text(huge) == huge


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        (
            r"Search for $CP$ violation in $D_{(s)}^{+}$ decays",
            "search-for-cp-violation-in-d_s-decays",
        ),
        ("Florian Kroiß", "florian-kroiss"),
        ("gravity/coset models", "gravity-coset-models"),
        ("李", "li"),
        ("$$", "paper"),
        ("word " * 40, ("word-" * 24)[:-1]),
    ],
)
def test_slug_for(text, slug):
    assert slug_for(text, fallback="paper") == slug


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["hep-th", "math.AG"], ["hep-th", "math.AG"]),
        (["hep-th", 5, None, {"a": 1}, ["cs.NE"]], ["hep-th"]),
        (
            "Massachusetts Institute of Technology",
            ["Massachusetts Institute of Technology"],
        ),
        (5, []),
        (None, []),
        ({"name": "CERN"}, []),
    ],
)
def test_strings_in_a_stored_list_are_its_string_items(value, expected):
    assert strings_in(value) == expected
