"""Deprecated alias of acp_toolcalls.convert (the v1 -> v2 mappings; issue 18); kept for one
release."""

from __future__ import annotations

from .convert import (
    DEFAULT_PERMISSION_TITLE,
    V1_PLAN_ID,
    content_to_v2,
    diff_to_v2,
    git_patch,
    permission_request_to_v2,
    session_update_to_v2,
    tool_call_to_v2,
    tool_call_update_to_v2,
)

__all__ = [
    "DEFAULT_PERMISSION_TITLE",
    "V1_PLAN_ID",
    "content_to_v2",
    "diff_to_v2",
    "git_patch",
    "permission_request_to_v2",
    "session_update_to_v2",
    "tool_call_to_v2",
    "tool_call_update_to_v2",
]
