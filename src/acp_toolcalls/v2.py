"""ACP v2 wire models of the tool-call surface (newest draft schema, ``schema/v2/schema.json``).

Rules this module owns (shared/spec/TOOL-CALLS.md sections 5-6):

- Every ``ToolCallUpdate`` field but ``toolCallId`` is a three-state patch field: ``UNSET`` =
  unchanged, ``None`` = clear (``kind`` resets to ``other``, ``status`` to ``pending``), a value
  replaces. Collections are whole arrays. Patch ``_meta`` (on ``ToolCallUpdate`` and
  ``TerminalUpdate``) patches by top-level key; every other ``_meta`` is scoped to its object.
- Enums are open: any string is a valid ``kind``, ``status``, option kind, file type or patch
  format, kept verbatim. ``ToolKind``/``ToolCallStatus`` members compare equal to their strings.
- Unions are open: an unknown discriminator becomes an ``Unknown*`` object that keeps every key;
  a known discriminator with a bad payload is an error for that item, never the fallback.
- Leniency markers on each field mirror the schema's ``x-deserialize-*`` keywords.
- ``session/update`` updates other than the four tool-call and terminal ones are carried as
  ``OpaqueSessionUpdate``: untouched values; ``background_work`` reads a ``state_update``'s
  ``background`` list (6.12).
- Where the schema says omitted and ``null`` are equivalent and the spec's vectors agree (an
  exit status's ``exitCode``/``signal``/``_meta``, T5; a command subject's
  ``toolCallId``/``terminalId``/``_meta``, Q7), ``null`` is read as omitted: decoded equal, never
  written back. Everywhere else ``null`` stays ``null``.
- A terminal ``output`` whose ``data`` is not valid base64 is an invalid value (D22): read as
  omitted, with a diagnostic (``TerminalOutput`` checks it; ``wire.InvalidValue``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar, Union

import msgspec
from msgspec import UNSET, Meta, UnsetType

from .wire import (
    DEFAULT_ON_ERROR,
    SKIP_INVALID_ITEMS,
    AnyOf,
    InvalidValue,
    Open,
    UnknownVariant,
    WireStruct,
    base64_bytes,
)

T = TypeVar("T")

Lenient = Annotated[T | UnsetType | None, DEFAULT_ON_ERROR]
"""An optional, nullable field whose invalid value reads as omitted."""

LenientList = Annotated[list[T] | UnsetType | None, DEFAULT_ON_ERROR, SKIP_INVALID_ITEMS]
"""An optional, nullable array: non-array reads as omitted, bad elements are skipped."""

MetaField = Lenient[dict[str, Any]]
"""``_meta``: an object; a non-object reads as omitted."""

UInt32Min1 = Annotated[int, Meta(ge=1, le=2**32 - 1)]
UInt16Min1 = Annotated[int, Meta(ge=1, le=65535)]
# No upper bound: msgspec cannot express one past int64; a larger value round-trips as is.
UInt64 = Annotated[int, Meta(ge=0)]
Int64 = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]
Priority = Annotated[float, Meta(ge=0.0, le=1.0)]


def _meta() -> Any:
    return msgspec.field(default=UNSET, name="_meta")


class Struct(WireStruct, rename="camel"):
    """Base of the v2 wire objects: camelCase keys, keyword-only construction."""


# --------------------------------------------------------------------------------------------
# Open enums


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


# --------------------------------------------------------------------------------------------
# Content blocks


class Annotations(Struct, kw_only=True):
    """Display hints of a content block. ``audience`` items are open ``Role`` strings."""

    audience: LenientList[str] = UNSET
    last_modified: Lenient[str] = UNSET
    priority: Lenient[Priority] = UNSET
    meta: MetaField = _meta()


class Icon(Struct, kw_only=True):
    """An icon of a resource link; ``src`` must be an ``https:`` or ``data:`` URI (not enforced)."""

    src: str
    mime_type: Lenient[str] = UNSET
    sizes: LenientList[str] = UNSET
    theme: Lenient[str] = UNSET
    meta: MetaField = _meta()


class TextContent(Struct, kw_only=True, tag_field="type", tag="text"):
    """Text, rendered as CommonMark."""

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
    """A link to a resource the client may fetch."""

    name: str
    uri: str
    title: Lenient[str] = UNSET
    description: Lenient[str] = UNSET
    icons: LenientList[Icon] = UNSET
    mime_type: Lenient[str] = UNSET
    size: Lenient[UInt64] = UNSET
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = _meta()


class TextResourceContents(Struct, kw_only=True):
    """Embedded text resource."""

    text: str
    uri: str
    mime_type: Lenient[str] = UNSET
    meta: MetaField = _meta()


class BlobResourceContents(Struct, kw_only=True):
    """Embedded binary resource (base64 ``blob``)."""

    blob: str
    uri: str
    mime_type: Lenient[str] = UNSET
    meta: MetaField = _meta()


if TYPE_CHECKING:
    ResourceContents = Union[TextResourceContents, BlobResourceContents]
else:
    # msgspec cannot pick between two untagged objects: text resources take the fast path.
    ResourceContents = Annotated[
        TextResourceContents, AnyOf((TextResourceContents, BlobResourceContents))
    ]


class EmbeddedResource(Struct, kw_only=True, tag_field="type", tag="resource"):
    """A resource embedded in the content."""

    resource: ResourceContents
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = _meta()


class UnknownContentBlock(UnknownVariant):
    """A content block of a type this library does not know, kept verbatim."""

    tag_field: ClassVar[str] = "type"


if TYPE_CHECKING:
    ContentBlock = Union[
        TextContent,
        ImageContent,
        AudioContent,
        ResourceLink,
        EmbeddedResource,
        UnknownContentBlock,
    ]
else:
    ContentBlock = Annotated[
        TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
        Open(UnknownContentBlock),
    ]


# --------------------------------------------------------------------------------------------
# Diffs


class DiffPatch(Struct, kw_only=True):
    """Renderable patch text; ``format`` is open (``git_patch`` is the ACP-defined one)."""

    format: str
    text: str
    meta: MetaField = _meta()


class _DiffChangeBase(Struct, kw_only=True, tag_field="operation"):
    file_type: Lenient[str] = UNSET
    mime_type: Lenient[str] = UNSET
    meta: MetaField = _meta()


class AddDiffChange(_DiffChangeBase, kw_only=True, tag="add"):
    """A file that did not exist before. ``path`` is absolute."""

    path: str


class DeleteDiffChange(_DiffChangeBase, kw_only=True, tag="delete"):
    """A deleted file; ``fileType``/``mimeType`` describe the deleted file."""

    path: str


class ModifyDiffChange(_DiffChangeBase, kw_only=True, tag="modify"):
    """A changed file."""

    path: str


class MoveDiffChange(_DiffChangeBase, kw_only=True, tag="move"):
    """A renamed file: ``oldPath`` -> ``path``."""

    old_path: str
    path: str


class CopyDiffChange(_DiffChangeBase, kw_only=True, tag="copy"):
    """A copied file: ``oldPath`` -> ``path``."""

    old_path: str
    path: str


class UnknownDiffChange(UnknownVariant):
    """A diff operation this library does not know, kept verbatim."""

    tag_field: ClassVar[str] = "operation"


if TYPE_CHECKING:
    DiffChange = Union[
        AddDiffChange,
        DeleteDiffChange,
        ModifyDiffChange,
        MoveDiffChange,
        CopyDiffChange,
        UnknownDiffChange,
    ]
else:
    DiffChange = Annotated[
        AddDiffChange | DeleteDiffChange | ModifyDiffChange | MoveDiffChange | CopyDiffChange,
        Open(UnknownDiffChange),
    ]


# --------------------------------------------------------------------------------------------
# Tool-call content


class Content(Struct, kw_only=True, tag_field="type", tag="content"):
    """A content block shown as tool-call output."""

    content: ContentBlock
    meta: MetaField = _meta()


class Diff(Struct, kw_only=True, tag_field="type", tag="diff"):
    """File-state diff: ``changes`` is authoritative, ``patch`` optional renderable text."""

    changes: Annotated[list[DiffChange], SKIP_INVALID_ITEMS]
    patch: Lenient[DiffPatch] = UNSET
    meta: MetaField = _meta()


class Terminal(Struct, kw_only=True, tag_field="type", tag="terminal"):
    """A display-only reference to an agent-owned terminal."""

    terminal_id: str
    meta: MetaField = _meta()


class UnknownToolCallContent(UnknownVariant):
    """A tool-call content item of a type this library does not know, kept verbatim."""

    tag_field: ClassVar[str] = "type"


if TYPE_CHECKING:
    ToolCallContent = Union[Content, Diff, Terminal, UnknownToolCallContent]
else:
    ToolCallContent = Annotated[Content | Diff | Terminal, Open(UnknownToolCallContent)]


class ToolCallLocation(Struct, kw_only=True):
    """A file location; ``line`` is 1-based, and ``0`` or out-of-range reads as no line."""

    path: str
    line: Lenient[UInt32Min1] = UNSET
    meta: MetaField = _meta()


class ToolCallCancelCapabilities(Struct, kw_only=True):
    """Presence (even ``{}``) advertises ``tool_call/cancel``."""

    meta: MetaField = _meta()


class ToolCallCapabilities(Struct, kw_only=True):
    """Client-initiated controls; a malformed ``cancel`` means unsupported."""

    cancel: Lenient[ToolCallCancelCapabilities] = UNSET
    meta: MetaField = _meta()


# --------------------------------------------------------------------------------------------
# Tool calls


class ToolCallUpdate(Struct, kw_only=True):
    """The v2 tool-call upsert, keyed by ``toolCallId``.

    Payload of ``sessionUpdate: "tool_call_update"`` (as ``SessionToolCallUpdate``) and of a
    ``tool_call`` permission subject. Every field but ``tool_call_id`` is three-state.
    """

    tool_call_id: str
    name: Lenient[str] = UNSET
    title: Lenient[str] = UNSET
    kind: Lenient[str] = UNSET
    status: Lenient[str] = UNSET
    content: LenientList[ToolCallContent] = UNSET
    locations: LenientList[ToolCallLocation] = UNSET
    raw_input: Lenient[Any] = UNSET
    raw_output: Lenient[Any] = UNSET
    capabilities: Lenient[ToolCallCapabilities] = UNSET
    meta: MetaField = _meta()


class SessionToolCallUpdate(
    ToolCallUpdate, kw_only=True, tag_field="sessionUpdate", tag="tool_call_update"
):
    """``ToolCallUpdate`` as a ``session/update`` variant (carries ``sessionUpdate``)."""


class ToolCallContentChunk(
    Struct, kw_only=True, tag_field="sessionUpdate", tag="tool_call_content_chunk"
):
    """Appends exactly one content item; an invalid item invalidates the whole chunk."""

    tool_call_id: str
    content: ToolCallContent
    meta: MetaField = _meta()


# --------------------------------------------------------------------------------------------
# Terminals


class TerminalOutput(Struct, kw_only=True):
    """Replacement output bytes, base64 (checked: anything else is an invalid value, D22)."""

    data: str
    meta: MetaField = _meta()

    def __post_init__(self) -> None:
        if base64_bytes(self.data) is None:
            raise InvalidValue("data", "not valid base64 (padded, no characters outside it)")


def _null_is_omitted(obj: Any, names: tuple[str, ...]) -> None:
    for name in names:
        if getattr(obj, name) is None:
            setattr(obj, name, UNSET)


class TerminalExitStatus(Struct, kw_only=True):
    """Presence marks the terminal exited, even as ``{}``; a ``null`` inside reads as omitted
    (T5)."""

    exit_code: Lenient[Int64] = UNSET
    signal: Lenient[str] = UNSET
    meta: MetaField = _meta()

    def __post_init__(self) -> None:
        _null_is_omitted(self, ("exit_code", "signal", "meta"))


class TerminalSize(Struct, kw_only=True):
    """Columns and rows, each 1..65535."""

    cols: UInt16Min1
    rows: UInt16Min1
    meta: MetaField = _meta()


class TerminalCancelCapabilities(Struct, kw_only=True):
    """Presence (even ``{}``) advertises ``terminal/cancel``."""

    meta: MetaField = _meta()


class TerminalCapabilities(Struct, kw_only=True):
    """Client-initiated controls of a terminal."""

    cancel: Lenient[TerminalCancelCapabilities] = UNSET
    meta: MetaField = _meta()


class TerminalUpdate(Struct, kw_only=True, tag_field="sessionUpdate", tag="terminal_update"):
    """Upsert of an agent-owned display terminal; ``output`` replaces all stored bytes."""

    terminal_id: str
    command: Lenient[str] = UNSET
    cwd: Lenient[str] = UNSET
    output: Lenient[TerminalOutput] = UNSET
    exit_status: Lenient[TerminalExitStatus] = UNSET
    size: Lenient[TerminalSize] = UNSET
    capabilities: Lenient[TerminalCapabilities] = UNSET
    meta: MetaField = _meta()


class TerminalOutputChunk(
    Struct, kw_only=True, tag_field="sessionUpdate", tag="terminal_output_chunk"
):
    """Appends independently base64-encoded bytes to a terminal."""

    terminal_id: str
    data: str
    meta: MetaField = _meta()


# --------------------------------------------------------------------------------------------
# session/update


class OpaqueSessionUpdate(UnknownVariant):
    """Any other ``session/update`` (messages, plans, state, unknown ones), kept untouched."""

    tag_field: ClassVar[str] = "sessionUpdate"


if TYPE_CHECKING:
    SessionUpdate = Union[
        SessionToolCallUpdate,
        ToolCallContentChunk,
        TerminalUpdate,
        TerminalOutputChunk,
        OpaqueSessionUpdate,
    ]
else:
    SessionUpdate = Annotated[
        SessionToolCallUpdate | ToolCallContentChunk | TerminalUpdate | TerminalOutputChunk,
        Open(OpaqueSessionUpdate),
    ]


def background_work(update: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]] | None:
    """The tool-call ids and terminal ids that a ``state_update`` (as received) lists as
    background work, or ``None`` when it reports none: ``background`` omitted, ``null`` or
    malformed (6.12: one bad element makes the whole list "not reported"). An item of an
    unknown type is well-formed work that names nothing here."""
    items = update.get("background")
    if not isinstance(items, list):
        return None
    calls: set[str] = set()
    terminals: set[str] = set()
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(kind, str):
            return None
        held = _BACKGROUND_IDS.get(kind)
        if held is not None:
            value = item.get(held[0])
            if not isinstance(value, str):
                return None
            (calls if held[1] else terminals).add(value)
    return frozenset(calls), frozenset(terminals)


_BACKGROUND_IDS: Mapping[str, tuple[str, bool]] = {
    "tool_call": ("toolCallId", True),
    "terminal": ("terminalId", False),
}
"""Known background item types: the key of the id each carries, and whether it is a call's."""


class UpdateSessionNotification(Struct, kw_only=True):
    """Params of ``session/update``."""

    session_id: str
    update: SessionUpdate
    meta: MetaField = _meta()


# --------------------------------------------------------------------------------------------
# Permissions


class ToolCallPermissionSubject(Struct, kw_only=True, tag_field="type", tag="tool_call"):
    """The request is about a tool call; ``tool_call`` is applied like a ``tool_call_update``."""

    tool_call: ToolCallUpdate
    meta: MetaField = _meta()


class CommandPermissionSubject(Struct, kw_only=True, tag_field="type", tag="command"):
    """The request is about a command; the ids only associate, they change nothing. A ``null``
    id or ``_meta`` reads as omitted (Q7)."""

    command: str
    cwd: str
    tool_call_id: Lenient[str] = UNSET
    terminal_id: Lenient[str] = UNSET
    meta: MetaField = _meta()

    def __post_init__(self) -> None:
        _null_is_omitted(self, ("tool_call_id", "terminal_id", "meta"))


class UnknownPermissionSubject(UnknownVariant):
    """A subject type this library does not know: show a generic prompt."""

    tag_field: ClassVar[str] = "type"


if TYPE_CHECKING:
    PermissionSubject = Union[
        ToolCallPermissionSubject, CommandPermissionSubject, UnknownPermissionSubject
    ]
else:
    PermissionSubject = Annotated[
        ToolCallPermissionSubject | CommandPermissionSubject,
        Open(UnknownPermissionSubject),
    ]


class PermissionOption(Struct, kw_only=True):
    """One choice; ``kind`` is open."""

    option_id: str
    name: str
    kind: str
    meta: MetaField = _meta()


class RequestPermissionRequest(Struct, kw_only=True):
    """Params of ``session/request_permission``.

    ``title``/``description`` are the prompt's own text and never touch the subject's state.
    ``subject`` is not default-on-error: a malformed subject fails the request (``-32602``).
    """

    session_id: str
    title: str
    options: Annotated[list[PermissionOption], Meta(min_length=1)]
    description: Lenient[str] = UNSET
    subject: PermissionSubject | UnsetType | None = UNSET
    meta: MetaField = _meta()


class SelectedPermissionOutcome(Struct, kw_only=True, tag_field="outcome", tag="selected"):
    """The user picked ``option_id``; approval only if it was offered and is an allow kind."""

    option_id: str
    meta: MetaField = _meta()


class CancelledPermissionOutcome(Struct, kw_only=True, tag_field="outcome", tag="cancelled"):
    """Not approved, no option selected."""

    meta: MetaField = _meta()


class UnknownPermissionOutcome(UnknownVariant):
    """An outcome this library does not know: never approval."""

    tag_field: ClassVar[str] = "outcome"


if TYPE_CHECKING:
    PermissionOutcome = Union[
        SelectedPermissionOutcome, CancelledPermissionOutcome, UnknownPermissionOutcome
    ]
else:
    PermissionOutcome = Annotated[
        SelectedPermissionOutcome | CancelledPermissionOutcome,
        Open(UnknownPermissionOutcome),
    ]


class RequestPermissionResponse(Struct, kw_only=True):
    """Result of ``session/request_permission``."""

    outcome: PermissionOutcome
    meta: MetaField = _meta()

    def selected_option(self, options: list[PermissionOption]) -> PermissionOption | None:
        """The offered option the user selected, or ``None`` (cancelled, unknown, not offered).

        Whether the returned option approves is the agent's reading of its ``kind``.
        """
        if not isinstance(self.outcome, SelectedPermissionOutcome):
            return None
        for option in options:
            if option.option_id == self.outcome.option_id:
                return option
        return None


# --------------------------------------------------------------------------------------------
# JSON-RPC messages carrying the surface


class SessionUpdateMessage(Struct, kw_only=True, tag_field="method", tag="session/update"):
    """A JSON-RPC ``session/update`` notification."""

    jsonrpc: Literal["2.0"] = "2.0"
    params: UpdateSessionNotification


class PermissionRequestMessage(
    Struct, kw_only=True, tag_field="method", tag="session/request_permission"
):
    """A JSON-RPC ``session/request_permission`` request."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: Int64 | str  # v2 `RequestId`: never null
    params: RequestPermissionRequest


__all__ = [
    "ALLOW_OPTION_KINDS",
    "FINAL_STATUSES",
    "REJECT_OPTION_KINDS",
    "AddDiffChange",
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "CancelledPermissionOutcome",
    "CommandPermissionSubject",
    "Content",
    "ContentBlock",
    "CopyDiffChange",
    "DeleteDiffChange",
    "Diff",
    "DiffChange",
    "DiffPatch",
    "EmbeddedResource",
    "Icon",
    "ImageContent",
    "ModifyDiffChange",
    "MoveDiffChange",
    "OpaqueSessionUpdate",
    "PermissionOption",
    "PermissionOptionKind",
    "PermissionOutcome",
    "PermissionRequestMessage",
    "PermissionSubject",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "ResourceContents",
    "ResourceLink",
    "SelectedPermissionOutcome",
    "SessionToolCallUpdate",
    "SessionUpdate",
    "SessionUpdateMessage",
    "Terminal",
    "TerminalCancelCapabilities",
    "TerminalCapabilities",
    "TerminalExitStatus",
    "TerminalOutput",
    "TerminalOutputChunk",
    "TerminalSize",
    "TerminalUpdate",
    "TextContent",
    "TextResourceContents",
    "ToolCallCancelCapabilities",
    "ToolCallCapabilities",
    "ToolCallContent",
    "ToolCallContentChunk",
    "ToolCallLocation",
    "ToolCallPermissionSubject",
    "ToolCallStatus",
    "ToolCallUpdate",
    "ToolKind",
    "UnknownContentBlock",
    "UnknownDiffChange",
    "UnknownPermissionOutcome",
    "UnknownPermissionSubject",
    "UnknownToolCallContent",
    "UpdateSessionNotification",
]
