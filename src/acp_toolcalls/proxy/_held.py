"""The lines held while the agent has not answered ``initialize`` (``HeldLines``).

Rules this module owns (when lines are held and where they go is ``_negotiation``'s):

- The agent's requests and notifications before it answered are held, and the client's lines
  while its ``initialize`` is with the agent (``holding_client``), each side at most
  ``MAX_HELD`` lines and ``MAX_HELD_BYTES`` bytes: ``hold_agent`` and ``hold_client`` say
  when a line is past the bound (it is not held).
- Taken once: ``take_agent`` and ``take_client`` hand over what is held and forget it.
"""

from __future__ import annotations

from . import _routing as rpc

MAX_HELD = 1_000
MAX_HELD_BYTES = 64 * 1024 * 1024
"""Lines held of each side until the agent has answered ``initialize``, at most."""


class HeldLines:
    """The agent's lines before it answered ``initialize``, and the client's meanwhile."""

    def __init__(self) -> None:
        self.holding_client = False  # the client's initialize is with the agent, unanswered
        self._agent: list[bytes] = []
        self._agent_bytes = 0
        self._client: list[tuple[rpc.Envelope, bytes]] = []
        self._client_bytes = 0

    def hold_agent(self, line: bytes) -> bool:
        """Hold an agent line; ``False``: past the bound, not held."""
        if len(self._agent) >= MAX_HELD or self._agent_bytes + len(line) > MAX_HELD_BYTES:
            return False
        self._agent.append(line)
        self._agent_bytes += len(line)
        return True

    def hold_client(self, envelope: rpc.Envelope, line: bytes) -> bool:
        """Hold a client line (and its envelope); ``False``: past the bound, not held."""
        if len(self._client) >= MAX_HELD or self._client_bytes + len(line) > MAX_HELD_BYTES:
            return False
        self._client.append((envelope, line))
        self._client_bytes += len(line)
        return True

    def take_agent(self) -> list[bytes]:
        """The agent's held lines, in order; none are held after."""
        held, self._agent, self._agent_bytes = self._agent, [], 0
        return held

    def take_client(self) -> list[tuple[rpc.Envelope, bytes]]:
        """The client's held lines with their envelopes, in order; none are held after."""
        held, self._client, self._client_bytes = self._client, [], 0
        return held
