"""The package's import graph: layers, no cycles, no reaching into another package's privates.

Read from the sources (``ast``): every ``import`` of the package, at module level or inside a
function (a lazy import is still a dependency), but not under ``if TYPE_CHECKING:``. A package
is a subpackage of ``acp_toolcalls`` or one of its top-level modules. Each package has a layer
(``LAYERS``, bottom first, as docs/architecture.md draws them) and imports only from lower
layers, so the graph has no cycle; no module imports a private (``_``) module or name of
another package, but for ``acp_toolcalls.v1``/``v2``, the models' public faces.
"""

from __future__ import annotations

import ast
from pathlib import Path

import acp_toolcalls

PACKAGE = Path(acp_toolcalls.__file__ or "").parent

LAYERS: list[set[str]] = [
    # (the digests: written by a build)
    {"_errors", "_compiled_digest", "_fastpath_digest", "_lazy", "_mypyc", "_text"},
    {"models"},
    {"codec"},
    {"schema", "_compiled"},
    {"convert"},
    {"events"},
    {"store"},
    {"bridge"},
    {"proxy"},
    {"sessions", "check"},
    {"agent", "report", "sdk"},
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


def _imports(module: str) -> list[tuple[str, str]]:
    """(imported module, imported name or "") of each import of the package in ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and getattr(block.test, "id", None) == "TYPE_CHECKING"
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


def test_every_package_has_a_layer() -> None:
    for module in MODULES:
        _layer(_package(module))


def test_each_package_imports_only_from_lower_layers() -> None:
    upward = []
    for module in MODULES:
        source = _package(module)
        for target, _ in _imports(module):
            imported = _package(target)
            if imported != source and _layer(imported) >= _layer(source):
                upward.append(f"{module} imports {target}")
    assert upward == []


def test_no_module_imports_another_packages_private_names() -> None:
    private = []
    for module in MODULES:
        if _package(module) in TOP:
            continue
        for target, name in _imports(module):
            if _package(target) == _package(module):
                continue
            inner = target.split(".")[2:]  # (the root's own private modules are shared)
            if any(part.startswith("_") for part in inner) or (
                name.startswith("_") and not name.startswith("__")
            ):
                private.append(f"{module} imports {target} {name}".strip())
    assert private == []
