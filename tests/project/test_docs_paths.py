"""Every module path and module name the docs mention exists (issue 30, item 6).

The docs name modules as paths (``src/acp_toolcalls/store/_state.py``, ``proxy/_core.py``) and
as dotted names (``acp_toolcalls.convert.LOSS_CODES``, ``check.ProtocolDetector``). Modules move
and aliases get deleted; a doc that names the old place sends a reader nowhere. A path resolves
when the file or folder exists (from the repository root or from ``src/acp_toolcalls``); a
dotted name resolves when importlib finds the module, or its longest importable prefix has the
rest as attributes.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "acp_toolcalls"
SUBPACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
TOP = ("src", "tests", "docs", "examples", "benchmarks", "fuzz", "acp_toolcalls")

# `src/acp_toolcalls/x/y.py`, and a backquoted path that starts at the repository root or at a
# subpackage: `proxy/_core.py`, `lifecycle/`, `tests/interop/`.
FULL_PATH = re.compile(r"\bsrc/acp_toolcalls(?:/[\w.-]+)*/?")
STARTS = "|".join(TOP + tuple(SUBPACKAGES))
QUOTED_PATH = re.compile(rf"`((?:{STARTS})/(?:[\w.-]+/)*(?:[\w-]+\.\w+|[\w-]+/)?)`")
# Top-level modules deleted in issue 30 (aliases of the package modules); a backquoted
# `lint.MAX_CALLS` or `state.size_of` still names one of them. (`emit` is left out: the docs'
# examples name their ToolCallEmitter `emit`.)
FORMER: tuple[str, ...] = (
    "bridge_to_v1",
    "bridge_to_v2",
    "connection",
    "jsonrpc",
    "lenient",
    "lint",
    "loss",
)
FORMER += ("methods", "permissions", "routing", "session_convert", "state", "terminal_text")
FORMER += ("traffic", "v1_to_v2", "v2_to_v1", "wire")
# `acp_toolcalls.x.y` anywhere; `cli.lines`, `check.ProtocolDetector` when backquoted.
FULL_NAME = re.compile(r"\bacp_toolcalls(?:\.[A-Za-z_]\w*)+")
MODULES = "|".join(SUBPACKAGES + list(FORMER))
QUOTED_NAME = re.compile(rf"`((?:{MODULES})(?:\.[A-Za-z_]\w*)+)`")


def _documents() -> list[Path]:
    docs = sorted((ROOT / "docs").glob("*.md"))
    return [*docs, ROOT / "README.md", ROOT / "CONTRIBUTING.md"]


# Not a module: a file name (`report.js`, `schema.unstable.json`), a path in the upstream
# repository (`docs/rfds/*.mdx`), a placeholder (`fuzz/corpus/TARGET/`).
FILE_SUFFIXES = {"js", "json", "jsonl", "html", "css", "md", "mdx", "txt"}
PLACEHOLDER = re.compile(r"(?:^|/)[A-Z]+(?:/|\.|$)")


def _is_module_mention(kind: str, text: str) -> bool:
    if PLACEHOLDER.search(text) or text.endswith(".mdx"):
        return False
    return kind == "path" or text.rsplit(".", 1)[-1] not in FILE_SUFFIXES


def _path_exists(text: str) -> bool:
    text = text.rstrip("/")
    candidates = [ROOT / text, PACKAGE / text, ROOT / "src" / text]
    if "." in text.rsplit("/", 1)[-1] and not text.endswith(".py"):
        # `fuzz/test_fuzz_emit.FIELDS`: a name in a module, named by the module's path
        module = text.rsplit(".", 1)[0] + ".py"
        candidates += [ROOT / module, PACKAGE / module]
    return any(c.exists() for c in candidates)


def _name_exists(dotted: str) -> bool:
    parts = dotted.rstrip(".").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def _mentions() -> list[tuple[str, str, str]]:
    """(where, kind, text) for every path and dotted name in the docs."""
    found = []
    for doc in _documents():
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{doc.relative_to(ROOT)}:{number}"
            mentions = [("path", m.group(0)) for m in FULL_PATH.finditer(line)]
            mentions += [("path", m.group(1)) for m in QUOTED_PATH.finditer(line)]
            mentions += [("name", m.group(0)) for m in FULL_NAME.finditer(line)]
            mentions += [
                ("name", "acp_toolcalls." + m.group(1)) for m in QUOTED_NAME.finditer(line)
            ]
            found += [(where, k, x) for k, x in mentions if _is_module_mention(k, x)]
    return found


def test_the_scan_finds_paths_and_names() -> None:
    kinds = {kind for _, kind, _ in _mentions()}
    assert kinds == {"path", "name"}, "no path or no name found: the scan is broken"


def test_every_module_path_and_name_in_the_docs_exists() -> None:
    missing = []
    for where, kind, text in _mentions():
        exists = _path_exists(text) if kind == "path" else _name_exists(text)
        if not exists:
            missing.append(f"{where}: {text}")
    assert missing == []


@pytest.mark.parametrize(
    ("text", "exists"),
    [
        ("src/acp_toolcalls/store/_state.py", True),
        ("lifecycle/", True),
        ("proxy/_methods/", False),
        ("src/acp_toolcalls/lenient.py", False),
        ("acp_toolcalls.convert.LOSS_CODES", True),
        ("acp_toolcalls.v1_to_v2", False),
        ("acp_toolcalls.lint.MAX_CALLS", False),
        ("acp_toolcalls.check._lint.MAX_CALLS", True),
        ("acp_toolcalls.convert.NO_SUCH_NAME", False),
        ("tests/fuzz/test_fuzz_emit.FIELDS", True),
        ("fuzz/test_fuzz_emit.FIELDS", False),
    ],
)
def test_the_checks_tell_a_real_place_from_a_stale_one(text: str, exists: bool) -> None:
    check = _name_exists if "." in text and "/" not in text else _path_exists
    assert check(text) is exists
