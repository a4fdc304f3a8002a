"""The session-lifecycle methods across versions: initialize, auth, session setup, prompts.

Below the proxy: the proxy's core (``proxy``) and the offline converter of whole logs
(``sessions``) map the lifecycle with these tables, and ``check`` reads who sends each method
(``SENDERS``) and which sessions replay their history (``replays_history``).

Rules this package owns (the v2 migration guide's method table, ``docs/protocol/v2/migration.mdx``,
for what a proxy between a v1 and a v2 peer must map; tool calls and permissions are the
bridges' and converters' job, D46 (conversion modes to what is lost)), one concept per module:

- ``_tables``: ``TO_V2``/``TO_V1`` (one method of the other version for each client request),
  ``NO_V2``/``NO_V1`` (none, and why), ``MODES_TO_V1``/``MODES_TO_V2``/``MODE_OPTION_TO_V2``,
  ``map_params`` and ``map_result``.
- ``_initialize``: capabilities, implementation info and auth methods.
- ``_sessions``: MCP servers and session setup (new, load, resume); ``replays_history``.
- ``_modes``: v1 session modes shown to a v2 client as a config option (``Modes``), a v2
  agent's mode option shown to a v1 client as session modes (``AgentModes``), config options.
- ``_turns``: the prompt's params and a turn's end in each version.
- ``_prompt_turns``: the prompt-turn state machine (``Turns``, one a session): when a turn is
  acknowledged, ends or ends in an error, and the framing of permission requests in it; its
  effects (``Acknowledge``, ``End``, ...) are what the proxy and the converter write.
- ``_senders``: who sends every method (``SENDERS``).
- ``_jsonrpc`` (exported as ``jsonrpc``): the JSON-RPC lines a converter writes itself (a
  request, a notification, a result, an error, a ``session/update``), as plain values.
- ``_common``: ``Mapped``, ``MethodMap`` and the JSON helpers they share. Params and results are
  mapped as JSON values (outside the typed tool-call surface); mappings never change their input;
  every field they drop, invent or cannot carry is a ``Loss`` (``strict`` is not offered: a
  proxy cannot refuse a lifecycle message).
"""

from __future__ import annotations

from . import _jsonrpc as jsonrpc
from ._common import Mapped, MethodMap
from ._modes import MODE_CONFIG_ID, AgentModes, Modes
from ._prompt_turns import (
    Acknowledge,
    End,
    EndInError,
    NotFollowed,
    RequiresAction,
    Running,
    TurnEffect,
    TurnError,
    Turns,
)
from ._senders import SENDERS, MethodSender
from ._sessions import replays_history
from ._tables import (
    MODE_OPTION_TO_V2,
    MODES_TO_V1,
    MODES_TO_V2,
    NO_V1,
    NO_V2,
    TO_V1,
    TO_V2,
    map_params,
    map_result,
)
from ._turns import (
    CLIENT_OWNED,
    MESSAGE_CHUNKS,
    MESSAGE_UPSERTS,
    MODE_UPDATES,
    USER_ECHOES,
    V1_STOP_REASONS,
    message_chunks,
    prompt_accepted,
    prompt_end_to_v1,
    prompt_error_to_v2,
    prompt_result_to_v2,
    upsert_as_chunks,
)

__all__ = [
    "CLIENT_OWNED",
    "MESSAGE_CHUNKS",
    "MESSAGE_UPSERTS",
    "MODES_TO_V1",
    "MODES_TO_V2",
    "MODE_CONFIG_ID",
    "MODE_OPTION_TO_V2",
    "MODE_UPDATES",
    "NO_V1",
    "NO_V2",
    "SENDERS",
    "TO_V1",
    "TO_V2",
    "USER_ECHOES",
    "V1_STOP_REASONS",
    "Acknowledge",
    "AgentModes",
    "End",
    "EndInError",
    "Mapped",
    "MethodMap",
    "MethodSender",
    "Modes",
    "NotFollowed",
    "RequiresAction",
    "Running",
    "TurnEffect",
    "TurnError",
    "Turns",
    "jsonrpc",
    "map_params",
    "map_result",
    "message_chunks",
    "prompt_accepted",
    "prompt_end_to_v1",
    "prompt_error_to_v2",
    "prompt_result_to_v2",
    "replays_history",
    "upsert_as_chunks",
]
