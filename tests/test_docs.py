"""The README and docs/ name only what exists: every ``manage.py`` command,
every ``bench/`` script, every ``make`` target and every link to a file; and
the README stays short (issue 52: a newcomer reads it in five minutes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_command_script_target_and_link_a_page_names_exists(page: Path):
    text = _text(page)
    commands = set(get_commands())
    for name in re.findall(r"manage\.py ([a-z_]+)", text):
        assert name in commands, f"{page.name} names manage.py {name}"
    for script in re.findall(r"\bbench/([a-z_]+\.py)", text):
        assert (ROOT / "bench" / script).is_file(), f"{page.name} names bench/{script}"
    makefile = _text(ROOT / "Makefile")
    for target in re.findall(r"`make ([a-z][a-z-]*)", text):
        assert re.search(rf"^{target}:", makefile, re.M), f"{page.name}: make {target}"
    for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (page.parent / link).exists(), f"{page.name} links {link}"


def test_the_readme_is_short_and_leads_to_every_guide():
    readme = _text(ROOT / "README.md")
    assert len(readme.splitlines()) <= 150
    for guide in sorted((ROOT / "docs").glob("*.md")):
        assert f"(docs/{guide.name})" in readme, guide.name
    # .ci/run runs the README's test command.
    assert "make test" in readme
    assert re.search(r"^make test\b", _text(ROOT / ".ci" / "run"), re.M)
