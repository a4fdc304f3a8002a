"""What the connection core sends and notes, and the sessions it keeps: its base layer.

Rules this module owns:

- Output goes into one ``Outbox`` per call: lines to each side, in order, and notes
  (``ConnectionNote``), each naming the index of the line it is about in a ``from_*_lines``
  call.
- No line the proxy writes is longer than the lines it reads (``_fits``): a longer answer is
  replaced by an error answer; a longer request is not sent and its sender is answered with an
  error; anything else is not sent (noted).
- A memory cap that bites is noted at most once every ``LIMIT_NOTE_INTERVAL`` seconds per cap,
  saying how many more times it bit since; a bridge's cap is one of its ``$.max_*`` losses.
- Sessions (``_sessions._Session``) are kept per session id, least recently used forgotten past
  ``max_sessions`` unless something waits on them; the message ids a v1 client has of a
  session, past ``max_message_ids``, oldest first.

Nothing here reads a clock or does I/O: time is the ``now`` the caller passes.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from msgspec import UNSET

from ..bridge import V2ToV1Bridge
from ..codec import DEFAULT_MAX_BYTES, encode
from ..lifecycle import Turns, jsonrpc
from ..models import INTERNAL_ERROR, request_key
from ..records import Side
from ..store import Limits, trim_block
from . import _routing as rpc
from ._policy import NEGOTIATION, Policy
from ._sessions import _Session
from ._state import NEGOTIATING, State

if TYPE_CHECKING:
    from ..bridge import ReadFile

Version = Literal[1, 2]
VersionOption = Literal[1, 2, "auto"]

LIMIT_NOTE_INTERVAL = 10.0
"""Seconds between two notes about the same cap."""


@dataclass(frozen=True)
class ConnectionNote:
    """Something to tell the person running the proxy (stderr, the log)."""

    side: Side
    """Whose message it is about."""
    text: str
    kind: Literal["loss", "error", "limit"] = "loss"
    """``loss``: what a conversion could not carry (for ``--verbose``); ``error``: a peer broke
    the protocol or went away; ``limit``: a memory cap dropped something (at most one line
    per cap every ``LIMIT_NOTE_INTERVAL`` seconds, saying how many more it bit since)."""
    line: int | None = None
    """The index of the line it is about in the lines given to ``from_client_lines`` or
    ``from_agent_lines`` (``None``: not one of them, or another call)."""


@dataclass
class Outbox:
    """Lines to write (without their newline), in order, and notes."""

    to_client: list[bytes] = field(default_factory=list)
    to_agent: list[bytes] = field(default_factory=list)
    notes: list[ConnectionNote] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.to_client or self.to_agent or self.notes)


class _Output:
    """The connection's state, its output and its sessions (``ConnectionCore`` is built on
    it, one layer per module)."""

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
        self._limit_notes: dict[str, tuple[float, int]] = {}  # cap -> (last note, bitten since)
        self._sessions: dict[Any, _Session] = {}
        self._deadline: float | None = None
        self._client_caps: dict[str, Any] = {}
        self._out = Outbox()
        self._turns: dict[Any, Any] = {}  # pass-through, v2: sessions whose turn is running
        self._held: list[bytes] = []  # agent lines before it answered initialize
        self._held_bytes = 0
        self._holding_client = False  # the client's initialize is with the agent, unanswered
        self._client_held: list[tuple[rpc.Envelope, bytes]] = []  # client lines meanwhile
        self._client_held_bytes = 0
        self._now = 0.0  # the time of the line being handled
        self._line: int | None = None  # its index in the lines of from_*_lines, for notes

    # ----------------------------------------------------------------------------------------
    # Output

    def _client(self, message: Any) -> None:
        line = self._fits(encode(message), "client")
        if line is not None:
            self._out.to_client.append(line)

    def _agent(self, message: Any) -> None:
        line = self._fits(encode(message), "agent")
        if line is not None:
            self._out.to_agent.append(line)

    def _fits(self, line: bytes, to: Side) -> bytes | None:
        """No line the proxy writes is longer than the lines it reads. A longer answer is
        replaced by an error answer; a longer request is not sent and its sender is answered
        with an error; anything else is not sent (noted)."""
        if len(line) <= self.max_line_bytes:
            return line
        envelope = rpc.read_envelope.decode(line)
        what = f"a message of {len(line)} bytes, over the line limit of {self.max_line_bytes}"
        self._note("agent" if to == "client" else "client", f"{what}: not sent", "error")
        detail = {"details": f"{what} once converted"}
        if envelope.method is UNSET and envelope.id is not UNSET:
            return encode(jsonrpc.error(envelope.id, INTERNAL_ERROR, "Internal error", detail))
        if envelope.id is not UNSET:  # a request: its sender gets the answer
            pending = (self._to_agent if to == "agent" else self._to_client).pop(envelope.id)
            if pending is not None:
                answer = jsonrpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", detail)
                (self._client if to == "agent" else self._agent)(answer)
        return None

    def _note(
        self, side: Side, text: str, kind: Literal["loss", "error", "limit"] = "loss"
    ) -> None:
        self._out.notes.append(ConnectionNote(side, text, kind, self._line))

    def _bug(self, side: Side, exc: Exception) -> None:
        self._note(side, f"not handled ({type(exc).__name__}: {exc}); a bug", "error")

    def _losses(self, side: Side, what: str, losses: Any) -> None:
        for loss in losses:
            if loss.path.startswith("$.max_"):  # a cap of the bridge's store bit
                self._limit(loss.path[2:], f"{what}: {loss.reason}")
            else:
                self._note(side, f"{what}: {loss}")

    def _limit(self, cap: str, text: str) -> None:
        """A memory cap bit: one note, unless one about the same cap went out in the last
        ``LIMIT_NOTE_INTERVAL`` seconds (then it is counted, and the next note says so)."""
        last, since = self._limit_notes.get(cap, (None, 0))
        if last is not None and self._now - last < LIMIT_NOTE_INTERVAL:
            self._limit_notes[cap] = (last, since + 1)
            return
        more = f" (and {since} more time(s) since the last note)" if since else ""
        self._note("agent", f"{cap}: {text}{more}", "limit")
        self._limit_notes[cap] = (self._now, 0)

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
        self._limit("max_sessions", f"forgot {len(forgotten)} idle session(s) (cap {cap})")

    def _forwarded_message(self, session: _Session, message_id: str) -> None:
        messages = session.forwarded_messages
        messages[message_id] = None
        cap = self._caps.max_message_ids
        if cap is not None and len(messages) > cap:
            for old in list(messages)[: trim_block(cap)]:
                del messages[old]
            self._limit(
                "max_message_ids",
                f"forgot the {trim_block(cap)} oldest message id(s) of a session (cap {cap}): "
                "an upsert of one is sent again as chunks",
            )
