"""The package root re-exports the public API of every core module.

A user writes ``from acp_toolcalls import V2ToV1Bridge``; a name a core module lists in its
``__all__`` but the root does not export would be public in one place and missing in the other.
Modules left out are the edges and internals named in ``SUBMODULE_ONLY``, reached by their
module path.
"""

from __future__ import annotations

import importlib
import pkgutil

import acp_toolcalls

SUBMODULE_ONLY = {
    "sdk": "needs the optional official SDK",
    "schema": "imports jsonschema's validators, a start-up cost the CLI pays only in validate",
    "jsonrpc": "envelope helpers of the converters",
    "lenient": "the lenient reader's internals",
    "methods": "the proxy's lifecycle tables",
    "routing": "the proxy's envelope reading",
    "traffic": "the proxy's log records",
    "terminal_text": "text helpers of the v1 terminal rendering",
    "wire": "base classes of the wire models",
    "v1": "the v1 models, as `acp_toolcalls.v1`",
    "v1_to_v2": "mapping constants",
    "v2_to_v1": "mapping constants",
    "state": "view helpers",
    "store": "a typing protocol",
    "lint": "the rule tables",
    "connection": "the `Version` alias",
    "proxy": "the asyncio edge of `acp-toolcalls bridge` (importing asyncio costs every command)",
}
"""Modules whose ``__all__`` is not wholly re-exported, and why."""


def test_every_core_name_is_exported_from_the_root() -> None:
    missing: dict[str, list[str]] = {}
    for info in pkgutil.iter_modules(acp_toolcalls.__path__):
        if info.name.startswith("_") or info.ispkg or info.name in SUBMODULE_ONLY:
            continue
        module = importlib.import_module(f"acp_toolcalls.{info.name}")
        absent = [n for n in getattr(module, "__all__", []) if n not in acp_toolcalls.__all__]
        if absent:
            missing[info.name] = absent
    assert missing == {}


def test_the_root_exports_resolve_to_their_modules() -> None:
    for name in acp_toolcalls.__all__:
        assert hasattr(acp_toolcalls, name), name
    assert acp_toolcalls.V2ToV1Bridge.__module__ == "acp_toolcalls.bridge._to_v1"
    assert acp_toolcalls.ConnectionBridge.__module__ == "acp_toolcalls.proxy._core"


def test_the_lazy_root_and_its_type_checking_imports_agree() -> None:
    # The root imports nothing until a name is used; type checkers read the `TYPE_CHECKING`
    # imports instead. Both must name the same things, from the same modules.
    import ast
    from pathlib import Path

    tree = ast.parse(Path(acp_toolcalls.__file__ or "").read_text(encoding="utf-8"))
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    imported: dict[str, set[str]] = {}
    static_all: list[str] = []
    for node in block.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module not in (None, "v2"):
            imported.setdefault(str(node.module), set()).update(a.name for a in node.names)
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            static_all = [
                elt.value
                for elt in node.value.elts  # type: ignore[attr-defined]
                if isinstance(elt, ast.Constant)
            ]
    exports = {module: set(names) for module, names in acp_toolcalls._EXPORTS.items()}  # type: ignore[attr-defined]
    assert imported == exports
    assert set(static_all) <= set(acp_toolcalls.__all__)
    assert set(acp_toolcalls.__all__) - set(static_all) <= set(acp_toolcalls.v2.__all__)


def test_importing_the_root_imports_no_submodule() -> None:
    import subprocess
    import sys

    script = (
        "import sys, acp_toolcalls; "
        "print(sorted(m for m in sys.modules if m.startswith('acp_toolcalls.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
    lazy = "import acp_toolcalls as a; print(a.ToolCallUpdate.__module__, a.codec.FAST_PATH != '')"
    done = subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["acp_toolcalls.models._v2_tool_calls", "True"]


def test_one_exception_base_catches_every_error_the_library_raises() -> None:
    errors = (
        acp_toolcalls.DecodeError,
        acp_toolcalls.EncodeError,
        acp_toolcalls.ConversionError,
        acp_toolcalls.SenderError,
    )
    for error in errors:
        assert issubclass(error, acp_toolcalls.AcpToolcallsError), error
        assert issubclass(error, ValueError), error  # what each was before (issue 18)
    try:
        acp_toolcalls.decode_message(b"{", strict=True)
    except acp_toolcalls.AcpToolcallsError as exc:
        assert isinstance(exc, acp_toolcalls.DecodeError)
    else:
        raise AssertionError("a line that is not JSON decoded")
