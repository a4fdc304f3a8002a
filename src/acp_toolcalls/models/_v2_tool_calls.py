"""v2 tool calls: the ``ToolCallUpdate`` upsert, its content items, diffs and locations.

Rules this module owns (D46 (schema markers to field leniency, tool-call update, capabilities)):

- Every ``ToolCallUpdate`` field but ``toolCallId`` is a three-state patch field: ``UNSET`` =
  unchanged, ``None`` = clear (``kind`` resets to ``other``, ``status`` to ``pending``), a value
  replaces. Collections are whole arrays. Its ``_meta`` patches by top-level key.
- ``kind`` and ``status`` are open strings (``models.ToolKind``/``ToolCallStatus`` list the
  known ones); the diff ``format`` and file types are open too.
- Tool-call content and diff changes are open unions (``Unknown*`` fallbacks keep every key).
  ``session`` (``SessionReference``, stable since 2026-11-20) is a display-only reference to
  another session the call operates on (a subagent's): a known item, never an unknown one.
  A content chunk appends exactly one item: an invalid item invalidates the whole chunk.
- A location's ``line`` is 1-based; ``0`` or out of range reads as no line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Union

from msgspec import UNSET

from ._fields import Lenient, LenientList, MetaField, Struct, UInt32Min1, meta_field
from ._v2_content import ContentBlock
from ._wire import SKIP_INVALID_ITEMS, Open, UnknownVariant

__all__ = [
    "AddDiffChange",
    "Content",
    "CopyDiffChange",
    "DeleteDiffChange",
    "Diff",
    "DiffChange",
    "DiffPatch",
    "ModifyDiffChange",
    "MoveDiffChange",
    "SessionReference",
    "SessionToolCallUpdate",
    "Terminal",
    "ToolCallCancelCapabilities",
    "ToolCallCapabilities",
    "ToolCallContent",
    "ToolCallContentChunk",
    "ToolCallLocation",
    "ToolCallUpdate",
    "UnknownDiffChange",
    "UnknownToolCallContent",
]

# --------------------------------------------------------------------------------------------
# Diffs


class DiffPatch(Struct, kw_only=True):
    """Renderable patch text; ``format`` is open (``git_patch`` is the ACP-defined one)."""

    format: str
    text: str
    meta: MetaField = meta_field()


class _DiffChangeBase(Struct, kw_only=True, tag_field="operation"):
    file_type: Lenient[str] = UNSET
    mime_type: Lenient[str] = UNSET
    meta: MetaField = meta_field()


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
    meta: MetaField = meta_field()


class Diff(Struct, kw_only=True, tag_field="type", tag="diff"):
    """File-state diff: ``changes`` is authoritative, ``patch`` optional renderable text."""

    changes: Annotated[list[DiffChange], SKIP_INVALID_ITEMS]
    patch: Lenient[DiffPatch] = UNSET
    meta: MetaField = meta_field()


class Terminal(Struct, kw_only=True, tag_field="type", tag="terminal"):
    """A display-only reference to an agent-owned terminal."""

    terminal_id: str
    meta: MetaField = meta_field()


class SessionReference(Struct, kw_only=True, tag_field="type", tag="session"):
    """A display-only reference to another session that this tool call operates on, such as
    a subagent; that session's updates arrive under its own ``sessionId``."""

    session_id: str
    meta: MetaField = meta_field()


class UnknownToolCallContent(UnknownVariant):
    """A tool-call content item of a type this library does not know, kept verbatim."""

    tag_field: ClassVar[str] = "type"


if TYPE_CHECKING:
    ToolCallContent = Union[Content, Diff, Terminal, SessionReference, UnknownToolCallContent]
else:
    ToolCallContent = Annotated[
        Content | Diff | Terminal | SessionReference, Open(UnknownToolCallContent)
    ]


class ToolCallLocation(Struct, kw_only=True):
    """A file location; ``line`` is 1-based, and ``0`` or out-of-range reads as no line."""

    path: str
    line: Lenient[UInt32Min1] = UNSET
    meta: MetaField = meta_field()


class ToolCallCancelCapabilities(Struct, kw_only=True):
    """Presence (even ``{}``) advertises ``tool_call/cancel``."""

    meta: MetaField = meta_field()


class ToolCallCapabilities(Struct, kw_only=True):
    """Client-initiated controls; a malformed ``cancel`` means unsupported."""

    cancel: Lenient[ToolCallCancelCapabilities] = UNSET
    meta: MetaField = meta_field()


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
    meta: MetaField = meta_field()


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
    meta: MetaField = meta_field()
