"""Imports go one way (issue 52): no module of the apps imports, even inside a
function, a module that imports it back, and curation's layers (the engine,
proposing, deciding, the matching run) import only the layers below them.

Read from the source with :mod:`ast`, so an import inside a function counts
as much as one at the top of a module.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("wovepaper", "harvest", "curation", "api")


def _modules() -> dict[str, Path]:
    found = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _targets(node: ast.Import | ast.ImportFrom, module: str, modules) -> list[str]:
    """The modules of ``modules`` that ``node`` (in ``module``) imports: the
    module itself for ``from package import submodule``, else the package."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".")
            if not modules[module].name == "__init__.py":
                package = package[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, base] if base else package)
        names = [
            f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
            for alias in node.names
        ]
    found = []
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.append(name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[module].update(_targets(node, module, modules))
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan 1972)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_no_module_imports_one_that_imports_it_back():
    assert _circles(_graph()) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]


# What each layer of curation must not import (DESIGN.md, "Curation" 7; issue
# 52): the engine is pure (no ORM) and below everything; proposing reads the
# engine and the applied state; deciding reads proposing; the matching run
# drives both; the entry points (services, tasks, admin) sit on top.
_ABOVE_PROPOSING = (
    "curation.deciding",
    "curation.matching_run",
    "curation.services",
    "curation.tasks",
    "curation.admin",
    "curation.block_review",
)
FORBIDDEN = {
    "curation.matching": (
        "django.db",
        "curation.models",
        "wovepaper.models",
        "harvest.models",
        "curation.selectors",
        "curation.proposing",
        *_ABOVE_PROPOSING,
    ),
    "curation.proposing": _ABOVE_PROPOSING,
    "curation.deciding": _ABOVE_PROPOSING[1:],
    "curation.matching_run": _ABOVE_PROPOSING[2:],
    "curation.selectors": (
        "curation.proposing",
        "curation.deciding.apply",
        "curation.deciding.bulk",
        "curation.deciding.auto_apply_bulk",
        *_ABOVE_PROPOSING[1:],
    ),
}


def _imports_of(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_each_curation_layer_imports_only_the_layers_below_it():
    broken = []
    for module, path in sorted(_modules().items()):
        for layer, forbidden in FORBIDDEN.items():
            if module != layer and not module.startswith(layer + "."):
                continue
            for name in sorted(_imports_of(path)):
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    broken.append(f"{module} imports {name}")
    assert broken == []
