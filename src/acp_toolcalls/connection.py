"""One ACP connection between a client (editor) and an agent that may speak the other version.

Rules this module owns (everything ``acp-toolcalls bridge`` decides; proxy.py only moves bytes):

- Versions come from the real ``initialize`` exchange. The client's version is its
  ``protocolVersion`` (or the one configured). The agent is asked in the configured version (the
  request converted if need be) or, for ``auto``, in the client's (and once more in the other
  version if it refuses that one); its answer decides. The same
  version on both sides means pass-through: every line is forwarded byte for byte, and only the
  client's pending request ids are read (to answer them if the agent goes away).
- Otherwise every message is converted: session lifecycle methods by ``methods.py``'s tables,
  tool calls, terminals and permissions by the stateful bridges (``V2ToV1Bridge`` toward a v1
  client, with coalescing bounded in time by ``poll``; ``V1ToV2Bridge`` toward a v2 client).
- Request ids: a forwarded request is sent under an id this connection allocates for its
  destination, and the answer is mapped back, so ids of the two sides (and of requests the
  connection may originate) never collide. ``$/cancel_request`` ids are mapped the same way.
- Prompt turns. v1 client, v2 agent: the v2 ``session/prompt`` result only acknowledges; the
  v1 response is sent when the agent reports an idle ``state_update``, with its stop reason
  (``error`` becomes a JSON-RPC error); the agent's echo of the user message is not forwarded
  while a prompt is pending (a v1 client shows its own prompt). v2 client, v1 agent: the prompt
  is acknowledged at once (``messageId``, a ``user_message`` echo, ``running``); the v1 response
  ends the turn as an idle ``state_update``; a permission request in between is framed by
  ``requires_action`` and ``running``.
- ``session/cancel``: the pending permission requests of that session are answered
  ``cancelled`` toward the agent at once, and the client's late answers are discarded; a v2
  client is also sent ``$/cancel_request`` for them. An agent's ``$/cancel_request`` of a
  permission request is answered ``cancelled`` at once (9.7) and forwarded.
- A v1 agent's ``fs/*`` and ``terminal/*`` requests get ``-32601``: a v2 client has neither, and
  the agent was told so in ``initialize``. Methods with no counterpart get the reason in
  ``methods.NO_V1``/``NO_V2``. Unknown and ``_``-prefixed methods pass through.
- Bad input costs nothing else: a client line that is not JSON is answered ``-32700``, one that
  is not a message ``-32600``; a permission request the bridge cannot read is answered
  ``-32602`` (5.6), an answer to one it cannot read is no approval, an update it cannot read
  is dropped and noted. An agent line that is not JSON ends the session (``agent_gone``) as
  the agent's crash does: every pending client request is answered with an error.
- Nothing here reads a clock or does I/O: time is the ``now`` the caller passes.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from . import routing as rpc
from . import v1, v2
from .bridge_to_v1 import V2ToV1Bridge
from .bridge_to_v2 import V1ToV2Bridge
from .codec import encode
from .jsonrpc import JsonRpcMessage, request_key
from .lenient import DecodeError
from .loss import Converted
from .methods import NO_V1, NO_V2, TO_V1, TO_V2, map_params, map_result
from .state import Limits

__all__ = ["ConnectionBridge", "ConnectionNote", "Outbox", "Version"]

Version = Literal[1, 2]
VersionOption = Literal[1, 2, "auto"]
Side = Literal["client", "agent"]

INTERNAL_ERROR = -32603
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_CANCELLED = {"outcome": {"outcome": "cancelled"}}
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
"""``sessionUpdate`` tags the codec reads into typed models; every other is opaque."""


@dataclass(frozen=True)
class ConnectionNote:
    """Something to tell the person running the proxy (stderr, the log)."""

    side: Side
    """Whose message it is about."""
    text: str
    kind: Literal["loss", "error"] = "loss"


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
    acknowledged: bool = False  # v1 client: the v2 agent answered the prompt request
    stop: dict[str, Any] | None = None  # v1 client: the idle state seen before that answer


@dataclass
class _Session:
    prompts: list[_Prompt] = field(default_factory=list)
    forwarded_messages: set[str] = field(default_factory=set)  # messageIds the v1 side has
    permissions: int = 0  # permission requests waiting for the client's answer
    replay_suppressed: bool = False  # a v2 resume without replay served by a v1 load


# --------------------------------------------------------------------------------------------


class ConnectionBridge:
    """The sans-I/O core of the proxy: lines in from either side, lines out to either side.

    ``from_client(line, now)`` and ``from_agent(line, now)`` take one line each (without its
    newline); ``poll(now)`` sends coalesced tool-call changes that are due (``next_deadline``);
    ``agent_gone(reason)`` answers everything the client still waits for. Each returns an
    ``Outbox``.
    """

    def __init__(
        self,
        *,
        client_version: VersionOption = "auto",
        agent_version: VersionOption = "auto",
        coalesce_interval: float = 0.05,
        limits: Limits | None = None,
    ) -> None:
        self.client_version: Version | None = None if client_version == "auto" else client_version
        self.agent_version: Version | None = None
        self._asked_agent: VersionOption = agent_version
        self.coalesce_interval = coalesce_interval
        self.limits = limits
        self.mode: Literal["negotiating", "passthrough", "convert"] = "negotiating"
        self._to_agent = rpc.RequestIds()
        self._to_client = rpc.RequestIds()
        self._sessions: dict[Any, _Session] = {}
        self._deadline: float | None = None
        self._to_v1: V2ToV1Bridge | None = None
        self._to_v2: V1ToV2Bridge | None = None
        self._client_caps: Mapping[str, Any] = {}
        self._agent_caps: Mapping[str, Any] = {}
        self._messages = itertools.count(1)
        self._out = Outbox()
        self.gone = False

    # ----------------------------------------------------------------------------------------
    # Public API

    def from_client(self, line: bytes, now: float) -> Outbox:
        """One line the client wrote."""
        if self.mode == "passthrough":
            self._track_passthrough(line)
            self._out.to_agent.append(line)
            return self._take()
        try:
            parsed = rpc.read_line.decode(line)
        except msgspec.DecodeError as exc:
            self._answer_client_invalid(line, exc)
            return self._take()
        if isinstance(parsed, list):
            for item in parsed:
                self._client_item(item, now)
        else:
            self._client_message(parsed, line, now)
        return self._take()

    def from_agent(self, line: bytes, now: float) -> Outbox:
        """One line the agent wrote."""
        if self.gone:
            return self._take()
        if self.mode == "passthrough":
            self._untrack_passthrough(line)
            self._out.to_client.append(line)
            return self._take()
        try:
            parsed = rpc.read_line.decode(line)
        except msgspec.DecodeError as exc:
            return self.agent_gone(f"the agent wrote a line that is not JSON-RPC ({exc})")
        if isinstance(parsed, list):
            for item in parsed:
                self._agent_item(item, now)
        else:
            self._agent_message(parsed, line, now)
        return self._take()

    def poll(self, now: float) -> Outbox:
        """Send the coalesced tool-call changes whose time has come."""
        if self._deadline is not None and now >= self._deadline:
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
        if self.gone:
            return self._take()
        self.gone = True
        if self._to_v1 is not None:
            self._bridged(self._to_v1.flush(), "client")
        data = {"details": reason}
        for pending in list(self._to_agent.pending.values()):
            if not pending.discard and pending.method != "session/prompt":
                self._client(rpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", data))
        self._to_agent.pending.clear()
        for session_id, session in self._sessions.items():
            for prompt in session.prompts:
                if self.client_version == 2:  # acknowledged already: the turn ends in an error
                    self._client(rpc.update(session_id, _idle_error(INTERNAL_ERROR, reason)))
                else:  # the v1 prompt response is still owed
                    self._client(
                        rpc.error(prompt.client_id, INTERNAL_ERROR, "Internal error", data)
                    )
            session.prompts.clear()
        self._note("agent", reason, "error")
        return self._take()

    # ----------------------------------------------------------------------------------------
    # Output

    def _take(self) -> Outbox:
        out, self._out = self._out, Outbox()
        return out

    def _client(self, message: Any) -> None:
        self._out.to_client.append(encode(message))

    def _agent(self, message: Any) -> None:
        self._out.to_agent.append(encode(message))

    def _note(self, side: Side, text: str, kind: Literal["loss", "error"] = "loss") -> None:
        self._out.notes.append(ConnectionNote(side, text, kind))

    def _losses(self, side: Side, what: str, losses: Any) -> None:
        for loss in losses:
            self._note(side, f"{what}: {loss}")

    # ----------------------------------------------------------------------------------------
    # Pass-through: forward bytes, remember only what the client waits for

    def _track_passthrough(self, line: bytes) -> None:
        try:
            parsed = rpc.read_line.decode(line)
        except msgspec.DecodeError:
            return  # the agent answers it (-32700); nothing to wait for
        for item in parsed if isinstance(parsed, list) else (parsed,):
            envelope = _as_envelope(item)
            if envelope is not None and envelope.method is not UNSET and envelope.id is not UNSET:
                self._to_agent.keep(envelope.id, rpc.Pending(envelope.id, envelope.method))

    def _untrack_passthrough(self, line: bytes) -> None:
        if not self._to_agent.pending:
            return
        try:
            parsed = rpc.read_line.decode(line)
        except msgspec.DecodeError:
            return
        for item in parsed if isinstance(parsed, list) else (parsed,):
            envelope = _as_envelope(item)
            if envelope is not None and envelope.method is UNSET and envelope.id is not UNSET:
                self._to_agent.pop(envelope.id)

    # ----------------------------------------------------------------------------------------
    # From the client

    def _answer_client_invalid(self, line: bytes, exc: Exception) -> None:
        self._client(rpc.error(None, PARSE_ERROR, "Parse error", {"details": str(exc)}))
        self._note("client", f"a line that is not JSON ({exc}): answered -32700", "error")

    def _client_item(self, item: Any, now: float) -> None:
        if not isinstance(item, dict):
            self._client(rpc.error(None, INVALID_REQUEST, "Invalid Request"))
            self._note("client", "a batch element that is not a message: answered -32600", "error")
            return
        line = msgspec.json.encode(item)
        try:
            envelope = rpc.read_envelope.decode(line)
        except msgspec.ValidationError as exc:  # e.g. "method": null
            request_id = item.get("id")
            known = request_id if type(request_id) in (str, int) else None  # not a bool
            self._client(
                rpc.error(known, INVALID_REQUEST, "Invalid Request", {"details": str(exc)})
            )
            self._note(
                "client", f"a batch element that is not a message ({exc}): answered -32600", "error"
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
        if envelope.id is UNSET:
            self._client_notification(method, params, line)
        elif method == "initialize" and self.mode == "negotiating":
            self._client_initialize(envelope.id, params, line)
        elif self.mode == "negotiating":  # before versions are known: as it is
            self._to_agent.keep(envelope.id, rpc.Pending(envelope.id, method))
            self._out.to_agent.append(line)
        else:
            self._client_request(envelope.id, method, params, line)

    def _client_initialize(self, request_id: Any, params: Any, line: bytes) -> None:
        params = params if isinstance(params, dict) else {}
        if self.client_version is None:
            self.client_version = _version_of(params.get("protocolVersion"))
        caps = params.get("clientCapabilities") or params.get("capabilities")
        self._client_caps = caps if isinstance(caps, dict) else {}
        target = self.client_version if self._asked_agent == "auto" else self._asked_agent
        if target is None or target == self.client_version:
            self._to_agent.keep(
                request_id, rpc.Pending(request_id, "initialize", params=(target, params))
            )
            self._out.to_agent.append(line)
            return
        self._ask_agent(request_id, target, params)

    def _ask_agent(self, request_id: Any, target: Version, params: Any) -> None:
        """The client's ``initialize``, converted for an agent asked in ``target``."""
        table = TO_V2 if target == 2 else TO_V1
        _method, mapped = map_params(table, "initialize", params)
        self._losses("client", "initialize", mapped.losses)
        pending = rpc.Pending(request_id, "initialize", params=(target, params))
        self._agent(rpc.request(self._to_agent.allocate(pending), "initialize", mapped.value))

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
        target, mapped = map_params(table, method, params)
        self._losses("client", method, mapped.losses)
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
        pending = rpc.Pending(request_id, method, session_id, params)
        self._agent(rpc.request(self._to_agent.allocate(pending), target, mapped.value))

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
            return  # answered already (cancelled)
        data = rpc.whole(line)
        data["id"] = pending.origin_id
        if pending.method == "session/request_permission":
            session = self._session(pending.session_id)
            session.permissions = max(0, session.permissions - 1)
            bridge = self._to_v1 if self.client_version == 1 else self._to_v2
            assert bridge is not None
            converted = self._convert(bridge, data, "client")
            if isinstance(converted, DecodeError):  # an answer that cannot be read: no approval
                converted = bridge.convert(rpc.result(pending.origin_id, _CANCELLED))
            self._bridged(converted, "agent")
            if self.client_version == 2 and not session.permissions and session.prompts:
                self._client(
                    rpc.update(
                        pending.session_id, {"sessionUpdate": "state_update", "state": "running"}
                    )
                )
            return
        self._agent(data)

    # ----------------------------------------------------------------------------------------
    # From the agent

    def _agent_item(self, item: Any, now: float) -> None:
        if not isinstance(item, dict):
            self._note("agent", "a batch element that is not a message: dropped", "error")
            return
        line = msgspec.json.encode(item)
        try:
            envelope = rpc.read_envelope.decode(line)
        except msgspec.ValidationError as exc:  # e.g. "method": null
            self._note("agent", f"a batch element that is not a message ({exc}): dropped", "error")
            return
        self._agent_message(envelope, line, now)

    def _agent_message(self, envelope: rpc.Envelope, line: bytes, now: float) -> None:
        method = envelope.method
        if method is UNSET:
            if envelope.id is UNSET:
                self._note("agent", "a message with neither method nor id: dropped", "error")
                return
            self._agent_response(envelope, line)
        elif self.mode != "convert":
            self._out.to_client.append(line)  # before versions are known: as it is
        elif envelope.id is UNSET:
            self._agent_notification(method, envelope, line, now)
        else:
            self._agent_request(envelope.id, method, envelope, line)

    def _agent_response(self, envelope: rpc.Envelope, line: bytes) -> None:
        pending = self._to_agent.pop(envelope.id)
        if pending is None:
            self._note("agent", f"an answer to no pending request (id {envelope.id!r}): dropped")
            return
        if pending.discard:
            return
        if pending.method == "initialize" and self.mode == "negotiating":
            self._agent_initialized(pending, envelope, line)
            return
        if self.mode != "convert":
            data = rpc.whole(line)
            data["id"] = pending.origin_id
            self._client(data)
            return
        if envelope.error is not UNSET:
            self._agent_error(pending, rpc.plain(envelope.error))
            return
        result = rpc.plain(envelope.result)
        if pending.method == "session/prompt":
            self._prompt_answered(pending, result)
            return
        table = TO_V2 if self.client_version == 1 else TO_V1
        if pending.method not in table:
            self._client(rpc.result(pending.origin_id, result))
            return
        mapped = map_result(table, pending.method, result)
        self._losses("agent", f"{pending.method} result", mapped.losses)
        self._client(rpc.result(pending.origin_id, mapped.value))
        session_id = pending.session_id
        if session_id is None and isinstance(mapped.value, dict):
            session_id = mapped.value.get("sessionId")
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
                if self.client_version == 2:  # acknowledged already: the turn ends in error
                    code, message = _error_parts(error)
                    self._client(rpc.update(pending.session_id, _idle_error(code, message, error)))
                    return
        self._client({"jsonrpc": "2.0", "id": pending.origin_id, "error": error})

    def _agent_initialized(self, pending: rpc.Pending, envelope: rpc.Envelope, line: bytes) -> None:
        asked, params = pending.params
        if envelope.error is not UNSET:
            other: Version | None = 2 if asked == 1 else 1 if asked == 2 else None
            if self._asked_agent == "auto" and asked == self.client_version and other:
                # `auto`: an agent that refuses the client's version may speak the other one.
                self._note("agent", f"initialize refused in v{asked}: asked again in v{other}")
                self._ask_agent(pending.origin_id, other, params)
                return
            data = rpc.whole(line)  # still negotiating: the client may try again
            data["id"] = pending.origin_id
            self._client(data)
            return
        result = rpc.plain(envelope.result)
        answered = _version_of(result.get("protocolVersion") if isinstance(result, dict) else None)
        self.agent_version = answered or asked
        if self.client_version is None or self.agent_version in (None, self.client_version):
            self.mode = "passthrough"
            data = rpc.whole(line)
            data["id"] = pending.origin_id
            self._client(data)
            return
        self.mode = "convert"
        self._agent_caps = (
            (result.get("agentCapabilities") or {}) if self.agent_version == 1 else {}
        )
        table = TO_V2 if self.client_version == 1 else TO_V1
        mapped = map_result(table, "initialize", result)
        self._losses("agent", "initialize result", mapped.losses)
        if self.client_version == 1:
            session_caps = self._client_caps.get("session") or {}
            self._to_v1 = V2ToV1Bridge(
                coalesce=self.coalesce_interval > 0,
                limits=self.limits,
                notices=isinstance(session_caps.get("notices"), dict),
                compaction=isinstance(session_caps.get("compaction"), dict),
            )
        else:
            self._to_v2 = V1ToV2Bridge()
        self._client(rpc.result(pending.origin_id, mapped.value))

    def _agent_request(
        self, request_id: Any, method: str, envelope: rpc.Envelope, line: bytes
    ) -> None:
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
            session_id = _session_of(envelope)
            bridge = self._to_v1 if self.client_version == 1 else self._to_v2
            assert bridge is not None
            converted = self._convert(bridge, line, "agent")
            if isinstance(converted, DecodeError):  # Invalid params; nothing changes (5.6)
                data = {"path": converted.path, "reason": converted.reason}
                self._agent(rpc.error(request_id, INVALID_PARAMS, "Invalid params", data))
                return
            self._losses("agent", method, converted.losses)
            for reply in converted.replies:
                self._agent(reply)
            session = self._session(session_id)
            for message in converted.messages:
                if _is_request(message):
                    if self.client_version == 2 and session.prompts and not session.permissions:
                        self._client(
                            rpc.update(
                                session_id,
                                {"sessionUpdate": "state_update", "state": "requires_action"},
                            )
                        )
                    session.permissions += 1
                    pending = rpc.Pending(request_id, method, session_id)
                    self._client(_with_id(message, self._to_client.allocate(pending)))
                else:
                    self._client(message)
            return
        data = rpc.whole(line)
        data["id"] = self._to_client.allocate(rpc.Pending(request_id, method))
        self._client(data)

    def _agent_notification(
        self, method: str, envelope: rpc.Envelope, line: bytes, now: float
    ) -> None:
        if method == "$/cancel_request":
            params = rpc.plain(envelope.params)
            self._agent_cancels(params)
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
        session = self._session(session_id)
        if tag in _USER_ECHOES and session.prompts:
            return  # the prompt's acknowledgement: a v1 client shows its own prompt
        assert self._to_v1 is not None
        if tag in _V2_TYPED:
            self._bridge_update(self._to_v1, line)
            if self.coalesce_interval > 0 and self._deadline is None:
                self._deadline = now + self.coalesce_interval
            return
        message = rpc.whole(line)
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
            session.forwarded_messages.add(body["messageId"])
        self._bridge_update(self._to_v1, _opaque_message(message, 2) or line)

    def _v1_agent_update(self, session_id: Any, tag: Any, line: bytes) -> None:
        session = self._session(session_id)
        if session.replay_suppressed:
            return  # the replay of a load that serves a resume without replay
        assert self._to_v2 is not None
        data = line if tag in _V1_TYPED else (_opaque_message(rpc.whole(line), 1) or line)
        self._bridge_update(self._to_v2, data)

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
        send = self._client if to == "client" else self._agent
        back = self._agent if to == "client" else self._client
        other: Side = "agent" if to == "client" else "client"
        for message in converted.messages:
            send(message)
        for reply in converted.replies:
            back(reply)
        self._losses(other, "tool calls", converted.losses)

    # ----------------------------------------------------------------------------------------
    # Prompts, cancellation

    def _session(self, session_id: Any) -> _Session:
        key = request_key(session_id)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = _Session()
        return session

    def _close_session(self, session_id: Any) -> None:
        self._sessions.pop(request_key(session_id), None)
        for bridge in (self._to_v1, self._to_v2):
            if bridge is not None and isinstance(session_id, str):
                out = bridge.close_session(session_id)
                self._bridged(out, "client")

    def _start_prompt(self, request_id: Any, session_id: Any, params: Any) -> None:
        session = self._session(session_id)
        session.prompts.append(_Prompt(request_id))
        if self.client_version != 2:
            return
        # A v1 agent accepts a prompt by working on it: acknowledge it for the v2 client now.
        assert self._to_v2 is not None
        self._to_v2.end_message(session_id)
        message_id = f"acp-toolcalls-user-{next(self._messages)}"
        session.prompts[-1].acknowledged = True
        self._client(rpc.result(request_id, {"messageId": message_id}))
        echo = {
            "sessionUpdate": "user_message",
            "messageId": message_id,
            "content": params.get("prompt", []),
        }
        self._client(rpc.update(session_id, echo))
        self._client(rpc.update(session_id, {"sessionUpdate": "state_update", "state": "running"}))

    def _prompt_answered(self, pending: rpc.Pending, result: Any) -> None:
        session = self._session(pending.session_id)
        prompt = next((p for p in session.prompts if p.client_id == pending.origin_id), None)
        if self.client_version == 2:  # the v1 response ends the turn
            if prompt is not None:
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
        session.forwarded_messages.add(message_id)
        assert self._to_v1 is not None
        for block in content:
            chunk = {
                "sessionUpdate": _UPSERT_CHUNKS[str(tag)],
                "messageId": message_id,
                "content": block,
            }
            self._bridge_update(self._to_v1, rpc.update(session_id, chunk))

    def _settle_permissions(self, session_id: Any) -> None:
        """``session/cancel``: the session's pending permission requests are not approved."""
        session = self._session(session_id)
        for client_id, pending in list(self._to_client.pending.items()):
            if pending.method != "session/request_permission" or pending.discard:
                continue
            if pending.session_id != session_id:
                continue
            pending.discard = True  # the client's late answer is dropped
            session.permissions = max(0, session.permissions - 1)
            answer = rpc.result(pending.origin_id, _CANCELLED)
            bridge = self._to_v1 if self.client_version == 1 else self._to_v2
            assert bridge is not None
            self._bridged(bridge.convert(answer), "agent")
            if self.client_version == 2:  # let the client close its prompt
                self._client(rpc.notification("$/cancel_request", {"requestId": client_id}))

    def _agent_cancels(self, params: Any) -> None:
        """The agent's ``$/cancel_request`` for a request it sent the client."""
        if not isinstance(params, dict) or "requestId" not in params:
            self._note("agent", "$/cancel_request without a requestId: dropped")
            return
        request_id = params["requestId"]
        forwarded = self._to_client.forwarded_id(request_id)
        if forwarded is UNSET:
            return  # answered already
        pending = self._to_client.pending[request_key(forwarded)]
        if pending.method == "session/request_permission" and not pending.discard:
            pending.discard = True
            session = self._session(pending.session_id)
            session.permissions = max(0, session.permissions - 1)
            bridge = self._to_v1 if self.client_version == 1 else self._to_v2
            assert bridge is not None
            self._bridged(bridge.convert(rpc.result(request_id, _CANCELLED)), "agent")
        self._client(rpc.notification("$/cancel_request", {**params, "requestId": forwarded}))

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


def _session_of(envelope: rpc.Envelope) -> Any:
    params = rpc.plain(envelope.params)
    return params.get("sessionId") if isinstance(params, dict) else None


def _is_request(message: Any) -> bool:
    if isinstance(message, JsonRpcMessage):
        return "method" in message.data and "id" in message.data
    return isinstance(message, (v1.PermissionRequestMessage, v2.PermissionRequestMessage))


def _with_id(message: Any, request_id: Any) -> Any:
    if isinstance(message, JsonRpcMessage):
        return {**message.data, "id": request_id}
    return msgspec.structs.replace(message, id=request_id)


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
