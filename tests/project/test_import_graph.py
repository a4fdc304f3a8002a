"""The package's import graph: layers, no cycles, no reaching into another package's privates.

Read from the sources (``ast``): every ``import`` of the package, at module level or inside a
function (a lazy import is still a dependency), and, where a test says so, under ``if
TYPE_CHECKING:`` too (a type-only import is still a dependency of the design, if not of the
running code). A package is a subpackage of ``acp_toolcalls`` or one of its top-level modules.
Each package has a layer (``LAYERS``, bottom first, as docs/architecture.md draws them) and
imports only from lower layers, type-only imports included, so the graph of packages has no
cycle; inside a package, the graph of its modules has none either (a package's ``__init__``
is a module: re-exporting a module is an edge to it, so that module imports its siblings, not
its package). No module imports a private (``_``) module or name of another package, but for
``acp_toolcalls.v1``/``v2``, the models' public faces.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import acp_toolcalls

PACKAGE = Path(acp_toolcalls.__file__ or "").parent

LAYERS: list[set[str]] = [
    # (the stamp: written by a build)
    {"_errors", "_compiled_digest", "_lazy", "_mypyc", "_text"},
    {"_compiled"},  # which build each hot module runs: the codec asks it first
    {"models"},
    {"codec"},
    {"schema"},
    {"convert"},
    {"events"},
    {"store"},
    {"bridge"},
    {"lifecycle", "records"},
    {"proxy", "sessions", "check"},
    {"agent", "conformance", "report", "sdk"},
    {"cli"},
]
"""Packages from the bottom up; each imports only from the layers below it."""

TOP = {"acp_toolcalls", "__main__"}
PART_OF = {"v1": "models", "v2": "models", "_fastpath": "codec"}
"""Top-level modules that belong to a package: the models' public faces, and the codec's fast
path (a top-level module because the optional build compiles it there)."""


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _package(module: str) -> str:
    parts = module.split(".")
    package = parts[1] if len(parts) > 1 else parts[0]
    return PART_OF.get(package, package)


def _imports(module: str, *, type_only: bool = False) -> list[tuple[str, str]]:
    """(imported module, imported name or "") of each import of the package in ``module``;
    ``type_only``: the imports under ``if TYPE_CHECKING:`` too."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if not type_only
        and isinstance(block, ast.If)
        and getattr(block.test, "id", None) == "TYPE_CHECKING"
        for node in ast.walk(block)
    }
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "acp_toolcalls":
                continue
            for alias in node.names:
                if target == "acp_toolcalls" and alias.name == "__version__":
                    continue  # the one value any module may read from the root
                full = f"{target}.{alias.name}"
                found.append((full, "") if full in MODULES else (target, alias.name))
        elif isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.startswith("acp_toolcalls.")]
    return found


def _layer(package: str) -> int:
    for index, layer in enumerate(LAYERS):
        if package in layer:
            return index
    assert package in TOP, f"{package}: in no layer of LAYERS"
    return len(LAYERS)


def test_the_type_only_imports_are_read_only_when_asked() -> None:
    edge = "acp_toolcalls.proxy._stdio"  # `proxy/__init__.py` imports it under TYPE_CHECKING only
    assert edge not in {target for target, _ in _imports("acp_toolcalls.proxy")}
    assert edge in {target for target, _ in _imports("acp_toolcalls.proxy", type_only=True)}


def test_every_package_has_a_layer() -> None:
    for module in MODULES:
        _layer(_package(module))


TYPE_ONLY = pytest.mark.parametrize("type_only", [False, True], ids=["running", "type-only"])


@TYPE_ONLY
def test_each_package_imports_only_from_lower_layers(type_only: bool) -> None:
    upward = []
    for module in MODULES:
        source = _package(module)
        for target, _ in _imports(module, type_only=type_only):
            imported = _package(target)
            if imported != source and _layer(imported) >= _layer(source):
                upward.append(f"{module} imports {target}")
    assert upward == []


@TYPE_ONLY
def test_no_module_imports_another_packages_private_names(type_only: bool) -> None:
    private = []
    for module in MODULES:
        if _package(module) in TOP:
            continue
        for target, name in _imports(module, type_only=type_only):
            if _package(target) == _package(module):
                continue
            inner = target.split(".")[2:]  # (the root's own private modules are shared)
            if any(part.startswith("_") for part in inner) or (
                name.startswith("_") and not name.startswith("__")
            ):
                private.append(f"{module} imports {target} {name}".strip())
    assert private == []


ALLOWED_CYCLES: list[list[str]] = []
"""Cycles inside a package still to break (none): each as the cycle test reports it."""


def _graph() -> dict[str, set[str]]:
    """Module -> the modules of its own package it imports, type-only imports included."""
    return {
        module: {
            target
            for target, _ in _imports(module, type_only=True)
            if target in MODULES and target != module and _package(target) == _package(module)
        }
        for module in MODULES
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, ..., a]``) in each strongly connected part of ``graph`` that has one
    (Tarjan's algorithm, then a shortest way back to the part's first module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = set()
            while True:
                member = stack.pop()
                part.add(member)
                if member == node:
                    break
            if len(part) > 1:
                parts.append(part)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles = []
    for part in parts:
        start = min(part)
        ways = {start: [start]}
        queue = [start]
        while queue:
            node = queue.pop(0)
            for target in sorted(graph[node] & part):
                if target == start:
                    cycles.append([*ways[node], start])
                    queue = []
                    break
                if target not in ways:
                    ways[target] = [*ways[node], target]
                    queue.append(target)
    return sorted(cycles)


def test_the_cycle_search_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]


def test_no_package_has_an_import_cycle_between_its_modules() -> None:
    cycles = [" -> ".join(cycle) for cycle in _cycles(_graph())]
    assert cycles == [" -> ".join(cycle) for cycle in ALLOWED_CYCLES]
