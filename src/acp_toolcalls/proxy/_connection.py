"""The connection core's state: the base layer of ``ConnectionCore``.

Rules this module owns:

- The core holds its output (``_output.Output``: lines, notes, caps' notes) and its sessions
  (``_sessions.Sessions``) as components, which it gives to its policies; the state here is
  what the core's layers share.
- A session's directories go to a v2 -> v1 bridge (``_roots``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..bridge import V2ToV1Bridge
from ..codec import DEFAULT_MAX_BYTES
from ..store import Limits
from . import _routing as rpc
from ._output import FlushDeadline, Output, Version, VersionOption
from ._passthrough import PassThroughLines
from ._policy import NEGOTIATION, Policy
from ._sessions import Sessions
from ._state import NEGOTIATING, State

if TYPE_CHECKING:
    from ..bridge import ReadFile


class _Connection:
    """The connection's state (``ConnectionCore`` is built on it, one layer per module: each
    layer adds steps over the same state, so they stay base classes)."""

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
        self._held: list[bytes] = []  # agent lines before it answered initialize
        self._held_bytes = 0
        self._holding_client = False  # the client's initialize is with the agent, unanswered
        self._client_held: list[tuple[rpc.Envelope, bytes]] = []  # client lines meanwhile
        self._client_held_bytes = 0

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
