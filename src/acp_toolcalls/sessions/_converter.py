"""Whole sessions in the other version: both sides of a log, converted message by message.

Rules this module owns (issue 16; docs/conversion.md, "Converting whole sessions"):

- ``SessionConverter(to, tool_calls)`` reads the messages of a session between a client and
  an agent that spoke the version other than ``to``, and writes the session as the two peers
  would have held it in ``to``. Each mapping is the proxy's (one implementation of each):
  client requests through ``map_params`` with the source version's table, their results
  through ``map_result`` with the other table under the target method; the agent's messages as
  ``_agent_side`` says; senders, pending requests and bounds as ``_state`` says.
- A response goes the other way from the request it answers. A response to no request seen
  passes through unchanged and is reported.
- What the target version has no counterpart for is left out and reported, with its answer:
  ``session/set_mode`` toward v2 when no modes are shown (else it is the mode option's
  ``session/set_config_option``), ``tool_call/cancel`` and ``terminal/cancel`` toward v1.
- A client's answer to a permission request is mapped (``permission_response_to_v1``/``_v2``);
  the tool-call converter is told of it, and what it sends the client then (a bridge gives a
  call its own title back after a prompt) is written after the answer. Errors, extension
  methods, unknown methods and methods both versions share pass through unchanged.
- A turn that never ends in the log is reported at the end (toward v1 it has no response).
- A batch line is one flush unit (issue 27): toward v1 its tool-call changes coalesce and each
  call it touched goes out once at its end (not once per element: v1 has no append), so the
  output and the memory stay linear in the line; its elements that are no message object are
  one loss, counted (``$[3..20000]``, "(19,998 elements)").
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from .. import v1, v2
from ..bridge import V2ToV1Bridge
from ..codec import DecodeError, check_depth, decode, to_builtins
from ..convert import Converted, Loss, permission_response_to_v1, permission_response_to_v2, rooted
from ..lifecycle import MESSAGE_CHUNKS as _CHUNKS
from ..lifecycle import MODE_UPDATES as _MODE_UPDATES
from ..lifecycle import (
    MODES_TO_V2,
    MethodMap,
    Modes,
    TurnEffect,
    jsonrpc,
    map_params,
    map_result,
    replays_history,
)
from ..records import Side
from ._agent_side import _AgentSide
from ._state import (
    _PEEK_MISSES,
    _SESSION_SETUP,
    _V2_SPECIAL,
    How,
    _Asked,
    _id_key,
    _read_peek,
    _read_peek_params,
)

__all__ = ["SessionConverter"]


class SessionConverter(_AgentSide):
    """Converts a whole session (both sides' messages) into version ``to``.

    ``convert(message, sender=None)`` takes one line's message or batch (raw bytes, text or JSON
    values); ``sender`` is ``"client"`` or ``"agent"`` when the log says who sent it. It
    returns a ``Converted``: the messages of the session in ``to``, ``replies`` the tool-call
    converter gave the agent itself (not part of the session), and every loss. Raises
    ``DecodeError`` for a line that cannot be read (``ConversionError`` from a strict
    stateless converter).
    """

    # ----------------------------------------------------------------------------------------
    # Public API

    def convert(self, message: Any, sender: Side | None = None) -> Converted:
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
            check_depth(raw)  # the codec's one depth limit, which every writer meets
            try:
                value = msgspec.json.decode(raw)
            except (msgspec.DecodeError, RecursionError):
                return self.tool_calls.convert(raw)  # it says why it cannot be read
        if isinstance(value, list) and value:
            return self._batch(value, sender)
        if not isinstance(value, dict):
            return self.tool_calls.convert(message)  # it says why it cannot be read
        self._message(value, raw, sender)
        return self._take()

    def _batch(self, value: list[Any], sender: Side | None) -> Converted:
        """One batch line: one flush unit (issue 27). Toward v1 its tool-call changes
        coalesce, then every call it touched goes out once (v1 has no append: sent one by one,
        each chunk would re-send the call's whole content). Elements that are no message are
        counted, one loss for them all."""
        bridge = self.tool_calls if isinstance(self.tool_calls, V2ToV1Bridge) else None
        holding = bridge is not None and not bridge.coalesce
        if bridge is not None:
            bridge.coalesce = True
        not_objects: list[int] = []  # the first two and the last (counted: memory stays flat)
        dropped = 0
        losses = self._frame.losses
        before = len(losses)
        try:
            for index, item in enumerate(value):
                self._root = f"$[{index}]"
                if not isinstance(item, dict):
                    dropped += 1
                    if len(not_objects) < 3:
                        not_objects.append(index)
                    else:
                        not_objects[2] = index
                    continue
                try:
                    self._message(item, None, sender)
                except DecodeError as exc:
                    self._lost(exc.path, f"batch element dropped: {exc.reason}")
        finally:
            self._root = "$"
            if bridge is not None and holding:
                bridge.coalesce = False
        if not_objects:
            self._lost(
                _elements(not_objects),
                "batch element dropped: not a JSON-RPC message object" + _counted(dropped),
            )
        if bridge is not None and holding:
            self._converted(bridge.flush())
        losses[before:] = _alike_counted(losses[before:])
        return self._take()

    def flush(self) -> Converted:
        """End of input: what the tool-call converter held back, and the turns that never
        ended (reported)."""
        self._converted(self.tool_calls.flush())
        if self.to == "v1":
            for session in self._sessions.values():
                for prompt_id in session.turns.prompt_ids():
                    self._lost(
                        "$",
                        f"the turn of prompt {prompt_id!r} (session "
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
                (session.modes is not None and tag in _MODE_UPDATES) or session.turns.unacknowledged
            ):
                return None
        return self.tool_calls.convert(line)

    def _message(self, data: dict[str, Any], raw: bytes | str | None, sender: Side | None) -> None:
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
        started: list[TurnEffect] = []
        if table is MODES_TO_V2:
            how, extra = "mode", value.get("value")
        elif method == "session/prompt":
            how = "prompt"
            started = self._start_prompt(request_id, session_id, value)
        elif method == "initialize" and self.to == "v1":
            self._client_capabilities(value)
        if replays_history(method, params):  # the history is sent again: the client starts over
            self._replaying(session_id)
        self._ask("client", request_id, _Asked(method, how, target, session_id, extra))
        self._emit(jsonrpc.request(request_id, target, value))
        self._turn(session_id, started)

    def _client_capabilities(self, params: Any) -> None:
        """Toward v1: what the v1 client advertises (the mapped ``initialize``) decides what
        the bridge may send it (notices, compaction: D30; the unstable subagents and plan:
        ``convert._unstable``)."""
        caps = params.get("clientCapabilities") if isinstance(params, dict) else None
        session = caps.get("session") if isinstance(caps, dict) else None
        if isinstance(self.tool_calls, V2ToV1Bridge) and isinstance(caps, dict):
            self.tool_calls.subagents = isinstance(caps.get("subagents"), dict)
            self.tool_calls.plan = isinstance(caps.get("plan"), dict)
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
        self._frame.messages.extend(told.replies)
        session = self._session(asked.session_id)
        self._turn(asked.session_id, session.turns.permission_answered())

    def _permission_answer(self, data: dict[str, Any]) -> dict[str, Any]:
        try:
            if self.to == "v1":
                answer2 = decode(data.get("result"), v2.RequestPermissionResponse).value
                mapped, losses = permission_response_to_v1(answer2)
                self._mapped_losses(losses, "$.result")
                return jsonrpc.result(data["id"], to_builtins(mapped))
            answer1 = decode(data.get("result"), v1.RequestPermissionResponse).value
        except DecodeError as exc:
            self._lost(rooted(exc.path, "$.result"), f"{exc.reason}: passed through unconverted")
            return data
        return jsonrpc.result(data["id"], to_builtins(permission_response_to_v2(answer1)))

    # ----------------------------------------------------------------------------------------
    # The agent's messages

    # ----------------------------------------------------------------------------------------
    # Responses

    def _response(self, data: dict[str, Any], sender: Side | None) -> None:
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
            self._emit(jsonrpc.result(data["id"], result))
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
        self._emit(jsonrpc.result(data["id"], value))
        for update in mapped.updates:
            self._emit(jsonrpc.update(session_id, update))
        if asked.method == "session/close" and isinstance(session_id, str):
            self._sessions.pop(_id_key(session_id), None)
            self._converted(self.tool_calls.close_session(session_id))
        if asked.method in _SESSION_SETUP and self.to == "v2" and session_id is not None:
            self._turn(session_id, self._session(session_id).turns.agent_spoke())  # set up


def _elements(indexes: list[int]) -> str:
    """The batch elements ``indexes`` (ascending) as one path: ``$[3]``, ``$[3,9]`` or
    ``$[3..20000]`` (the first and the last of more)."""
    if len(indexes) == 1:
        return f"$[{indexes[0]}]"
    if len(indexes) == 2:
        return f"$[{indexes[0]},{indexes[1]}]"
    return f"$[{indexes[0]}..{indexes[-1]}]"  # (the elements between: the count says how many)


SHOWN_ALIKE = 3
"""Losses of one batch line alike but for their element (the same path within the element and
the same reason) reported one by one; the others are counted in one loss (issue 27)."""


def _alike_counted(losses: list[Loss]) -> list[Loss]:
    """``losses`` (of one batch line, in order) with those of elements alike past the first
    ``SHOWN_ALIKE`` counted in one, ``$[3..20000].params._meta``, where the fourth was."""
    out: list[Loss | list[Any]] = []
    seen: dict[tuple[str, str], int | list[Any]] = {}  # -> shown, or [loss, count, first, last]
    for loss in losses:
        path = loss.path
        end = path.find("]") if path.startswith("$[") else -1
        if end < 0:
            out.append(loss)
            continue
        key = (path[end + 1 :], loss.reason)
        held = seen.get(key, 0)
        if isinstance(held, int):
            if held < SHOWN_ALIKE:
                seen[key] = held + 1
                out.append(loss)
            else:
                group: list[Any] = [loss, 1, path[2:end], path[2:end]]
                seen[key] = group
                out.append(group)
            continue
        held[1] += 1
        held[3] = path[2:end]
    return [item if isinstance(item, Loss) else _alike_loss(*item) for item in out]


def _alike_loss(loss: Loss, count: int, first: str, last: str) -> Loss:
    if count == 1:
        return loss
    rest = loss.path[loss.path.find("]") + 1 :]
    reason = (
        f"{loss.reason} (the same at {count:,} more batch elements, $[{first}] to $[{last}]: "
        "counted, not listed)"
    )
    return Loss(f"$[{first}..{last}]{rest}", reason, loss.code)


def _counted(count: int) -> str:
    return f" ({count:,} elements)" if count > 1 else ""
