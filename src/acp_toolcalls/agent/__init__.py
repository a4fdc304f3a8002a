"""The agent side of the tool-call surface: what an agent sends, checked before it is sent.

``ToolCallEmitter`` (per session, sans-I/O) reports tool calls and terminals as minimal v2
patches, or v1 messages through the bridge; ``permission_request``/``command_subject`` build
checked permission requests and ``parse_permission_answer`` reads the answers; ``SenderError``
is what every sender check raises. Modules, one concept each:

- ``_emitter``: ``ToolCallEmitter``, its arguments, its public API and the tool-call methods;
  it holds its state and its parts (the classes named below);
- ``_core``: ``EmitterState``: the options, call ids, the outgoing queue, pending-text flushes;
- ``_patches``: minimal three-state patches (what the client holds, what changes it);
- ``_throttle``: when growing text is sent again; ``_content``: text and diff items;
- ``_terminals`` (``Terminals``), ``_asks`` (``Asks``: the emitter's permission requests),
  ``_turn`` (``CallEndings``: how calls and turns end);
- ``_permissions``: the permission-request builder and answer parsing;
- ``_senders``: the sender checks the builder and the emitter share.
"""

from ._asks import PermissionAsk
from ._content import diff_content, text_content
from ._core import Message, ToolCallIdReused, ToolCallNotOpen
from ._emitter import ToolCallEmitter
from ._permissions import (
    ALLOW_KINDS,
    DEFAULT_OPTIONS,
    AnswerOutcome,
    PermissionAnswer,
    command_subject,
    parse_permission_answer,
    permission_options,
    permission_request,
)
from ._senders import SenderError
from ._throttle import TextThrottle

__all__ = [
    "ALLOW_KINDS",
    "DEFAULT_OPTIONS",
    "AnswerOutcome",
    "Message",
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
]
