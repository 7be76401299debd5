"""LaTeX in source text shown as Unicode text (wovepaper.text.latex_to_text)."""

from __future__ import annotations

import pytest

from wovepaper.text import MAX_CONVERTED_CHARS, latex_to_text


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
    ],
)
def test_latex_to_text(printed, shown):
    assert latex_to_text(printed) == shown


def test_latex_to_text_leaves_huge_text_as_printed():
    huge = r"$\alpha$ " * (MAX_CONVERTED_CHARS // 8)
    assert latex_to_text(huge) == huge
