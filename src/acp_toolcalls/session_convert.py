"""Whole sessions in the other version: both sides of a log, converted message by message.

Rules this module owns (issue 16; docs/conversion.md, "Converting whole sessions"):

- ``SessionConverter(to, tool_calls)`` reads the messages of a session between a client and
  an agent that spoke the version other than ``to``, and writes the session as the two peers
  would have held it in ``to``. Each mapping is the proxy's (one implementation of each):
  client requests through ``methods.map_params`` with the source version's table, their
  results through ``methods.map_result`` with the other table under the target method; tool
  calls, permission requests and every other session update of the agent through
  ``tool_calls`` (a stateful bridge or a stateless converter, as ``convert`` chose); prompt
  turns, modes and message upserts through the functions of ``methods.py``.
- Who sent a message is given (a ``bridge --log`` side says it) or follows from its method
  (``methods.SENDERS``, the schemas' ``x-side``); ``$/cancel_request`` goes the way of the
  request it names. A response goes the other way from the request it answers;
  ids are unique per direction only, so a response is matched with the pending request of that
  id, the most recent one when both sides have one. A response to no request seen passes
  through unchanged and is reported.
- Prompt turns, toward v2: the prompt is acknowledged (``{messageId}``, a ``user_message``
  echo of the prompt, ``running``) as soon as the session is set up or the agent says anything
  about it; permission requests in the turn are framed by ``requires_action`` and ``running``;
  the v1 response ends the turn as an idle ``state_update`` (an error as stop reason
  ``error``; an error before the acknowledgement stays the prompt's error response). Toward v1:
  the acknowledgement and the agent's echo of the user message are left out (a v1 client
  shows its own prompt), and the idle ``state_update`` with a stop reason that ends the oldest
  open prompt of the session is its v1 response; other ``state_update``s have no v1 form
  (reported by the tool-call converter). A turn that never ends in the log is reported at the
  end (toward v1 it has no response).
- Toward v1, a v2 message upsert is sent as chunks (``methods.message_chunks``) when the v1
  side has no chunk of that ``messageId`` yet, else dropped (reported). Toward v2, a v1
  agent's modes are the config option ``methods.MODE_CONFIG_ID`` (``methods.Modes``):
  ``session/set_mode`` is its ``session/set_config_option``, ``current_mode_update`` its
  ``config_option_update``.
- What the target version has no counterpart for is left out and reported, with its answer:
  a v1 agent's ``fs/*`` and ``terminal/*`` requests toward v2, ``session/set_mode`` toward
  v2 when no modes are shown, ``tool_call/cancel`` and ``terminal/cancel`` toward v1, a
  permission request the tool-call converter did not send (its answer to the agent is in
  ``replies``), a ``$/cancel_request`` naming a request left out.
- A client's answer to a permission request is mapped (``permission_response_to_v1``/``_v2``);
  the tool-call converter is told of it, and what it sends the client then (a bridge gives a
  call its own title back after a prompt) is written after the answer. Errors, extension
  methods, unknown methods and methods both versions share pass through unchanged.
- Memory is bounded: at most ``MAX_PENDING`` requests wait for an answer (past it the oldest
  is forgotten, reported: its answer then passes through unconverted), state is kept for at
  most ``MAX_SESSIONS`` sessions (the least recently used idle ones go) and, per session, the
  ids of at most ``MAX_MESSAGES`` messages sent to v1 as chunks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import msgspec
from msgspec import UNSET, UnsetType

from . import routing as rpc
from . import v1, v2
from .bridge_to_v1 import V2ToV1Bridge
from .codec import decode, to_builtins
from .lenient import DecodeError
from .loss import Converted, Loss, LossReport
from .methods import (
    MODES_TO_V2,
    NO_V1,
    NO_V2,
    SENDERS,
    TO_V1,
    TO_V2,
    MethodMap,
    Modes,
    map_params,
    map_result,
    message_chunks,
    prompt_end_to_v1,
    prompt_error_to_v2,
    prompt_result_to_v2,
)
from .v2_to_v1 import permission_response_to_v1, permission_response_to_v2

__all__ = ["SessionConverter"]

Sender = Literal["client", "agent"]
Target = Literal["v1", "v2"]

MAX_PENDING = 10_000
"""Requests waiting for their answer, at most (both sides together)."""
MAX_SESSIONS = 1_000
"""Sessions whose prompts, modes and messages are kept, at most."""
MAX_MESSAGES = 10_000
"""Per session, ids of messages a v1 side holds chunks of, at most."""

_SESSION_SETUP = frozenset({"session/new", "session/load", "session/resume"})
_MODE_UPDATES = frozenset({"current_mode_update", "config_option_update"})
_USER_ECHOES = frozenset({"user_message_chunk", "user_message"})
_CHUNKS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})
_UPSERTS = frozenset({"user_message", "agent_message", "agent_thought"})
_CLIENT_OWNED = ("fs/", "terminal/")
_NO_V2_AGENT = {
    "fs/": "v2 clients serve no file system (a v2 agent reads and writes files itself)",
    "terminal/": "v2 clients run no terminals (a v2 agent runs commands itself and shows them "
    "with `terminal_update`)",
}


class ToolCallConverter(Protocol):
    """What converts the agent's tool-call traffic: a bridge or a stateless converter."""

    def convert(self, message: Any) -> Converted: ...

    def flush(self) -> Converted: ...

    def close_session(self, session_id: str) -> Converted: ...


How = Literal["map", "prompt", "mode", "permission", "drop", "pass"]


@dataclass
class _Asked:
    """A request in the log, until its answer."""

    method: str
    how: How
    """``map``: its result is mapped (``target``); ``prompt``: a prompt turn; ``mode``: a
    ``session/set_mode`` sent as the mode option; ``permission``: an agent's permission
    request; ``drop``: left out, and so is its answer; ``pass``: passed through."""
    target: str = ""
    session_id: Any = None
    value: Any = None  # ``mode``: the mode chosen


@dataclass
class _Prompt:
    request_id: Any
    content: Any  # the prompt in v2 (toward v2: echoed when acknowledged)
    acknowledged: bool = False
    stop: dict[str, Any] | None = None  # toward v1: the idle state seen before the ack


@dataclass
class _Session:
    session_id: Any
    prompts: list[_Prompt] = field(default_factory=list)
    permissions: int = 0  # permission requests of the agent waiting for the client
    established: bool = False  # a session/new, load or resume of it was answered
    modes: Modes | None = None  # toward v2: the v1 agent's modes, shown as a config option
    messages: dict[str, None] = field(default_factory=dict)  # toward v1: messageIds v1 has

    @property
    def busy(self) -> bool:
        return bool(self.prompts or self.permissions)


class _PeekUpdate(msgspec.Struct):
    sessionUpdate: Any = None
    messageId: Any = None


class _PeekParams(msgspec.Struct):
    sessionId: Any = None
    update: _PeekUpdate | None = None


class _Peek(msgspec.Struct):
    method: Any = None
    id: Any = UNSET
    params: msgspec.Raw | UnsetType = UNSET


_read_peek = msgspec.json.Decoder(_Peek)
_read_peek_params = msgspec.json.Decoder(_PeekParams)
_PEEK_MISSES = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
_V2_SPECIAL = _USER_ECHOES | _UPSERTS | {"state_update"}
"""Updates of a v2 agent that a v1 session needs more than the bridge for."""


def _id_key(value: Any) -> Any:
    """A JSON-RPC id as a dict key (``1`` and ``"1"`` differ; ``True`` is no id)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return (isinstance(value, str), value)


def _rooted(path: str, root: str) -> str:
    return root + path[1:] if path.startswith("$") else f"{root}.{path}"


class SessionConverter:
    """Converts a whole session (both sides' messages) into version ``to``.

    ``convert(message, sender=None)`` takes one line's message or batch (raw bytes, text or JSON
    values); ``sender`` is ``"client"`` or ``"agent"`` when the log says who sent it. It
    returns a ``Converted``: the messages of the session in ``to``, ``replies`` the tool-call
    converter gave the agent itself (not part of the session), and every loss. Raises
    ``DecodeError`` for a line that cannot be read (``ConversionError`` from a strict
    stateless converter).
    """

    def __init__(self, to: Target, tool_calls: ToolCallConverter) -> None:
        if to not in ("v1", "v2"):
            raise ValueError(f"unknown version {to!r}: expected 'v1' or 'v2'")
        self.to: Target = to
        self.source: Target = "v2" if to == "v1" else "v1"
        self.tool_calls = tool_calls
        self._requests = TO_V2 if to == "v2" else TO_V1  # source method -> mapping
        self._results = TO_V1 if to == "v2" else TO_V2  # target method -> result mapping
        self._missing = NO_V2 if to == "v2" else NO_V1
        self._pending: dict[tuple[str, Any], _Asked] = {}
        self._sessions: dict[Any, _Session] = {}
        self._acks = 0  # message ids made up for prompt acknowledgements
        self._out: list[Any] = []
        self._replies: list[Any] = []
        self._losses: list[Loss] = []
        self._root = "$"

    # ----------------------------------------------------------------------------------------
    # Public API

    def convert(self, message: Any, sender: Sender | None = None) -> Converted:
        """Convert one line: a message or a batch (see the class)."""
        if type(message) is bytes and sender != "client":
            converted = self._agent_update_line(message)
            if converted is not None:
                return converted
        raw: bytes | str | None = None
        if isinstance(message, (bytearray, memoryview)):
            message = bytes(message)
        if isinstance(message, (bytes, str)):
            raw = message
        value = message
        if raw is not None:
            try:
                value = msgspec.json.decode(raw)
            except (msgspec.DecodeError, RecursionError):
                return self.tool_calls.convert(raw)  # it says why it cannot be read
        if isinstance(value, list) and value:
            for index, item in enumerate(value):
                self._root = f"$[{index}]"
                if not isinstance(item, dict):
                    self._lost("$", "batch element dropped: not a JSON-RPC message object")
                    continue
                try:
                    self._message(item, None, sender)
                except DecodeError as exc:
                    self._lost(exc.path, f"batch element dropped: {exc.reason}")
            self._root = "$"
            return self._take()
        if not isinstance(value, dict):
            return self.tool_calls.convert(message)  # it says why it cannot be read
        self._message(value, raw, sender)
        return self._take()

    def flush(self) -> Converted:
        """End of input: what the tool-call converter held back, and the turns that never
        ended (reported)."""
        self._converted(self.tool_calls.flush())
        if self.to == "v1":
            for session in self._sessions.values():
                for prompt in session.prompts:
                    self._lost(
                        "$",
                        f"the turn of prompt {prompt.request_id!r} (session "
                        f"{session.session_id!r}) never ends in the log: the v1 prompt has no "
                        "response",
                    )
        return self._take()

    def _agent_update_line(self, line: bytes) -> Converted | None:
        """The common line, an agent's ``session/update`` that only the tool-call converter
        has to see, handed to it as it is (read for a few keys only); ``None``: any other."""
        try:
            peek = _read_peek.decode(line)
            raw = peek.params
            if (
                peek.method != "session/update"
                or peek.id is not UNSET
                or not isinstance(raw, msgspec.Raw)
            ):
                return None
            params = _read_peek_params.decode(raw)
        except _PEEK_MISSES:
            return None
        update, session_id = params.update, params.sessionId
        tag = update.sessionUpdate if update is not None else None
        if not isinstance(tag, str) or not isinstance(session_id, str) or update is None:
            return None
        if self.to == "v1":
            if tag in _V2_SPECIAL:
                return None
            if tag in _CHUNKS and isinstance(update.messageId, str):
                self._remember_message(self._session(session_id), update.messageId)
        else:
            session = self._sessions.get(_id_key(session_id))
            if session is not None and (
                (session.modes is not None and tag in _MODE_UPDATES)
                or any(not prompt.acknowledged for prompt in session.prompts)
            ):
                return None
        return self.tool_calls.convert(line)

    # ----------------------------------------------------------------------------------------
    # Output

    def _take(self) -> Converted:
        losses = LossReport(self._losses) if self._losses else LossReport()
        out = Converted(tuple(self._out), tuple(self._replies), losses)
        self._out, self._replies, self._losses = [], [], []
        return out

    def _emit(self, message: Any) -> None:
        self._out.append(message)

    def _lost(self, path: str, reason: str) -> None:
        self._losses.append(Loss(_rooted(path, self._root), reason))

    def _mapped_losses(self, losses: LossReport, root: str) -> None:
        for loss in losses:
            self._lost(_rooted(loss.path, root), loss.reason)

    def _converted(self, converted: Converted, *, replies: bool = True) -> list[Any]:
        """A tool-call converter's output: its messages written, its losses reported, its
        replies (answers to the agent) kept for the caller; returns the messages."""
        self._out.extend(converted.messages)
        for loss in converted.losses:
            self._lost(loss.path, loss.reason)
        if replies:
            self._replies.extend(converted.replies)
        return list(converted.messages)

    def _tool(self, data: Any, raw: bytes | str | None) -> list[Any]:
        """An agent message through the tool-call converter (the line as it was read when
        nothing changed it: the bridges' fast path)."""
        return self._converted(self.tool_calls.convert(raw if raw is not None else data))

    # ----------------------------------------------------------------------------------------
    # Sessions and pending requests

    def _session(self, session_id: Any) -> _Session:
        key = _id_key(session_id)
        session = self._sessions.pop(key, None)
        if session is None:
            session = _Session(session_id)
            if len(self._sessions) >= MAX_SESSIONS:
                self._forget_session()
        self._sessions[key] = session  # most recently used last
        return session

    def _forget_session(self) -> None:
        victim = next((k for k, s in self._sessions.items() if not s.busy), None)
        if victim is None:
            victim = next(iter(self._sessions))
        del self._sessions[victim]
        self._lost(
            "$",
            f"more than {MAX_SESSIONS} sessions: the least recently used one's prompts, modes "
            "and messages are forgotten",
        )

    def _ask(self, sender: Sender, request_id: Any, asked: _Asked) -> None:
        key = _id_key(request_id)
        if key is None:
            return
        self._pending.pop((sender, key), None)  # a reused id: the newest request is answered
        self._pending[(sender, key)] = asked
        if len(self._pending) > MAX_PENDING:
            (_who, old), forgotten = next(iter(self._pending.items()))
            del self._pending[(_who, old)]
            self._lost(
                "$",
                f"more than {MAX_PENDING} requests wait for an answer: the oldest "
                f"({forgotten.method}, id {old[1]!r}) is forgotten; its answer will pass through "
                "unconverted",
            )

    def _answered(self, request_id: Any, sender: Sender | None) -> tuple[Sender, _Asked] | None:
        """The request a response answers (its asker, and what was asked), removed."""
        key = _id_key(request_id)
        if key is None:
            return None
        askers: tuple[Sender, ...] = ("client", "agent")
        if sender is not None:
            askers = ("agent",) if sender == "client" else ("client",)
        found = [(k, self._pending[k]) for k in ((a, key) for a in askers) if k in self._pending]
        if not found:
            return None
        if len(found) > 1:  # both sides wait under this id: the most recent request
            order = list(self._pending)
            found.sort(key=lambda item: order.index(item[0]))
        (asker, _), asked = found[-1]
        del self._pending[(asker, key)]
        return asker, asked

    # ----------------------------------------------------------------------------------------
    # Dispatch

    def _sender_of(self, method: str, params: Any) -> Sender | None:
        spec = SENDERS.get(method)
        if spec is not None and spec.sender != "either":
            return spec.sender
        if method == "$/cancel_request" and isinstance(params, dict):  # the requester's way
            key = _id_key(params.get("requestId"))
            asked = [k for k in self._pending if k[1] == key] if key is not None else []
            if asked:
                return "client" if asked[-1][0] == "client" else "agent"
        return None

    def _message(
        self, data: dict[str, Any], raw: bytes | str | None, sender: Sender | None
    ) -> None:
        method = data.get("method")
        if not isinstance(method, str):
            if "id" in data and "method" not in data:
                self._response(data, sender)
            else:
                self._converted(self.tool_calls.convert(data))  # it says what is wrong
            return
        params = data.get("params")
        who = sender or self._sender_of(method, params)
        request = "id" in data
        if who == "client":
            if request:
                self._client_request(data, method, params)
            else:
                self._client_notification(data, method, params)
        elif who == "agent":
            if request:
                self._agent_request(data, raw, method, params)
            else:
                self._agent_notification(data, raw, method, params)
        else:  # an extension or unknown method: as it is
            if request:
                self._ask("client", data["id"], _Asked(method, "pass"))
            self._emit(data)

    # ----------------------------------------------------------------------------------------
    # The client's messages

    def _client_request(self, data: dict[str, Any], method: str, params: Any) -> None:
        request_id = data["id"]
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        table: dict[str, MethodMap] = self._requests
        if method in self._missing:
            session = self._sessions.get(_id_key(session_id))
            if method in MODES_TO_V2 and session is not None and session.modes is not None:
                table = MODES_TO_V2
            else:
                self._lost(
                    "$.method",
                    f"{method} has no {self.to} counterpart ({self._missing[method]}): the "
                    "request and its answer are left out",
                )
                self._ask("client", request_id, _Asked(method, "drop"))
                return
        elif method not in table:  # methods both versions share, extensions, unknown ones
            self._ask("client", request_id, _Asked(method, "pass", session_id=session_id))
            self._emit(data)
            return
        target, mapped = map_params(table, method, params)
        self._mapped_losses(mapped.losses, "$.params")
        value = mapped.value
        how: How = "map"
        extra: Any = None
        if table is MODES_TO_V2:
            how, extra = "mode", value.get("value")
        elif method == "session/prompt":
            how = "prompt"
            self._start_prompt(request_id, session_id, value)
        elif method == "initialize" and self.to == "v1":
            self._client_capabilities(value)
        if method == "session/load" or (
            method == "session/resume" and isinstance(params, dict) and "replayFrom" in params
        ):  # the session's history is sent again: the client starts over
            self._replaying(session_id)
        self._ask("client", request_id, _Asked(method, how, target, session_id, extra))
        self._emit(rpc.request(request_id, target, value))
        if how == "prompt" and self.to == "v2":
            session = self._session(session_id)
            if session.established:
                self._acknowledge(session_id, session.prompts[-1])

    def _client_capabilities(self, params: Any) -> None:
        """Toward v1: what the v1 client advertises (the mapped ``initialize``) decides what
        the bridge may send it (notices, compaction: D30)."""
        caps = params.get("clientCapabilities") if isinstance(params, dict) else None
        session = caps.get("session") if isinstance(caps, dict) else None
        if isinstance(self.tool_calls, V2ToV1Bridge) and isinstance(session, dict):
            self.tool_calls.notices = isinstance(session.get("notices"), dict)
            self.tool_calls.compaction = isinstance(session.get("compaction"), dict)

    def _replaying(self, session_id: Any) -> None:
        session = self._sessions.get(_id_key(session_id))
        if session is not None:
            session.messages.clear()
        if isinstance(session_id, str):
            self._converted(self.tool_calls.close_session(session_id))

    def _client_notification(self, data: dict[str, Any], method: str, params: Any) -> None:
        if method == "$/cancel_request" and isinstance(params, dict):
            asked = self._pending.get(("client", _id_key(params.get("requestId"))))
            if asked is not None and asked.how == "drop":
                self._lost("$", "a cancel of a request left out: left out")
                return
        self._emit(data)

    def _client_response(self, data: dict[str, Any], asked: _Asked) -> None:
        """The client's answer to a request of the agent."""
        if asked.how != "permission":
            self._emit(data)
            return
        answer = data
        if "result" in data:
            answer = self._permission_answer(data)
        self._emit(answer)
        # The tool-call converter settles the request; what it sends the client then (the
        # call's own title and content back after the prompt) follows the answer. What it
        # says to the agent is this answer, already written.
        told = self.tool_calls.convert(answer)
        self._out.extend(told.replies)
        session = self._session(asked.session_id)
        session.permissions = max(0, session.permissions - 1)
        if self.to == "v2" and not session.permissions and session.prompts:
            running = {"sessionUpdate": "state_update", "state": "running"}
            self._emit(rpc.update(asked.session_id, running))

    def _permission_answer(self, data: dict[str, Any]) -> dict[str, Any]:
        try:
            if self.to == "v1":
                answer2 = decode(data.get("result"), v2.RequestPermissionResponse).value
                mapped, losses = permission_response_to_v1(answer2)
                self._mapped_losses(losses, "$.result")
                return rpc.result(data["id"], to_builtins(mapped))
            answer1 = decode(data.get("result"), v1.RequestPermissionResponse).value
        except DecodeError as exc:
            self._lost(_rooted(exc.path, "$.result"), f"{exc.reason}: passed through unconverted")
            return data
        return rpc.result(data["id"], to_builtins(permission_response_to_v2(answer1)))

    # ----------------------------------------------------------------------------------------
    # The agent's messages

    def _agent_request(
        self, data: dict[str, Any], raw: bytes | str | None, method: str, params: Any
    ) -> None:
        request_id = data["id"]
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        if self.to == "v2" and method.startswith(_CLIENT_OWNED):
            why = _NO_V2_AGENT["fs/" if method.startswith("fs/") else "terminal/"]
            self._lost("$.method", f"{method}: {why}: the request and its answer are left out")
            self._ask("agent", request_id, _Asked(method, "drop"))
            return
        if method != "session/request_permission":
            self._ask("agent", request_id, _Asked(method, "pass", session_id=session_id))
            self._emit(data)
            return
        if self.to == "v2":
            self._works_on(session_id)
        converted = self.tool_calls.convert(raw if raw is not None else data)
        sent = any(
            isinstance(m, (v1.PermissionRequestMessage, v2.PermissionRequestMessage))
            for m in converted.messages
        )
        session = self._session(session_id)
        if sent and self.to == "v2" and session.prompts and not session.permissions:
            waiting = {"sessionUpdate": "state_update", "state": "requires_action"}
            self._emit(rpc.update(session_id, waiting))
        self._converted(converted)
        if not sent:  # answered by the converter (in `replies`): the client's answer goes too
            self._ask("agent", request_id, _Asked(method, "drop"))
            return
        session.permissions += 1
        self._ask("agent", request_id, _Asked(method, "permission", session_id=session_id))

    def _agent_notification(
        self, data: dict[str, Any], raw: bytes | str | None, method: str, params: Any
    ) -> None:
        if method == "$/cancel_request":
            key = _id_key(params.get("requestId")) if isinstance(params, dict) else None
            asked = self._pending.get(("agent", key))
            if asked is not None and asked.how == "drop":
                self._lost("$", "a cancel of a request left out: left out")
                return
            # The converter settles what it forwarded; its own answer to the agent is not
            # written: the client's answer in the log is.
            self._converted(self.tool_calls.convert(data), replies=False)
            return
        if method != "session/update" or not isinstance(params, dict):
            self._tool(data, raw)
            return
        update = params.get("update")
        tag = update.get("sessionUpdate") if isinstance(update, dict) else None
        session_id = params.get("sessionId")
        if self.to == "v2":
            self._v1_update(data, raw, session_id, tag, update)
        else:
            self._v2_update(data, raw, session_id, tag, update)

    def _v1_update(
        self, data: dict[str, Any], raw: bytes | str | None, session_id: Any, tag: Any, update: Any
    ) -> None:
        self._works_on(session_id)
        session = self._sessions.get(_id_key(session_id))
        if session is not None and session.modes is not None and tag in _MODE_UPDATES:
            mapped = session.modes.update(update)
            self._mapped_losses(mapped.losses, "$.params.update")
            if mapped.value is not None:
                params = data["params"]
                out: dict[str, Any] = {"sessionId": session_id, "update": mapped.value}
                if isinstance(params.get("_meta"), dict):
                    out["_meta"] = params["_meta"]
                self._emit(rpc.notification("session/update", out))
            return
        self._tool(data, raw)

    def _v2_update(
        self, data: dict[str, Any], raw: bytes | str | None, session_id: Any, tag: Any, update: Any
    ) -> None:
        session = self._session(session_id)
        if tag in _USER_ECHOES and session.prompts:
            return  # the prompt's echo: a v1 client shows its own prompt
        if tag in _UPSERTS:
            self._fan_out(session_id, session, update)
            return
        if tag == "state_update" and self._ends_turn(session_id, session, update):
            return
        if tag in _CHUNKS and isinstance(update.get("messageId"), str):
            self._remember_message(session, update["messageId"])
        self._tool(data, raw)

    def _fan_out(self, session_id: Any, session: _Session, update: dict[str, Any]) -> None:
        """A v2 message upsert toward v1: chunks of its content, when v1 has none of it."""
        message_id = update.get("messageId")
        if not isinstance(message_id, str) or message_id in session.messages:
            self._lost(
                "$.params.update",
                f"`{update.get('sessionUpdate')}` replaces content a v1 client already has "
                f"(messageId {message_id!r}): not sent",
            )
            return
        chunks = message_chunks(update)
        if not chunks:
            return
        self._remember_message(session, message_id)
        for chunk in chunks:
            self._tool(rpc.update(session_id, chunk), None)

    def _remember_message(self, session: _Session, message_id: str) -> None:
        session.messages[message_id] = None
        if len(session.messages) > MAX_MESSAGES:
            del session.messages[next(iter(session.messages))]

    # ----------------------------------------------------------------------------------------
    # Responses

    def _response(self, data: dict[str, Any], sender: Sender | None) -> None:
        found = self._answered(data.get("id"), sender)
        if found is None:
            self._lost(
                "$.id", "an answer to no request seen in the log: passed through unconverted"
            )
            self._emit(data)
            return
        asker, asked = found
        if asked.how == "drop":
            return
        if asker == "agent":
            self._client_response(data, asked)
        else:
            self._agent_response(data, asked)

    def _agent_response(self, data: dict[str, Any], asked: _Asked) -> None:
        """The agent's answer to a request of the client."""
        if asked.how == "pass":
            self._emit(data)
            return
        if asked.how == "prompt":
            self._prompt_answered(data, asked)
            return
        if "error" in data or "result" not in data:
            self._emit(data)
            return
        result = data["result"]
        session = self._sessions.get(_id_key(asked.session_id))
        if asked.how == "mode":
            if session is not None and session.modes is not None:
                result = session.modes.selected(asked.value, result)
            self._emit(rpc.result(data["id"], result))
            return
        if asked.target not in self._results:
            self._emit(data)
            return
        mapped = map_result(self._results, asked.target, result)
        self._mapped_losses(mapped.losses, "$.result")
        value = mapped.value
        session_id = asked.session_id
        if session_id is None and isinstance(value, dict):
            session_id = value.get("sessionId")
        modes = session.modes if session is not None else None
        if modes is not None and asked.method == "session/set_config_option":
            value = modes.with_agent_options(value)
        if asked.method in _SESSION_SETUP and isinstance(session_id, str):
            session = self._session(session_id)
            session.established = True
            if self.to == "v2":
                session.modes = Modes.shown(result, value)
        self._emit(rpc.result(data["id"], value))
        for update in mapped.updates:
            self._emit(rpc.update(session_id, update))
        if asked.method == "session/close" and isinstance(session_id, str):
            self._sessions.pop(_id_key(session_id), None)
            self._converted(self.tool_calls.close_session(session_id))
        if asked.method in _SESSION_SETUP and self.to == "v2" and session_id is not None:
            for prompt in self._session(session_id).prompts:
                if not prompt.acknowledged:
                    self._acknowledge(session_id, prompt)

    # ----------------------------------------------------------------------------------------
    # Prompt turns

    def _start_prompt(self, request_id: Any, session_id: Any, params: Any) -> None:
        content = params.get("prompt") if isinstance(params, dict) else None
        if self.to == "v1":
            content = None  # nothing is echoed toward v1
        self._session(session_id).prompts.append(_Prompt(request_id, content))

    def _find_prompt(self, asked: _Asked, request_id: Any) -> tuple[_Session, _Prompt | None]:
        session = self._session(asked.session_id)
        prompt = next((p for p in session.prompts if p.request_id == request_id), None)
        return session, prompt

    def _acknowledge(self, session_id: Any, prompt: _Prompt) -> None:
        """Toward v2: the prompt was inserted (``messageId``, its echo, ``running``)."""
        end_message: Callable[[Any], None] | None = getattr(self.tool_calls, "end_message", None)
        if end_message is not None:
            end_message(session_id)
        self._acks += 1
        message_id = f"acp-toolcalls-user-{self._acks}"
        prompt.acknowledged = True
        self._emit(rpc.result(prompt.request_id, {"messageId": message_id}))
        echo = {"sessionUpdate": "user_message", "messageId": message_id, "content": prompt.content}
        self._emit(rpc.update(session_id, echo))
        self._emit(rpc.update(session_id, {"sessionUpdate": "state_update", "state": "running"}))

    def _works_on(self, session_id: Any) -> None:
        """Toward v2: the agent said something about the session, so its prompts are in."""
        session = self._sessions.get(_id_key(session_id))
        if session is None:
            return
        for prompt in session.prompts:
            if not prompt.acknowledged:
                self._acknowledge(session_id, prompt)

    def _prompt_answered(self, data: dict[str, Any], asked: _Asked) -> None:
        request_id = data["id"]
        session, prompt = self._find_prompt(asked, request_id)
        error = data.get("error")
        if self.to == "v2":
            if prompt is not None:
                session.prompts.remove(prompt)
            if error is not None and (prompt is None or not prompt.acknowledged):
                self._emit(data)  # refused before it was inserted: the prompt's error
                return
            if prompt is not None and not prompt.acknowledged:
                self._acknowledge(asked.session_id, prompt)
            end_message: Callable[[Any], None] | None = getattr(
                self.tool_calls, "end_message", None
            )
            if end_message is not None:
                end_message(asked.session_id)
            if error is not None:
                idle = prompt_error_to_v2(error)
            else:
                mapped = prompt_result_to_v2(data.get("result"))
                self._mapped_losses(mapped.losses, "$.result")
                idle = mapped.value
            self._emit(rpc.update(asked.session_id, idle))
            return
        if error is not None:  # refused: the error is the v1 answer too
            if prompt is not None:
                session.prompts.remove(prompt)
            self._emit(data)
            return
        if prompt is None:
            self._lost("$.result", "the acknowledgement of a prompt not followed: left out")
            return
        prompt.acknowledged = True  # the v2 acknowledgement has no v1 form
        if prompt.stop is not None:  # the turn ended before the acknowledgement was logged
            session.prompts.remove(prompt)
            self._end_v1_prompt(prompt, prompt.stop)

    def _ends_turn(self, session_id: Any, session: _Session, update: dict[str, Any]) -> bool:
        """Toward v1: an idle ``state_update`` with a stop reason ends the oldest open prompt
        of the session (its v1 response); ``False``: it ends none."""
        if update.get("state") != "idle" or update.get("stopReason") is None:
            return False
        if not session.prompts:
            return False
        if isinstance(self.tool_calls, V2ToV1Bridge) and isinstance(session_id, str):
            self._converted(self.tool_calls.flush(session_id))  # the turn's last changes first
        prompt = session.prompts[0]
        if not prompt.acknowledged:
            prompt.stop = dict(update)
            return True
        session.prompts.pop(0)
        self._end_v1_prompt(prompt, update)
        return True

    def _end_v1_prompt(self, prompt: _Prompt, state: dict[str, Any]) -> None:
        mapped = prompt_end_to_v1(state)
        self._mapped_losses(mapped.losses, "$.params.update")
        self._emit({"jsonrpc": "2.0", "id": prompt.request_id, **mapped.value})
