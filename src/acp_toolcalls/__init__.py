"""acp-toolcalls: the tool-call surface of the Agent Client Protocol, v1 and v2.

The v2 wire models are re-exported here; the v1 ones live in ``acp_toolcalls.v1``.
"""

from __future__ import annotations

from . import v1, v2
from .bridge_to_v1 import TerminalProfile, V2ToV1Bridge
from .bridge_to_v2 import V1ToV2Bridge
from .codec import (
    DEFAULT_MAX_BYTES,
    Decoded,
    EncodeError,
    Protocol,
    decode,
    decode_message,
    duplicate_keys,
    encode,
    to_builtins,
)
from .connection import ConnectionBridge, ConnectionNote, Outbox
from .convert import StatelessV1ToV2, StatelessV2ToV1
from .emit import (
    PermissionAsk,
    TextThrottle,
    ToolCallEmitter,
    ToolCallIdReused,
    ToolCallNotOpen,
    diff_content,
    text_content,
)
from .events import (
    ContentAppended,
    DiagnosticKind,
    DiagnosticReported,
    Event,
    LimitReached,
    SessionEvicted,
    TerminalCleared,
    TerminalCreated,
    TerminalEvicted,
    TerminalOutputAppended,
    TerminalPatched,
    ToolCallCleared,
    ToolCallCreated,
    ToolCallEvicted,
    ToolCallPatched,
    ToolCallReopened,
)
from .jsonrpc import Batch, InvalidMessage, JsonRpcMessage
from .lenient import DecodeError, Diagnostic
from .lint import Finding, ToolCallLinter
from .loss import ConversionError, Converted, Loss, LossReport
from .permissions import (
    ALLOW_KINDS,
    DEFAULT_OPTIONS,
    AnswerOutcome,
    PermissionAnswer,
    SenderError,
    command_subject,
    parse_permission_answer,
    permission_options,
    permission_request,
)
from .state import (
    KIND_LABELS,
    Limits,
    SessionState,
    TerminalState,
    ToolCallState,
    ToolCallView,
    patch_meta,
)
from .store import ToolCallStore
from .v1_to_v2 import (
    content_to_v2,
    diff_to_v2,
    git_patch,
    permission_request_to_v2,
    session_update_to_v2,
    tool_call_to_v2,
    tool_call_update_to_v2,
)
from .v2 import *  # noqa: F403 - the v2 models are the primary public surface
from .v2 import __all__ as _v2_all
from .v2_to_v1 import (
    content_to_v1,
    permission_request_to_v1,
    permission_response_to_v1,
    permission_response_to_v2,
    session_update_to_v1,
    tool_call_to_v1,
    tool_call_update_to_v1,
)
from .wire import UNSET, UnknownVariant, UnsetType, extra_fields

__version__ = "0.1.0.dev0"

__all__ = [
    "ALLOW_KINDS",
    "DEFAULT_OPTIONS",
    "PermissionAnswer",
    "PermissionAsk",
    "SenderError",
    "TextThrottle",
    "ToolCallEmitter",
    "ToolCallIdReused",
    "ToolCallNotOpen",
    "command_subject",
    "diff_content",
    "parse_permission_answer",
    "permission_options",
    "permission_request",
    "text_content",
    "KIND_LABELS",
    "ContentAppended",
    "DiagnosticReported",
    "Event",
    "LimitReached",
    "Limits",
    "SessionEvicted",
    "SessionState",
    "TerminalCleared",
    "TerminalCreated",
    "TerminalEvicted",
    "TerminalOutputAppended",
    "TerminalPatched",
    "TerminalState",
    "ToolCallCleared",
    "ToolCallCreated",
    "ToolCallEvicted",
    "ToolCallPatched",
    "ToolCallReopened",
    "ToolCallState",
    "ToolCallStore",
    "ToolCallView",
    "patch_meta",
    "to_builtins",
    "DEFAULT_MAX_BYTES",
    "UNSET",
    "Batch",
    "DecodeError",
    "Decoded",
    "Diagnostic",
    "EncodeError",
    "InvalidMessage",
    "JsonRpcMessage",
    "Protocol",
    "UnknownVariant",
    "UnsetType",
    "__version__",
    "decode",
    "decode_message",
    "encode",
    "extra_fields",
    "v1",
    "v2",
    *_v2_all,
    "ConversionError",
    "Loss",
    "LossReport",
    "content_to_v2",
    "diff_to_v2",
    "git_patch",
    "tool_call_to_v2",
    "tool_call_update_to_v2",
    "permission_request_to_v2",
    "session_update_to_v2",
    "content_to_v1",
    "permission_request_to_v1",
    "permission_response_to_v1",
    "permission_response_to_v2",
    "session_update_to_v1",
    "tool_call_to_v1",
    "tool_call_update_to_v1",
    "StatelessV1ToV2",
    "StatelessV2ToV1",
    "TerminalProfile",
    "V1ToV2Bridge",
    "V2ToV1Bridge",
    "duplicate_keys",
    "ConnectionBridge",
    "ConnectionNote",
    "Outbox",
    "AnswerOutcome",
    "Converted",
    "DiagnosticKind",
    "Finding",
    "ToolCallLinter",
]
