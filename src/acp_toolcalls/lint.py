"""Deprecated alias of acp_toolcalls.check (issue 18); kept for one release."""

from .check import (
    CODES,
    KNOWN_V2_SESSION_UPDATES,
    KNOWN_V2_VALUES,
    MAX_CALLS,
    Finding,
    FindingKind,
    ToolCallLinter,
)

__all__ = [
    "CODES",
    "KNOWN_V2_SESSION_UPDATES",
    "KNOWN_V2_VALUES",
    "MAX_CALLS",
    "Finding",
    "FindingKind",
    "ToolCallLinter",
]
