"""The root API is a short allowlist, and nothing else: no alias of a name or module.

A user holds ``acp_toolcalls``' root in their head: decode, fold, convert, bridge, emit, check.
The models live in ``acp_toolcalls.v2`` / ``acp_toolcalls.v1``, the events in
``acp_toolcalls.events``, the per-item converters in ``acp_toolcalls.convert``. A name added to
the root must be added to ``ROOT_API`` here, on purpose. The deprecated names and module paths
kept after issue 18 are gone (issue 30: the package was never released).
"""

from __future__ import annotations

import importlib.util
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
    "ConnectionCore", "Outbox", "ToolCallLinter", "Finding",
}  # fmt: skip
"""The root's ``__all__``, by name (issue 18: about 40 names)."""


def test_the_root_exports_exactly_the_allowlist() -> None:
    assert set(acp_toolcalls.__all__) == ROOT_API
    assert len(acp_toolcalls.__all__) == len(ROOT_API)  # no name twice


def test_the_root_exports_resolve_to_their_modules() -> None:
    for name in acp_toolcalls.__all__:
        assert hasattr(acp_toolcalls, name), name
    assert acp_toolcalls.V2ToV1Bridge.__module__ == "acp_toolcalls.bridge._to_v1"
    assert acp_toolcalls.ConnectionCore.__module__ == "acp_toolcalls.proxy._core"


REMOVED_ROOT_NAMES = {
    "agent": (
        "ALLOW_KINDS", "DEFAULT_OPTIONS", "AnswerOutcome", "PermissionAsk", "ToolCallIdReused",
        "ToolCallNotOpen", "diff_content", "permission_options", "text_content",
    ),
    "bridge": ("TerminalProfile",),
    "codec": ("DEFAULT_MAX_BYTES", "duplicate_keys", "to_builtins"),
    "convert": (
        "content_to_v1", "content_to_v2", "diff_to_v2", "git_patch", "permission_request_to_v1",
        "permission_request_to_v2", "permission_response_to_v1", "permission_response_to_v2",
        "session_update_to_v1", "session_update_to_v2", "tool_call_to_v1", "tool_call_to_v2",
        "tool_call_update_to_v1", "tool_call_update_to_v2",
    ),
    "events": (
        "ContentAppended", "DiagnosticKind", "DiagnosticReported", "LimitReached",
        "SessionEvicted", "TerminalCleared", "TerminalCreated", "TerminalEvicted",
        "TerminalOutputAppended", "TerminalPatched", "ToolCallCleared", "ToolCallCreated",
        "ToolCallEndedLocally", "ToolCallEvicted", "ToolCallPatched", "ToolCallReopened",
    ),
    "models": ("UnknownVariant", "extra_fields"),
    "proxy": ("ConnectionNote",),
    "store": ("KIND_LABELS", "patch_meta"),
}  # fmt: skip
"""Names the root resolved with a ``DeprecationWarning`` until issue 30, by their home (with
every name of ``acp_toolcalls.v2.__all__`` and ``Protocol``, the old name of ``VersionName``)."""

REMOVED_MODULES = (
    "bridge_to_v1", "bridge_to_v2", "connection", "emit", "jsonrpc", "lenient", "lint", "loss",
    "methods", "permissions", "routing", "session_convert", "state", "terminal_text", "traffic",
    "v1_to_v2", "v2_to_v1", "wire", "cli.detect",
)  # fmt: skip
"""Module paths that re-exported another module's names until issue 30."""


def test_the_removed_root_names_do_not_resolve() -> None:
    names = {name for names in REMOVED_ROOT_NAMES.values() for name in names}
    names |= {*importlib.import_module("acp_toolcalls.v2").__all__, "Protocol"}
    for home, moved in REMOVED_ROOT_NAMES.items():  # each still lives in its home
        module = importlib.import_module(f"acp_toolcalls.{home}")
        assert all(hasattr(module, name) for name in moved), home
    resolved = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in sorted(names):
            try:
                getattr(acp_toolcalls, name)
            except AttributeError:
                continue
            resolved.append(name)
    assert resolved == []
    assert not hasattr(importlib.import_module("acp_toolcalls.codec"), "Protocol")
    assert not hasattr(importlib.import_module("acp_toolcalls.schema"), "Protocol")


def test_the_removed_alias_modules_are_gone() -> None:
    found = [name for name in REMOVED_MODULES if importlib.util.find_spec(f"acp_toolcalls.{name}")]
    assert found == []


def test_the_removed_keywords_are_type_errors() -> None:
    with pytest.raises(TypeError):
        acp_toolcalls.ToolCallStore(protocol="v2")  # type: ignore[call-arg]  # removed
    with pytest.raises(TypeError):
        acp_toolcalls.ToolCallEmitter("s", protocol_version=2)  # type: ignore[call-arg]
    store = acp_toolcalls.ToolCallStore(version="v1")
    assert not hasattr(store, "protocol") and store.raw_version == "v1"
    assert not hasattr(acp_toolcalls.ToolCallEmitter("s"), "protocol_version")


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
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is not None:
            imported.setdefault(str(node.module), set()).update(a.name for a in node.names)
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            static_all = [
                cast(str, elt.value)
                for elt in cast(ast.List, node.value).elts  # a list (or tuple) display
                if isinstance(elt, ast.Constant)
            ]
    exports = {module: set(names) for module, names in acp_toolcalls._EXPORTS.items()}
    assert imported == exports
    assert set(static_all) == set(acp_toolcalls.__all__)


def test_importing_the_root_imports_no_submodule() -> None:
    script = (
        "import sys, acp_toolcalls; "
        "print(sorted(m for m in sys.modules if m.startswith('acp_toolcalls.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
    lazy = "import acp_toolcalls as a; print(a.ToolCallStore.__module__, a.codec.FAST_PATH != '')"
    done = subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["acp_toolcalls.store._reducer", "True"]


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
