"""ACP v1 wire models of the tool-call surface (stable ``schema/v1/schema.json``).

Rules this module owns (D46 (v1 shapes)):

- v1 has a create (``tool_call``, ``title`` required) and an update (``tool_call_update``).
  The models keep ``null`` as ``None`` so that a message re-encodes exactly; what a v1 ``null``
  *means* (D8: "unchanged" in an update, "not provided" in a create) is applied by readers of
  the model (store, converters), never by the codec.
- Enums are closed (``ToolKind``, ``ToolCallStatus``, option kinds, ``Role``): an unknown string,
  such as a leaked v2 ``"cancelled"``, is kept verbatim (D32) and reported; strict mode rejects it.
  What it means to a v1 reader is ``TOOL_CALL_ENUMS``: nothing (an invalid value reads as
  omitted: the default on a create, no change on an update, D46 (v1 shapes)); the string is kept
  only to be sent on.
- Unions are closed: an unknown content or content-block type is an item error (skipped inside
  ``content``). Other ``sessionUpdate`` variants are carried untouched as
  ``OpaqueSessionUpdate``; one that v1 does not define is kept and reported.
- v1 diffs are whole-file texts: ``{path, oldText?, newText}``; terminals are client-owned.
- A ``session`` item (``SessionReference``: ``{sessionId, _meta?}``, a subagent's session) is
  read as the Rust crate's v1 reads it (5.5.1); the bundled v1 schema knows it through an
  overlay. Toward v1 peers the converters still send text (today's v1 SDKs reject it; D41).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union

from msgspec import UNSET

from ._fields import (
    Int64,
    Lenient,
    LenientList,
    LenientNonNull,
    LenientNonNullList,
    MetaField,
    Struct,
    UInt32,
    meta_field,
)
from ._known import (
    KNOWN_KINDS,
    KNOWN_OPTION_KINDS,
    KNOWN_SESSION_UPDATES,
    KNOWN_STATUSES,
    UNSTABLE_SESSION_UPDATES,
)
from ._v2_content import BlobResourceContents, TextResourceContents
from ._wire import CLOSED_ENUM, AnyOf, Open, UnknownVariant

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


# --------------------------------------------------------------------------------------------
# Content blocks (closed union)


class Annotations(Struct, kw_only=True):
    """Display hints; ``audience`` roles are closed in v1, ``priority`` is unbounded."""

    audience: LenientList[Role] = UNSET
    last_modified: Lenient[str] = UNSET
    priority: Lenient[float] = UNSET
    meta: MetaField = meta_field()


class TextContent(Struct, kw_only=True, tag_field="type", tag="text"):
    """Text."""

    text: str
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = meta_field()


class ImageContent(Struct, kw_only=True, tag_field="type", tag="image"):
    """A base64 image."""

    data: str
    mime_type: str
    uri: Lenient[str] = UNSET
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = meta_field()


class AudioContent(Struct, kw_only=True, tag_field="type", tag="audio"):
    """Base64 audio."""

    data: str
    mime_type: str
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = meta_field()


class ResourceLink(Struct, kw_only=True, tag_field="type", tag="resource_link"):
    """A link to a resource; v1 has no icons and a signed ``size``."""

    name: str
    uri: str
    title: Lenient[str] = UNSET
    description: Lenient[str] = UNSET
    mime_type: Lenient[str] = UNSET
    size: Lenient[Int64] = UNSET
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = meta_field()


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
    meta: MetaField = meta_field()


ContentBlock = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]


# --------------------------------------------------------------------------------------------
# Tool-call content (closed union)


class Content(Struct, kw_only=True, tag_field="type", tag="content"):
    """A content block shown as tool-call output."""

    content: ContentBlock
    meta: MetaField = meta_field()


class Diff(Struct, kw_only=True, tag_field="type", tag="diff"):
    """A whole-file diff: ``old_text`` omitted or ``None`` means a new file (D26)."""

    path: str
    new_text: str
    old_text: Lenient[str] = UNSET
    meta: MetaField = meta_field()


class Terminal(Struct, kw_only=True, tag_field="type", tag="terminal"):
    """Embeds a client-owned terminal created with ``terminal/create``."""

    terminal_id: str
    meta: MetaField = meta_field()


class SessionReference(Struct, kw_only=True, tag_field="type", tag="session"):
    """A display-only reference to another session this tool call operates on (a subagent);
    not in the stable v1 schema, but in the v1 of the Rust crate since 5.5.1."""

    session_id: str
    meta: MetaField = meta_field()


ToolCallContent = Union[Content, Diff, Terminal, SessionReference]


class ToolCallLocation(Struct, kw_only=True):
    """A file location; the v1 schema allows ``line: 0``, which readers treat as no line (D7)."""

    path: str
    line: Lenient[UInt32] = UNSET
    meta: MetaField = meta_field()


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
    meta: MetaField = meta_field()


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
    meta: MetaField = meta_field()


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
        Open(
            OpaqueSessionUpdate,
            known_opaque=KNOWN_SESSION_UPDATES | UNSTABLE_SESSION_UPDATES["v1"],
        ),
    ]


class SessionNotification(Struct, kw_only=True):
    """Params of ``session/update``."""

    session_id: str
    update: SessionUpdate
    meta: MetaField = meta_field()


# --------------------------------------------------------------------------------------------
# Permissions


class PermissionOption(Struct, kw_only=True):
    """One choice; ``kind`` is closed in v1."""

    option_id: str
    name: str
    kind: PermissionOptionKind
    meta: MetaField = meta_field()


class RequestPermissionRequest(Struct, kw_only=True):
    """Params of ``session/request_permission``; ``tool_call`` patches the displayed call (D33)."""

    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    meta: MetaField = meta_field()


class SelectedPermissionOutcome(Struct, kw_only=True, tag_field="outcome", tag="selected"):
    """The user picked ``option_id``."""

    option_id: str
    meta: MetaField = meta_field()


class CancelledPermissionOutcome(Struct, kw_only=True, tag_field="outcome", tag="cancelled"):
    """The prompt turn was cancelled; not approved."""


PermissionOutcome = Union[SelectedPermissionOutcome, CancelledPermissionOutcome]


class RequestPermissionResponse(Struct, kw_only=True):
    """Result of ``session/request_permission``."""

    outcome: PermissionOutcome
    meta: MetaField = meta_field()


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
    "SessionReference",
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
