"""The known values of the tool-call surface's enums, defined once for both versions.

Rules this module owns:

- The v2 enums are open (any string is valid and kept verbatim); the ``str`` enums below list
  the values the spec defines, and their members compare equal to those strings.
- The v1 enums are closed: their values are the same lists without what v2 added (``paused``
  and ``cancelled`` statuses). An unknown string in v1 is kept and reported (D32).
- ``FINAL_STATUSES``: the statuses after which a tool call is finished (v2; v1's are a subset).
- ``VersionName`` names the two protocol versions wherever a version is chosen by name.
- ``UNSTABLE_SESSION_UPDATES``: per version, the ``sessionUpdate`` tags its unstable schema
  adds; they are known variants (kept, never reported as unknown), carried by the bridges
  (``convert._unstable``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Literal

__all__ = [
    "ALLOW_OPTION_KINDS",
    "FINAL_STATUSES",
    "KIND_LABELS",
    "KNOWN_KINDS",
    "KNOWN_OPTION_KINDS",
    "KNOWN_SESSION_UPDATES",
    "KNOWN_STATUSES",
    "REJECT_OPTION_KINDS",
    "TOOL_CALL_ENUMS",
    "UNSTABLE_SESSION_UPDATES",
    "PermissionOptionKind",
    "ToolCallStatus",
    "ToolKind",
    "VersionChoice",
    "VersionName",
]

VersionName = Literal["v1", "v2"]
"""A protocol version by name (``ToolCallStore(version=)``, ``decode_message(version=)``)."""
VersionChoice = Literal["v1", "v2", "auto"]
"""A version to read with, or ``"auto"``: the ``initialize`` exchange (or, for ``validate``,
the messages themselves) decides (``ToolCallStore(version=)``, ``Validator``, the commands'
``--protocol``)."""


class ToolKind(str, enum.Enum):
    """Known tool kinds. Stored values are plain strings; an unknown kind displays as ``other``."""

    READ = "read"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"
    SEARCH = "search"
    EXECUTE = "execute"
    THINK = "think"
    FETCH = "fetch"
    SWITCH_MODE = "switch_mode"
    OTHER = "other"


class ToolCallStatus(str, enum.Enum):
    """Known statuses. Any other string is a custom or future status and counts as running."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


FINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
"""The statuses after which a tool call is finished. Every other string, unknown ones included,
is non-final."""


KIND_LABELS: Mapping[str, str] = {
    "read": "Read",
    "edit": "Edit",
    "delete": "Delete",
    "move": "Move",
    "search": "Search",
    "execute": "Execute",
    "think": "Think",
    "fetch": "Fetch",
    "switch_mode": "Switch mode",
}
"""Display fallback titles by kind (D10); ``other`` and unknown kinds have none."""


class PermissionOptionKind(str, enum.Enum):
    """Known permission option kinds; unknown kinds get a neutral treatment, never ``allow``."""

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    REJECT_ONCE = "reject_once"
    REJECT_ALWAYS = "reject_always"


ALLOW_OPTION_KINDS: frozenset[str] = frozenset({"allow_once", "allow_always"})
"""Option kinds that approve (custom kinds never are read as approval)."""
REJECT_OPTION_KINDS: frozenset[str] = frozenset({"reject_once", "reject_always"})
"""Option kinds that say no."""

_V2_ONLY_STATUSES = frozenset({ToolCallStatus.PAUSED, ToolCallStatus.CANCELLED})

KNOWN_KINDS: tuple[str, ...] = tuple(kind.value for kind in ToolKind)
"""The v1 ``ToolKind`` values (the same as v2's), in schema order."""
KNOWN_STATUSES: tuple[str, ...] = tuple(
    status.value for status in ToolCallStatus if status not in _V2_ONLY_STATUSES
)
"""The v1 ``ToolCallStatus`` values: v2's without ``paused`` and ``cancelled``."""
KNOWN_OPTION_KINDS: tuple[str, ...] = tuple(kind.value for kind in PermissionOptionKind)
"""The v1 ``PermissionOptionKind`` values (the same as v2's)."""
TOOL_CALL_ENUMS: Mapping[str, frozenset[str]] = {
    "kind": frozenset(KNOWN_KINDS),
    "status": frozenset(KNOWN_STATUSES),
}
"""The closed enums of a v1 tool call, by wire name: the strings a v1 reader applies. Any other
string means nothing in v1 (D32): read as omitted, kept only to be sent on."""
KNOWN_SESSION_UPDATES = frozenset(
    {
        "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call",
        "tool_call_update", "plan", "available_commands_update", "current_mode_update",
        "config_option_update", "session_info_update", "usage_update", "notice",
        "compaction_update", "compaction_summary_chunk",
    }
)  # fmt: skip
"""Every ``sessionUpdate`` of the stable v1 schema."""
UNSTABLE_SESSION_UPDATES: Mapping[VersionName, frozenset[str]] = {
    "v1": frozenset(
        {
            "plan_update",
            "plan_removed",
            "subagent_update",
            "session_message",
            "session_message_chunk",
        }
    ),
    "v2": frozenset(
        {"plan_removed", "subagent_update", "session_message", "session_message_chunk"}
    ),
}
"""The ``sessionUpdate`` tags each version's unstable schema adds to its stable one."""
