"""acp-toolcalls: the tool-call surface of the Agent Client Protocol, v1 and v2.

The v2 wire models are re-exported here; the v1 ones live in ``acp_toolcalls.v1``.

Rules this module owns: the public API is every name below, and importing the package costs
nothing until one is used (PEP 562): ``acp-toolcalls --version`` starts as fast as Python does,
and ``bridge`` loads neither jsonschema nor rich. A name is imported from its module on first
use and then kept here. The ``TYPE_CHECKING`` imports say the same as ``_EXPORTS`` for type
checkers (tests/test_public_api.py keeps the two equal).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `from typing import ...`: importing typing costs ~7 ms

__version__ = "0.1.0.dev0"


class _FreshBuilds:
    """First on ``sys.meta_path``: the modules of ``acp_toolcalls._compiled.COMPILED`` (the
    bridges' hot modules) come from their mypyc build only when it was built from the sources
    beside them; that module decides, and is imported only then (issue 19)."""

    NAMES = frozenset(
        {
            "acp_toolcalls.bridge_to_v1",
            "acp_toolcalls.convert._kernel",
            "acp_toolcalls.convert._content",
            "acp_toolcalls.convert._plain",
            "acp_toolcalls.convert._tool_calls",
        }
    )
    """``acp_toolcalls.`` and each dotted name of ``_compiled.COMPILED`` (a test keeps the two
    equal); listed here so that no other import pays for ``_compiled``."""

    @classmethod
    def find_spec(cls, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in cls.NAMES:
            return None
        from ._compiled import find_spec

        return find_spec(fullname, path, target)


def _install_finder() -> None:
    import sys  # (built in: costs nothing)

    if not any(getattr(f, "__qualname__", "") == "_FreshBuilds" for f in sys.meta_path):
        sys.meta_path.insert(0, _FreshBuilds)


_install_finder()

if TYPE_CHECKING:
    from typing import Any

    from . import v1, v2
    from ._errors import AcpToolcallsError
    from .agent import (
        ALLOW_KINDS,
        DEFAULT_OPTIONS,
        AnswerOutcome,
        PermissionAnswer,
        PermissionAsk,
        SenderError,
        TextThrottle,
        ToolCallEmitter,
        ToolCallIdReused,
        ToolCallNotOpen,
        command_subject,
        diff_content,
        parse_permission_answer,
        permission_options,
        permission_request,
        text_content,
    )
    from .bridge import TerminalProfile, V1ToV2Bridge, V2ToV1Bridge
    from .check import Finding, ToolCallLinter
    from .codec import (
        DEFAULT_MAX_BYTES,
        Decoded,
        DecodeError,
        Diagnostic,
        EncodeError,
        Protocol,
        StaleBuildWarning,
        VersionName,
        decode,
        decode_message,
        duplicate_keys,
        encode,
        to_builtins,
    )
    from .convert import (
        ConversionError,
        Converted,
        Loss,
        LossReport,
        SessionConverter,
        StatelessV1ToV2,
        StatelessV2ToV1,
        content_to_v1,
        content_to_v2,
        diff_to_v2,
        git_patch,
        permission_request_to_v1,
        permission_request_to_v2,
        permission_response_to_v1,
        permission_response_to_v2,
        session_update_to_v1,
        session_update_to_v2,
        tool_call_to_v1,
        tool_call_to_v2,
        tool_call_update_to_v1,
        tool_call_update_to_v2,
    )
    from .events import (
        ContentAppended,
        DiagnosticKind,
        DiagnosticReported,
        Event,
        LimitReached,
        SessionEvicted,
        TerminalCleared,
        TerminalCreated,
        TerminalEvicted,
        TerminalOutputAppended,
        TerminalPatched,
        ToolCallCleared,
        ToolCallCreated,
        ToolCallEndedLocally,
        ToolCallEvicted,
        ToolCallPatched,
        ToolCallReopened,
    )
    from .models import (
        UNSET,
        Batch,
        InvalidMessage,
        JsonRpcMessage,
        UnknownVariant,
        UnsetType,
        extra_fields,
    )
    from .proxy import ConnectionBridge, ConnectionNote, Outbox
    from .store import (
        KIND_LABELS,
        Limits,
        SessionState,
        TerminalState,
        ToolCallState,
        ToolCallStore,
        ToolCallView,
        patch_meta,
    )
    from .v2 import *  # noqa: F403 - the v2 models are the primary public surface
    from .v2 import __all__ as _v2_all

    __all__ = [
        "ALLOW_KINDS",
        "AcpToolcallsError",
        "DEFAULT_OPTIONS",
        "PermissionAnswer",
        "PermissionAsk",
        "SenderError",
        "TextThrottle",
        "ToolCallEmitter",
        "ToolCallIdReused",
        "ToolCallNotOpen",
        "command_subject",
        "diff_content",
        "parse_permission_answer",
        "permission_options",
        "permission_request",
        "text_content",
        "KIND_LABELS",
        "ContentAppended",
        "DiagnosticReported",
        "Event",
        "LimitReached",
        "Limits",
        "SessionEvicted",
        "SessionState",
        "TerminalCleared",
        "TerminalCreated",
        "TerminalEvicted",
        "TerminalOutputAppended",
        "TerminalPatched",
        "TerminalState",
        "ToolCallCleared",
        "ToolCallCreated",
        "ToolCallEndedLocally",
        "ToolCallEvicted",
        "ToolCallPatched",
        "ToolCallReopened",
        "ToolCallState",
        "ToolCallStore",
        "ToolCallView",
        "patch_meta",
        "to_builtins",
        "DEFAULT_MAX_BYTES",
        "UNSET",
        "Batch",
        "DecodeError",
        "Decoded",
        "Diagnostic",
        "EncodeError",
        "InvalidMessage",
        "JsonRpcMessage",
        "Protocol",
        "StaleBuildWarning",
        "UnknownVariant",
        "VersionName",
        "UnsetType",
        "__version__",
        "decode",
        "decode_message",
        "encode",
        "extra_fields",
        "v1",
        "v2",
        *_v2_all,
        "ConversionError",
        "Loss",
        "LossReport",
        "content_to_v2",
        "diff_to_v2",
        "git_patch",
        "tool_call_to_v2",
        "tool_call_update_to_v2",
        "permission_request_to_v2",
        "session_update_to_v2",
        "content_to_v1",
        "permission_request_to_v1",
        "permission_response_to_v1",
        "permission_response_to_v2",
        "session_update_to_v1",
        "tool_call_to_v1",
        "tool_call_update_to_v1",
        "StatelessV1ToV2",
        "StatelessV2ToV1",
        "SessionConverter",
        "TerminalProfile",
        "V1ToV2Bridge",
        "V2ToV1Bridge",
        "duplicate_keys",
        "ConnectionBridge",
        "ConnectionNote",
        "Outbox",
        "AnswerOutcome",
        "Converted",
        "DiagnosticKind",
        "Finding",
        "ToolCallLinter",
    ]

_EXPORTS: dict[str, tuple[str, ...]] = {
    "_errors": ("AcpToolcallsError",),
    "bridge": ("TerminalProfile", "V1ToV2Bridge", "V2ToV1Bridge"),
    "codec": (
        "DEFAULT_MAX_BYTES",
        "DecodeError",
        "Decoded",
        "Diagnostic",
        "EncodeError",
        "Protocol",
        "StaleBuildWarning",
        "VersionName",
        "decode",
        "decode_message",
        "duplicate_keys",
        "encode",
        "to_builtins",
    ),
    "proxy": ("ConnectionBridge", "ConnectionNote", "Outbox"),
    "convert": (
        "ConversionError",
        "Converted",
        "Loss",
        "LossReport",
        "SessionConverter",
        "StatelessV1ToV2",
        "StatelessV2ToV1",
        "content_to_v1",
        "content_to_v2",
        "diff_to_v2",
        "git_patch",
        "permission_request_to_v1",
        "permission_request_to_v2",
        "permission_response_to_v1",
        "permission_response_to_v2",
        "session_update_to_v1",
        "session_update_to_v2",
        "tool_call_to_v1",
        "tool_call_to_v2",
        "tool_call_update_to_v1",
        "tool_call_update_to_v2",
    ),
    "agent": (
        "ALLOW_KINDS",
        "DEFAULT_OPTIONS",
        "AnswerOutcome",
        "PermissionAnswer",
        "PermissionAsk",
        "SenderError",
        "TextThrottle",
        "ToolCallEmitter",
        "ToolCallIdReused",
        "ToolCallNotOpen",
        "command_subject",
        "diff_content",
        "parse_permission_answer",
        "permission_options",
        "permission_request",
        "text_content",
    ),
    "events": (
        "ContentAppended",
        "DiagnosticKind",
        "DiagnosticReported",
        "Event",
        "LimitReached",
        "SessionEvicted",
        "TerminalCleared",
        "TerminalCreated",
        "TerminalEvicted",
        "TerminalOutputAppended",
        "TerminalPatched",
        "ToolCallCleared",
        "ToolCallCreated",
        "ToolCallEndedLocally",
        "ToolCallEvicted",
        "ToolCallPatched",
        "ToolCallReopened",
    ),
    "check": ("Finding", "ToolCallLinter"),
    "store": (
        "KIND_LABELS",
        "Limits",
        "SessionState",
        "TerminalState",
        "ToolCallState",
        "ToolCallStore",
        "ToolCallView",
        "patch_meta",
    ),
    "models": (
        "UNSET",
        "Batch",
        "InvalidMessage",
        "JsonRpcMessage",
        "UnknownVariant",
        "UnsetType",
        "extra_fields",
    ),
}
"""Submodule -> the names the root re-exports from it (and every name of ``v2.__all__``)."""

_ORIGIN = {name: module for module, names in _EXPORTS.items() for name in names}
_SUBMODULES = frozenset({"v1", "v2", *_EXPORTS})


def _public_names() -> list[str]:
    from .v2 import __all__ as v2_names

    return ["__version__", "v1", "v2", *_ORIGIN, *v2_names]


if not TYPE_CHECKING:  # type checkers read the imports above

    def __getattr__(name: str) -> Any:
        import importlib

        if name == "__all__":
            value: Any = _public_names()
        elif name in _SUBMODULES:
            value = importlib.import_module(f".{name}", __name__)
        elif name in _ORIGIN:
            value = getattr(importlib.import_module(f".{_ORIGIN[name]}", __name__), name)
        else:
            v2 = importlib.import_module(".v2", __name__)
            if name.startswith("__") or name not in v2.__all__:
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
            value = getattr(v2, name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_public_names()})
