"""The connection core's state and components: the base class of its negotiation.

Rules this module owns:

- The core holds its parts as components: its output (``_output.Output``: lines, notes,
  caps' notes), its sessions (``_sessions.Sessions``), the ids of each side's requests
  (``_routing.RequestIds``), when coalesced changes are due (``_output.FlushDeadline``),
  pass-through's reading of lines (``_passthrough.PassThroughLines``) and the bridges' output
  with the requests each side waits on (``_permissions.BridgeOutput``), the lines held while
  versions are not known (``_held.HeldLines``); the policies reach them through
  ``_sessions.Core``, public members only. Its line reader (``_refusals.LineReader``) is
  made by ``ConnectionCore``, which gives it its routing steps.
- A session's directories go to a v2 -> v1 bridge (``_roots``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..bridge import V1ToV2Bridge, V2ToV1Bridge
from ..codec import DEFAULT_MAX_BYTES
from ..store import Limits
from . import _routing as rpc
from ._held import HeldLines
from ._output import FlushDeadline, Outbox, Output, Version, VersionOption
from ._passthrough import PassThroughLines
from ._permissions import BridgeOutput
from ._policy import NEGOTIATION, Policy
from ._sessions import Sessions
from ._state import NEGOTIATING, State

if TYPE_CHECKING:
    from ..bridge import ReadFile
    from ..convert import Converted
    from ..records import Side


class _Connection:
    """The connection's state and components. (A base class of ``_negotiation._Negotiating``,
    which of ``ConnectionCore``: the negotiation sets this state, which the core's routing
    reads, and releases held lines into that routing.)"""

    def __init__(
        self,
        *,
        client_version: VersionOption = "auto",
        agent_version: VersionOption = "auto",
        coalesce_interval: float = 0.05,
        limits: Limits | None = None,
        max_line_bytes: int = DEFAULT_MAX_BYTES,
        read_file: ReadFile | None = None,
    ) -> None:
        self.client_version: Version | None = None if client_version == "auto" else client_version
        self.max_line_bytes = max_line_bytes
        self.read_file = read_file  # a v1 client's diffs: files read by the edge (D27 amended)
        self.agent_version: Version | None = None
        self._asked_agent: VersionOption = agent_version
        self.flush_deadline = FlushDeadline(coalesce_interval)
        self.limits = limits
        caps = limits if limits is not None else Limits()
        self._caps = caps
        self._state: State = NEGOTIATING
        self._policy: Policy = NEGOTIATION  # chosen once the agent has answered initialize
        self.agent_requests = rpc.RequestIds(caps.max_pending_requests)
        self.client_requests = rpc.RequestIds(caps.max_pending_requests)
        self.output = Output(max_line_bytes, self.agent_requests, self.client_requests)
        self.sessions = Sessions(caps, self.output)
        self._client_caps: dict[str, Any] = {}
        self.passthrough = PassThroughLines(self.output, self.agent_requests)
        self.bridge_output = BridgeOutput(self, self.client_requests, self._policy)
        self.held = HeldLines()  # lines held until the agent answered initialize

    # ----------------------------------------------------------------------------------------
    # Sessions

    def _roots(self, session_id: Any, params: Any) -> Any:
        """A session's directories (``cwd``, ``additionalDirectories`` of its setup params, or
        what this returned for them) told to a v2 -> v1 bridge, which may rebuild diffs of
        files under them from disk (D27 amended); returns them, kept until the session's id
        is known (``session/new``)."""
        if isinstance(params, dict):
            params = ("roots", params.get("cwd"), params.get("additionalDirectories"))
        if not (isinstance(params, tuple) and len(params) == 3 and params[0] == "roots"):
            return None
        bridge = self._policy.bridge
        if isinstance(bridge, V2ToV1Bridge) and isinstance(session_id, str):
            bridge.set_roots(session_id, params[1], params[2])
        return params

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
