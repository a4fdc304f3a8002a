"""The wire models of the tool-call surface: v1, v2, the JSON-RPC envelopes and known values.

Layout (one concept per module; the modules are private, their names public here or in
``acp_toolcalls.v1`` / ``acp_toolcalls.v2``):

- ``_wire``: the base every model shares (``WireStruct``), the three field states, the
  leniency markers, unknown keys (``extra``) and unknown variants.
- ``_fields``: the field shapes the models are declared with (``Lenient``, ``MetaField``, ...).
- ``_known``: the known enum values (kinds, statuses, option kinds, v1 session updates), once.
- ``_v2_content``, ``_v2_tool_calls``, ``_v2_terminals``, ``_v2_session``,
  ``_v2_permissions``: the v2 models by concept, gathered by ``acp_toolcalls.v2``.
- ``_v1``: the v1 models, gathered by ``acp_toolcalls.v1``.
- ``_registry``: the tool-call field registry, read from the models (issue 28).
- ``_jsonrpc``: the envelopes that are not typed (``JsonRpcMessage``, ``Batch``,
  ``InvalidMessage``), the JSON-RPC error codes and the cancelled permission answer.

The models hold values and the rules of their own fields; reading and writing them is
``acp_toolcalls.codec``'s.
"""

from __future__ import annotations

from ._jsonrpc import (
    CANCELLED_OUTCOME,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    UNSUPPORTED_PROTOCOL_VERSION,
    Batch,
    InvalidMessage,
    JsonRpcMessage,
    error_response,
    plain_id,
    request_key,
    response,
)
from ._known import (
    ALLOW_OPTION_KINDS,
    FINAL_STATUSES,
    KIND_LABELS,
    KNOWN_KINDS,
    KNOWN_OPTION_KINDS,
    KNOWN_SESSION_UPDATES,
    KNOWN_STATUSES,
    REJECT_OPTION_KINDS,
    TOOL_CALL_ENUMS,
    UNSTABLE_SESSION_UPDATES,
    PermissionOptionKind,
    ToolCallStatus,
    ToolKind,
    VersionChoice,
    VersionName,
)
from ._registry import (
    TOOL_CALL_FIELDS,
    V1_TOOL_CALL_FIELDS,
    PatchField,
    UnhandledFieldError,
    check_handled,
    patch_fields,
)
from ._wire import (
    CLOSED_ENUM,
    DEFAULT_ON_ERROR,
    SKIP_INVALID_ITEMS,
    UNSET,
    AnyOf,
    InvalidValue,
    Open,
    UnknownVariant,
    UnsetType,
    WireStruct,
    base64_bytes,
    extra_fields,
    extras_seen,
    replace,
    with_extra_fields,
)

__all__ = [
    "ALLOW_OPTION_KINDS",
    "CANCELLED_OUTCOME",
    "CLOSED_ENUM",
    "DEFAULT_ON_ERROR",
    "FINAL_STATUSES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "KIND_LABELS",
    "KNOWN_KINDS",
    "KNOWN_OPTION_KINDS",
    "KNOWN_SESSION_UPDATES",
    "KNOWN_STATUSES",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REJECT_OPTION_KINDS",
    "REQUEST_CANCELLED",
    "SKIP_INVALID_ITEMS",
    "TOOL_CALL_ENUMS",
    "TOOL_CALL_FIELDS",
    "UNSET",
    "UNSTABLE_SESSION_UPDATES",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "V1_TOOL_CALL_FIELDS",
    "AnyOf",
    "Batch",
    "InvalidMessage",
    "InvalidValue",
    "JsonRpcMessage",
    "Open",
    "PatchField",
    "PermissionOptionKind",
    "ToolCallStatus",
    "ToolKind",
    "UnhandledFieldError",
    "UnknownVariant",
    "UnsetType",
    "VersionChoice",
    "VersionName",
    "WireStruct",
    "base64_bytes",
    "check_handled",
    "error_response",
    "extra_fields",
    "extras_seen",
    "patch_fields",
    "plain_id",
    "replace",
    "request_key",
    "response",
    "with_extra_fields",
]
