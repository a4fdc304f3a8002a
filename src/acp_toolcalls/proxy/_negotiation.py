"""Negotiation: the ``initialize`` exchange that decides the versions, and the policy chosen.

Rules this module owns (the states and events are ``_state``'s; ``Negotiation`` keeps the
connection's state and moves it only through ``_state.transition``):

- The client's version is its ``protocolVersion`` (1 for 1, 2 for 2 and above; version 0 is
  answered ``-32022``, a missing or unreadable one ``-32602``), or the one configured. The
  agent is asked in the configured version (the request converted if need be) or, for
  ``auto``, in the client's, and once more in the other version if it refuses that one or
  answers in the other; its answer decides: the same version as the client's is pass-through,
  the other converting, with the policy for that pairing (``_policy``), chosen here once.
- Until the agent has answered, its requests and notifications are held (``_held``'s
  ``HeldLines``, within its bounds; past them a request is answered with an error) and then
  routed like every later one; the client's lines meanwhile are held too (each side gets
  only messages of its own version) and, past the same bounds, go on as they are.

``Negotiation`` is a component of the core: it reads the core through ``NegotiatingCore``
(public members only) and releases held lines into the reader and the routing step the
core gives it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from msgspec import UNSET

from ..bridge import TerminalProfile, V1ToV2Bridge, V2ToV1Bridge
from ..lifecycle import TO_V1, TO_V2, jsonrpc, map_params, map_result
from ..models import INTERNAL_ERROR, INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION, plain_id
from ..store import Limits
from . import _routing as rpc
from ._held import MAX_HELD, HeldLines
from ._output import FlushDeadline, Output, Version, VersionOption
from ._policy import NEGOTIATION, Converting, PassThrough, Policy, ToV1Client, ToV2Client
from ._refusals import LineReader, Route
from ._state import (
    AGENT_ASKED_AGAIN,
    AGENT_OTHER_VERSION,
    AGENT_REFUSED,
    AGENT_SAME_VERSION,
    CLIENT_INITIALIZE,
    NEGOTIATING,
    Event,
    State,
    transition,
)

if TYPE_CHECKING:
    from ..bridge import ReadFile
    from ._passthrough import PassThroughLines
    from ._permissions import BridgeOutput
    from ._sessions import Sessions


class NegotiatingCore(Protocol):
    """What the negotiation asks of the connection core, all public: its components and the
    options its bridges are made with."""

    output: Output
    agent_requests: rpc.RequestIds
    passthrough: PassThroughLines
    bridge_output: BridgeOutput
    sessions: Sessions
    flush_deadline: FlushDeadline
    limits: Limits | None
    max_line_bytes: int
    read_file: ReadFile | None


class Negotiation:
    """The ``initialize`` exchange, the connection's state and policy it decides (``state``,
    ``policy``: read by the core's routing), and the lines held while it is under way. A
    component of the core, given the core's reader and its routing step for the client's
    messages, which the held lines are released into."""

    def __init__(
        self,
        core: NegotiatingCore,
        reader: LineReader,
        route_client: Route,
        *,
        client_version: VersionOption,
        agent_version: VersionOption,
    ) -> None:
        self._core = core
        self.output = core.output
        self._reader = reader
        self._route_client = route_client
        self.state: State = NEGOTIATING
        self.policy: Policy = NEGOTIATION  # chosen once the agent has answered initialize
        self.client_version: Version | None = None if client_version == "auto" else client_version
        self.agent_version: Version | None = None
        self._asked_agent: VersionOption = agent_version
        # The version the agent is being asked in (its initialize pending), once asked: the
        # other one after a fallback, so the log records the agent's answer and the retry in it.
        self._asking: Version | None = None
        self._client_caps: dict[str, Any] = {}
        self.held = HeldLines()  # lines held until the agent answered initialize

    @property
    def agent_side_version(self) -> Version | None:
        """The version the agent speaks, or is being asked in while that is not known yet (the
        other one once the proxy falls back to it: its retry, and the answer that made it)."""
        if self.agent_version is not None:
            return self.agent_version
        if self._asking is not None:
            return self._asking
        return self.client_version if self._asked_agent == "auto" else self._asked_agent

    def event(self, event: Event, policy: Policy | None = None) -> None:
        """``event`` happened: the state moves by ``_state.TRANSITIONS``; ``policy``: the
        one chosen on leaving negotiation."""
        self.state = transition(self.state, event)
        if policy is not None:
            self.policy = self._core.bridge_output.policy = policy
            self._core.sessions.turns_to = policy.turns_to

    def client_initialize(self, request_id: Any, params: Any, line: bytes) -> None:
        """The client's ``initialize`` while negotiating: its version read (or answered), and
        the agent asked."""
        if self.client_version is None:
            version = self._requested_version(request_id, params)
            if version is None:
                return  # answered: the client may try again
            self.client_version = version
        self.event(CLIENT_INITIALIZE)
        self.held.holding_client = True
        params = params if isinstance(params, dict) else {}
        caps = params.get("clientCapabilities") or params.get("capabilities")
        self._client_caps = caps if isinstance(caps, dict) else {}
        target = self.client_version if self._asked_agent == "auto" else self._asked_agent
        if target == self.client_version:
            self._asking = target
            self._core.agent_requests.keep(
                request_id, rpc.Pending(request_id, "initialize", params=(target, params, False))
            )
            self.output.box.to_agent.append(line)
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
                self.output.note(
                    "client",
                    f"initialize asks for protocol version {requested}; the proxy speaks 1 and "
                    "2: the client is spoken to in v2",
                )
            return 1 if requested == 1 else 2
        elif requested == 0 and type(requested) is int:
            data = {"requested": 0, "supported": [1, 2]}
            self.output.client(
                jsonrpc.error(
                    request_id, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data
                )
            )
            self.output.note(
                "client", "initialize asks for protocol version 0: answered -32022", "error"
            )
            return None
        else:
            shown = "missing" if requested is UNSET else msgspec.json.encode(requested).decode()
            path = "$.params.protocolVersion"
            reason = f"`protocolVersion` must be an integer, 1 or 2; it is {shown}"
        data = {"path": path, "reason": reason}
        self.output.client(jsonrpc.error(request_id, INVALID_PARAMS, "Invalid params", data))
        self.output.note("client", f"initialize: {path}: {reason}: answered -32602", "error")
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
            self.output.losses("client", "initialize", mapped.losses)
            value = mapped.value
        pending = rpc.Pending(request_id, "initialize", params=(target, params, again))
        self._asking = target
        forwarded = self._core.agent_requests.allocate(pending)
        self.output.agent(jsonrpc.request(forwarded, "initialize", value))

    def agent_initialized(self, pending: rpc.Pending, data: dict[str, Any]) -> None:
        """The agent's answer to ``initialize``: asked again, or the policy chosen and the
        held lines released."""
        asked, params, again = pending.params
        other: Version = 2 if asked == 1 else 1
        if "error" in data:
            self.event(AGENT_REFUSED)
            if not again:  # an agent that refuses one version may speak the other
                self.output.note(
                    "agent", f"initialize refused in v{asked}: asked again in v{other}"
                )
                self._ask_agent(pending.origin_id, other, params, again=True)
                return
            data["id"] = pending.origin_id  # still negotiating: the client may try again
            self.output.client(data)
            self._release_client_held()
            return
        result = data.get("result")
        answered = _version_of(result.get("protocolVersion") if isinstance(result, dict) else None)
        if answered == other and not again:
            # It speaks the other version: it is asked again in that one, so that the
            # client's capabilities and info reach it in the shape it reads.
            self.event(AGENT_ASKED_AGAIN)
            self.output.note(
                "agent", f"initialize answered in v{answered} when asked in v{asked}: asked again"
            )
            self._ask_agent(pending.origin_id, other, params, again=True)
            return
        self.agent_version = answered or asked
        if self.client_version is None or self.agent_version in (None, self.client_version):
            limits = self._core.limits
            cap = (limits if limits is not None else Limits()).max_pending_permissions
            same = PassThrough(tracks_turns=self.client_version == 2, max_asked=cap)
            self.event(AGENT_SAME_VERSION, same)
            data["id"] = pending.origin_id
            self.output.client(data)
            self._release_held(0.0)
            self._release_client_held()
            return
        policy = self._converting(result)
        self.event(AGENT_OTHER_VERSION, policy)
        mapped = map_result(policy.requests, "initialize", result)
        self.output.losses("agent", "initialize result", mapped.losses)
        self.output.client(jsonrpc.result(pending.origin_id, mapped.value))
        self._release_held(self.output.now)
        self._release_client_held()

    def _converting(self, result: Any) -> Converting:
        """The policy for a client and an agent of different versions (the one place that
        asks which is which)."""
        if self.client_version == 1:
            session_caps = self._client_caps.get("session") or {}
            return ToV1Client(
                V2ToV1Bridge(
                    terminal_profile=terminal_profile(self._client_caps),
                    coalesce=self._core.flush_deadline.interval > 0,
                    limits=self._core.limits,
                    max_message_bytes=self._core.max_line_bytes,
                    notices=isinstance(session_caps.get("notices"), dict),
                    compaction=isinstance(session_caps.get("compaction"), dict),
                    subagents=isinstance(self._client_caps.get("subagents"), dict),
                    plan=isinstance(self._client_caps.get("plan"), dict),
                    read_file=self._core.read_file,
                )
            )
        agent_caps = (result.get("agentCapabilities") or {}) if isinstance(result, dict) else {}
        return ToV2Client(V1ToV2Bridge(limits=self._core.limits), agent_caps)

    # ----------------------------------------------------------------------------------------
    # Lines held while versions are not known

    def hold(self, envelope: rpc.Envelope, line: bytes) -> None:
        """An agent request or notification before versions are known waits for them (ids the
        client sees are then allocated like every other, and its version is converted)."""
        if not self.held.hold_agent(line):
            what = f"more than {MAX_HELD} messages before it answered initialize"
            if envelope.id is not UNSET:
                self._reader.agent_invalid(line, what, INTERNAL_ERROR)
            else:
                self.output.note("agent", f"{what}: dropped", "error")

    def hold_client(self, envelope: rpc.Envelope, line: bytes) -> None:
        """A client line while its initialize is with the agent waits for the answer: the
        agent may answer in the other version (or be asked again in it), and each side gets
        only messages of its own version. Past the bound it goes on as it is."""
        if not self.held.hold_client(envelope, line):
            self.output.note(
                "client",
                f"more than {MAX_HELD} messages before the agent answered initialize: "
                "forwarded as they are",
                "error",
            )
            self._release_client_held()
            self.output.box.to_agent.append(line)

    def _release_client_held(self) -> None:
        """The client's lines held while the agent answered initialize, in the mode that
        answer chose (as they are when it refused)."""
        self.held.holding_client = False
        for envelope, line in self.held.take_client():
            if self.policy.mode == "passthrough":
                self._core.passthrough.track(line, self.policy)
                self.output.box.to_agent.append(line)
            else:
                self._route_client(envelope, line, self.output.now)

    def drop_held(self, data: dict[str, Any]) -> None:
        """The agent is gone: its held lines are dropped, and the client's held requests
        answered an error (``data``)."""
        self.held.take_agent()
        for envelope, _line in self.held.take_client():
            if envelope.method is not UNSET and envelope.id is not UNSET:
                self.output.client(
                    jsonrpc.error(plain_id(envelope.id), INTERNAL_ERROR, "Internal error", data)
                )

    def _release_held(self, now: float) -> None:
        for line in self.held.take_agent():
            if self.policy.mode == "passthrough":
                self.output.box.to_client.append(
                    self._core.passthrough.unique_options(line, self.policy)
                )
            else:
                self._reader.agent_message(rpc.read_envelope.decode(line), line, now)


def _version_of(value: Any) -> Version | None:
    if value == 1:
        return 1
    if value == 2:
        return 2
    return None


def terminal_profile(client_caps: dict[str, Any]) -> TerminalProfile:
    """How a v1 client is shown a v2 agent's terminals: the ``_meta`` terminal extension when
    it offers it (``_meta.terminal_output_delta`` or ``_meta.terminal_output``, Zed's; D38 as
    amended 2026-12-06), else fenced text."""
    meta = client_caps.get("_meta")
    if isinstance(meta, dict) and meta.get("terminal_output_delta") is True:
        return "meta_delta"
    if isinstance(meta, dict) and meta.get("terminal_output") is True:
        return "meta"
    return "text"
