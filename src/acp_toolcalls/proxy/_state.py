"""The connection's negotiation state machine: which versions the two sides speak, and when.

Rules this module owns:

1. Everything that changes the connection's state is an event in ``TRANSITIONS``; the core's
   negotiation (``_negotiation.Negotiation``) keeps one ``State`` and changes it only through
   ``transition``.
2. It knows nothing of messages: the core reads them and says which event happened.

Theory of operation
===================

A connection starts ``negotiating``: versions come from the real ``initialize`` exchange.
The client's ``initialize`` (``CLIENT_INITIALIZE``) fixes the client's version (or the
configured one does) and is sent to the agent, in the version the agent is asked in. The
agent's answer is one of:

- a refusal (``AGENT_REFUSED``): asked once more in the other version, or, the second time,
  the refusal reaches the client, which may try again: still ``negotiating``;
- an answer in the other version than the one asked (``AGENT_ASKED_AGAIN``): asked once more,
  in that version, so that the client's capabilities reach it in the shape it reads;
- an answer whose version is the client's (``AGENT_SAME_VERSION``): ``passthrough``, every line
  forwarded as it is;
- an answer in the other version (``AGENT_OTHER_VERSION``): ``converting``, every message
  converted.

On leaving ``negotiating`` the core chooses a policy once (``_policy``: pass-through, v1
client / v2 agent, v2 client / v1 agent), so no later step asks which versions talk.

The agent's exit, crash or a line of it that is not JSON-RPC (``AGENT_GONE``) closes the
connection from any state: the client is answered everything it waits for, and later agent
lines are ignored. What the client still sends meanwhile goes by the policy already chosen
(the proxy is ending the session). The end of the client's input is not an event: the agent's
last lines are still routed, and ``flush`` sends what coalescing holds.

An event a state has no row for leaves it as it is (a client's ``initialize`` after the agent
is gone, say): the core never has to ask first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

__all__ = [
    "AGENT_ASKED_AGAIN",
    "AGENT_GONE",
    "AGENT_OTHER_VERSION",
    "AGENT_REFUSED",
    "AGENT_SAME_VERSION",
    "CLIENT_INITIALIZE",
    "CLOSED",
    "CONVERTING",
    "NEGOTIATING",
    "PASSTHROUGH",
    "TRANSITIONS",
    "Event",
    "Mode",
    "State",
    "transition",
]

Mode = Literal["negotiating", "passthrough", "converting"]
"""How a connection handles lines: its state, but for ``closed`` (a closed connection keeps
the mode it had)."""
State = Literal["negotiating", "passthrough", "converting", "closed"]
NEGOTIATING: Final = "negotiating"
PASSTHROUGH: Final = "passthrough"
CONVERTING: Final = "converting"
CLOSED: Final = "closed"

Event = Literal[
    "client_initialize",
    "agent_refused",
    "agent_asked_again",
    "agent_same_version",
    "agent_other_version",
    "agent_gone",
]
CLIENT_INITIALIZE: Final = "client_initialize"
AGENT_REFUSED: Final = "agent_refused"
AGENT_ASKED_AGAIN: Final = "agent_asked_again"
AGENT_SAME_VERSION: Final = "agent_same_version"
AGENT_OTHER_VERSION: Final = "agent_other_version"
AGENT_GONE: Final = "agent_gone"

TRANSITIONS: Mapping[tuple[State, Event], State] = {
    (NEGOTIATING, CLIENT_INITIALIZE): NEGOTIATING,
    (NEGOTIATING, AGENT_REFUSED): NEGOTIATING,
    (NEGOTIATING, AGENT_ASKED_AGAIN): NEGOTIATING,
    (NEGOTIATING, AGENT_SAME_VERSION): PASSTHROUGH,
    (NEGOTIATING, AGENT_OTHER_VERSION): CONVERTING,
    (NEGOTIATING, AGENT_GONE): CLOSED,
    (PASSTHROUGH, AGENT_GONE): CLOSED,
    (CONVERTING, AGENT_GONE): CLOSED,
}
"""(state, event) -> the next state; a pair not listed leaves the state as it is."""


def transition(state: State, event: Event) -> State:
    """The state after ``event`` in ``state``."""
    return TRANSITIONS.get((state, event), state)
