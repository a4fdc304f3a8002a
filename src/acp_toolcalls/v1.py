"""ACP v1 wire models of the tool-call surface (stable ``schema/v1/schema.json``).

Rules this module owns (shared/spec/TOOL-CALLS.md section 8):

- v1 has a create (``tool_call``, ``title`` required) and an update (``tool_call_update``).
  The models keep ``null`` as ``None`` so that a message re-encodes exactly; what a v1 ``null``
  *means* (D8: "unchanged" in an update, "not provided" in a create) is applied by readers of
  the model (store, converters), never by the codec.
- Enums are closed (``ToolKind``, ``ToolCallStatus``, option kinds, ``Role``): an unknown string,
  such as a leaked v2 ``"cancelled"``, is kept verbatim (D32) and reported; strict mode rejects it.
  What it means to a v1 reader is ``TOOL_CALL_ENUMS``: nothing (an invalid value reads as
  omitted: the default on a create, no change on an update, 8.1-8.2); the string is kept only
  to be sent on.
- Unions are closed: an unknown content or content-block type is an item error (skipped inside
  ``content``). Other ``sessionUpdate`` variants are carried untouched as
  ``OpaqueSessionUpdate``; one that v1 does not define is kept and reported.
- v1 diffs are whole-file texts: ``{path, oldText?, newText}``; terminals are client-owned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar, Union

import msgspec
from msgspec import UNSET, Meta, UnsetType

from .v2 import BlobResourceContents, Lenient, LenientList, MetaField, TextResourceContents
from .wire import (
    CLOSED_ENUM,
    DEFAULT_ON_ERROR,
    SKIP_INVALID_ITEMS,
    AnyOf,
    Open,
    UnknownVariant,
    WireStruct,
)

T = TypeVar("T")

LenientNonNull = Annotated[T | UnsetType, DEFAULT_ON_ERROR]
"""An optional field that is not nullable in v1; ``null`` or a bad value reads as omitted."""

LenientNonNullList = Annotated[list[T] | UnsetType, DEFAULT_ON_ERROR, SKIP_INVALID_ITEMS]
"""An optional, non-nullable v1 array: bad value reads as omitted, bad elements are skipped."""

UInt32 = Annotated[int, Meta(ge=0, le=2**32 - 1)]
Int64 = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]

KNOWN_KINDS = (
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode",
    "other",
)  # fmt: skip
KNOWN_STATUSES = ("pending", "in_progress", "completed", "failed")
KNOWN_OPTION_KINDS = ("allow_once", "allow_always", "reject_once", "reject_always")
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

if TYPE_CHECKING:
    ToolKind = str
    ToolCallStatus = str
    PermissionOptionKind = str
    Role = str
else:
    ToolKind = Annotated[Literal[KNOWN_KINDS], CLOSED_ENUM]
    ToolCallStatus = Annotated[Literal[KNOWN_STATUSES], CLOSED_ENUM]
    PermissionOptionKind = Annotated[Literal[KNOWN_OPTION_KINDS], CLOSED_ENUM]
    Role = Literal["assistant", "user"]


def _meta() -> Any:
    return msgspec.field(default=UNSET, name="_meta")


class Struct(WireStruct, rename="camel"):
    """Base of the v1 wire objects: camelCase keys, keyword-only construction."""


# --------------------------------------------------------------------------------------------
# Content blocks (closed union)


class Annotations(Struct, kw_only=True):
    """Display hints; ``audience`` roles are closed in v1, ``priority`` is unbounded."""

    audience: LenientList[Role] = UNSET
    last_modified: Lenient[str] = UNSET
    priority: Lenient[float] = UNSET
    meta: MetaField = _meta()


class TextContent(Struct, kw_only=True, tag_field="type", tag="text"):
    """Text."""

    text: str
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = _meta()


class ImageContent(Struct, kw_only=True, tag_field="type", tag="image"):
    """A base64 image."""

    data: str
    mime_type: str
    uri: Lenient[str] = UNSET
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = _meta()


class AudioContent(Struct, kw_only=True, tag_field="type", tag="audio"):
    """Base64 audio."""

    data: str
    mime_type: str
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = _meta()


class ResourceLink(Struct, kw_only=True, tag_field="type", tag="resource_link"):
    """A link to a resource; v1 has no icons and a signed ``size``."""

    name: str
    uri: str
    title: Lenient[str] = UNSET
    description: Lenient[str] = UNSET
    mime_type: Lenient[str] = UNSET
    size: Lenient[Int64] = UNSET
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = _meta()


if TYPE_CHECKING:
    ResourceContents = Union[TextResourceContents, BlobResourceContents]
else:
    ResourceContents = Annotated[
        TextResourceContents, AnyOf((TextResourceContents, BlobResourceContents))
    ]


class EmbeddedResource(Struct, kw_only=True, tag_field="type", tag="resource"):
    """A resource embedded in the content (same resource shapes as v2)."""

    resource: ResourceContents
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = _meta()


ContentBlock = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]


# --------------------------------------------------------------------------------------------
# Tool-call content (closed union)


class Content(Struct, kw_only=True, tag_field="type", tag="content"):
    """A content block shown as tool-call output."""

    content: ContentBlock
    meta: MetaField = _meta()


class Diff(Struct, kw_only=True, tag_field="type", tag="diff"):
    """A whole-file diff: ``old_text`` omitted or ``None`` means a new file (D26)."""

    path: str
    new_text: str
    old_text: Lenient[str] = UNSET
    meta: MetaField = _meta()


class Terminal(Struct, kw_only=True, tag_field="type", tag="terminal"):
    """Embeds a client-owned terminal created with ``terminal/create``."""

    terminal_id: str
    meta: MetaField = _meta()


ToolCallContent = Union[Content, Diff, Terminal]


class ToolCallLocation(Struct, kw_only=True):
    """A file location; the v1 schema allows ``line: 0``, which readers treat as no line (D7)."""

    path: str
    line: Lenient[UInt32] = UNSET
    meta: MetaField = _meta()


# --------------------------------------------------------------------------------------------
# Tool calls


class ToolCall(Struct, kw_only=True, tag_field="sessionUpdate", tag="tool_call"):
    """``sessionUpdate: "tool_call"``: a new tool call (repeated for a known id: merge, D9)."""

    tool_call_id: str
    title: str
    name: Lenient[str] = UNSET
    kind: LenientNonNull[ToolKind] = UNSET
    status: LenientNonNull[ToolCallStatus] = UNSET
    content: LenientNonNullList[ToolCallContent] = UNSET
    locations: LenientNonNullList[ToolCallLocation] = UNSET
    raw_input: Lenient[Any] = UNSET
    raw_output: Lenient[Any] = UNSET
    meta: MetaField = _meta()


class ToolCallUpdate(Struct, kw_only=True):
    """An update of a tool call; in v1 a ``null`` field means "unchanged" (D8)."""

    tool_call_id: str
    kind: Lenient[ToolKind] = UNSET
    status: Lenient[ToolCallStatus] = UNSET
    title: Lenient[str] = UNSET
    name: Lenient[str] = UNSET
    content: LenientList[ToolCallContent] = UNSET
    locations: LenientList[ToolCallLocation] = UNSET
    raw_input: Lenient[Any] = UNSET
    raw_output: Lenient[Any] = UNSET
    meta: MetaField = _meta()


class SessionToolCallUpdate(
    ToolCallUpdate, kw_only=True, tag_field="sessionUpdate", tag="tool_call_update"
):
    """``ToolCallUpdate`` as a ``session/update`` variant (carries ``sessionUpdate``)."""


class OpaqueSessionUpdate(UnknownVariant):
    """Any other ``session/update`` (messages, plans, modes, ...), kept untouched."""

    tag_field: ClassVar[str] = "sessionUpdate"


if TYPE_CHECKING:
    SessionUpdate = Union[ToolCall, SessionToolCallUpdate, OpaqueSessionUpdate]
else:
    SessionUpdate = Annotated[
        ToolCall | SessionToolCallUpdate,
        Open(OpaqueSessionUpdate, known_opaque=KNOWN_SESSION_UPDATES),
    ]


class SessionNotification(Struct, kw_only=True):
    """Params of ``session/update``."""

    session_id: str
    update: SessionUpdate
    meta: MetaField = _meta()


# --------------------------------------------------------------------------------------------
# Permissions


class PermissionOption(Struct, kw_only=True):
    """One choice; ``kind`` is closed in v1."""

    option_id: str
    name: str
    kind: PermissionOptionKind
    meta: MetaField = _meta()


class RequestPermissionRequest(Struct, kw_only=True):
    """Params of ``session/request_permission``; ``tool_call`` patches the displayed call (D33)."""

    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    meta: MetaField = _meta()


class SelectedPermissionOutcome(Struct, kw_only=True, tag_field="outcome", tag="selected"):
    """The user picked ``option_id``."""

    option_id: str
    meta: MetaField = _meta()


class CancelledPermissionOutcome(Struct, kw_only=True, tag_field="outcome", tag="cancelled"):
    """The prompt turn was cancelled; not approved."""


PermissionOutcome = Union[SelectedPermissionOutcome, CancelledPermissionOutcome]


class RequestPermissionResponse(Struct, kw_only=True):
    """Result of ``session/request_permission``."""

    outcome: PermissionOutcome
    meta: MetaField = _meta()


# --------------------------------------------------------------------------------------------
# JSON-RPC messages carrying the surface


class SessionUpdateMessage(Struct, kw_only=True, tag_field="method", tag="session/update"):
    """A JSON-RPC ``session/update`` notification."""

    jsonrpc: Literal["2.0"] = "2.0"
    params: SessionNotification


class PermissionRequestMessage(
    Struct, kw_only=True, tag_field="method", tag="session/request_permission"
):
    """A JSON-RPC ``session/request_permission`` request."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: Int64 | str | None
    params: RequestPermissionRequest


__all__ = [
    "KNOWN_KINDS",
    "KNOWN_OPTION_KINDS",
    "KNOWN_SESSION_UPDATES",
    "KNOWN_STATUSES",
    "Annotations",
    "AudioContent",
    "CancelledPermissionOutcome",
    "Content",
    "ContentBlock",
    "Diff",
    "EmbeddedResource",
    "ImageContent",
    "OpaqueSessionUpdate",
    "PermissionOption",
    "PermissionOutcome",
    "PermissionRequestMessage",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "ResourceLink",
    "SelectedPermissionOutcome",
    "SessionNotification",
    "SessionToolCallUpdate",
    "SessionUpdate",
    "SessionUpdateMessage",
    "Terminal",
    "TextContent",
    "ToolCall",
    "ToolCallContent",
    "ToolCallLocation",
    "ToolCallUpdate",
]
