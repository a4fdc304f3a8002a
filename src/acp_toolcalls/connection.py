"""One ACP connection between a client (editor) and an agent that may speak the other version.

Rules this module owns (everything ``acp-toolcalls bridge`` decides; proxy.py only moves bytes):

- Versions come from the real ``initialize`` exchange. The client's version is its
  ``protocolVersion`` (or the one configured). The agent is asked in the configured version (the
  request converted if need be) or, for ``auto``, in the client's (and once more in the other
  version if it refuses that one); its answer decides. Until then, the agent's requests and
  notifications are held (bounded) and then routed like every later one. The same version on
  both sides means pass-through: every line is forwarded byte for byte, but for a permission
  request whose option ids repeat (the repeats are dropped), and only the client's pending
  request ids are read (to answer them if the agent goes away).
- Otherwise every message is converted: session lifecycle methods by ``methods.py``'s tables,
  tool calls, terminals and permissions by the stateful bridges (``V2ToV1Bridge`` toward a v1
  client, with coalescing bounded in time by ``poll``; ``V1ToV2Bridge`` toward a v2 client).
- Request ids: a forwarded request is sent under an id this connection allocates for its
  destination, and the answer is mapped back, so ids of the two sides (and of requests the
  connection may originate) never collide; the client never holds two open requests under
  one id. ``$/cancel_request`` ids are mapped the same way. An agent request that reuses the
  id of one still pending, or whose id is not a string or integer, is refused (``-32600``):
  its answers could not be told apart.
- Permission requests are answered once. The client's answer goes through the bridge to the
  agent request it was shown; when a bridge answers one itself (a cap, ``withdraw``, the
  agent's ``$/cancel_request``), that request is settled: the client gets ``$/cancel_request``
  (once) and its late answer is dropped and reported. ``session/cancel``, with or without an
  id, withdraws the session's pending permission requests through the bridge.
- Prompt turns. v1 client, v2 agent: the v2 ``session/prompt`` result only acknowledges; the
  v1 response is sent when the agent reports an idle ``state_update``, with its stop reason
  (``error`` becomes a JSON-RPC error); the agent's echo of the user message is not forwarded
  while a prompt is pending (a v1 client shows its own prompt). v2 client, v1 agent: the prompt
  is acknowledged at once (``messageId``, a ``user_message`` echo, ``running``); the v1 response
  ends the turn as an idle ``state_update``; a permission request in between is framed by
  ``requires_action`` and ``running``.
- A v1 agent's ``fs/*`` and ``terminal/*`` requests get ``-32601``: a v2 client has neither, and
  the agent was told so in ``initialize``. Methods with no counterpart get the reason in
  ``methods.NO_V1``/``NO_V2``. Unknown and ``_``-prefixed methods pass through. A notification
  sent with an id is handled as the notification and the id answered ``{}``; a request method
  sent without an id is never forwarded raw (it is dropped and reported).
- Bad input costs nothing else. A string with an unpaired surrogate escape is read with
  U+FFFD in its place (reported). A client line that is not JSON is answered ``-32700``, one
  that is not a message ``-32600``, with its id whenever it can be found; a permission request
  the bridge cannot read is answered ``-32602`` (5.6), an answer to one it cannot read is no
  approval, an update it cannot read is dropped and noted. An agent line that is not JSON
  ends the session (``agent_gone``) as the agent's crash does: every pending client request
  is answered with an error.
- Nothing here reads a clock or does I/O: time is the ``now`` the caller passes.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from . import routing as rpc
from . import v1, v2
from .bridge_to_v1 import V2ToV1Bridge
from .bridge_to_v2 import V1ToV2Bridge
from .codec import DEFAULT_MAX_BYTES, FAST_PATH_MISSES, encode, fast_message_decoder
from .jsonrpc import (
    CANCELLED_OUTCOME,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JsonRpcMessage,
    plain_id,
    request_key,
)
from .lenient import DecodeError
from .loss import Converted
from .methods import MODES_TO_V1, NO_V1, NO_V2, TO_V1, TO_V2, Modes, map_params, map_result
from .state import Limits, trim_block
from .wire import replace

__all__ = ["ConnectionBridge", "ConnectionNote", "Outbox", "Version"]

Version = Literal[1, 2]
VersionOption = Literal[1, 2, "auto"]
Side = Literal["client", "agent"]

_V1_STOP_REASONS = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}
)
_USER_ECHOES = frozenset({"user_message_chunk", "user_message"})
_UPSERT_CHUNKS = {
    "user_message": "user_message_chunk",
    "agent_message": "agent_message_chunk",
    "agent_thought": "agent_thought_chunk",
}
_CHUNKS = frozenset(_UPSERT_CHUNKS.values())
_CLIENT_OWNED = ("fs/", "terminal/")
_V2_TYPED = frozenset(
    {"tool_call_update", "tool_call_content_chunk", "terminal_update", "terminal_output_chunk"}
)
_V1_TYPED = frozenset({"tool_call", "tool_call_update"})
_TYPED_V2 = fast_message_decoder("v2")
_TYPED_V1 = fast_message_decoder("v1")
_TAG_KEY = b'"sessionUpdate":"'  # compact JSON; other spellings take the general path
_TYPED_TAGS = (b"tool_call", b"terminal_")  # how the tags the typed decoders read begin
_UPDATE_FIRST = b'{"jsonrpc":"2.0","method":"session/update","params":{'
_MODE_UPDATES = frozenset({"current_mode_update", "config_option_update"})
"""``sessionUpdate`` tags the codec reads into typed models; every other is opaque."""
_SESSION_SETUP = frozenset({"session/new", "session/load", "session/resume"})
_CLIENT_NOTIFICATIONS = frozenset({"session/cancel", "$/cancel_request"})
_AGENT_NOTIFICATIONS = frozenset({"session/update", "$/cancel_request"})
"""Notifications of each side that are handled as such even when they come with an id."""
_PERMISSION_METHOD = b'"session/request_permission"'
_METHOD_FIRST = (b'{"jsonrpc":"2.0","method":', b'{"jsonrpc": "2.0", "method": ', b'{"method":')
"""How lines whose first top-level member (after ``jsonrpc``) is ``method`` open."""
UNSUPPORTED_VERSION = -32022  # no protocol version the agent speaks is at or below the asked one
_MAX_HELD = 1_000
_FLUSH_BYTES = 4 * 1024 * 1024  # tool-call changes one ``poll`` sends, about (in store bytes)
_MAX_HELD_BYTES = 64 * 1024 * 1024
"""Agent messages held until the agent has answered ``initialize``, at most."""
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


# --------------------------------------------------------------------------------------------
# Per-session state of a converting connection


@dataclass
class _Prompt:
    client_id: Any
    acknowledged: bool = False  # v1 client: the v2 agent answered; v2 client: it was told so
    stop: dict[str, Any] | None = None  # v1 client: the idle state seen before that answer
    content: Any = None  # v2 client: the prompt, echoed when it is acknowledged


@dataclass
class _Session:
    prompts: list[_Prompt] = field(default_factory=list)
    forwarded_messages: dict[str, None] = field(default_factory=dict)  # messageIds v1 has
    permissions: int = 0  # permission requests waiting for the client's answer
    replay_suppressed: bool = False  # a v2 resume without replay served by a v1 load
    touched: int = 0  # when it was last used: the least recently used go first
    established: bool = False  # the agent answered a session/new, load or resume of it
    modes: Modes | None = None  # v2 client: the v1 agent's modes, shown as a config option

    @property
    def busy(self) -> bool:
        """A prompt or a permission request of it is waiting."""
        return bool(self.prompts or self.permissions)


# --------------------------------------------------------------------------------------------


class ConnectionBridge:
    """The sans-I/O core of the proxy: lines in from either side, lines out to either side.

    ``from_client(line, now)`` and ``from_agent(line, now)`` take one line each (without its
    newline), ``from_client_lines`` and ``from_agent_lines`` several (those of one read: the
    same result, in one ``Outbox``, each note naming the index of its line); ``poll(now)``
    sends coalesced tool-call changes that are due (``next_deadline``), ``flush()`` all of
    them; ``agent_gone(reason)`` answers everything the client still waits for. Each returns
    an ``Outbox``.

    Kept cheap per line (issue 19): in pass-through an agent line is looked at with byte
    checks only, unless a request of the client waits for an answer and the line does not
    open with a ``method`` (``_METHOD_FIRST``); converting, a compact tool-call or terminal
    update is decoded once, by the strict decoder its bridge would read it with, and handed
    to the bridge typed (``_typed_update``).
    """

    def __init__(
        self,
        *,
        client_version: VersionOption = "auto",
        agent_version: VersionOption = "auto",
        coalesce_interval: float = 0.05,
        limits: Limits | None = None,
        max_line_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.client_version: Version | None = None if client_version == "auto" else client_version
        self.max_line_bytes = max_line_bytes
        self.agent_version: Version | None = None
        self._asked_agent: VersionOption = agent_version
        self.coalesce_interval = coalesce_interval
        self.limits = limits
        caps = limits if limits is not None else Limits()
        self._caps = caps
        self.mode: Literal["negotiating", "passthrough", "convert"] = "negotiating"
        self._to_agent = rpc.RequestIds(caps.max_pending_requests)
        self._to_client = rpc.RequestIds(caps.max_pending_requests)
        self._touches = 0
        self._limit_notes: dict[str, tuple[float, int]] = {}  # cap -> (last note, bitten since)
        self._sessions: dict[Any, _Session] = {}
        self._deadline: float | None = None
        self._to_v1: V2ToV1Bridge | None = None
        self._to_v2: V1ToV2Bridge | None = None
        self._client_caps: Mapping[str, Any] = {}
        self._agent_caps: Mapping[str, Any] = {}
        self._messages = itertools.count(1)
        self._out = Outbox()
        self._turns: dict[Any, Any] = {}  # pass-through, v2: sessions whose turn is running
        self._held: list[bytes] = []  # agent lines before it answered initialize
        self._held_bytes = 0
        self._initializing = False  # the client's initialize is with the agent, unanswered
        self._client_held: list[tuple[rpc.Envelope, bytes]] = []  # client lines meanwhile
        self._client_held_bytes = 0
        self._now = 0.0  # the time of the line being handled
        self._line: int | None = None  # its index in the lines of from_*_lines, for notes
        self.gone = False

    # ----------------------------------------------------------------------------------------
    # Public API

    def from_client(self, line: bytes, now: float) -> Outbox:
        """One line the client wrote."""
        self._now = now
        self._client_line(line, now)
        return self._take()

    def from_agent(self, line: bytes, now: float) -> Outbox:
        """One line the agent wrote."""
        self._now = now
        self._agent_line(line, now)
        return self._take()

    def from_client_lines(self, lines: Sequence[bytes], now: float) -> Outbox:
        """Lines the client wrote, in order (those of one read): what ``from_client`` would
        return for each, in one ``Outbox``; each note's ``line`` is the index in ``lines`` of
        the line it is about. A line whose handling raises (a bug) costs that line alone: it
        is noted (``error``) and the next one is handled."""
        return self._lines(self._client_line, "client", lines, now)

    def from_agent_lines(self, lines: Sequence[bytes], now: float) -> Outbox:
        """Lines the agent wrote, in order: as ``from_client_lines``, the other way."""
        self._now = now
        if self.mode == "passthrough" and not self.gone:  # kept to cheap byte checks per line
            to_client = self._out.to_client
            for index, line in enumerate(lines):
                try:
                    if self._to_agent.pending or self._turns:
                        self._untrack_passthrough(line)
                    if _PERMISSION_METHOD in line:
                        self._line = index
                        line = self._unique_options(line)
                except Exception as exc:  # a bug must cost this line, not the others
                    self._line = index
                    self._bug("agent", exc)
                else:
                    to_client.append(line)
                self._line = None
            return self._take()
        return self._lines(self._agent_line, "agent", lines, now)

    def _lines(
        self, handle: Callable[[bytes, float], None], side: Side, lines: Sequence[bytes], now: float
    ) -> Outbox:
        self._now = now
        for index, line in enumerate(lines):
            self._line = index
            try:
                handle(line, now)
            except Exception as exc:  # a bug must cost this line, not the others
                self._bug(side, exc)
            self._backlogs()
        self._line = None
        return self._take()

    def _bug(self, side: Side, exc: Exception) -> None:
        self._note(side, f"not handled ({type(exc).__name__}: {exc}); a bug", "error")

    def _client_line(self, line: bytes, now: float) -> None:
        if self.mode == "passthrough":
            self._track_passthrough(line)
            self._out.to_agent.append(line)
            return
        read = self._read_client(line)
        if read is not None:
            value, line = read
            if isinstance(value, list):
                if not value:  # JSON-RPC: an empty batch is one Invalid Request, id null
                    self._client(rpc.error(None, INVALID_REQUEST, "Invalid Request"))
                    self._note("client", "an empty batch: answered -32600", "error")
                for item in value:
                    self._client_value(item, msgspec.json.encode(item), now)
            else:
                self._client_value(value, line, now)

    def _agent_line(self, line: bytes, now: float) -> None:
        if self.gone:
            return
        if self.mode == "passthrough":
            self._untrack_passthrough(line)
            if _PERMISSION_METHOD in line:
                line = self._unique_options(line)
            self._out.to_client.append(line)
            return
        if self.mode == "convert" and self._compact_update(line, now):
            return
        read = self._read_agent(line)
        if read is not None:
            parsed, line = read
            if isinstance(parsed, list):
                for item in parsed:
                    self._agent_item(item, now)
            else:
                self._agent_message(parsed, line, now)

    def poll(self, now: float) -> Outbox:
        """Send the coalesced tool-call changes whose time has come."""
        self._now = now
        if self._deadline is not None and now >= self._deadline:
            self._deadline = None
            if self._to_v1 is not None:
                self._bridged(self._to_v1.flush(max_bytes=_FLUSH_BYTES), "client")
                if self._to_v1.pending:  # the rest goes once this is written
                    self._deadline = now
        return self._take()

    def flush(self) -> Outbox:
        """Send every coalesced tool-call change now (the client's input ended, say)."""
        self._deadline = None
        if self._to_v1 is not None:
            self._bridged(self._to_v1.flush(), "client")
        return self._take()

    @property
    def agent_side_version(self) -> Version | None:
        """The version the agent speaks, or is being asked in while that is not known yet."""
        if self.agent_version is not None:
            return self.agent_version
        return self.client_version if self._asked_agent == "auto" else self._asked_agent

    def next_deadline(self) -> float | None:
        """When ``poll`` has something to send (``None``: nothing is waiting)."""
        return self._deadline

    def agent_gone(self, reason: str) -> Outbox:
        """The agent exited, crashed or broke the protocol: answer all the client waits for."""
        self._end(reason)
        return self._take()

    def _end(self, reason: str) -> None:
        if self.gone:
            return
        self.gone = True
        self._held, self._held_bytes = [], 0
        if self._to_v1 is not None:
            self._bridged(self._to_v1.flush(), "client")
        data = {"details": reason}
        for pending in list(self._to_agent.pending.values()):
            # A converted prompt ends below with its session; a passed-through one is here.
            if not pending.discard and (
                pending.method != "session/prompt" or self.mode == "passthrough"
            ):
                self._client(rpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", data))
        self._to_agent.pending.clear()
        for envelope, _line in self._client_held:  # held while the agent answered initialize
            if envelope.method is not UNSET and envelope.id is not UNSET:
                self._client(
                    rpc.error(plain_id(envelope.id), INTERNAL_ERROR, "Internal error", data)
                )
        self._client_held, self._client_held_bytes = [], 0
        for session_id in self._turns.values():  # pass-through v2 turns acknowledged
            self._client(rpc.update(session_id, _idle_error(INTERNAL_ERROR, reason)))
        self._turns.clear()
        for session_id, session in self._sessions.items():
            for prompt in session.prompts:
                if self.client_version == 2 and prompt.acknowledged:  # the turn ends in error
                    self._client(rpc.update(session_id, _idle_error(INTERNAL_ERROR, reason)))
                else:  # the v1 prompt response is still owed
                    self._client(
                        rpc.error(prompt.client_id, INTERNAL_ERROR, "Internal error", data)
                    )
            session.prompts.clear()
        self._note("agent", f"{reason}; the session ends", "error")

    # ----------------------------------------------------------------------------------------
    # Output

    def _take(self) -> Outbox:
        self._backlogs()
        out, self._out = self._out, Outbox()
        return out

    def _backlogs(self) -> None:
        """Past ``max_pending_requests`` waiting one way: the oldest is settled and forgotten.
        A client request: the client gets an error (a prompt's turn ends in one). An agent
        request: a permission request is withdrawn through the bridge (``cancelled``), any
        other is answered with an error; the client is sent ``$/cancel_request`` for it."""
        to_agent, to_client = self._to_agent, self._to_client
        if (to_agent.cap is None or len(to_agent.pending) <= to_agent.cap) and (
            to_client.cap is None or len(to_client.pending) <= to_client.cap
        ):
            return  # the common case, checked here: this runs after every line
        while (over := self._to_agent.over_cap()) is not None:
            _forwarded, pending = over
            # Passed through, the agent's late answer still reaches the client: it is only
            # no longer answered for the agent if the agent goes away.
            passed = self.mode == "passthrough"
            self._limit(
                "max_pending_requests",
                f"{self._to_agent.cap} requests of the client wait for the agent: the oldest "
                f"({pending.method}) is "
                + ("no longer tracked" if passed else "answered with an error"),
            )
            if not pending.discard and not passed:
                self._give_up_on_agent(pending, "too many requests wait for the agent")
        while (over := self._to_client.over_cap()) is not None:
            forwarded, pending = over
            self._limit(
                "max_pending_requests",
                f"{self._to_client.cap} requests of the agent wait for the client: the oldest "
                f"({pending.method}) is withdrawn",
            )
            if pending.discard:
                continue
            if pending.method == "session/request_permission":
                withdrawn = self._bridge().withdraw(pending.origin_id)
                for reply in withdrawn.replies:
                    self._agent(reply)
                for message in withdrawn.messages:
                    if not (isinstance(message, JsonRpcMessage) and message.method):
                        self._client(message)  # the call's own state, restored
                session = self._session(pending.session_id)
                session.permissions = max(0, session.permissions - 1)
            else:
                detail = {"details": "too many requests wait for the client"}
                self._agent(rpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", detail))
            self._client(rpc.notification("$/cancel_request", {"requestId": forwarded}))

    def _give_up_on_agent(self, pending: rpc.Pending, reason: str) -> None:
        """A client request the agent will not be waited on for: the client's answer."""
        data = {"details": reason}
        session = self._sessions.get(request_key(pending.session_id))
        prompt = None
        if pending.method == "session/prompt" and session is not None:
            prompt = next((p for p in session.prompts if p.client_id == pending.origin_id), None)
        if prompt is not None and session is not None:
            session.prompts.remove(prompt)
            if self.client_version == 2 and prompt.acknowledged:  # the turn ends in an error
                self._client(rpc.update(pending.session_id, _idle_error(INTERNAL_ERROR, reason)))
                return
        self._client(rpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", data))

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
            return encode(rpc.error(envelope.id, INTERNAL_ERROR, "Internal error", detail))
        if envelope.id is not UNSET:  # a request: its sender gets the answer
            pending = (self._to_agent if to == "agent" else self._to_client).pop(envelope.id)
            if pending is not None:
                answer = rpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", detail)
                (self._client if to == "agent" else self._agent)(answer)
        return None

    def _note(
        self, side: Side, text: str, kind: Literal["loss", "error", "limit"] = "loss"
    ) -> None:
        self._out.notes.append(ConnectionNote(side, text, kind, self._line))

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
    # Pass-through: forward bytes, remember only what the client waits for

    def _track_passthrough(self, line: bytes) -> None:
        try:
            parsed = rpc.read_line.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return  # the agent answers it (-32700); nothing to wait for
        for item in parsed if isinstance(parsed, list) else (parsed,):
            envelope = _as_envelope(item)
            if envelope is not None and envelope.method is not UNSET and envelope.id is not UNSET:
                session_id = _session_of(envelope) if envelope.method == "session/prompt" else None
                pending = rpc.Pending(envelope.id, envelope.method, session_id)
                self._to_agent.keep(envelope.id, pending)

    def _unique_options(self, line: bytes) -> bytes:
        """An agent's permission request whose option ids repeat, with the repeats dropped
        (the first is the one shown, D5) so that an answer names one option; any other line
        as it is."""
        try:
            value = rpc.whole(line)
        except rpc.Unreadable:
            return line
        changed = False
        for message in value if isinstance(value, list) else [value]:
            if (
                not isinstance(message, dict)
                or message.get("method") != "session/request_permission"
            ):
                continue
            params = message.get("params")
            options = params.get("options") if isinstance(params, dict) else None
            if not isinstance(params, dict) or not isinstance(options, list):
                continue
            kept: list[Any] = []
            offered: set[str] = set()
            for option in options:
                option_id = option.get("optionId") if isinstance(option, dict) else None
                if isinstance(option_id, str):  # another id is passed on: the client says
                    if option_id in offered:
                        self._note(
                            "agent", f"duplicate permission option id {option_id!r}: dropped"
                        )
                        continue
                    offered.add(option_id)
                kept.append(option)
            if len(kept) != len(options):
                params["options"] = kept
                changed = True
        return msgspec.json.encode(value) if changed else line

    def _client_requests(self) -> Any:
        """The client's methods the proxy maps or refuses: requests, never notifications."""
        if self.client_version == 1:
            return TO_V2.keys() | NO_V2.keys()
        return TO_V1.keys() | NO_V1.keys()

    def _untrack_passthrough(self, line: bytes) -> None:
        """What the client waits for that an agent line settles: an answer, and (v2) the idle
        ``state_update`` that ends a turn the agent acknowledged."""
        ending = bool(self._turns) and b'"idle"' in line
        if not ending and (not self._to_agent.pending or line.startswith(_METHOD_FIRST)):
            return  # no answer: a line that opens with a method is a request or notification
        try:
            parsed = rpc.read_line.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return
        for item in parsed if isinstance(parsed, list) else (parsed,):
            envelope = _as_envelope(item)
            if envelope is None:
                continue
            if envelope.method is UNSET and envelope.id is not UNSET:
                pending = self._to_agent.pop(envelope.id)
                if (
                    pending is not None
                    and pending.method == "session/prompt"
                    and self.client_version == 2
                    and envelope.error is UNSET
                ):
                    key = request_key(pending.session_id)
                    self._turns[key] = pending.session_id  # acknowledged: the turn runs
            elif ending and envelope.method == "session/update":
                params = _plain_or_none(envelope.params)
                body = params.get("update") if isinstance(params, dict) else None
                if isinstance(body, dict) and body.get("state") == "idle":
                    self._turns.pop(request_key(params.get("sessionId")), None)

    # ----------------------------------------------------------------------------------------
    # From the client

    def _read_client(self, line: bytes) -> tuple[Any, bytes] | None:
        """The client's line as JSON values (and the line they were read from), or ``None``
        when it is not JSON: then it has been answered."""
        try:
            return rpc.whole(line), line
        except rpc.Unreadable as exc:
            reason = str(exc)
        fixed, count = rpc.replace_lone_surrogates(line)
        if count:
            try:
                value = rpc.whole(fixed)
            except rpc.Unreadable as exc:
                reason, line = str(exc), fixed
            else:
                self._note("client", _surrogates_replaced(count))
                return value, fixed
        request_id, has_method = rpc.salvage_id(line)
        answer = not has_method and request_id is not UNSET
        if answer and self._unreadable_answer(request_id, reason):
            what = f"an answer that is not JSON ({reason}): the agent is answered, no approval"
            self._note("client", what, "error")
            return None
        self._note("client", f"a line that is not JSON ({reason}): answered -32700", "error")
        known = plain_id(request_id) if request_id is not UNSET else None
        self._client(rpc.error(known, PARSE_ERROR, "Parse error", {"details": reason}))
        return None

    def _unreadable_answer(self, request_id: Any, reason: str) -> bool:
        """The client answered a request of the agent with a line that cannot be read: the
        agent gets an answer that approves nothing. ``False``: no such request is pending."""
        pending = self._to_client.pop(request_id)
        if pending is None:
            return False
        if pending.discard:
            return True
        if pending.method == "session/request_permission":
            self._permission_answered(pending, rpc.result(pending.origin_id, CANCELLED_OUTCOME))
            return True
        detail = {"details": f"the client's answer could not be read ({reason})"}
        self._agent(rpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", detail))
        return True

    def _client_value(self, value: Any, line: bytes, now: float) -> None:
        """One message of the client (a line, or an element of its batch) as JSON values."""
        if not isinstance(value, dict):
            self._client(rpc.error(None, INVALID_REQUEST, "Invalid Request"))
            self._note("client", "a JSON value that is not a message: answered -32600", "error")
            return
        try:
            envelope = rpc.read_envelope.decode(line)
        except msgspec.ValidationError as exc:  # e.g. "method": null or 5
            known = plain_id(value.get("id"))
            self._client(
                rpc.error(known, INVALID_REQUEST, "Invalid Request", {"details": str(exc)})
            )
            self._note(
                "client", f"a JSON value that is not a message ({exc}): answered -32600", "error"
            )
            return
        self._client_message(envelope, line, now)

    def _client_message(self, envelope: rpc.Envelope, line: bytes, now: float) -> None:
        method = envelope.method
        if method is UNSET:
            if envelope.id is UNSET:
                self._client(rpc.error(None, INVALID_REQUEST, "Invalid Request"))
                self._note("client", "a message with neither method nor id: answered -32600")
                return
            self._client_response(envelope, line)
            return
        params = rpc.plain(envelope.params)
        if self._initializing and method != "initialize":
            self._hold_client(envelope, line)
        elif envelope.id is UNSET:
            self._client_notification(method, params, line)
        elif method == "initialize" and self.mode == "negotiating":
            self._client_initialize(envelope.id, params, line)
        elif self.mode == "negotiating":  # before versions are known: as it is
            self._to_agent.keep(envelope.id, rpc.Pending(envelope.id, method))
            self._out.to_agent.append(line)
        elif method in _CLIENT_NOTIFICATIONS:  # a cancel is a cancel, with or without an id
            self._client_notification(method, params, line)
            self._client(rpc.result(plain_id(envelope.id), {}))
            self._note("client", f"{method} is a notification but came with an id: answered {{}}")
        else:
            self._client_request(envelope.id, method, params, line)

    def _client_initialize(self, request_id: Any, params: Any, line: bytes) -> None:
        if self.client_version is None:
            version = self._requested_version(request_id, params)
            if version is None:
                return  # answered: the client may try again
            self.client_version = version
        self._initializing = True
        params = params if isinstance(params, dict) else {}
        caps = params.get("clientCapabilities") or params.get("capabilities")
        self._client_caps = caps if isinstance(caps, dict) else {}
        target = self.client_version if self._asked_agent == "auto" else self._asked_agent
        if target == self.client_version:
            self._to_agent.keep(
                request_id, rpc.Pending(request_id, "initialize", params=(target, params, False))
            )
            self._out.to_agent.append(line)
            return
        self._ask_agent(request_id, target, params)

    def _requested_version(self, request_id: Any, params: Any) -> Version | None:
        """The client's side of the connection from its ``initialize``: v1 for 1, v2 for 2 and
        above (the newest the proxy speaks); ``None`` when it is answered instead: ``-32602``
        naming the field that cannot be read, ``-32022`` for version 0."""
        requested = params.get("protocolVersion", UNSET) if isinstance(params, dict) else UNSET
        if not isinstance(params, dict):
            path, reason = "$.params", "initialize needs params: an object with `protocolVersion`"
        elif type(requested) is int and 1 <= requested <= 0xFFFF:
            if requested > 2:
                self._note(
                    "client",
                    f"initialize asks for protocol version {requested}; the proxy speaks 1 and "
                    "2: the client is spoken to in v2",
                )
            return 1 if requested == 1 else 2
        elif requested == 0 and type(requested) is int:
            data = {"requested": 0, "supported": [1, 2]}
            self._client(
                rpc.error(request_id, UNSUPPORTED_VERSION, "Unsupported protocol version", data)
            )
            self._note("client", "initialize asks for protocol version 0: answered -32022", "error")
            return None
        else:
            shown = "missing" if requested is UNSET else msgspec.json.encode(requested).decode()
            path = "$.params.protocolVersion"
            reason = f"`protocolVersion` must be an integer, 1 or 2; it is {shown}"
        data = {"path": path, "reason": reason}
        self._client(rpc.error(request_id, INVALID_PARAMS, "Invalid params", data))
        self._note("client", f"initialize: {path}: {reason}: answered -32602", "error")
        return None

    def _ask_agent(
        self, request_id: Any, target: Version, params: Any, *, again: bool = False
    ) -> None:
        """The client's ``initialize`` for an agent asked in ``target`` (converted when that
        is not the client's version); ``again``: the second and last time it is asked."""
        value = params
        if target != self.client_version:
            table = TO_V2 if target == 2 else TO_V1
            _method, mapped = map_params(table, "initialize", params)
            self._losses("client", "initialize", mapped.losses)
            value = mapped.value
        pending = rpc.Pending(request_id, "initialize", params=(target, params, again))
        self._agent(rpc.request(self._to_agent.allocate(pending), "initialize", value))

    def _client_notification(self, method: str, params: Any, line: bytes) -> None:
        if self.mode != "convert":
            self._out.to_agent.append(line)
            return
        if method == "$/cancel_request":
            self._forward_cancel_request(params, self._to_agent, self._agent, "client")
            return
        if method == "session/cancel" and isinstance(params, dict):
            self._agent(rpc.notification(method, params))
            self._settle_permissions(params.get("sessionId"))
            return
        if method == "initialize" or method in self._client_requests():
            self._note(
                "client",
                f"{method} is a request but came without an id: not forwarded (its answer "
                "could not reach the client)",
                "error",
            )
            return
        self._out.to_agent.append(line)  # extension and unknown notifications

    def _client_request(self, request_id: Any, method: str, params: Any, line: bytes) -> None:
        missing = (NO_V2 if self.client_version == 1 else NO_V1).get(method)
        if missing is not None:
            code = METHOD_NOT_FOUND if self.client_version == 1 else INVALID_PARAMS
            self._client(rpc.error(request_id, code, missing))
            self._note("client", f"{method}: {missing}")
            return
        table = TO_V2 if self.client_version == 1 else TO_V1
        if method not in table:  # unknown and extension methods: as they are, under our id
            data = rpc.whole(line)
            data["id"] = self._to_agent.allocate(rpc.Pending(request_id, method))
            self._agent(data)
            return
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        if self.client_version == 2 and self._answer_for_v1_agent(request_id, method, params):
            return
        modes = self._modes_of(session_id) if method == "session/set_config_option" else None
        if modes is not None and modes.targets(params):
            invalid = modes.invalid(params)
            if invalid is not None:
                data = {"path": "$.params", "reason": invalid}
                self._client(rpc.error(request_id, INVALID_PARAMS, "Invalid params", data))
                return
            table = MODES_TO_V1  # the v1 agent's modes: session/set_mode
        target, mapped = map_params(table, method, params)
        self._losses("client", method, mapped.losses)
        if method == "session/load" or (
            method == "session/resume" and isinstance(params, dict) and "replayFrom" in params
        ):  # the client asked for the session's history
            self._replaying(session_id)
        if self.client_version == 2 and method == "session/resume":
            resumed = self._resume_method(session_id, target)
            if resumed is None:
                self._client(
                    rpc.error(request_id, METHOD_NOT_FOUND, "the v1 agent cannot resume sessions")
                )
                return
            target = resumed
        if method == "session/prompt":
            if not (isinstance(mapped.value.get("prompt"), list) and mapped.value["prompt"]):
                self._client(rpc.error(request_id, INVALID_PARAMS, "the prompt has no content"))
                return
            self._start_prompt(request_id, session_id, params)
        pending = rpc.Pending(request_id, method, session_id)  # its params are not kept
        if table is MODES_TO_V1:
            pending.params = ("mode", mapped.value.get("modeId"))
        self._agent(rpc.request(self._to_agent.allocate(pending), target, mapped.value))

    def _modes_of(self, session_id: Any) -> Modes | None:
        session = self._sessions.get(request_key(session_id))
        return session.modes if session is not None else None

    def _replaying(self, session_id: Any) -> None:
        """A load (or a resume with replay) replays the whole session to a client that starts
        over: what it was sent of it is forgotten, so that the replay reaches it whole (its
        tool calls as first sights, its messages as chunks again)."""
        session = self._sessions.get(request_key(session_id))
        if session is not None:
            session.forwarded_messages.clear()
        bridge = self._to_v1 if self.client_version == 1 else self._to_v2
        if bridge is not None and isinstance(session_id, str):
            self._bridged(bridge.close_session(session_id), "client")

    def _answer_for_v1_agent(self, request_id: Any, method: str, params: Any) -> bool:
        """v2 baseline methods a v1 agent may lack: answered here when it does."""
        session_caps = self._agent_caps.get("sessionCapabilities") or {}
        if method == "auth/logout" and not (self._agent_caps.get("auth") or {}).get("logout"):
            self._client(rpc.result(request_id, {}))  # no auth state: an empty result (v2 rule)
            return True
        if method == "session/close" and not isinstance(session_caps.get("close"), dict):
            self._client(rpc.result(request_id, {}))
            self._note("client", "session/close: the v1 agent cannot close sessions; answered {}")
            self._close_session(params.get("sessionId") if isinstance(params, dict) else None)
            return True
        if method == "session/list" and not isinstance(session_caps.get("list"), dict):
            self._client(
                rpc.error(request_id, METHOD_NOT_FOUND, "the v1 agent cannot list sessions")
            )
            return True
        return False

    def _resume_method(self, session_id: Any, target: str) -> str | None:
        caps = self._agent_caps
        can_load = caps.get("loadSession") is True
        can_resume = isinstance((caps.get("sessionCapabilities") or {}).get("resume"), dict)
        if target == "session/load":
            return target if can_load else None
        if can_resume:
            return target
        if can_load:  # resume without replay, served by a load whose replay is dropped
            self._session(session_id).replay_suppressed = True
            return "session/load"
        return None

    def _client_response(self, envelope: rpc.Envelope, line: bytes) -> None:
        pending = self._to_client.pop(envelope.id)
        if pending is None:
            self._note("client", f"an answer to no pending request (id {envelope.id!r}): dropped")
            return
        if pending.discard:
            self._note(
                "client",
                f"an answer to request {envelope.id!r}, which the proxy answered already (the "
                "agent was sent `cancelled`): dropped",
                "error",
            )
            return
        data = rpc.whole(line)
        data["id"] = pending.origin_id
        if pending.method == "session/request_permission":
            self._permission_answered(pending, data)
            return
        self._agent(data)

    def _permission_answered(self, pending: rpc.Pending, answer: Any) -> None:
        """The client's answer to a permission request, through the bridge to the agent."""
        session = self._session(pending.session_id)
        session.permissions = max(0, session.permissions - 1)
        bridge = self._bridge()
        converted = self._convert(bridge, answer, "client")
        if isinstance(converted, DecodeError):  # an answer that cannot be read: no approval
            converted = bridge.convert(rpc.result(pending.origin_id, CANCELLED_OUTCOME))
        self._bridged(converted, "agent")
        if self.client_version == 2 and not session.permissions and session.prompts:
            running = {"sessionUpdate": "state_update", "state": "running"}
            self._client(rpc.update(pending.session_id, running))

    # ----------------------------------------------------------------------------------------
    # From the agent

    def _read_agent(self, line: bytes) -> tuple[Any, bytes] | None:
        """The agent's line read for routing (and the line it was read from), or ``None``: not
        JSON-RPC, which ends the session, or dropped and noted."""
        try:
            return rpc.read_line.decode(line), line
        except msgspec.ValidationError as exc:  # JSON, but not a message: e.g. "method": 5
            self._agent_invalid(line, f"a line that is not a message ({exc})", INVALID_REQUEST)
            return None
        except (msgspec.DecodeError, RecursionError) as exc:
            reason = "nesting is too deep" if isinstance(exc, RecursionError) else str(exc)
        fixed, count = rpc.replace_lone_surrogates(line)
        if count:
            try:
                parsed = rpc.read_line.decode(fixed)
            except (msgspec.DecodeError, RecursionError):
                line = fixed
            else:
                self._note("agent", _surrogates_replaced(count))
                return parsed, fixed
        if reason == "nesting is too deep":
            self._agent_invalid(line, "a message nested too deeply to read", PARSE_ERROR)
            return None
        self._end(f"the agent wrote a line that is not JSON-RPC ({reason})")
        return None

    def _agent_invalid(self, line: bytes, what: str, code: int) -> None:
        """A line of the agent the proxy cannot route: dropped, and a request answered."""
        request_id, has_method = rpc.salvage_id(line)
        answered = has_method and request_id is not UNSET
        self._note("agent", f"{what}: {'answered' if answered else 'dropped'}", "error")
        if answered:
            message = "Parse error" if code == PARSE_ERROR else "Invalid Request"
            self._agent(rpc.error(plain_id(request_id), code, message, {"details": what}))

    def _agent_item(self, item: Any, now: float) -> None:
        if not isinstance(item, dict):
            self._note("agent", "a batch element that is not a message: dropped", "error")
            return
        line = msgspec.json.encode(item)
        try:
            envelope = rpc.read_envelope.decode(line)
        except msgspec.ValidationError as exc:  # e.g. "method": null
            self._agent_invalid(
                line, f"a batch element that is not a message ({exc})", INVALID_REQUEST
            )
            return
        self._agent_message(envelope, line, now)

    def _agent_message(self, envelope: rpc.Envelope, line: bytes, now: float) -> None:
        try:
            self._route_agent_message(envelope, line, now)
        except rpc.Unreadable as exc:  # a payload the envelope read skipped cannot be read
            what = f"a message that cannot be read ({exc})"
            if envelope.method is not UNSET and envelope.id is not UNSET:
                self._note("agent", f"{what}: answered -32700", "error")
                error = rpc.error(plain_id(envelope.id), PARSE_ERROR, "Parse error")
                self._agent(error)
            elif envelope.method is UNSET and envelope.id is not UNSET:
                self._note("agent", f"{what}: the client is answered an error", "error")
                pending = self._to_agent.pop(envelope.id)
                if pending is not None and not pending.discard:
                    detail = {"details": f"the agent's answer could not be read ({exc})"}
                    error = rpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", detail)
                    self._client(error)
            else:
                self._note("agent", f"{what}: not forwarded", "error")

    def _route_agent_message(self, envelope: rpc.Envelope, line: bytes, now: float) -> None:
        method = envelope.method
        if method is UNSET:
            if envelope.id is UNSET:
                self._note("agent", "a message with neither method nor id: dropped", "error")
                return
            self._agent_response(envelope, line)
        elif self.mode == "negotiating":  # until the agent has answered initialize: held
            self._hold(envelope, line)
        elif self.mode != "convert":
            self._out.to_client.append(line)
        elif envelope.id is UNSET:
            self._agent_notification(method, envelope, line, now)
        elif method in _AGENT_NOTIFICATIONS:  # a notification with an id: handled as one
            self._agent_notification(method, envelope, line, now)
            self._agent(rpc.result(plain_id(envelope.id), {}))
            self._note("agent", f"{method} is a notification but came with an id: answered {{}}")
        else:
            self._agent_request(envelope.id, method, envelope, line)

    def _hold(self, envelope: rpc.Envelope, line: bytes) -> None:
        """An agent request or notification before versions are known waits for them (ids the
        client sees are then allocated like every other, and its version is converted)."""
        if len(self._held) >= _MAX_HELD or self._held_bytes + len(line) > _MAX_HELD_BYTES:
            what = f"more than {_MAX_HELD} messages before it answered initialize"
            self._agent_invalid(line, what, INTERNAL_ERROR) if envelope.id is not UNSET else (
                self._note("agent", f"{what}: dropped", "error")
            )
            return
        self._held.append(line)
        self._held_bytes += len(line)

    def _hold_client(self, envelope: rpc.Envelope, line: bytes) -> None:
        """A client line while its initialize is with the agent waits for the answer: the
        agent may answer in the other version (or be asked again in it), and each side gets
        only messages of its own version. Past the bound it goes on as it is."""
        if (
            len(self._client_held) >= _MAX_HELD
            or self._client_held_bytes + len(line) > _MAX_HELD_BYTES
        ):
            self._note(
                "client",
                f"more than {_MAX_HELD} messages before the agent answered initialize: "
                "forwarded as they are",
                "error",
            )
            self._release_client_held()
            self._out.to_agent.append(line)
            return
        self._client_held.append((envelope, line))
        self._client_held_bytes += len(line)

    def _release_client_held(self) -> None:
        """The client's lines held while the agent answered initialize, in the mode that
        answer chose (as they are when it refused)."""
        self._initializing = False
        held, self._client_held, self._client_held_bytes = self._client_held, [], 0
        for envelope, line in held:
            if self.mode == "passthrough":
                self._track_passthrough(line)
                self._out.to_agent.append(line)
            else:
                self._client_message(envelope, line, self._now)

    def _release_held(self, now: float) -> None:
        held, self._held, self._held_bytes = self._held, [], 0
        for line in held:
            if self.mode == "passthrough":
                self._out.to_client.append(self._unique_options(line))
            else:
                self._agent_message(rpc.read_envelope.decode(line), line, now)

    def _agent_response(self, envelope: rpc.Envelope, line: bytes) -> None:
        data = rpc.whole(line)  # read before anything changes: it may be unreadable
        pending = self._to_agent.pop(envelope.id)
        if pending is None:
            self._note("agent", f"an answer to no pending request (id {envelope.id!r}): dropped")
            return
        if pending.discard:
            return
        if pending.method == "initialize" and self.mode == "negotiating":
            self._agent_initialized(pending, data)
            return
        if self.mode != "convert":
            data["id"] = pending.origin_id
            self._client(data)
            return
        if "error" in data:
            self._agent_error(pending, data["error"])
            return
        result = data.get("result")
        if pending.method == "session/prompt":
            self._prompt_answered(pending, result)
            return
        table = TO_V2 if self.client_version == 1 else TO_V1
        if pending.method not in table:
            self._client(rpc.result(pending.origin_id, result))
            return
        modes = self._modes_of(pending.session_id)
        if isinstance(pending.params, tuple) and pending.params[0] == "mode" and modes:
            self._client(rpc.result(pending.origin_id, modes.selected(pending.params[1], result)))
            return
        mapped = map_result(table, pending.method, result)
        self._losses("agent", f"{pending.method} result", mapped.losses)
        value = mapped.value
        if modes is not None and pending.method == "session/set_config_option":
            value = modes.with_agent_options(value)
        session_id = pending.session_id
        if session_id is None and isinstance(value, dict):
            session_id = value.get("sessionId")
        if pending.method in _SESSION_SETUP and isinstance(session_id, str):
            session = self._session(session_id)
            session.established = True
            if self.client_version == 2:
                session.modes = Modes.shown(result, value)
        self._client(rpc.result(pending.origin_id, value))
        for update in mapped.updates:
            self._client(rpc.update(session_id, update))
        if pending.method == "session/close":
            self._close_session(session_id)
        if pending.method in ("session/load", "session/resume"):
            self._session(session_id).replay_suppressed = False

    def _agent_error(self, pending: rpc.Pending, error: Any) -> None:
        if pending.method == "session/prompt" and pending.session_id in self._sessions:
            prompts = self._sessions[pending.session_id].prompts
            prompt = next((p for p in prompts if p.client_id == pending.origin_id), None)
            if prompt is not None:
                prompts.remove(prompt)
                if self.client_version == 2 and prompt.acknowledged:  # the turn ends in error
                    code, message = _error_parts(error)
                    self._client(rpc.update(pending.session_id, _idle_error(code, message, error)))
                    return
        self._client({"jsonrpc": "2.0", "id": pending.origin_id, "error": error})

    def _agent_initialized(self, pending: rpc.Pending, data: dict[str, Any]) -> None:
        asked, params, again = pending.params
        other: Version = 2 if asked == 1 else 1
        if "error" in data:
            if not again:  # an agent that refuses one version may speak the other
                self._note("agent", f"initialize refused in v{asked}: asked again in v{other}")
                self._ask_agent(pending.origin_id, other, params, again=True)
                return
            data["id"] = pending.origin_id  # still negotiating: the client may try again
            self._client(data)
            self._release_client_held()
            return
        result = data.get("result")
        answered = _version_of(result.get("protocolVersion") if isinstance(result, dict) else None)
        if answered == other and not again:
            # It speaks the other version: it is asked again in that one, so that the
            # client's capabilities and info reach it in the shape it reads.
            self._note(
                "agent", f"initialize answered in v{answered} when asked in v{asked}: asked again"
            )
            self._ask_agent(pending.origin_id, other, params, again=True)
            return
        self.agent_version = answered or asked
        if self.client_version is None or self.agent_version in (None, self.client_version):
            self.mode = "passthrough"
            data["id"] = pending.origin_id
            self._client(data)
            self._release_held(0.0)
            self._release_client_held()
            return
        self.mode = "convert"
        self._agent_caps = (
            (result.get("agentCapabilities") or {})
            if self.agent_version == 1 and isinstance(result, dict)
            else {}
        )
        table = TO_V2 if self.client_version == 1 else TO_V1
        mapped = map_result(table, "initialize", result)
        self._losses("agent", "initialize result", mapped.losses)
        if self.client_version == 1:
            session_caps = self._client_caps.get("session") or {}
            self._to_v1 = V2ToV1Bridge(
                coalesce=self.coalesce_interval > 0,
                limits=self.limits,
                max_message_bytes=self.max_line_bytes,
                notices=isinstance(session_caps.get("notices"), dict),
                compaction=isinstance(session_caps.get("compaction"), dict),
            )
        else:
            self._to_v2 = V1ToV2Bridge(limits=self.limits)
        self._client(rpc.result(pending.origin_id, mapped.value))
        self._release_held(self._now)
        self._release_client_held()

    def _agent_request(
        self, request_id: Any, method: str, envelope: rpc.Envelope, line: bytes
    ) -> None:
        if type(request_id) is not str and type(request_id) is not int:
            what = f"a request whose id is {request_id!r} (ids are strings or integers)"
            self._agent_invalid(line, what, INVALID_REQUEST)
            return
        if self._to_client.forwarded_id(request_id) is not UNSET:  # two answers for one id
            what = f"request {request_id!r} reuses the id of a request still waiting for its answer"
            self._agent(
                rpc.error(request_id, INVALID_REQUEST, "Invalid Request", {"details": what})
            )
            self._note("agent", f"{method}: {what}: refused (-32600)", "error")
            return
        if self.client_version == 2 and method.startswith(_CLIENT_OWNED):
            what = "file system" if method.startswith("fs/") else "terminals"
            capability = "fs" if method.startswith("fs/") else "terminal"
            message = (
                f"{method} is not available: the client speaks ACP v2, which has no client "
                f"{what} (`clientCapabilities.{capability}` was not advertised)"
            )
            self._agent(rpc.error(request_id, METHOD_NOT_FOUND, message))
            self._note("agent", message)
            return
        if method == "session/request_permission":
            converted = self._convert(self._bridge(), line, "agent")
            if isinstance(converted, DecodeError):  # Invalid params; nothing changes (5.6)
                data = {"path": converted.path, "reason": converted.reason}
                self._agent(rpc.error(request_id, INVALID_PARAMS, "Invalid params", data))
                return
            self._bridged(converted, "client")
            return
        data = rpc.whole(line)
        data["id"] = self._to_client.allocate(rpc.Pending(request_id, method))
        self._client(data)

    def _agent_notification(
        self, method: str, envelope: rpc.Envelope, line: bytes, now: float
    ) -> None:
        if method == "$/cancel_request":  # the bridge settles what it forwarded; ids mapped
            cancel = rpc.notification(method, rpc.plain(envelope.params))
            converted = self._convert(self._bridge(), cancel, "agent")
            if not isinstance(converted, DecodeError):
                self._bridged(converted, "client")
            return
        if method == "session/request_permission" or method.startswith(_CLIENT_OWNED):
            self._note(
                "agent",
                f"{method} is a request but came without an id: not forwarded (the client's "
                "answer could not reach the agent)",
                "error",
            )
            return
        if method != "session/update":
            self._out.to_client.append(line)
            return
        try:
            params = (
                rpc.read_update.decode(envelope.params) if envelope.params is not UNSET else None
            )
        except msgspec.DecodeError:
            params = None
        update = params.update if params is not None else None
        tag = update.sessionUpdate if update is not None else None
        session_id = params.sessionId if params is not None else None
        if self.client_version == 2:
            self._v1_agent_update(session_id, tag, line)
            return
        self._update_to_v1(session_id, tag, line, now)

    def _update_to_v1(
        self, session_id: Any, tag: Any, line: bytes, now: float, plain: Any = None
    ) -> None:
        """A v2 agent's ``session/update`` for the v1 client; ``plain``: the line read whole,
        when ``_plain_update`` read it."""
        session = self._sessions.get(session_id) if type(session_id) is str else None
        if session is None:  # a string id is its own key
            session = self._session(session_id)
        else:
            self._touches += 1
            session.touched = self._touches
        if tag in _USER_ECHOES and session.prompts:
            return  # the prompt's acknowledgement: a v1 client shows its own prompt
        assert self._to_v1 is not None
        if tag in _V2_TYPED:
            self._bridge_update(self._to_v1, line)
            if self.coalesce_interval > 0 and self._deadline is None:
                self._deadline = now + self.coalesce_interval
            return
        message = rpc.whole(line) if plain is None else plain
        params = message.get("params")
        body = params.get("update") if isinstance(params, dict) else None
        if not isinstance(body, dict):
            self._bridge_update(self._to_v1, line)  # the bridge says what it cannot read
            return
        if tag in _UPSERT_CHUNKS:
            self._fan_out(session_id, session, body)
            return
        if tag == "state_update":  # v1 has none; a flush point, and idle may end a turn
            if isinstance(session_id, str):
                self._bridged(self._to_v1.flush(session_id), "client")
            if body.get("state") == "idle" and body.get("stopReason") is not None:
                self._idle(session, body)  # an idle that ends active work
            return
        if tag in _CHUNKS and isinstance(body.get("messageId"), str):
            self._forwarded_message(session, body["messageId"])
        typed = _opaque_message(message, 2)
        if typed is not None:
            self._bridge_typed(self._to_v1, typed)
        else:
            self._bridge_update(self._to_v1, line)

    def _v1_agent_update(
        self, session_id: Any, tag: Any, line: bytes, typed: Any = None, plain: Any = None
    ) -> None:
        """``typed``: the line's typed message, when ``_typed_update`` read it; ``plain``: the
        line read whole, when ``_plain_update`` read it."""
        session = self._session(session_id)
        if session.replay_suppressed:
            return  # the replay of a load that serves a resume without replay
        self._agent_works_on(session_id)
        if session.modes is not None and tag in _MODE_UPDATES:
            self._mode_update(session.modes, line)
            return
        assert self._to_v2 is not None
        if typed is not None:
            self._bridge_typed(self._to_v2, typed)
            return
        if tag in _V1_TYPED:
            self._bridge_update(self._to_v2, line)
            return
        typed = _opaque_message(rpc.whole(line) if plain is None else plain, 1)
        if typed is not None:
            self._bridge_typed(self._to_v2, typed)
        else:
            self._bridge_update(self._to_v2, line)

    def _compact_update(self, line: bytes, now: float) -> bool:
        """A compact ``session/update`` read once (``_typed_update``, ``_plain_update``), told
        apart by the first ``"sessionUpdate":"`` of the line (one scan, which stops there; a
        nested one that misleads it only sends the line to the general path)."""
        at = line.find(_TAG_KEY)
        if at < 0:
            return False
        if line.startswith(_TYPED_TAGS, at + len(_TAG_KEY)):
            return self._typed_update(line, now)
        return self._plain_update(line, now)

    def _typed_update(self, line: bytes, now: float) -> bool:
        """The most common line of a converted session, a well-formed tool-call or terminal
        ``session/update`` notification, read once: by the strict decoder the bridge would
        read it with (``codec.fast_message_decoder``), its typed message then given to the
        bridge, routed as ``_agent_notification`` routes it. ``False`` for anything else (an
        id, an unknown key, another update, a size over the codec's limit, bad JSON): the
        general path reads it."""
        if len(line) > DEFAULT_MAX_BYTES:
            return False
        try:
            message = (_TYPED_V2 if self.agent_version == 2 else _TYPED_V1)(line)
        except FAST_PATH_MISSES:
            return False
        if type(message) is v2.SessionUpdateMessage and self._to_v1 is not None:
            session_id = message.params.session_id
            session = self._sessions.get(session_id)  # a string id is its own key
            if session is None:
                self._session(session_id)
            else:
                self._touches += 1
                session.touched = self._touches
            self._bridge_typed(self._to_v1, message)
            if self.coalesce_interval > 0 and self._deadline is None:
                self._deadline = now + self.coalesce_interval
            return True
        if type(message) is v1.SessionUpdateMessage and self._to_v2 is not None:
            self._v1_agent_update(message.params.session_id, None, line, message)
            return True
        return False

    def _plain_update(self, line: bytes, now: float) -> bool:
        """A compact ``session/update`` notification of any other kind (message chunks, plans,
        state, ...): read once, whole, instead of as an envelope, then its update's tag, then
        whole; routed as ``_agent_notification`` routes it. ``False`` for anything else (an
        id or another member, a tool-call tag, bad JSON): the general path reads it."""
        if not line.startswith(_UPDATE_FIRST):
            return False
        try:
            message = rpc.whole(line)
        except rpc.Unreadable:
            return False
        if not (
            type(message) is dict
            and message.keys() <= _ENVELOPE_KEYS
            and message.get("method") == "session/update"
        ):
            return False
        params = message.get("params")
        update = params.get("update") if type(params) is dict else None
        tag = update.get("sessionUpdate") if type(update) is dict else None
        if type(tag) is not str or tag in (_V2_TYPED if self.client_version == 1 else _V1_TYPED):
            return False
        assert type(params) is dict
        if self.client_version == 1:
            self._update_to_v1(params.get("sessionId"), tag, line, now, message)
        else:
            self._v1_agent_update(params.get("sessionId"), tag, line, plain=message)
        return True

    def _bridge_typed(self, bridge: V2ToV1Bridge | V1ToV2Bridge, message: Any) -> None:
        """``_bridge_update`` of a typed update, its common output (session updates) encoded
        straight into the client's lines (``_to_client_message`` would send them so)."""
        try:
            converted = bridge.convert(message)
        except DecodeError as exc:
            self._note("agent", f"a message that cannot be read ({exc}): not forwarded", "error")
            return
        lines = self._out.to_client
        for out in converted.messages:
            kind = type(out)
            if kind is v1.SessionUpdateMessage or kind is v2.SessionUpdateMessage:
                line = encode(out)
                if len(line) > self.max_line_bytes:
                    fitted = self._fits(line, "client")
                    if fitted is None:
                        continue
                    line = fitted
                lines.append(line)
            else:
                self._to_client_message(out)
        for reply in converted.replies:
            self._answered_by_bridge(reply)
        if converted.losses:
            self._losses("agent", "tool calls", converted.losses)

    def _mode_update(self, modes: Modes, line: bytes) -> None:
        """A v1 agent's mode or config option change, for a session whose modes the v2
        client is shown as a config option: one ``config_option_update`` with them all."""
        message = rpc.whole(line)
        params = message.get("params") if isinstance(message, dict) else None
        mapped = modes.update(params.get("update") if isinstance(params, dict) else None)
        self._losses("agent", "session/update", mapped.losses)
        if mapped.value is None:
            return
        assert isinstance(params, dict)
        out: dict[str, Any] = {"sessionId": params.get("sessionId"), "update": mapped.value}
        if isinstance(params.get("_meta"), dict):
            out["_meta"] = params["_meta"]
        self._client(rpc.notification("session/update", out))

    def _convert(
        self, bridge: V2ToV1Bridge | V1ToV2Bridge, data: Any, side: Side
    ) -> Converted | DecodeError:
        """``bridge.convert(data)``, or the error of a message it cannot read (noted)."""
        try:
            return bridge.convert(data)
        except DecodeError as exc:
            self._note(side, f"a message that cannot be read ({exc}): not forwarded", "error")
            return exc

    def _bridge_update(self, bridge: V2ToV1Bridge | V1ToV2Bridge, data: Any) -> None:
        """An agent's notification through its bridge (one it cannot read is dropped)."""
        converted = self._convert(bridge, data, "agent")
        if not isinstance(converted, DecodeError):
            self._bridged(converted, "client")

    def _bridged(self, converted: Converted, to: Side) -> None:
        """A bridge's output: messages to ``to``, replies back, losses noted."""
        if to == "client":
            for message in converted.messages:
                self._to_client_message(message)
            for reply in converted.replies:
                self._answered_by_bridge(reply)
            self._losses("agent", "tool calls", converted.losses)
            return
        for message in converted.messages:
            self._agent(message)
        for reply in converted.replies:
            self._client(reply)
        self._losses("client", "tool calls", converted.losses)

    def _bridge(self) -> V2ToV1Bridge | V1ToV2Bridge:
        bridge = self._to_v1 if self.client_version == 1 else self._to_v2
        assert bridge is not None
        return bridge

    def _to_client_message(self, message: Any) -> None:
        """A message of a bridge to the client: a request goes under an id allocated here, a
        ``$/cancel_request`` names that id."""
        if _is_request(message):  # a permission request
            session_id = message.params.session_id
            if self.client_version == 2:
                self._agent_works_on(session_id)
            session = self._session(session_id)
            if self.client_version == 2 and session.prompts and not session.permissions:
                waiting = {"sessionUpdate": "state_update", "state": "requires_action"}
                self._client(rpc.update(session_id, waiting))
            session.permissions += 1
            pending = rpc.Pending(message.id, "session/request_permission", session_id)
            self._client(_with_id(message, self._to_client.allocate(pending)))
            return
        if isinstance(message, JsonRpcMessage) and message.method == "$/cancel_request":
            params = message.data.get("params")
            origin = params.get("requestId", UNSET) if isinstance(params, dict) else UNSET
            forwarded = self._to_client.forwarded_id(origin) if origin is not UNSET else UNSET
            asked = self._to_client.pending.get(request_key(forwarded))
            if asked is None or asked.discard or asked.withdrawn:
                self._note(
                    "agent", f"$/cancel_request for no pending request ({origin!r}): dropped"
                )
                return
            asked.withdrawn = True
            assert isinstance(params, dict)
            self._client(rpc.notification("$/cancel_request", {**params, "requestId": forwarded}))
            return
        self._client(message)

    def _answered_by_bridge(self, reply: Any) -> None:
        """A bridge answered a request of the agent on the client's behalf. When the client
        has that request, it is settled: the client's late answer will be dropped."""
        origin = reply.data.get("id") if isinstance(reply, JsonRpcMessage) else UNSET
        forwarded = self._to_client.forwarded_id(origin) if origin is not UNSET else UNSET
        if forwarded is not UNSET:
            pending = self._to_client.pending[request_key(forwarded)]
            if not pending.discard:
                pending.discard = True
                session = self._session(pending.session_id)
                session.permissions = max(0, session.permissions - 1)
        self._agent(reply)

    # ----------------------------------------------------------------------------------------
    # Prompts, cancellation

    def _session(self, session_id: Any) -> _Session:
        key = request_key(session_id)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = _Session()
            cap = self._caps.max_sessions
            if cap is not None and len(self._sessions) > cap:
                self._forget_sessions(cap)
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

    def _close_session(self, session_id: Any) -> None:
        self._sessions.pop(request_key(session_id), None)
        for bridge in (self._to_v1, self._to_v2):
            if bridge is not None and isinstance(session_id, str):
                out = bridge.close_session(session_id)
                self._bridged(out, "client")

    def _start_prompt(self, request_id: Any, session_id: Any, params: Any) -> None:
        session = self._session(session_id)
        prompt = _Prompt(request_id, content=params.get("prompt", []))
        session.prompts.append(prompt)
        if self.client_version == 2 and session.established:
            # A v1 agent accepts a prompt by working on it: acknowledged for the v2 client now.
            # For a session it has not set up here, the agent's first word on it does (its
            # error, first, is the answer: a prompt it refused was never inserted).
            self._acknowledge(session_id, prompt)

    def _acknowledge(self, session_id: Any, prompt: _Prompt) -> None:
        """A v2 client's prompt to a v1 agent is accepted: ``messageId``, the echo, running."""
        assert self._to_v2 is not None
        self._to_v2.end_message(session_id)
        message_id = f"acp-toolcalls-user-{next(self._messages)}"
        prompt.acknowledged = True
        self._client(rpc.result(prompt.client_id, {"messageId": message_id}))
        echo = {"sessionUpdate": "user_message", "messageId": message_id, "content": prompt.content}
        self._client(rpc.update(session_id, echo))
        self._client(rpc.update(session_id, {"sessionUpdate": "state_update", "state": "running"}))

    def _agent_works_on(self, session_id: Any) -> None:
        """The v1 agent said something about a session: its prompts not acknowledged yet are."""
        session = self._sessions.get(request_key(session_id))
        if session is None:
            return
        for prompt in session.prompts:
            if not prompt.acknowledged:
                self._acknowledge(session_id, prompt)

    def _prompt_answered(self, pending: rpc.Pending, result: Any) -> None:
        session = self._session(pending.session_id)
        prompt = next((p for p in session.prompts if p.client_id == pending.origin_id), None)
        if self.client_version == 2:  # the v1 response ends the turn
            if prompt is not None:
                if not prompt.acknowledged:
                    self._acknowledge(pending.session_id, prompt)
                session.prompts.remove(prompt)
            assert self._to_v2 is not None
            self._to_v2.end_message(pending.session_id)
            stop = result.get("stopReason") if isinstance(result, dict) else None
            idle: dict[str, Any] = {"sessionUpdate": "state_update", "state": "idle"}
            idle["stopReason"] = stop if isinstance(stop, str) else "end_turn"
            if isinstance(result, dict) and isinstance(result.get("_meta"), dict):
                idle["_meta"] = result["_meta"]
            self._client(rpc.update(pending.session_id, idle))
            return
        if prompt is None:
            return
        prompt.acknowledged = True
        if prompt.stop is not None:  # the agent reported idle before answering the prompt
            session.prompts.remove(prompt)
            self._end_v1_prompt(prompt, prompt.stop)

    def _idle(self, session: _Session, state: Mapping[str, Any]) -> None:
        """A v2 agent's idle ``state_update``: the oldest pending v1 prompt ends with it."""
        if not session.prompts:
            return
        prompt = session.prompts[0]
        if not prompt.acknowledged:
            prompt.stop = dict(state)  # ends when the agent answers the prompt request
            return
        session.prompts.pop(0)
        self._end_v1_prompt(prompt, state)

    def _end_v1_prompt(self, prompt: _Prompt, state: Mapping[str, Any]) -> None:
        stop = state.get("stopReason")
        if stop == "error":
            code, message = _error_parts(state.get("error"))
            error = state.get("error") if isinstance(state.get("error"), dict) else None
            data = error.get("data") if error is not None else None
            self._client(rpc.error(prompt.client_id, code, message, data))
            return
        if stop not in _V1_STOP_REASONS:
            self._note("agent", f"stop reason {stop!r} has no v1 form: sent `end_turn`")
            stop = "end_turn"
        self._client(rpc.result(prompt.client_id, {"stopReason": stop}))

    def _fan_out(self, session_id: Any, session: _Session, update: Mapping[str, Any]) -> None:
        """A v2 message upsert toward v1: as chunks, when the v1 side has none of it yet."""
        message_id = update.get("messageId")
        content = update.get("content")
        tag = update.get("sessionUpdate")
        if not isinstance(message_id, str) or message_id in session.forwarded_messages:
            self._note(
                "agent",
                f"`{tag}` replaces content a v1 client already has (messageId {message_id!r}): "
                "not forwarded",
            )
            return
        if not isinstance(content, list):
            return  # no content to show (a `_meta` patch, a clear of nothing v1 has)
        self._forwarded_message(session, message_id)
        assert self._to_v1 is not None
        for block in content:
            chunk = {
                "sessionUpdate": _UPSERT_CHUNKS[str(tag)],
                "messageId": message_id,
                "content": block,
            }
            self._bridge_update(self._to_v1, rpc.update(session_id, chunk))

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

    def _settle_permissions(self, session_id: Any) -> None:
        """``session/cancel``: the session's pending permission requests are not approved; the
        bridge answers them ``cancelled`` and withdraws them from the client."""
        for pending in list(self._to_client.pending.values()):
            if pending.method != "session/request_permission" or pending.discard:
                continue
            if pending.session_id == session_id:
                self._bridged(self._bridge().withdraw(pending.origin_id), "client")

    def _forward_cancel_request(
        self, params: Any, ids: rpc.RequestIds, send: Callable[[Any], None], side: Side
    ) -> None:
        if not isinstance(params, dict) or "requestId" not in params:
            self._note(side, "$/cancel_request without a requestId: dropped")
            return
        request_id = params["requestId"]
        forwarded = ids.forwarded_id(request_id)
        if forwarded is UNSET:
            self._note(side, f"$/cancel_request for no pending request ({request_id!r}): dropped")
            return
        send(rpc.notification("$/cancel_request", {**params, "requestId": forwarded}))


# --------------------------------------------------------------------------------------------


def _opaque_message(message: Any, version: Version) -> Any:
    """A plain ``session/update`` with an opaque update (messages, plans, ...) as its typed
    message, so a bridge maps it without reading it again; ``None`` for anything unusual,
    which then takes the bridge's own (lenient) reading."""
    params = message.get("params") if isinstance(message, dict) else None
    if not (
        isinstance(params, dict)
        and message.keys() <= _ENVELOPE_KEYS
        and message.get("jsonrpc") == "2.0"
        and params.keys() <= _PARAMS_KEYS
        and isinstance(params.get("sessionId"), str)
        and isinstance(params.get("update"), dict)
        and isinstance(params["update"].get("sessionUpdate"), str)
    ):
        return None
    if version == 2:
        notification = v2.UpdateSessionNotification(
            session_id=params["sessionId"], update=v2.OpaqueSessionUpdate(params["update"])
        )
        return v2.SessionUpdateMessage(params=notification)
    return v1.SessionUpdateMessage(
        params=v1.SessionNotification(
            session_id=params["sessionId"], update=v1.OpaqueSessionUpdate(params["update"])
        )
    )


_ENVELOPE_KEYS = frozenset({"jsonrpc", "method", "params"})
_PARAMS_KEYS = frozenset({"sessionId", "update"})


def _surrogates_replaced(count: int) -> str:
    return f"{count} unpaired UTF-16 surrogate escape(s) (half of an emoji, say) replaced by U+FFFD"


def _session_of(envelope: rpc.Envelope) -> Any:
    params = _plain_or_none(envelope.params)
    return params.get("sessionId") if isinstance(params, dict) else None


def _plain_or_none(raw: Any) -> Any:
    """A raw payload as JSON values, or ``None`` when it cannot be read (pass-through only
    looks: the peer says what is wrong with it)."""
    try:
        return rpc.plain(raw)
    except rpc.Unreadable:
        return None


def _version_of(value: Any) -> Version | None:
    if value == 1:
        return 1
    if value == 2:
        return 2
    return None


def _as_envelope(item: Any) -> rpc.Envelope | None:
    if isinstance(item, rpc.Envelope):
        return item
    if isinstance(item, dict):
        try:
            return rpc.read_envelope.decode(msgspec.json.encode(item))
        except msgspec.DecodeError:
            return None
    return None


def _is_request(message: Any) -> bool:
    return isinstance(message, (v1.PermissionRequestMessage, v2.PermissionRequestMessage))


def _with_id(message: Any, request_id: Any) -> Any:
    return replace(message, id=request_id)


def _error_parts(error: Any) -> tuple[int, str]:
    if isinstance(error, dict):
        code = error.get("code")
        message = error.get("message")
        return (
            code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
            message if isinstance(message, str) and message else "the agent reported an error",
        )
    return INTERNAL_ERROR, "the agent reported an error"


def _idle_error(code: int, message: str, error: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if isinstance(error, dict) and "data" in error:
        body["data"] = error["data"]
    return {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": body}
