"""One ACP connection between a client (editor) and an agent that may speak the other version.

Rules this module owns (everything ``acp-toolcalls bridge`` decides; ``_stdio`` only moves
bytes), and where the rest of them live:

- Versions come from the real ``initialize`` exchange (``_negotiation``, its states ``_state``);
  the same version on both sides means pass-through (``_passthrough``): every line is forwarded
  byte for byte; otherwise every message is converted: session lifecycle methods by the tables
  of ``acp_toolcalls.lifecycle``, tool calls, terminals and permissions by the stateful bridges
  (``V2ToV1Bridge`` toward a v1 client, with coalescing bounded in time by ``poll``;
  ``V1ToV2Bridge`` toward a v2 client), what differs by direction by the policy chosen once
  (``_policy``).
- Routing, here: a client request in a method table is mapped (its result mapped back); one
  with no counterpart is answered with the reason (``NO_V1``/``NO_V2``); unknown and
  ``_``-prefixed methods pass through under an id of ours. A notification sent with an id is
  handled as the notification and the id answered ``{}``; a request method sent without an id
  is never forwarded raw (it is dropped and reported). An agent request that reuses the id of
  one still pending, or whose id is not a string or integer, is refused (``-32600``): its
  answers could not be told apart. Request ids and permissions: ``_permissions``; bad input:
  ``_refusals``; the agent's notifications: ``_updates`` (functions over the core).
- The agent gone (its exit, its crash, a line that is not JSON-RPC): every pending client
  request is answered with an error, a v2 client's running turn ends in an idle
  ``state_update`` with stop reason ``error`` (``_end``).
- The core's parts are components, no base classes (``negotiation``: the state and policy;
  ``reader``, ``output``, ``sessions``, ``bridge_output``, ...), the policies reach them
  through ``_sessions.Core``; ``negotiation`` and ``reader`` are given its routing steps.
- Nothing here reads a clock or does I/O: time is the ``now`` the caller passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from ..codec import DEFAULT_MAX_BYTES, DecodeError
from ..lifecycle import (
    MODES_TO_V1,
    jsonrpc,
    map_params,
    map_result,
    replays_history,
)
from ..models import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    plain_id,
)
from ..store import Limits
from . import _routing as rpc
from . import _updates
from ._negotiation import Negotiation
from ._output import ConnectionNote, FlushDeadline, Outbox, Output, Version, VersionOption
from ._passthrough import _PERMISSION_METHOD, PassThroughLines
from ._permissions import BridgeOutput, _turn_error
from ._policy import NEGOTIATION
from ._refusals import LineReader
from ._sessions import Sessions
from ._state import AGENT_GONE, CLOSED, CONVERTING, NEGOTIATING, PASSTHROUGH, Mode

if TYPE_CHECKING:
    from ..bridge import ReadFile
    from ..records import Side

__all__ = ["ConnectionCore", "ConnectionNote", "Outbox", "Version", "VersionOption"]

_SESSION_SETUP = frozenset({"session/new", "session/load", "session/resume"})
_CLIENT_NOTIFICATIONS = frozenset({"session/cancel", "$/cancel_request"})
_AGENT_NOTIFICATIONS = frozenset({"session/update", "$/cancel_request"})
"""Notifications of each side that are handled as such even when they come with an id."""
_FLUSH_BYTES = 4 * 1024 * 1024  # tool-call changes one ``poll`` sends, about (in store bytes)


class ConnectionCore:
    """The sans-I/O core of the proxy: lines in from either side, lines out to either side.

    ``from_client(line, now)`` and ``from_agent(line, now)`` take one line each (without its
    newline), ``from_client_lines`` and ``from_agent_lines`` several (those of one read, in
    one ``Outbox``); ``poll(now)`` sends coalesced tool-call changes that are due
    (``next_deadline``), ``flush()`` all of them; ``agent_gone(reason)`` answers all the
    client still waits for; ``oversized_line`` a line over ``max_line_bytes`` the edge
    skipped, from what it read of it. Each returns an ``Outbox``.

    Kept cheap per line (issue 19): in pass-through an agent line is looked at with byte
    checks only, unless a request of the client waits for an answer and the line does not
    open with a ``method`` (``_passthrough._METHOD_FIRST``); converting, a compact tool-call
    or terminal update is decoded once, by the strict decoder its bridge would read it with,
    and handed to the bridge typed (``_updates.compact_update``).
    """

    slice_batches = False
    """Set by the edge: batch lines a slice at a time (``more``, ``unfinished``; ``_refusals``)."""

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
        self.reader = LineReader(self, self._client_message, self._route_agent_message, self._end)
        self.negotiation = Negotiation(
            self,
            self.reader,
            self._client_message,
            client_version=client_version,
            agent_version=agent_version,
        )

    # ----------------------------------------------------------------------------------------
    # Public API

    @property
    def mode(self) -> Mode:
        """How the client's lines are handled: by the policy chosen (kept once it is closed)."""
        return self.negotiation.policy.mode

    @property
    def gone(self) -> bool:
        """The agent is gone: the connection is closed."""
        return self.negotiation.state == CLOSED

    def from_client(self, line: bytes, now: float) -> Outbox:
        """One line the client wrote."""
        self.output.now = now
        self._client_line(line, now)
        return self._take()

    def from_agent(self, line: bytes, now: float) -> Outbox:
        """One line the agent wrote."""
        self.output.now = now
        self._agent_line(line, now)
        return self._take()

    def from_client_lines(self, lines: Sequence[bytes], now: float) -> Outbox:
        """Lines the client wrote, in order (those of one read): what ``from_client`` would
        return for each, in one ``Outbox``, each note's ``line`` the index of its line in
        ``lines``; a line whose handling raises (a bug) costs that line alone (noted)."""
        return self.reader.lines(self._client_line, "client", lines, now)

    def from_agent_lines(self, lines: Sequence[bytes], now: float) -> Outbox:
        """Lines the agent wrote, in order: as ``from_client_lines``, the other way."""
        self.output.now = now
        if self.negotiation.state == PASSTHROUGH:  # kept to cheap byte checks per line
            self.passthrough.agent_lines(lines, self.negotiation.policy)
            return self._take()
        return self.reader.lines(self._agent_line, "agent", lines, now)

    def poll(self, now: float) -> Outbox:
        """Send the coalesced tool-call changes whose time has come."""
        self.output.now = now
        deadline = self.flush_deadline
        if deadline.at is not None and now >= deadline.at:
            deadline.at = None
            bridge = self.negotiation.policy.coalescing
            if bridge is not None:
                self.bridge_output.bridged(bridge.flush(max_bytes=_FLUSH_BYTES), "client")
                if bridge.pending:  # the rest goes once this is written
                    deadline.at = now
        return self._take()

    def flush(self) -> Outbox:
        """Send every coalesced tool-call change now (the client's input ended, say)."""
        self.flush_deadline.at = None
        bridge = self.negotiation.policy.coalescing
        if bridge is not None:
            self.bridge_output.bridged(bridge.flush(), "client")
        return self._take()

    def oversized_line(
        self, side: Side, size: int, request_id: Any, has_method: bool, now: float
    ) -> Outbox:
        """A line over ``max_line_bytes`` the edge skipped: ``LineReader.oversized_line``."""
        return self.reader.oversized_line(side, size, request_id, has_method, now)

    def unfinished(self, side: Side) -> bool:
        """Whether a batch line of ``side`` is not handled whole yet (``more``)."""
        return self.reader.unfinished(side)

    def more(self, side: Side, now: float) -> Outbox:
        """The next slice of ``side``'s unfinished batch, then the lines after it."""
        return self.reader.more(side, now)

    @property
    def client_version(self) -> Version | None:
        """The version the client speaks, once known (configured, or its ``initialize``)."""
        return self.negotiation.client_version

    @property
    def agent_version(self) -> Version | None:
        """The version the agent speaks, once it has answered ``initialize``."""
        return self.negotiation.agent_version

    @property
    def agent_side_version(self) -> Version | None:
        """``Negotiation.agent_side_version``: the agent's version, or the one it is asked in."""
        return self.negotiation.agent_side_version

    def next_deadline(self) -> float | None:
        """When ``poll`` has something to send (``None``: nothing is waiting)."""
        return self.flush_deadline.at

    def agent_gone(self, reason: str) -> Outbox:
        """The agent exited, crashed or broke the protocol: answer all the client waits for."""
        self._end(reason)
        return self._take()

    def _take(self) -> Outbox:
        self.bridge_output.backlogs()
        return self.output.take()

    # ----------------------------------------------------------------------------------------
    # Lines

    def _client_line(self, line: bytes, now: float) -> None:
        if self.negotiation.policy.mode == "passthrough":
            self.output.box.to_agent.append(self.passthrough.track(line, self.negotiation.policy))
            return
        read = self.reader.read_client(line)
        if read is not None:
            self.reader.client_values(*read, now)

    def _agent_line(self, line: bytes, now: float) -> None:
        state = self.negotiation.state
        if state == CLOSED:
            return
        if state == PASSTHROUGH:
            self.passthrough.untrack(line, self.negotiation.policy)
            if _PERMISSION_METHOD in line:
                line = self.passthrough.unique_options(line, self.negotiation.policy)
            self.output.box.to_client.append(line)
            return
        if state == CONVERTING and _updates.compact_update(
            self, self.negotiation.policy, line, now
        ):
            return
        read = self.reader.read_agent(line)
        if read is not None:
            parsed, line = read
            if isinstance(parsed, list):
                self.reader.batch("agent", parsed, now)
            else:
                self.reader.agent_message(parsed, line, now)

    def _end(self, reason: str) -> None:
        if self.negotiation.state == CLOSED:
            return
        self.negotiation.event(AGENT_GONE)
        bridge = self.negotiation.policy.coalescing
        if bridge is not None:
            self.bridge_output.bridged(bridge.flush(), "client")
        data = {"details": reason}
        passed = self.negotiation.policy.mode == "passthrough"
        for pending in list(self.agent_requests.pending.values()):
            # A converted prompt ends below with its session; a passed-through one is here.
            if not pending.discard and (pending.method != "session/prompt" or passed):
                self.output.client(
                    jsonrpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", data)
                )
        self.agent_requests.pending.clear()
        self.negotiation.drop_held(data)
        for session_id in self.passthrough.forget_turns():  # pass-through v2 turns acknowledged
            self.output.client(jsonrpc.update(session_id, _turn_error(reason)))
        for session_id, session in self.sessions.table.items():
            self.bridge_output.turn_aborted(session_id, session.turns.abort_all(), reason)
        self.output.note("agent", f"{reason}; the session ends", "error")

    # ----------------------------------------------------------------------------------------
    # From the client

    def _client_message(self, envelope: rpc.Envelope, line: bytes, now: float) -> None:
        method = envelope.method
        if method is UNSET:
            if envelope.id is UNSET:
                self.output.client(jsonrpc.error(None, INVALID_REQUEST, "Invalid Request"))
                self.output.note("client", "a message with neither method nor id: answered -32600")
                return
            self.bridge_output.client_answered(envelope, line)
            return
        params = rpc.plain(envelope.params)
        if self.negotiation.held.holding_client and method != "initialize":
            self.negotiation.hold_client(envelope, line)
        elif envelope.id is UNSET:
            self._client_notification(method, params, line)
        elif method == "initialize" and self.negotiation.policy.mode == "negotiating":
            self.negotiation.client_initialize(envelope.id, params, line)
        elif self.negotiation.policy.mode == "negotiating":  # before versions are known: as it is
            self.agent_requests.keep(envelope.id, rpc.Pending(envelope.id, method))
            self.output.box.to_agent.append(line)
        elif method in _CLIENT_NOTIFICATIONS:  # a cancel is a cancel, with or without an id
            self._client_notification(method, params, line)
            self.output.client(jsonrpc.result(plain_id(envelope.id), {}))
            self.output.note(
                "client", f"{method} is a notification but came with an id: answered {{}}"
            )
        else:
            self._client_request(envelope.id, method, params, line)

    def _client_notification(self, method: str, params: Any, line: bytes) -> None:
        if self.negotiation.policy.mode != "converting":
            self.output.box.to_agent.append(line)
            return
        if method == "$/cancel_request":
            self.bridge_output.forward_cancel_request(
                params, self.agent_requests, self.output.agent, "client"
            )
            return
        if method == "session/cancel" and isinstance(params, dict):
            self.output.agent(jsonrpc.notification(method, params))
            self.bridge_output.settle_permissions(params.get("sessionId"))
            return
        if method == "initialize" or method in self.negotiation.policy.client_methods:
            self.output.note(
                "client",
                f"{method} is a request but came without an id: not forwarded (its answer "
                "could not reach the client)",
                "error",
            )
            return
        self.output.box.to_agent.append(line)  # extension and unknown notifications

    def _client_request(self, request_id: Any, method: str, params: Any, line: bytes) -> None:
        policy = self.negotiation.policy
        missing = policy.missing.get(method)
        if missing is not None:
            self.output.client(jsonrpc.error(request_id, policy.missing_code, missing))
            self.output.note("client", f"{method}: {missing}")
            return
        table = policy.requests
        if method not in table:  # unknown and extension methods: as they are, under our id
            data = rpc.whole(line)
            data["id"] = self.agent_requests.allocate(rpc.Pending(request_id, method))
            self.output.agent(data)
            return
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        if policy.answered_here(self, request_id, method, params):
            return
        setting = method == "session/set_config_option"
        modes = self.sessions.modes_of(session_id) if setting else None
        if modes is not None and modes.targets(params):
            invalid = modes.invalid(params)
            if invalid is not None:
                data = {"path": "$.params", "reason": invalid}
                self.output.client(
                    jsonrpc.error(request_id, INVALID_PARAMS, "Invalid params", data)
                )
                return
            table = MODES_TO_V1  # the v1 agent's modes: session/set_mode
        target, mapped = map_params(table, method, params)
        self.output.losses("client", method, mapped.losses)
        if replays_history(method, params):  # the history is sent again: the client starts over
            self.bridge_output.replaying(session_id)
        if method == "session/resume":
            resumed = policy.resumed(self, session_id, target)
            if resumed is None:
                self.output.client(
                    jsonrpc.error(
                        request_id, METHOD_NOT_FOUND, "the v1 agent cannot resume sessions"
                    )
                )
                return
            target = resumed
        if method == "session/prompt":
            if not (isinstance(mapped.value.get("prompt"), list) and mapped.value["prompt"]):
                self.output.client(
                    jsonrpc.error(request_id, INVALID_PARAMS, "the prompt has no content")
                )
                return
            session = self.sessions.session(session_id)
            content = params.get("prompt", [])
            # A session the agent set up here takes the prompt in at once (toward a v2 client:
            # acknowledged now); else the agent's first word on it does.
            sent = session.turns.prompt_sent(request_id, content, accepted=session.established)
            policy.turn(self, session_id, sent)
        pending = rpc.Pending(request_id, method, session_id)  # its params are not kept
        if method in _SESSION_SETUP:  # where its diffs' files are read (a load replays first)
            pending.params = self.bridge_output.roots(session_id, params)
        if table is MODES_TO_V1:
            pending.params = ("mode", mapped.value.get("modeId"))
        forwarded = self.agent_requests.allocate(pending)
        self.output.agent(jsonrpc.request(forwarded, target, mapped.value))

    # ----------------------------------------------------------------------------------------
    # From the agent

    def _route_agent_message(self, envelope: rpc.Envelope, line: bytes, now: float) -> None:
        method = envelope.method
        if method is UNSET:
            if envelope.id is UNSET:
                self.output.note("agent", "a message with neither method nor id: dropped", "error")
                return
            self._agent_response(envelope, line)
        elif self.negotiation.state == NEGOTIATING:  # until the agent has answered initialize: held
            self.negotiation.hold(envelope, line)
        elif self.negotiation.state != CONVERTING:
            self.output.box.to_client.append(line)
        elif envelope.id is UNSET:
            _updates.agent_notification(self, self.negotiation.policy, method, envelope, line, now)
        elif method in _AGENT_NOTIFICATIONS:  # a notification with an id: handled as one
            _updates.agent_notification(self, self.negotiation.policy, method, envelope, line, now)
            self.output.agent(jsonrpc.result(plain_id(envelope.id), {}))
            self.output.note(
                "agent", f"{method} is a notification but came with an id: answered {{}}"
            )
        else:
            self._agent_request(envelope.id, method, envelope, line)

    def _agent_response(self, envelope: rpc.Envelope, line: bytes) -> None:
        data = rpc.whole(line)  # read before anything changes: it may be unreadable
        pending = self.agent_requests.pop(envelope.id)
        if pending is None:
            self.output.note(
                "agent", f"an answer to no pending request (id {envelope.id!r}): dropped"
            )
            return
        if pending.discard:
            return
        if pending.method == "initialize" and self.negotiation.state == NEGOTIATING:
            self.negotiation.agent_initialized(pending, data)
            return
        if self.negotiation.state != CONVERTING:
            data["id"] = pending.origin_id
            self.output.client(data)
            return
        if "error" in data:
            self.bridge_output.agent_error(pending, data["error"])
            return
        result = data.get("result")
        if pending.method == "session/prompt":
            self.negotiation.policy.prompt_answered(self, pending, result)
            return
        table = self.negotiation.policy.requests
        if pending.method not in table:
            self.output.client(jsonrpc.result(pending.origin_id, result))
            return
        modes = self.sessions.modes_of(pending.session_id)
        if isinstance(pending.params, tuple) and pending.params[0] == "mode" and modes:
            self.output.client(
                jsonrpc.result(pending.origin_id, modes.selected(pending.params[1], result))
            )
            return
        mapped = map_result(table, pending.method, result)
        self.output.losses("agent", f"{pending.method} result", mapped.losses)
        value = mapped.value
        if modes is not None and pending.method == "session/set_config_option":
            value = modes.with_agent_options(value)
        session_id = pending.session_id
        if session_id is None and isinstance(value, dict):
            session_id = value.get("sessionId")
        if pending.method in _SESSION_SETUP and isinstance(session_id, str):
            session = self.sessions.session(session_id)
            session.established = True
            self.negotiation.policy.established(session, result, value)
            if pending.method == "session/new":  # its id is known now
                self.bridge_output.roots(session_id, pending.params)
        self.output.client(jsonrpc.result(pending.origin_id, value))
        for update in mapped.updates:
            self.output.client(jsonrpc.update(session_id, update))
        self.negotiation.policy.answered(self, pending, result)
        if pending.method == "session/close":
            self.bridge_output.close_session(session_id)
        if pending.method in ("session/load", "session/resume"):
            self.sessions.session(session_id).replay_suppressed = False

    def _agent_request(
        self, request_id: Any, method: str, envelope: rpc.Envelope, line: bytes
    ) -> None:
        if self.reader.refused_id(request_id, method, line) or self.negotiation.policy.refused(
            self, request_id, method
        ):
            return
        if method == "session/request_permission":
            converted = self.bridge_output.convert(self.bridge_output.bridge(), line, "agent")
            if isinstance(converted, DecodeError):  # Invalid params; nothing changes (D46)
                data = {"path": converted.path, "reason": converted.reason}
                self.output.agent(jsonrpc.error(request_id, INVALID_PARAMS, "Invalid params", data))
                return
            self.bridge_output.bridged(converted, "client")
            return
        data = rpc.whole(line)
        data["id"] = self.client_requests.allocate(rpc.Pending(request_id, method))
        self.output.client(data)
