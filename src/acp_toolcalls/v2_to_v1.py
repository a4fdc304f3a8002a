"""Deprecated alias of acp_toolcalls.convert (the v2 -> v1 mappings; issue 18); kept for one
release."""

from __future__ import annotations

from .convert import (
    DEFAULT_TOOL_CALL_TITLE,
    SYNTHETIC_ID_PREFIX,
    content_to_v1,
    diff_summary,
    display_title,
    permission_request_to_v1,
    permission_response_to_v1,
    permission_response_to_v2,
    session_update_to_v1,
    synthetic_tool_call_id,
    tool_call_to_v1,
    tool_call_update_to_v1,
)

__all__ = [
    "DEFAULT_TOOL_CALL_TITLE",
    "SYNTHETIC_ID_PREFIX",
    "content_to_v1",
    "diff_summary",
    "display_title",
    "permission_request_to_v1",
    "permission_response_to_v1",
    "permission_response_to_v2",
    "session_update_to_v1",
    "synthetic_tool_call_id",
    "tool_call_to_v1",
    "tool_call_update_to_v1",
]
