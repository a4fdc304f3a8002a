"""Checks of what peers send: schema validation, tool-call lint, the ``validate`` core.

- the schema names (``validate_message``, ``validate_payload``, ``ENGINE``, ...), re-exported
  from ``acp_toolcalls.schema``, which owns them;
- ``_lint``: tool-call lint (sender mistakes that are schema-valid but break clients);
- ``_detect``: which protocol version a log speaks;
- ``_validator``: the sans-I/O core of ``acp-toolcalls validate`` (lines in, findings out).

Importing this package costs nothing until a name is used (PEP 562): the schema names load
jsonschema, which ``acp-toolcalls bridge`` and ``convert`` never do.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from ..schema import (
        ENGINE,
        MethodSpec,
        SchemaViolation,
        method_table,
        validate_message,
        validate_payload,
    )
    from ._detect import (
        DETECTION_HINTS,
        LOOKAHEAD_BYTES,
        LOOKAHEAD_LINES,
        ProtocolDetector,
        VersionLookahead,
        hint_tables,
    )
    from ._lint import (
        CODES,
        KNOWN_V2_SESSION_UPDATES,
        KNOWN_V2_VALUES,
        MAX_CALLS,
        Finding,
        FindingKind,
        ToolCallLinter,
    )
    from ._validator import DECODE_CODES, CountedFinding, Validator

    __all__ = [
        "CODES",
        "DECODE_CODES",
        "DETECTION_HINTS",
        "ENGINE",
        "KNOWN_V2_SESSION_UPDATES",
        "KNOWN_V2_VALUES",
        "LOOKAHEAD_BYTES",
        "LOOKAHEAD_LINES",
        "MAX_CALLS",
        "CountedFinding",
        "Finding",
        "FindingKind",
        "MethodSpec",
        "ProtocolDetector",
        "SchemaViolation",
        "ToolCallLinter",
        "Validator",
        "VersionLookahead",
        "hint_tables",
        "method_table",
        "validate_message",
        "validate_payload",
    ]

_EXPORTS: dict[str, tuple[str, ...]] = {
    "_detect": (
        "DETECTION_HINTS",
        "LOOKAHEAD_BYTES",
        "LOOKAHEAD_LINES",
        "ProtocolDetector",
        "VersionLookahead",
        "hint_tables",
    ),
    "_lint": (
        "CODES",
        "KNOWN_V2_SESSION_UPDATES",
        "KNOWN_V2_VALUES",
        "MAX_CALLS",
        "Finding",
        "FindingKind",
        "ToolCallLinter",
    ),
    "..schema": (
        "ENGINE",
        "MethodSpec",
        "SchemaViolation",
        "method_table",
        "validate_message",
        "validate_payload",
    ),
    "_validator": ("DECODE_CODES", "CountedFinding", "Validator"),
}
"""Module -> the names this package exports from it."""

if not TYPE_CHECKING:  # type checkers read the imports above
    from .._lazy import exports

    __all__ = sorted(name for names in _EXPORTS.values() for name in names)
    __getattr__, __dir__ = exports(__name__, _EXPORTS)
