"""The sessions the connection core keeps, and what its policies ask of it (``Core``).

Rules this module owns:

- A session (``_Session``) holds what the core must remember between messages of it: its
  prompt turns and the permission requests waiting (``Turns``, the state machine of
  ``lifecycle``), the message ids a v1 client has, whether it is established, and the modes
  shown across versions (``Modes``, ``AgentModes``). ``busy``: a prompt or a permission
  request of it waits.
- The policies (``_policy``) and the v1 client's modes (``_agent_modes``) work on the core
  through ``Core``, the part of ``ConnectionCore`` they use: its ``output`` (``_output``) and
  what the layers from ``_connection`` to ``_permissions`` provide; they sit below the core's
  layers and import none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..lifecycle import AgentModes, Modes, Turns
from ..records import Side

if TYPE_CHECKING:
    from ..bridge import V1ToV2Bridge, V2ToV1Bridge
    from ..convert import Converted
    from ._output import Output
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


class Core(Protocol):
    """What a policy asks of the connection core: its output (``Output``, a component with
    public methods), its sessions, its bridges' output and the deadline of coalesced
    changes."""

    coalesce_interval: float
    output: Output
    _deadline: float | None
    _sessions: dict[Any, _Session]
    _to_agent: RequestIds

    def _session(self, session_id: Any) -> _Session: ...
    def _touch(self, session_id: Any) -> _Session: ...
    def _forwarded_message(self, session: _Session, message_id: str) -> None: ...
    def _close_session(self, session_id: Any) -> None: ...
    def _bridge_update(self, bridge: V2ToV1Bridge | V1ToV2Bridge, data: Any) -> None: ...
    def _bridge_typed(self, bridge: V2ToV1Bridge | V1ToV2Bridge, message: Any) -> None: ...
    def _bridged(self, converted: Converted, to: Side) -> None: ...
