"""What the bridges send, and the requests each side waits on: permissions, cancels, backlogs.

Rules this module owns:

- Request ids: a forwarded request is sent under an id this connection allocates for its
  destination (``_routing.RequestIds``), and the answer is mapped back, so ids of the two
  sides (and of requests the connection may originate) never collide; the client never holds
  two open requests under one id. ``$/cancel_request`` ids are mapped the same way.
- Permission requests are answered once. The client's answer goes through the bridge to the
  agent request it was shown; when a bridge answers one itself (a cap, ``withdraw``, the
  agent's ``$/cancel_request``), that request is settled: the client gets ``$/cancel_request``
  (once) and its late answer is dropped and reported. ``session/cancel``, with or without an
  id, withdraws the session's pending permission requests through the bridge.
- Only an exactly offered option id in an unambiguous answer is a selection (D34 amended
  2026-12-06): an answer whose line repeats a key, that has both ``result`` and ``error``, or
  that selects an id the client was not shown (kept with the forwarded request) reaches the
  agent as ``cancelled``, with one note (``_passthrough.ambiguous_answer``, which pass-through
  uses too).
- Past ``max_pending_requests`` waiting one way, the oldest is settled and forgotten
  (``backlogs``, after every call of the core).
- The client's answers reach the agent under the agent's id (``client_answered``); the
  agent's error answer to a converted prompt ends its turn (``agent_error``). A session's
  directories go to a v2 -> v1 bridge (``roots``).

``BridgeOutput`` is a component of the core (``core.bridge_output``), over the core's
output, sessions and request ids, with the policy the core chose.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from .. import v1, v2
from ..bridge import V1ToV2Bridge, V2ToV1Bridge
from ..codec import DecodeError, Diagnostic, duplicate_keys, encode
from ..convert import Converted
from ..lifecycle import EndInError, TurnEffect, jsonrpc, prompt_error_to_v2
from ..models import CANCELLED_OUTCOME, INTERNAL_ERROR, JsonRpcMessage, replace, request_key
from ..records import Side
from . import _routing as rpc
from ._passthrough import ambiguous_answer

if TYPE_CHECKING:
    from ._output import Output
    from ._policy import Policy
    from ._sessions import Core, Sessions


class BridgeOutput:
    """The connection's output through its bridge, and what each side waits on: a component
    of the core, over the core's output, sessions and request ids; ``policy``: the core's,
    set when it is chosen; the policy's steps are given the core (``Core``)."""

    def __init__(self, core: Core, client_requests: rpc.RequestIds, policy: Policy) -> None:
        self.policy = policy
        self.element_repeats: tuple[Diagnostic, ...] = ()
        """The keys the client's batch line repeats inside the element being handled (its
        text is gone once the element is re-encoded: an answer in it is ambiguous all the
        same)."""
        self._core = core
        self.output: Output = core.output
        self.sessions: Sessions = core.sessions
        self.agent_requests: rpc.RequestIds = core.agent_requests
        self.client_requests = client_requests

    def backlogs(self) -> None:
        """Past ``max_pending_requests`` waiting one way: the oldest is settled and forgotten.
        A client request: the client gets an error (a prompt's turn ends in one). An agent
        request: a permission request is withdrawn through the bridge (``cancelled``), any
        other is answered with an error; the client is sent ``$/cancel_request`` for it."""
        to_agent, to_client = self.agent_requests, self.client_requests
        if (to_agent.cap is None or len(to_agent.pending) <= to_agent.cap) and (
            to_client.cap is None or len(to_client.pending) <= to_client.cap
        ):
            return  # the common case, checked here: this runs after every line
        while (over := self.agent_requests.over_cap()) is not None:
            _forwarded, pending = over
            # Passed through, the agent's late answer still reaches the client: it is only
            # no longer answered for the agent if the agent goes away.
            passed = self.policy.mode == "passthrough"
            self.output.limit(
                "max_pending_requests",
                f"{self.agent_requests.cap} requests of the client wait for the agent: the oldest "
                f"({pending.method}) is "
                + ("no longer tracked" if passed else "answered with an error"),
            )
            if not pending.discard and not passed:
                self._give_up_on_agent(pending, "too many requests wait for the agent")
        while (over := self.client_requests.over_cap()) is not None:
            forwarded, pending = over
            self.output.limit(
                "max_pending_requests",
                f"{self.client_requests.cap} requests of the agent wait for the client: the oldest "
                f"({pending.method}) is withdrawn",
            )
            if pending.discard:
                continue
            if pending.method == "session/request_permission":
                withdrawn = self.bridge().withdraw(pending.origin_id)
                for reply in withdrawn.replies:
                    self.output.agent(reply)
                for message in withdrawn.messages:
                    if not (isinstance(message, JsonRpcMessage) and message.method):
                        self.output.client(message)  # the call's own state, restored
                session = self.sessions.session(pending.session_id)
                self.policy.turn(
                    self._core, pending.session_id, session.turns.permission_withdrawn()
                )
            else:
                detail = {"details": "too many requests wait for the client"}
                self.output.agent(
                    jsonrpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", detail)
                )
            self.output.client(jsonrpc.notification("$/cancel_request", {"requestId": forwarded}))

    def _give_up_on_agent(self, pending: rpc.Pending, reason: str) -> None:
        """A client request the agent will not be waited on for: the client's answer."""
        session = self.sessions.get(pending.session_id)
        if pending.method == "session/prompt" and session is not None:
            aborted = session.turns.abort(pending.origin_id)
            self.turn_aborted(pending.session_id, aborted, reason)
            return
        data = {"details": reason}
        self.output.client(jsonrpc.error(pending.origin_id, INTERNAL_ERROR, "Internal error", data))

    def turn_aborted(self, session_id: Any, effects: Iterable[TurnEffect], reason: str) -> None:
        """Turns that will not end by the agent: an idle ``state_update`` with stop reason
        ``error`` where the v2 client was told the turn started, else the prompt's error."""
        for effect in effects:
            if isinstance(effect, EndInError) and effect.as_update:
                self.output.client(jsonrpc.update(session_id, _turn_error(reason)))
            elif isinstance(effect, EndInError):
                data = {"details": reason}
                self.output.client(
                    jsonrpc.error(effect.prompt_id, INTERNAL_ERROR, "Internal error", data)
                )

    # ----------------------------------------------------------------------------------------
    # The bridge's output

    def bridge(self) -> V2ToV1Bridge | V1ToV2Bridge:
        bridge = self.policy.bridge
        assert bridge is not None
        return bridge

    def convert(
        self, bridge: V2ToV1Bridge | V1ToV2Bridge, data: Any, side: Side
    ) -> Converted | DecodeError:
        """``bridge.convert(data)``, or the error of a message it cannot read (noted)."""
        try:
            return bridge.convert(data)
        except DecodeError as exc:
            self.output.note(side, f"a message that cannot be read ({exc}): not forwarded", "error")
            return exc

    def bridge_update(self, bridge: V2ToV1Bridge | V1ToV2Bridge, data: Any) -> None:
        """An agent's notification through its bridge (one it cannot read is dropped)."""
        converted = self.convert(bridge, data, "agent")
        if not isinstance(converted, DecodeError):
            self.bridged(converted, "client")

    def bridge_typed(self, bridge: V2ToV1Bridge | V1ToV2Bridge, message: Any) -> None:
        """``bridge_update`` of a typed update, its common output (session updates) encoded
        straight into the client's lines (``_to_client_message`` would send them so)."""
        try:
            converted = bridge.convert(message)
        except DecodeError as exc:
            self.output.note(
                "agent", f"a message that cannot be read ({exc}): not forwarded", "error"
            )
            return
        lines = self.output.box.to_client
        for out in converted.messages:
            kind = type(out)
            if kind is v1.SessionUpdateMessage or kind is v2.SessionUpdateMessage:
                line = encode(out)
                if len(line) > self.output.max_line_bytes:
                    fitted = self.output.fits(line, "client")
                    if fitted is None:
                        continue
                    line = fitted
                lines.append(line)
            else:
                self._to_client_message(out)
        for reply in converted.replies:
            self._answered_by_bridge(reply)
        if converted.losses:
            self.output.losses("agent", "tool calls", converted.losses)

    def bridged(self, converted: Converted, to: Side) -> None:
        """A bridge's output: messages to ``to``, replies back, losses noted."""
        if to == "client":
            for message in converted.messages:
                self._to_client_message(message)
            for reply in converted.replies:
                self._answered_by_bridge(reply)
            self.output.losses("agent", "tool calls", converted.losses)
            return
        for message in converted.messages:
            self.output.agent(message)
        for reply in converted.replies:
            self.output.client(reply)
        self.output.losses("client", "tool calls", converted.losses)

    def _to_client_message(self, message: Any) -> None:
        """A message of a bridge to the client: a request goes under an id allocated here, a
        ``$/cancel_request`` names that id."""
        if isinstance(message, (v1.PermissionRequestMessage, v2.PermissionRequestMessage)):
            session_id = message.params.session_id
            self.policy.permission_asked(self._core, session_id)
            pending = rpc.Pending(message.id, "session/request_permission", session_id)
            pending.params = frozenset(option.option_id for option in message.params.options)
            self.output.client(replace(message, id=self.client_requests.allocate(pending)))
            return
        if isinstance(message, JsonRpcMessage) and message.method == "$/cancel_request":
            params = message.data.get("params")
            origin = params.get("requestId", UNSET) if isinstance(params, dict) else UNSET
            forwarded = self.client_requests.forwarded_id(origin) if origin is not UNSET else UNSET
            asked = self.client_requests.pending.get(request_key(forwarded))
            if asked is None or asked.discard or asked.withdrawn:
                self.output.note(
                    "agent", f"$/cancel_request for no pending request ({origin!r}): dropped"
                )
                return
            asked.withdrawn = True
            assert isinstance(params, dict)
            self.output.client(
                jsonrpc.notification("$/cancel_request", {**params, "requestId": forwarded})
            )
            return
        self.output.client(message)

    def _answered_by_bridge(self, reply: Any) -> None:
        """A bridge answered a request of the agent on the client's behalf. When the client
        has that request, it is settled: the client's late answer will be dropped."""
        origin = reply.data.get("id") if isinstance(reply, JsonRpcMessage) else UNSET
        forwarded = self.client_requests.forwarded_id(origin) if origin is not UNSET else UNSET
        if forwarded is not UNSET:
            pending = self.client_requests.pending[request_key(forwarded)]
            if not pending.discard:
                pending.discard = True
                session = self.sessions.session(pending.session_id)
                self.policy.turn(
                    self._core, pending.session_id, session.turns.permission_withdrawn()
                )
        self.output.agent(reply)

    # ----------------------------------------------------------------------------------------
    # Permissions, cancels, closed sessions

    def permission_answered(
        self, pending: rpc.Pending, answer: Any, line: bytes | None = None
    ) -> None:
        """The client's answer to a permission request (``line``: the client's text of it),
        through the bridge to the agent. One that is ambiguous (``ambiguous_answer``) reaches
        it as ``cancelled``, reported."""
        session = self.sessions.session(pending.session_id)
        bridge = self.bridge()
        offered = pending.params if isinstance(pending.params, frozenset) else frozenset()
        repeated = (*duplicate_keys(line), *self.element_repeats) if line is not None else ()
        ambiguity = ambiguous_answer(self.output, answer, repeated, offered)
        converted = None if ambiguity is not None else self.convert(bridge, answer, "client")
        if converted is None or isinstance(converted, DecodeError):  # no approval
            converted = bridge.convert(jsonrpc.result(pending.origin_id, CANCELLED_OUTCOME))
        self.bridged(converted, "agent")
        self.policy.turn(self._core, pending.session_id, session.turns.permission_answered())

    def settle_permissions(self, session_id: Any) -> None:
        """``session/cancel``: the session's pending permission requests are not approved; the
        bridge answers them ``cancelled`` and withdraws them from the client."""
        for pending in list(self.client_requests.pending.values()):
            if pending.method != "session/request_permission" or pending.discard:
                continue
            if pending.session_id == session_id:
                self.bridged(self.bridge().withdraw(pending.origin_id), "client")

    def forward_cancel_request(
        self, params: Any, ids: rpc.RequestIds, send: Callable[[Any], None], side: Side
    ) -> None:
        """A ``$/cancel_request`` of ``side``, sent on (``send``) under the id ``ids`` gave
        the request it names; one for no pending request is dropped (noted)."""
        if not isinstance(params, dict) or "requestId" not in params:
            self.output.note(side, "$/cancel_request without a requestId: dropped")
            return
        request_id = params["requestId"]
        forwarded = ids.forwarded_id(request_id)
        if forwarded is UNSET:
            self.output.note(
                side, f"$/cancel_request for no pending request ({request_id!r}): dropped"
            )
            return
        send(jsonrpc.notification("$/cancel_request", {**params, "requestId": forwarded}))

    def close_session(self, session_id: Any) -> None:
        """Forget the session, and its bridge's state of it."""
        self.sessions.close(session_id)
        bridge = self.policy.bridge
        if bridge is not None and isinstance(session_id, str):
            self.bridged(bridge.close_session(session_id), "client")

    def replaying(self, session_id: Any) -> None:
        """A load (or a resume with replay) replays the whole session to a client that starts
        over: what it was sent of it is forgotten, so that the replay reaches it whole (its
        tool calls as first sights, its messages as chunks again)."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.forwarded_messages.clear()
        bridge = self.policy.bridge
        if bridge is not None and isinstance(session_id, str):
            self.bridged(bridge.close_session(session_id), "client")

    def client_answered(self, envelope: rpc.Envelope, line: bytes) -> None:
        """The client's answer to a request of the agent: to the agent under its id (a
        permission's, through the bridge); one nothing waits for is dropped."""
        pending = self.client_requests.pop(envelope.id)
        if pending is None:
            self.output.note(
                "client", f"an answer to no pending request (id {envelope.id!r}): dropped"
            )
            return
        if pending.discard:
            self.output.note(
                "client",
                f"an answer to request {envelope.id!r}, which the proxy answered already (the "
                "agent was sent `cancelled`): dropped",
                "error",
            )
            return
        data = rpc.whole(line)
        data["id"] = pending.origin_id
        if pending.method == "session/request_permission":
            self.permission_answered(pending, data, line)
            return
        self.output.agent(data)

    def agent_error(self, pending: rpc.Pending, error: Any) -> None:
        """The agent's error answer to a converted request (a prompt's ends its turn)."""
        if pending.method == "session/prompt" and pending.session_id in self.sessions.table:
            turns = self.sessions.table[pending.session_id].turns
            for effect in turns.answered(pending.origin_id, error=True):
                if isinstance(effect, EndInError) and effect.as_update:  # the client was told
                    self.output.client(
                        jsonrpc.update(pending.session_id, prompt_error_to_v2(error))
                    )
                    return
        self.output.client({"jsonrpc": "2.0", "id": pending.origin_id, "error": error})

    def roots(self, session_id: Any, params: Any) -> Any:
        """A session's directories (``cwd``, ``additionalDirectories`` of its setup params, or
        what this returned for them) told to a v2 -> v1 bridge, which may rebuild diffs of
        files under them from disk (D27 amended); returns them, kept until the session's id
        is known (``session/new``)."""
        if isinstance(params, dict):
            params = ("roots", params.get("cwd"), params.get("additionalDirectories"))
        if not (isinstance(params, tuple) and len(params) == 3 and params[0] == "roots"):
            return None
        bridge = self.policy.bridge
        if isinstance(bridge, V2ToV1Bridge) and isinstance(session_id, str):
            bridge.set_roots(session_id, params[1], params[2])
        return params


def _turn_error(reason: str) -> dict[str, Any]:
    """The idle ``state_update`` that ends a v2 client's turn the agent will not end."""
    return prompt_error_to_v2({"code": INTERNAL_ERROR, "message": reason})
