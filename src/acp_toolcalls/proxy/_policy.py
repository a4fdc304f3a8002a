"""What a connection does differently by the versions its two sides speak: one policy each.

Rules this module owns (the core chooses a policy once, when the agent has answered
``initialize``, ``_state``; no other step asks which versions talk):

- ``NEGOTIATION`` until then; ``PassThrough`` for the same version on both sides (only a v2
  client's prompt turns are followed, to end them if the agent goes away, and the option ids
  of the agent's permission requests, to check the client's answers: D34 amended).
- Prompt turns follow the state machine of ``lifecycle`` (``Turns``, one a session): each
  policy writes its effects (``turn``) as the messages of its direction.
- ``ToV1Client`` (a v1 client, a v2 agent): requests by ``TO_V2``; the agent's mode option is
  the client's session modes (``_agent_modes``: ``session/set_mode``, ``current_mode_update``);
  the turn's ``End`` is the v1 response, from the agent's idle ``state_update``
  (``prompt_end_to_v1``); the agent's echo of the user message is not forwarded while a
  prompt is pending (a v1 client shows its own prompt); a message upsert reaches the client as
  chunks once (``upsert_as_chunks``); tool
  calls go through ``V2ToV1Bridge``, coalesced in time. The agent's ``fs/*`` and
  ``terminal/*`` requests get ``-32601``: v2 has neither, so the agent was offered neither,
  and the v1 client never sees them (issue 27).
- ``ToV2Client`` (a v2 client, a v1 agent): requests by ``TO_V1`` (``NO_V1``: ``-32602``); a
  prompt's ``Acknowledge`` is its ``messageId``, a ``user_message`` echo and ``running``
  (``prompt_accepted``; at once for a session the agent set up here, else at the agent's first
  word on it); the v1 response's ``End`` is an idle ``state_update`` (``prompt_result_to_v2``);
  ``RequiresAction`` and ``Running`` frame permission requests. v2 baseline methods a v1 agent
  lacks are answered here (``auth/logout``, ``session/close``, ``session/list``); a resume
  without replay is a load whose replay is dropped; the agent's ``fs/*`` and ``terminal/*``
  requests get ``-32601`` (a v2 client has neither); its modes are one config option
  (``Modes``). Tool calls go through ``V1ToV2Bridge``.
- A turn that ends in an error (``EndInError``) is written where its error is known: the
  agent's error answer (``_core``), the agent gone (``_core``), given up on (``_permissions``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from .. import v1, v2
from ..bridge import V1ToV2Bridge, V2ToV1Bridge
from ..codec import DEFAULT_MAX_BYTES, FAST_PATH_MISSES, fast_message_decoder
from ..lifecycle import CLIENT_OWNED as _CLIENT_OWNED
from ..lifecycle import MESSAGE_CHUNKS as _CHUNKS
from ..lifecycle import (
    MESSAGE_UPSERTS,
    MODE_OPTION_TO_V2,
    NO_V1,
    TO_V1,
    TO_V2,
    Acknowledge,
    AgentModes,
    End,
    MethodMap,
    Modes,
    RequiresAction,
    Running,
    jsonrpc,
    prompt_accepted,
    prompt_end_to_v1,
    prompt_result_to_v2,
    upsert_as_chunks,
)
from ..lifecycle import MODE_UPDATES as _MODE_UPDATES
from ..lifecycle import USER_ECHOES as _USER_ECHOES
from ..models import INVALID_PARAMS, METHOD_NOT_FOUND, VersionName, request_key
from . import _agent_modes
from . import _routing as rpc
from ._state import Mode

if TYPE_CHECKING:
    from ..lifecycle import TurnEffect
    from ._sessions import Core, _Session


_V2_TYPED = frozenset(
    {"tool_call_update", "tool_call_content_chunk", "terminal_update", "terminal_output_chunk"}
)
_V1_TYPED = frozenset({"tool_call", "tool_call_update"})
"""``sessionUpdate`` tags the codec reads into typed models; every other is opaque."""


class Policy:
    """Negotiating (the base): nothing is converted yet, no bridge, no turn followed. The hooks
    below are those of a converting policy; the core calls them only while converting."""

    mode: ClassVar[Mode] = "negotiating"
    bridge: V2ToV1Bridge | V1ToV2Bridge | None = None
    coalescing: V2ToV1Bridge | None = None  # the bridge ``poll`` and ``flush`` send from
    tracks_turns = False  # pass-through: a v2 client's turns, ended if the agent goes away
    requests: ClassVar[Mapping[str, MethodMap]] = {}  # the client's requests the agent is sent
    missing: ClassVar[Mapping[str, str]] = {}  # the client's requests refused, and why
    missing_code: ClassVar[int] = METHOD_NOT_FOUND
    typed_tags: ClassVar[frozenset[str]] = frozenset()  # update tags read typed (fast path)
    # The client's version its sessions' turns are converted for (only a converting policy
    # keeps sessions: negotiating and passing through, none is made).
    turns_to: ClassVar[VersionName] = "v1"

    def typed_update(self, core: Core, line: bytes, now: float) -> bool:
        """A compact tool-call or terminal update read once, by the strict decoder the bridge
        would read it with, and given to the bridge typed; ``False``: the general path."""
        return False

    @property
    def client_methods(self) -> Any:
        """The client's methods the proxy maps or refuses: requests, never notifications."""
        return self.requests.keys() | self.missing.keys()

    def answered_here(self, core: Core, request_id: Any, method: str, params: Any) -> bool:
        """A client request the proxy answers itself, or sends in a form of its own (``True``)."""
        return False

    def answered(self, core: Core, pending: rpc.Pending, result: Any) -> None:
        """The agent's result for a client request was mapped and sent to the client."""

    def resumed(self, core: Core, session_id: Any, target: str) -> str | None:
        """The agent's method for a ``session/resume`` (``None``: it cannot resume)."""
        return target

    def established(self, session: _Session, result: Any, value: Any) -> None:
        """The agent answered a ``session/new``, ``load`` or ``resume`` with ``result``."""

    def refused(self, core: Core, request_id: Any, method: str) -> bool:
        """An agent request the client cannot serve, answered here (``True``)."""
        return False

    def permission_asked(self, core: Core, session_id: Any) -> None:
        """A permission request of the agent goes to the client."""
        self.turn(core, session_id, core.sessions.session(session_id).turns.permission_asked())

    def turn(self, core: Core, session_id: Any, effects: Iterable[TurnEffect]) -> None:
        """The effects of a turn event of the session, written (``EndInError`` is written by
        the caller, which knows the error)."""

    def prompt_answered(self, core: Core, pending: rpc.Pending, result: Any) -> None:
        """The agent's result for a ``session/prompt``."""
        raise NotImplementedError

    def update(
        self, core: Core, session_id: Any, tag: Any, line: bytes, now: float, plain: Any
    ) -> None:
        """The agent's ``session/update`` (``plain``: the line read whole, or ``None``)."""
        raise NotImplementedError


NEGOTIATION = Policy()


class PassThrough(Policy):
    """The same version on both sides."""

    mode: ClassVar[Mode] = "passthrough"

    def __init__(self, tracks_turns: bool, max_asked: int | None = 1_000) -> None:
        self.tracks_turns = tracks_turns
        # The agent's permission requests the client has not answered: the option ids each
        # offered (request_key -> ids), so that an answer is a selection only when it names
        # one exactly (D34 amended). Past ``max_asked`` the oldest is forgotten.
        self.asked: dict[Any, frozenset[str]] = {}
        self.max_asked = max_asked

    def permission_forwarded(self, request_id: Any, offered: frozenset[str]) -> bool:
        """Remember a permission request sent to the client; ``False``: past the cap, the
        oldest was forgotten (its answer is passed on unchecked)."""
        self.asked[request_key(request_id)] = offered
        if self.max_asked is None or len(self.asked) <= self.max_asked:
            return True
        del self.asked[next(iter(self.asked))]
        return False


class Converting(Policy):
    """The two sides speak different versions: every message is converted."""

    mode: ClassVar[Mode] = "converting"
    bridge: V2ToV1Bridge | V1ToV2Bridge
    v2_side: ClassVar[str] = "client"  # the side that speaks v2
    _decode: Callable[[bytes], Any]  # the strict decoder of the agent's version
    _update_type: ClassVar[type]  # the agent's typed ``session/update``

    def _typed(self, line: bytes) -> Any:
        """The line as the agent's typed ``session/update``, read once by the strict decoder
        its bridge would read it with; ``None``: another message, or not read that way."""
        if len(line) > DEFAULT_MAX_BYTES:
            return None
        try:
            message = self._decode(line)
        except FAST_PATH_MISSES:
            return None
        return message if type(message) is self._update_type else None

    def refused(self, core: Core, request_id: Any, method: str) -> bool:
        """The agent's ``fs/*`` and ``terminal/*`` requests: ``-32601``, reported. v2 has no
        client file system or terminals, and the bridge offers neither to a v1 agent (D38)
        nor, since v2 has no such capability, to a v2 agent (D38, amended: issue 27)."""
        if not method.startswith(_CLIENT_OWNED):
            return False
        what = "file system" if method.startswith("fs/") else "terminals"
        capability = "fs" if method.startswith("fs/") else "terminal"
        message = (
            f"{method} is not available: the {self.v2_side} speaks ACP v2, which has no "
            f"client {what} (`clientCapabilities.{capability}` was not advertised)"
        )
        core.output.agent(jsonrpc.error(request_id, METHOD_NOT_FOUND, message))
        core.output.note("agent", message, "error")
        return True


class ToV1Client(Converting):
    """A v1 client, a v2 agent."""

    v2_side: ClassVar[str] = "agent"
    turns_to: ClassVar[VersionName] = "v1"

    requests: ClassVar[Mapping[str, MethodMap]] = {**TO_V2, **MODE_OPTION_TO_V2}  # set_mode: below
    missing: ClassVar[Mapping[str, str]] = {}  # (NO_V2's session/set_mode: `_agent_modes`)
    missing_code = METHOD_NOT_FOUND
    typed_tags = _V2_TYPED
    _decode = staticmethod(fast_message_decoder("v2"))
    _update_type = v2.SessionUpdateMessage
    bridge: V2ToV1Bridge

    def __init__(self, bridge: V2ToV1Bridge) -> None:
        self.bridge = self.coalescing = bridge

    def answered_here(self, core: Core, request_id: Any, method: str, params: Any) -> bool:
        if method == "session/set_mode":
            _agent_modes.set_mode(core, request_id, params)
        return method == "session/set_mode"

    def established(self, session: _Session, result: Any, value: Any) -> None:
        session.agent_modes = AgentModes.shown(result, value)

    def answered(self, core: Core, pending: rpc.Pending, result: Any) -> None:
        _agent_modes.answered(core, pending, result)

    def prompt_answered(self, core: Core, pending: rpc.Pending, result: Any) -> None:
        """The v2 result only acknowledges (an idle seen before it ends the turn now)."""
        session = core.sessions.session(pending.session_id)
        self.turn(core, pending.session_id, session.turns.answered(pending.origin_id, error=False))

    def turn(self, core: Core, session_id: Any, effects: Iterable[TurnEffect]) -> None:
        """``End``: the v1 response, from the idle ``state_update`` that ends the turn."""
        for effect in effects:
            if isinstance(effect, End) and effect.stop is not None:
                ended = prompt_end_to_v1(effect.stop)
                for loss in ended.losses:
                    core.output.note("agent", loss.reason)
                core.output.client({"jsonrpc": "2.0", "id": effect.prompt_id, **ended.value})

    def update(
        self, core: Core, session_id: Any, tag: Any, line: bytes, now: float, plain: Any
    ) -> None:
        session = core.sessions.touch(session_id)
        if tag in _USER_ECHOES and session.turns.open:
            return  # the prompt's acknowledgement: a v1 client shows its own prompt
        bridge = self.bridge
        if tag in _V2_TYPED:
            core.bridge_output.bridge_update(bridge, line)
            self._coalesce(core, now)
            return
        message = rpc.whole(line) if plain is None else plain
        params = message.get("params")
        body = params.get("update") if isinstance(params, dict) else None
        if not isinstance(body, dict):
            core.bridge_output.bridge_update(bridge, line)  # the bridge says what it cannot read
            return
        if tag in MESSAGE_UPSERTS:
            self._fan_out(core, session_id, session, body)
            return
        if tag == "state_update":  # v1 has none; a flush point, and idle may end a turn
            if isinstance(session_id, str):
                core.bridge_output.bridged(bridge.flush(session_id), "client")
            if body.get("state") == "idle" and body.get("stopReason") is not None:
                self.turn(core, session_id, session.turns.idle(body))  # it may end a turn
            return
        if tag in _CHUNKS and isinstance(body.get("messageId"), str):
            core.sessions.forwarded_message(session, body["messageId"])
        typed = rpc.opaque_message(message, 2)
        if typed is not None:
            core.bridge_output.bridge_typed(bridge, typed)
        else:
            core.bridge_output.bridge_update(bridge, line)
        if tag == "config_option_update":
            _agent_modes.options_changed(core, session, session_id, body)

    def _fan_out(
        self, core: Core, session_id: Any, session: _Session, update: Mapping[str, Any]
    ) -> None:
        """A v2 message upsert toward v1: as chunks, when the v1 side has none of it yet."""
        refused, chunks = upsert_as_chunks(update, session.forwarded_messages)
        if refused is not None:
            core.output.note("agent", f"{refused}: not forwarded")
            return
        if not chunks:
            return  # no content to show (a `_meta` patch, a clear of nothing v1 has)
        core.sessions.forwarded_message(session, update["messageId"])
        for chunk in chunks:
            core.bridge_output.bridge_update(self.bridge, jsonrpc.update(session_id, chunk))

    def typed_update(self, core: Core, line: bytes, now: float) -> bool:
        message = self._typed(line)
        if message is None:
            return False
        core.sessions.touch(message.params.session_id)
        core.bridge_output.bridge_typed(self.bridge, message)
        self._coalesce(core, now)
        return True

    @staticmethod
    def _coalesce(core: Core, now: float) -> None:
        """Tool-call changes wait in the bridge until the flush deadline (``poll``)."""
        core.flush_deadline.start(now)


class ToV2Client(Converting):
    """A v2 client, a v1 agent."""

    turns_to: ClassVar[VersionName] = "v2"
    requests = TO_V1
    missing = NO_V1
    missing_code = INVALID_PARAMS
    typed_tags = _V1_TYPED
    _decode = staticmethod(fast_message_decoder("v1"))
    _update_type = v1.SessionUpdateMessage
    bridge: V1ToV2Bridge

    def __init__(self, bridge: V1ToV2Bridge, agent_caps: Mapping[str, Any]) -> None:
        self.bridge = bridge
        self.agent_caps = agent_caps  # the v1 agent's ``agentCapabilities``
        self._messages = itertools.count(1)

    def answered_here(self, core: Core, request_id: Any, method: str, params: Any) -> bool:
        """v2 baseline methods a v1 agent may lack: answered here when it does."""
        caps = self.agent_caps
        session_caps = caps.get("sessionCapabilities") or {}
        if method == "auth/logout" and not (caps.get("auth") or {}).get("logout"):
            core.output.client(
                jsonrpc.result(request_id, {})
            )  # no auth state: an empty result (v2 rule)
            return True
        if method == "session/close" and not isinstance(session_caps.get("close"), dict):
            core.output.client(jsonrpc.result(request_id, {}))
            core.output.note(
                "client", "session/close: the v1 agent cannot close sessions; answered {}"
            )
            core.bridge_output.close_session(
                params.get("sessionId") if isinstance(params, dict) else None
            )
            return True
        if method == "session/list" and not isinstance(session_caps.get("list"), dict):
            core.output.client(
                jsonrpc.error(request_id, METHOD_NOT_FOUND, "the v1 agent cannot list sessions")
            )
            return True
        return False

    def resumed(self, core: Core, session_id: Any, target: str) -> str | None:
        caps = self.agent_caps
        can_load = caps.get("loadSession") is True
        can_resume = isinstance((caps.get("sessionCapabilities") or {}).get("resume"), dict)
        if target == "session/load":
            return target if can_load else None
        if can_resume:
            return target
        if can_load:  # resume without replay, served by a load whose replay is dropped
            core.sessions.session(session_id).replay_suppressed = True
            return "session/load"
        return None

    def established(self, session: _Session, result: Any, value: Any) -> None:
        session.modes = Modes.shown(result, value)

    def turn(self, core: Core, session_id: Any, effects: Iterable[TurnEffect]) -> None:
        """``Acknowledge``: ``messageId``, the echo, running (a v1 agent accepts a prompt by
        working on it; for a session it did not set up here, its error, first, is the answer:
        a prompt it refused was never inserted); ``RequiresAction`` and ``Running``: the
        session's state around permission requests."""
        for effect in effects:
            if isinstance(effect, Acknowledge):
                self.bridge.end_message(session_id)
                number = next(self._messages)
                for message in prompt_accepted(
                    effect.prompt_id, session_id, number, effect.content
                ):
                    core.output.client(message)
            elif isinstance(effect, (RequiresAction, Running)):
                core.output.client(jsonrpc.update(session_id, effect.update))

    def prompt_answered(self, core: Core, pending: rpc.Pending, result: Any) -> None:
        """The v1 response ends the turn (``End``), acknowledged first if it was not."""
        session_id = pending.session_id
        for effect in core.sessions.session(session_id).turns.answered(
            pending.origin_id, error=False
        ):
            if isinstance(effect, End):
                self.bridge.end_message(session_id)
                # What the idle update could not carry was never noted: only the turn's end.
                core.output.client(jsonrpc.update(session_id, prompt_result_to_v2(result).value))
            else:
                self.turn(core, session_id, (effect,))

    def update(
        self, core: Core, session_id: Any, tag: Any, line: bytes, now: float, plain: Any
    ) -> None:
        self._update(core, session_id, tag, line, None, plain)

    def _update(
        self, core: Core, session_id: Any, tag: Any, line: bytes, typed: Any, plain: Any
    ) -> None:
        """``typed``: the line's typed message, when ``typed_update`` read it; ``plain``: the
        line read whole, when the core's plain path read it."""
        session = core.sessions.session(session_id)
        if session.replay_suppressed:
            return  # the replay of a load that serves a resume without replay
        self.turn(core, session_id, session.turns.agent_spoke())  # its prompts are in
        if session.modes is not None and tag in _MODE_UPDATES:
            self._mode_update(core, session.modes, line)
            return
        bridge = self.bridge
        if typed is not None:
            core.bridge_output.bridge_typed(bridge, typed)
            return
        if tag in _V1_TYPED:
            core.bridge_output.bridge_update(bridge, line)
            return
        typed = rpc.opaque_message(rpc.whole(line) if plain is None else plain, 1)
        if typed is not None:
            core.bridge_output.bridge_typed(bridge, typed)
        else:
            core.bridge_output.bridge_update(bridge, line)

    @staticmethod
    def _mode_update(core: Core, modes: Modes, line: bytes) -> None:
        """A v1 agent's mode or config option change, for a session whose modes the v2
        client is shown as a config option: one ``config_option_update`` with them all."""
        message = rpc.whole(line)
        params = message.get("params") if isinstance(message, dict) else None
        mapped = modes.update(params.get("update") if isinstance(params, dict) else None)
        core.output.losses("agent", "session/update", mapped.losses)
        if mapped.value is None:
            return
        assert isinstance(params, dict)
        out: dict[str, Any] = {"sessionId": params.get("sessionId"), "update": mapped.value}
        if isinstance(params.get("_meta"), dict):
            out["_meta"] = params["_meta"]
        core.output.client(jsonrpc.notification("session/update", out))

    def typed_update(self, core: Core, line: bytes, now: float) -> bool:
        message = self._typed(line)
        if message is None:
            return False
        self._update(core, message.params.session_id, None, line, message, None)
        return True
