"""Known values of the v2 tool-call surface, for the ``custom-value-prefix`` lint (``_lint``).

Rules this module owns (D46 (v2 updates, diffs; sender obligations, item 3); D17): per open enum or
discriminator, its known values (``KNOWN_V2_VALUES``; enum-backed sets from the v2 module, the rest
from the upstream docs; tests check every set against the bundled v2 schema), the stable
``sessionUpdate`` values (``KNOWN_V2_SESSION_UPDATES``), and what to send instead of a removed v1
update (``REMOVED_V1_UPDATES``).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from .. import v2

__all__ = ["KNOWN_V2_SESSION_UPDATES", "KNOWN_V2_VALUES", "REMOVED_V1_UPDATES"]


def _tags(*classes: type[msgspec.Struct]) -> frozenset[str]:
    return frozenset(str(cls.__struct_config__.tag) for cls in classes)


KNOWN_V2_SESSION_UPDATES: frozenset[str] = frozenset(
    {
        "user_message_chunk", "user_message", "agent_message_chunk", "agent_message",
        "agent_thought_chunk", "agent_thought", "state_update", "tool_call_content_chunk",
        "tool_call_update", "terminal_update", "terminal_output_chunk", "plan_update",
        "available_commands_update", "config_option_update", "session_info_update",
        "usage_update", "notice", "compaction_update", "compaction_summary_chunk",
    }
)  # fmt: skip
"""Every ``sessionUpdate`` of the stable v2 schema (D46 (v2 updates))."""

KNOWN_V2_VALUES: Mapping[str, frozenset[str]] = {
    "tool kind": frozenset(k.value for k in v2.ToolKind),
    "tool call status": frozenset(s.value for s in v2.ToolCallStatus),
    "permission option kind": frozenset(k.value for k in v2.PermissionOptionKind),
    "tool call content type": _tags(v2.Content, v2.Diff, v2.Terminal, v2.SessionReference),
    "content block type": _tags(
        v2.TextContent, v2.ImageContent, v2.AudioContent, v2.ResourceLink, v2.EmbeddedResource
    ),
    "diff operation": _tags(
        v2.AddDiffChange,
        v2.DeleteDiffChange,
        v2.ModifyDiffChange,
        v2.MoveDiffChange,
        v2.CopyDiffChange,
    ),
    "diff fileType": frozenset({"text", "binary", "directory", "symlink"}),
    "diff patch format": frozenset({"git_patch"}),
    "permission subject type": _tags(v2.ToolCallPermissionSubject, v2.CommandPermissionSubject),
    "sessionUpdate": KNOWN_V2_SESSION_UPDATES,
}
"""Per open enum or discriminator of the v2 tool-call surface: its known values."""

REMOVED_V1_UPDATES: Mapping[str, str] = {
    "tool_call": "a v1 update; v2 creates tool calls with `tool_call_update`",
    "plan": "a v1 update; v2 uses `plan_update`",
    "current_mode_update": "a v1 update; v2 has no mode updates (modes are config options)",
}
"""v1 ``sessionUpdate`` values a v2 reader ignores as unknown (D17): say what to send instead."""
