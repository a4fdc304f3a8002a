"""The connection core's state and the sessions it keeps: the base layer of ``ConnectionCore``.

Rules this module owns:

- The core holds its output as a component (``_output.Output``: lines, notes, caps' notes),
  which it gives to its policies; the state here is what the core's layers share.
- Sessions (``_sessions._Session``) are kept per session id, least recently used forgotten past
  ``max_sessions`` unless something waits on them; the message ids a v1 client has of a
  session, past ``max_message_ids``, oldest first.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

from ..bridge import V2ToV1Bridge
from ..codec import DEFAULT_MAX_BYTES
from ..lifecycle import Turns
from ..models import request_key
from ..store import Limits, trim_block
from . import _routing as rpc
from ._output import Output, Version, VersionOption
from ._policy import NEGOTIATION, Policy
from ._sessions import _Session
from ._state import NEGOTIATING, State

if TYPE_CHECKING:
    from ..bridge import ReadFile


class _Connection:
    """The connection's state and its sessions (``ConnectionCore`` is built on it, one layer
    per module: each layer adds steps over the same state, so they stay base classes)."""

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
        self.coalesce_interval = coalesce_interval
        self.limits = limits
        caps = limits if limits is not None else Limits()
        self._caps = caps
        self._state: State = NEGOTIATING
        self._policy: Policy = NEGOTIATION  # chosen once the agent has answered initialize
        self._to_agent = rpc.RequestIds(caps.max_pending_requests)
        self._to_client = rpc.RequestIds(caps.max_pending_requests)
        self._touches = 0
        self._sessions: dict[Any, _Session] = {}
        self._deadline: float | None = None
        self._client_caps: dict[str, Any] = {}
        self.output = Output(max_line_bytes, self._to_agent, self._to_client)
        self._turns: dict[Any, Any] = {}  # pass-through, v2: sessions whose turn is running
        self._held: list[bytes] = []  # agent lines before it answered initialize
        self._held_bytes = 0
        self._holding_client = False  # the client's initialize is with the agent, unanswered
        self._client_held: list[tuple[rpc.Envelope, bytes]] = []  # client lines meanwhile
        self._client_held_bytes = 0

    # ----------------------------------------------------------------------------------------
    # Sessions

    def _session(self, session_id: Any) -> _Session:
        key = request_key(session_id)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = _Session(Turns(self._policy.turns_to))
            cap = self._caps.max_sessions
            if cap is not None and len(self._sessions) > cap:
                self._forget_sessions(cap)
        self._touches += 1
        session.touched = self._touches
        return session

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

    def _touch(self, session_id: Any) -> _Session:
        """``_session`` for a hot path: a string id is its own key, looked up once."""
        session = self._sessions.get(session_id) if type(session_id) is str else None
        if session is None:
            return self._session(session_id)
        self._touches += 1
        session.touched = self._touches
        return session

    def _forget_sessions(self, cap: int) -> None:
        """Past ``max_sessions``: forget the least recently used sessions nothing waits on
        (what is forgotten: which messages a v1 client has, a suppressed replay)."""
        idle = [(s.touched, k) for k, s in self._sessions.items() if not s.busy]
        forgotten = heapq.nsmallest(trim_block(cap), idle)
        for _, key in forgotten:
            del self._sessions[key]
        self.output.limit("max_sessions", f"forgot {len(forgotten)} idle session(s) (cap {cap})")

    def _forwarded_message(self, session: _Session, message_id: str) -> None:
        messages = session.forwarded_messages
        messages[message_id] = None
        cap = self._caps.max_message_ids
        if cap is not None and len(messages) > cap:
            for old in list(messages)[: trim_block(cap)]:
                del messages[old]
            self.output.limit(
                "max_message_ids",
                f"forgot the {trim_block(cap)} oldest message id(s) of a session (cap {cap}): "
                "an upsert of one is sent again as chunks",
            )
