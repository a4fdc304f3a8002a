"""The root API is a short allowlist; what the root exported before issue 18 still resolves.

A user holds ``acp_toolcalls``' root in their head: decode, fold, convert, bridge, emit, check.
The models live in ``acp_toolcalls.v2`` / ``acp_toolcalls.v1``, the events in
``acp_toolcalls.events``, the per-item converters in ``acp_toolcalls.convert``. A name added to
the root must be added to ``ROOT_API`` here, on purpose.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from typing import cast

import pytest

import acp_toolcalls

ROOT_API = {
    "__version__", "v1", "v2",
    "AcpToolcallsError", "DecodeError", "EncodeError", "ConversionError", "SenderError",
    "StaleBuildWarning",
    "decode", "decode_message", "encode", "Decoded", "Diagnostic", "UNSET", "UnsetType",
    "VersionName", "JsonRpcMessage", "Batch", "InvalidMessage",
    "ToolCallStore", "Limits", "ToolCallState", "TerminalState", "SessionState", "ToolCallView",
    "Event",
    "V2ToV1Bridge", "V1ToV2Bridge", "Converted", "StatelessV2ToV1", "StatelessV1ToV2",
    "SessionConverter", "Loss", "LossReport",
    "ToolCallEmitter", "TextThrottle", "permission_request", "command_subject",
    "parse_permission_answer", "PermissionAnswer",
    "ConnectionBridge", "Outbox", "ToolCallLinter", "Finding",
}  # fmt: skip
"""The root's ``__all__``, by name (issue 18: about 40 names)."""


def test_the_root_exports_exactly_the_allowlist() -> None:
    assert set(acp_toolcalls.__all__) == ROOT_API
    assert len(acp_toolcalls.__all__) == len(ROOT_API)  # no name twice


def test_the_root_exports_resolve_to_their_modules() -> None:
    for name in acp_toolcalls.__all__:
        assert hasattr(acp_toolcalls, name), name
    assert acp_toolcalls.V2ToV1Bridge.__module__ == "acp_toolcalls.bridge._to_v1"
    assert acp_toolcalls.ConnectionBridge.__module__ == "acp_toolcalls.proxy._core"


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("TextContent", "v2"),
        ("ToolCallUpdate", "v2"),
        ("ToolCallCreated", "events"),
        ("tool_call_to_v1", "convert"),
        ("text_content", "agent"),
        ("KIND_LABELS", "store"),
        ("TerminalProfile", "bridge"),
        ("Protocol", "codec"),
    ],
)
def test_a_name_the_root_exported_before_still_resolves_with_a_warning(
    name: str, home: str
) -> None:
    # In a fresh interpreter: the root caches a name once resolved.
    script = (
        "import warnings, importlib, acp_toolcalls\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        f"    value = getattr(acp_toolcalls, {name!r})\n"
        f"assert value is getattr(importlib.import_module('acp_toolcalls.{home}'), {name!r})\n"
        "print([(w.category.__name__, str(w.message)) for w in seen])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "DeprecationWarning" in done.stdout and f"acp_toolcalls.{home}" in done.stdout


def test_a_name_the_root_never_had_is_an_attribute_error() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            acp_toolcalls.NoSuchName  # type: ignore[attr-defined]  # noqa: B018 - on purpose


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
                cast(str, elt.value)
                for elt in cast(ast.List, node.value).elts  # a list (or tuple) display
                if isinstance(elt, ast.Constant)
            ]
    exports: dict[str, set[str]] = {}
    for table in (acp_toolcalls._EXPORTS, acp_toolcalls._MOVED):
        for module, names in table.items():
            exports.setdefault(module, set()).update(names)
    assert imported == exports
    assert set(static_all) == set(acp_toolcalls.__all__)


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


def test_every_error_says_what_and_where_in_one_format() -> None:
    from acp_toolcalls.agent import SenderError as Sender

    for error in (
        acp_toolcalls.DecodeError("$.params", "not an object"),
        acp_toolcalls.ConversionError("$.status", "no v1 status"),
        Sender("title", "a title is required"),
        acp_toolcalls.EncodeError("a lone surrogate"),
    ):
        assert isinstance(error, acp_toolcalls.AcpToolcallsError)
        assert str(error) == f"{error.reason} at {error.path}", str(error)
    assert acp_toolcalls.EncodeError("x").path == "$"
