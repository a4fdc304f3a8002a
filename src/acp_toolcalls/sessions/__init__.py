"""Whole sessions in the other version: what ``acp-toolcalls convert`` runs over a log.

The offline twin of the proxy's ``ConnectionCore``: both sides of a session, message by
message, with the method tables the proxy uses (``acp_toolcalls.lifecycle``) and a bridge or
stateless converter for the agent's tool calls (``acp_toolcalls.bridge``,
``acp_toolcalls.convert``).

- ``_converter``: ``SessionConverter``, its public API, dispatch, the client's messages and
  the responses;
- ``_agent_side``: the agent's messages, prompt turns, message upserts;
- ``_state``: senders, pending requests, sessions, bounds, output through the converters' frame.
"""

from __future__ import annotations

from ._converter import SessionConverter
from ._state import ToolCallConverter

__all__ = ["SessionConverter", "ToolCallConverter"]
