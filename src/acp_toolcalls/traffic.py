"""Deprecated alias of acp_toolcalls.proxy (issue 18); kept for one release."""

from __future__ import annotations

from .proxy import (
    DIRECTIONS,
    REDACTED,
    SIDES,
    Redactor,
    TrafficRecord,
    is_record,
    log_line,
    one_side,
    read_record,
    skipped_line,
)

__all__ = [
    "DIRECTIONS",
    "REDACTED",
    "SIDES",
    "Redactor",
    "TrafficRecord",
    "is_record",
    "log_line",
    "one_side",
    "read_record",
    "skipped_line",
]
