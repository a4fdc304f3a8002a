"""ACP v1 wire models of the tool-call surface (stable ``schema/v1/schema.json``).

The rules the v1 models follow (D46 (v1 shapes); owned by
``acp_toolcalls.models._v1``, the enums' values by ``acp_toolcalls.models._known``):

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

This module is the public path of the v1 models, and exports exactly what it did before they
moved to ``acp_toolcalls.models`` (issue 18).
"""

from __future__ import annotations

# Not in __all__, kept as they were: the field shapes, the enums' types, the resource contents.
from .models._fields import Int64 as Int64
from .models._fields import LenientNonNull as LenientNonNull
from .models._fields import LenientNonNullList as LenientNonNullList
from .models._fields import Struct as Struct
from .models._fields import UInt32 as UInt32
from .models._known import (
    KNOWN_KINDS,
    KNOWN_OPTION_KINDS,
    KNOWN_SESSION_UPDATES,
    KNOWN_STATUSES,
)
from .models._known import (
    TOOL_CALL_ENUMS as TOOL_CALL_ENUMS,
)
from .models._v1 import (
    Annotations,
    AudioContent,
    CancelledPermissionOutcome,
    Content,
    ContentBlock,
    Diff,
    EmbeddedResource,
    ImageContent,
    OpaqueSessionUpdate,
    PermissionOption,
    PermissionOutcome,
    PermissionRequestMessage,
    RequestPermissionRequest,
    RequestPermissionResponse,
    ResourceLink,
    SelectedPermissionOutcome,
    SessionNotification,
    SessionReference,
    SessionToolCallUpdate,
    SessionUpdate,
    SessionUpdateMessage,
    Terminal,
    TextContent,
    ToolCall,
    ToolCallContent,
    ToolCallLocation,
    ToolCallUpdate,
)
from .models._v1 import (
    PermissionOptionKind as PermissionOptionKind,
)
from .models._v1 import (
    Role as Role,
)
from .models._v1 import (
    ToolCallStatus as ToolCallStatus,
)
from .models._v1 import (
    ToolKind as ToolKind,
)
from .models._v2_content import BlobResourceContents as BlobResourceContents
from .models._v2_content import TextResourceContents as TextResourceContents

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
