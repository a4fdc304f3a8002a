"""The sessions the connection core keeps (``Sessions``), and what its policies ask of it
(``Core``).

Rules this module owns:

- A session (``_Session``) holds what the core must remember between messages of it: its
  prompt turns and the permission requests waiting (``Turns``, the state machine of
  ``lifecycle``), the message ids a v1 client has, whether it is established, and the modes
  shown across versions (``Modes``, ``AgentModes``). ``busy``: a prompt or a permission
  request of it waits.
- ``Sessions`` keeps them by id (``request_key``), a component of the core given to its
  policies: the least recently used are forgotten past ``max_sessions`` unless something
  waits on them; the message ids a v1 client has of a session, past ``max_message_ids``,
  oldest first.
- The policies (``_policy``) and the v1 client's modes (``_agent_modes``) work on the core
  through ``Core``, the part of ``ConnectionCore`` they use, public members only: its
  ``output`` and ``flush_deadline`` (``_output``), its ``sessions``, its ``agent_requests``
  and its ``bridge_output`` (``Bridges``); they sit below the core's modules and import none
  of them.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..lifecycle import AgentModes, Modes, Turns
from ..models import VersionName, request_key
from ..records import Side
from ..store import Limits, trim_block

if TYPE_CHECKING:
    from ..bridge import V1ToV2Bridge, V2ToV1Bridge
    from ..convert import Converted
    from ._output import FlushDeadline, Output
    from ._routing import RequestIds


@dataclass
class _Session:
    turns: Turns  # its prompt turns and the permission requests waiting
    forwarded_messages: dict[str, None] = field(default_factory=dict)  # messageIds v1 has
    replay_suppressed: bool = False  # a v2 resume without replay served by a v1 load
    touched: int = 0  # when it was last used: the least recently used go first
    established: bool = False  # the agent answered a session/new, load or resume of it
    modes: Modes | None = None  # v2 client: the v1 agent's modes, shown as a config option
    agent_modes: AgentModes | None = None  # v1 client: the v2 agent's mode option, as modes

    @property
    def busy(self) -> bool:
        """A prompt or a permission request of it is waiting."""
        return self.turns.busy


class Sessions:
    """The sessions the core keeps, by id; ``table``: ``request_key`` -> ``_Session``."""

    def __init__(self, caps: Limits, output: Output) -> None:
        self.table: dict[Any, _Session] = {}
        # The client's version the turns of new sessions are converted for, set when the
        # converting policy is chosen (negotiating and passing through, no session is made).
        self.turns_to: VersionName = "v1"
        self._caps = caps
        self._output = output  # a cap's note
        self._touches = 0

    def get(self, session_id: Any) -> _Session | None:
        """The session, if it is kept (not touched, not made)."""
        return self.table.get(request_key(session_id))

    def modes_of(self, session_id: Any) -> Modes | None:
        """A v2 client's session: the v1 agent's modes, if it is kept and has them."""
        session = self.table.get(request_key(session_id))
        return session.modes if session is not None else None

    def session(self, session_id: Any) -> _Session:
        """The session, made if it is not kept, and marked the most recently used."""
        key = request_key(session_id)
        session = self.table.get(key)
        if session is None:
            session = self.table[key] = _Session(Turns(self.turns_to))
            cap = self._caps.max_sessions
            if cap is not None and len(self.table) > cap:
                self._forget(cap)
        self._touches += 1
        session.touched = self._touches
        return session

    def touch(self, session_id: Any) -> _Session:
        """``session`` for a hot path: a string id is its own key, looked up once."""
        session = self.table.get(session_id) if type(session_id) is str else None
        if session is None:
            return self.session(session_id)
        self._touches += 1
        session.touched = self._touches
        return session

    def close(self, session_id: Any) -> None:
        """Forget the session."""
        self.table.pop(request_key(session_id), None)

    def forwarded_message(self, session: _Session, message_id: str) -> None:
        """A v1 client has chunks of the message ``message_id`` of ``session`` now."""
        messages = session.forwarded_messages
        messages[message_id] = None
        cap = self._caps.max_message_ids
        if cap is not None and len(messages) > cap:
            for old in list(messages)[: trim_block(cap)]:
                del messages[old]
            self._output.limit(
                "max_message_ids",
                f"forgot the {trim_block(cap)} oldest message id(s) of a session (cap {cap}): "
                "an upsert of one is sent again as chunks",
            )

    def _forget(self, cap: int) -> None:
        """Past ``max_sessions``: forget the least recently used sessions nothing waits on
        (what is forgotten: which messages a v1 client has, a suppressed replay)."""
        idle = [(s.touched, k) for k, s in self.table.items() if not s.busy]
        forgotten = heapq.nsmallest(trim_block(cap), idle)
        for _, key in forgotten:
            del self.table[key]
        self._output.limit("max_sessions", f"forgot {len(forgotten)} idle session(s) (cap {cap})")


class Bridges(Protocol):
    """The bridges' output, as a policy asks for it (``_permissions.BridgeOutput``)."""

    def close_session(self, session_id: Any) -> None:
        """Forget the session (and its bridge's state of it)."""

    def bridge_update(self, bridge: V2ToV1Bridge | V1ToV2Bridge, data: Any) -> None:
        """An agent's notification through its bridge."""

    def bridge_typed(self, bridge: V2ToV1Bridge | V1ToV2Bridge, message: Any) -> None:
        """An agent's typed update through its bridge."""

    def bridged(self, converted: Converted, to: Side) -> None:
        """A bridge's output: messages to ``to``, replies back, losses noted."""


class Core(Protocol):
    """What a policy asks of the connection core, all public: its output, its sessions, the
    ids of the client's requests to the agent, the deadline of coalesced changes and its
    bridges' output (components)."""

    output: Output
    sessions: Sessions
    agent_requests: RequestIds
    flush_deadline: FlushDeadline

    @property
    def bridge_output(self) -> Bridges:
        """The bridges' output."""
