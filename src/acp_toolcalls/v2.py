"""ACP v2 wire models of the tool-call surface (newest draft schema, ``schema/v2/schema.json``).

The rules the v2 models follow (D46, its parsing and v2 rows; each is owned by the
module of its concept in ``acp_toolcalls.models``):

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
  ``background`` list (D46 (state updates)).
- Where the schema says omitted and ``null`` are equivalent and the spec's vectors agree (an
  exit status's ``exitCode``/``signal``/``_meta``, T5; a command subject's
  ``toolCallId``/``terminalId``/``_meta``, Q7), ``null`` is read as omitted: decoded equal, never
  written back. Everywhere else ``null`` stays ``null``.
- A terminal ``output`` whose ``data`` is not valid base64 is an invalid value (D22): read as
  omitted, with a diagnostic (``TerminalOutput`` checks it; ``models.InvalidValue``).

The models live in ``acp_toolcalls.models`` (one module per concept); this module is their
public path, and exports exactly what it did before they moved (issue 18).
"""

from __future__ import annotations

# Not in __all__, kept as they were: the field shapes and the background-work reader.
from .models._fields import (
    Int64 as Int64,
)
from .models._fields import (
    Lenient as Lenient,
)
from .models._fields import (
    LenientList as LenientList,
)
from .models._fields import (
    MetaField as MetaField,
)
from .models._fields import (
    Priority as Priority,
)
from .models._fields import (
    Struct as Struct,
)
from .models._fields import (
    UInt16Min1 as UInt16Min1,
)
from .models._fields import (
    UInt32Min1 as UInt32Min1,
)
from .models._fields import (
    UInt64 as UInt64,
)
from .models._known import (
    ALLOW_OPTION_KINDS,
    FINAL_STATUSES,
    REJECT_OPTION_KINDS,
    PermissionOptionKind,
    ToolCallStatus,
    ToolKind,
)
from .models._v2_content import (
    Annotations,
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    Icon,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
    TextResourceContents,
    UnknownContentBlock,
)
from .models._v2_permissions import (
    CancelledPermissionOutcome,
    CommandPermissionSubject,
    PermissionOption,
    PermissionOutcome,
    PermissionRequestMessage,
    PermissionSubject,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    ToolCallPermissionSubject,
    UnknownPermissionOutcome,
    UnknownPermissionSubject,
)
from .models._v2_session import (
    OpaqueSessionUpdate,
    SessionUpdate,
    SessionUpdateMessage,
    UpdateSessionNotification,
)
from .models._v2_session import (
    background_work as background_work,
)
from .models._v2_terminals import (
    TerminalCancelCapabilities,
    TerminalCapabilities,
    TerminalExitStatus,
    TerminalOutput,
    TerminalOutputChunk,
    TerminalSize,
    TerminalUpdate,
)
from .models._v2_tool_calls import (
    AddDiffChange,
    Content,
    CopyDiffChange,
    DeleteDiffChange,
    Diff,
    DiffChange,
    DiffPatch,
    ModifyDiffChange,
    MoveDiffChange,
    SessionReference,
    SessionToolCallUpdate,
    Terminal,
    ToolCallCancelCapabilities,
    ToolCallCapabilities,
    ToolCallContent,
    ToolCallContentChunk,
    ToolCallLocation,
    ToolCallUpdate,
    UnknownDiffChange,
    UnknownToolCallContent,
)

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
    "SessionReference",
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
