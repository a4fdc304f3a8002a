"""Deprecated alias of acp_toolcalls.check (issue 18); kept for one release."""

from ..check import (
    DETECTION_HINTS,
    LOOKAHEAD_BYTES,
    LOOKAHEAD_LINES,
    ProtocolDetector,
    hint_tables,
)

__all__ = [
    "DETECTION_HINTS",
    "LOOKAHEAD_BYTES",
    "LOOKAHEAD_LINES",
    "ProtocolDetector",
    "hint_tables",
]
