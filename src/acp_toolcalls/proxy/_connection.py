"""The connection core's components: the base class of ``ConnectionCore``.

Rules this module owns:

- The core holds its parts as components: its output (``_output.Output``: lines, notes,
  caps' notes), its sessions (``_sessions.Sessions``), the ids of each side's requests
  (``_routing.RequestIds``), when coalesced changes are due (``_output.FlushDeadline``),
  pass-through's reading of lines (``_passthrough.PassThroughLines``) and the bridges' output
  with the requests each side waits on (``_permissions.BridgeOutput``); the policies reach
  them through ``_sessions.Core``, public members only. Its line reader
  (``_refusals.LineReader``) and its negotiation (``_negotiation.Negotiation``, which holds
  the state, the policy and the held lines) are made by ``ConnectionCore``, which gives them
  its routing steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..bridge import V1ToV2Bridge, V2ToV1Bridge
from ..store import Limits
from . import _routing as rpc
from ._output import FlushDeadline, Outbox, Output
from ._passthrough import PassThroughLines
from ._permissions import BridgeOutput
from ._policy import NEGOTIATION
from ._sessions import Sessions

if TYPE_CHECKING:
    from ..bridge import ReadFile
    from ..convert import Converted
    from ..records import Side


class _Connection:
    """The core's components, and the bridges' output as the methods ``_sessions.Core`` names.
    (A base class of ``ConnectionCore`` only to keep ``_core`` its routing, under 500 lines:
    it calls nothing of the core.)"""

    def __init__(
        self,
        *,
        coalesce_interval: float,
        limits: Limits | None,
        max_line_bytes: int,
        read_file: ReadFile | None,
    ) -> None:
        self.max_line_bytes = max_line_bytes
        self.read_file = read_file  # a v1 client's diffs: files read by the edge (D27 amended)
        self.flush_deadline = FlushDeadline(coalesce_interval)
        self.limits = limits
        caps = limits if limits is not None else Limits()
        self.agent_requests = rpc.RequestIds(caps.max_pending_requests)
        self.client_requests = rpc.RequestIds(caps.max_pending_requests)
        self.output = Output(max_line_bytes, self.agent_requests, self.client_requests)
        self.sessions = Sessions(caps, self.output)
        self.passthrough = PassThroughLines(self.output, self.agent_requests)
        self.bridge_output = BridgeOutput(self, self.client_requests, NEGOTIATION)

    # ----------------------------------------------------------------------------------------
    # The bridges' output (``Core``, for the policies): the component's

    def _take(self) -> Outbox:
        self.bridge_output.backlogs()
        return self.output.take()

    def bridged(self, converted: Converted, to: Side) -> None:
        """A bridge's output: messages to ``to``, replies back, losses noted."""
        self.bridge_output.bridged(converted, to)

    def bridge_update(self, bridge: V2ToV1Bridge | V1ToV2Bridge, data: Any) -> None:
        """An agent's notification through its bridge (one it cannot read is dropped)."""
        self.bridge_output.bridge_update(bridge, data)

    def bridge_typed(self, bridge: V2ToV1Bridge | V1ToV2Bridge, message: Any) -> None:
        """An agent's typed update through its bridge."""
        self.bridge_output.bridge_typed(bridge, message)

    def close_session(self, session_id: Any) -> None:
        """Forget the session (and its bridge's state of it)."""
        self.bridge_output.close_session(session_id)
