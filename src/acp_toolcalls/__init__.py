"""acp-toolcalls: the tool-call surface of the Agent Client Protocol, v1 and v2.

Rules this module owns:

- The root API is ``_EXPORTS``: the names a user needs to decode, fold, convert, bridge, emit
  and check tool calls (tests/project/test_public_api.py holds the allowlist). The rest lives in its
  package: the models in ``acp_toolcalls.v2`` / ``acp_toolcalls.v1``, the store's events in
  ``acp_toolcalls.events``, the per-item converters in ``acp_toolcalls.convert``, the agent's
  helpers in ``acp_toolcalls.agent``, the proxy's core in ``acp_toolcalls.proxy``.
- Nothing else resolves at the root: a name whose home is elsewhere is imported from there
  (an ``AttributeError`` here, never an alias; issue 30: the package was never released).
- Importing the package costs nothing until a name is used (PEP 562): ``acp-toolcalls
  --version`` starts as fast as Python does, and ``bridge`` loads neither jsonschema nor rich.
  A name is imported from its module on first use and then kept here. The ``TYPE_CHECKING``
  imports say the same as ``_EXPORTS`` for type checkers (a test keeps them equal).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `from typing import ...`: importing typing costs ~7 ms

__version__ = "0.1.0.dev0"


class _FreshBuilds:
    """First on ``sys.meta_path``: the modules of ``acp_toolcalls._compiled.COMPILED`` (the
    codec's fast path, the bridges', mappings' and store's hot modules) come from their mypyc
    build only when it was built from the sources beside them; that module decides, and is
    imported only then (issue 19)."""

    NAMES = frozenset(
        {
            "acp_toolcalls._fastpath",
            "acp_toolcalls.bridge._to_v1_state",
            "acp_toolcalls.bridge._to_v1_terminals",
            "acp_toolcalls.bridge._to_v1_projection",
            "acp_toolcalls.bridge._to_v1_calls",
            "acp_toolcalls.bridge._to_v1_permissions",
            "acp_toolcalls.bridge._to_v1",
            "acp_toolcalls.convert._kernel",
            "acp_toolcalls.convert._content",
            "acp_toolcalls.convert._plain",
            "acp_toolcalls.convert._tool_calls",
            "acp_toolcalls.store._sizes",
            "acp_toolcalls.store._limits",
            "acp_toolcalls.store._state",
            "acp_toolcalls.store._patch",
            "acp_toolcalls.store._sessions",
            "acp_toolcalls.store._budgets",
            "acp_toolcalls.store._terminals",
            "acp_toolcalls.store._tool_calls",
            "acp_toolcalls.store._v1",
            "acp_toolcalls.store._view",
            "acp_toolcalls.store._reducer",
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
        PermissionAnswer,
        SenderError,
        TextThrottle,
        ToolCallEmitter,
        command_subject,
        parse_permission_answer,
        permission_request,
    )
    from .bridge import V1ToV2Bridge, V2ToV1Bridge
    from .check import Finding, ToolCallLinter
    from .codec import (
        Decoded,
        DecodeError,
        Diagnostic,
        EncodeError,
        StaleBuildWarning,
        VersionName,
        decode,
        decode_message,
        encode,
    )
    from .convert import (
        ConversionError,
        Converted,
        Loss,
        LossReport,
        StatelessV1ToV2,
        StatelessV2ToV1,
    )
    from .events import Event
    from .models import UNSET, Batch, InvalidMessage, JsonRpcMessage, UnsetType
    from .proxy import ConnectionCore, Outbox
    from .sessions import SessionConverter
    from .store import (
        Limits,
        SessionState,
        TerminalState,
        ToolCallState,
        ToolCallStore,
        ToolCallView,
    )

    __all__ = [
        "UNSET",
        # errors
        "AcpToolcallsError",
        "Batch",
        # the proxy's core, and checks
        "ConnectionCore",
        "ConversionError",
        "Converted",
        "DecodeError",
        "Decoded",
        "Diagnostic",
        "EncodeError",
        "Event",
        "Finding",
        "InvalidMessage",
        "JsonRpcMessage",
        "Limits",
        "Loss",
        "LossReport",
        "Outbox",
        "PermissionAnswer",
        "SenderError",
        "SessionConverter",
        "SessionState",
        "StaleBuildWarning",
        "StatelessV1ToV2",
        "StatelessV2ToV1",
        "TerminalState",
        "TextThrottle",
        # an agent's output
        "ToolCallEmitter",
        "ToolCallLinter",
        "ToolCallState",
        # a client's state
        "ToolCallStore",
        "ToolCallView",
        "UnsetType",
        "V1ToV2Bridge",
        # conversion
        "V2ToV1Bridge",
        "VersionName",
        "__version__",
        "command_subject",
        # wire
        "decode",
        "decode_message",
        "encode",
        "parse_permission_answer",
        "permission_request",
        "v1",
        "v2",
    ]

_EXPORTS: dict[str, tuple[str, ...]] = {
    "_errors": ("AcpToolcallsError",),
    "codec": (
        "DecodeError",
        "Decoded",
        "Diagnostic",
        "EncodeError",
        "StaleBuildWarning",
        "VersionName",
        "decode",
        "decode_message",
        "encode",
    ),
    "models": ("UNSET", "Batch", "InvalidMessage", "JsonRpcMessage", "UnsetType"),
    "store": (
        "Limits",
        "SessionState",
        "TerminalState",
        "ToolCallState",
        "ToolCallStore",
        "ToolCallView",
    ),
    "events": ("Event",),
    "bridge": ("V1ToV2Bridge", "V2ToV1Bridge"),
    "convert": (
        "ConversionError",
        "Converted",
        "Loss",
        "LossReport",
        "StatelessV1ToV2",
        "StatelessV2ToV1",
    ),
    "agent": (
        "PermissionAnswer",
        "SenderError",
        "TextThrottle",
        "ToolCallEmitter",
        "command_subject",
        "parse_permission_answer",
        "permission_request",
    ),
    "proxy": ("ConnectionCore", "Outbox"),
    "sessions": ("SessionConverter",),
    "check": ("Finding", "ToolCallLinter"),
}
"""The root API: package -> the names the root exports from it (with ``v1``, ``v2`` and
``__version__``)."""

_ORIGIN = {name: module for module, names in _EXPORTS.items() for name in names}
_SUBMODULES = frozenset({"v1", "v2", *_EXPORTS})


def _public_names() -> list[str]:
    return ["__version__", "v1", "v2", *_ORIGIN]


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
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_public_names()})
