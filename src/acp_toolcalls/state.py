"""Deprecated alias of acp_toolcalls.store (issue 18); kept for one release.

The stored state, limits and sizes now live in the ``acp_toolcalls.store`` package; this
module re-exports the names it had.
"""

from __future__ import annotations

from .store import (
    KIND_LABELS,
    Limits,
    SessionState,
    TerminalState,
    ToolCallState,
    ToolCallView,
    omitted,
    patch_meta,
    size_of,
    view_of,
)

__all__ = [
    "KIND_LABELS",
    "Limits",
    "SessionState",
    "TerminalState",
    "ToolCallState",
    "ToolCallView",
    "omitted",
    "patch_meta",
    "size_of",
    "view_of",
]
