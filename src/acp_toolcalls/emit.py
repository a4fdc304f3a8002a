"""Deprecated alias of acp_toolcalls.agent (issue 18); kept for one release."""

from .agent import (
    PermissionAsk,
    TextThrottle,
    ToolCallEmitter,
    ToolCallIdReused,
    ToolCallNotOpen,
    diff_content,
    text_content,
)

__all__ = [
    "PermissionAsk",
    "TextThrottle",
    "ToolCallEmitter",
    "ToolCallIdReused",
    "ToolCallNotOpen",
    "diff_content",
    "text_content",
]
