"""The session converter's state: what it remembers of a session log, and its bounds.

Rules this module owns (issue 16):

- Ids are unique per direction only: a pending request is keyed by who asked and its id
  (``_id_key``: ``1`` and ``"1"`` differ, ``true`` is no id); a reused id replaces the request
  it names, and a response is matched with the pending request of its id on the other side,
  the most recent one when both sides have one.
- Who sent a message is given (a ``bridge --log`` side says it) or follows from its method
  (``SENDERS``, the schemas' ``x-side``); ``$/cancel_request`` goes the way of the request it
  names.
- Memory is bounded: at most ``MAX_PENDING`` requests wait for an answer (past it the oldest
  is forgotten, reported: its answer then passes through unconverted), state is kept for at
  most ``MAX_SESSIONS`` sessions (the least recently used idle ones go) and, per session, the
  ids of at most ``MAX_MESSAGES`` messages sent to v1 as chunks.
- Output is collected in the kernel's ``Frame``; every loss path is rooted at the message, or
  at the batch element being converted (``$[i]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import msgspec
from msgspec import UNSET, UnsetType

from ..convert import Converted, Frame, Loss, LossReport, rooted
from ..lifecycle import (
    MESSAGE_UPSERTS,
    NO_V1,
    NO_V2,
    SENDERS,
    TO_V1,
    TO_V2,
    Modes,
    Turns,
)
from ..lifecycle import (
    USER_ECHOES as _USER_ECHOES,
)
from ..models import VersionName
from ..records import Side

MAX_PENDING = 10_000
"""Requests waiting for their answer, at most (both sides together)."""
MAX_SESSIONS = 1_000
"""Sessions whose prompts, modes and messages are kept, at most."""
MAX_MESSAGES = 10_000
"""Per session, ids of messages a v1 side holds chunks of, at most."""

_SESSION_SETUP = frozenset({"session/new", "session/load", "session/resume"})
_UPSERTS = frozenset(MESSAGE_UPSERTS)
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
class _Session:
    session_id: Any
    turns: Turns  # its prompt turns and the agent's permission requests waiting
    established: bool = False  # a session/new, load or resume of it was answered
    modes: Modes | None = None  # toward v2: the v1 agent's modes, shown as a config option
    messages: dict[str, None] = field(default_factory=dict)  # toward v1: messageIds v1 has

    @property
    def busy(self) -> bool:
        return self.turns.busy


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


class _SessionBase:
    """The state and output of a ``SessionConverter`` (see there)."""

    def __init__(self, to: VersionName, tool_calls: ToolCallConverter) -> None:
        if to not in ("v1", "v2"):
            raise ValueError(f"unknown version {to!r}: expected 'v1' or 'v2'")
        self.to: VersionName = to
        self.source: VersionName = "v2" if to == "v1" else "v1"
        self.tool_calls = tool_calls
        self._requests = TO_V2 if to == "v2" else TO_V1  # source method -> mapping
        self._results = TO_V1 if to == "v2" else TO_V2  # target method -> result mapping
        self._missing = NO_V2 if to == "v2" else NO_V1
        self._pending: dict[tuple[str, Any], _Asked] = {}
        self._sessions: dict[Any, _Session] = {}
        self._acks = 0  # message ids made up for prompt acknowledgements
        self._frame = Frame()
        self._root = "$"

    # ----------------------------------------------------------------------------------------
    # Output

    def _take(self) -> Converted:
        return self._frame.take()

    def _emit(self, message: Any) -> None:
        self._frame.messages.append(message)

    def _lost(self, path: str, reason: str, code: str = "lossy-mapping") -> None:
        self._frame.losses.append(Loss(rooted(path, self._root), reason, code))

    def _mapped_losses(self, losses: LossReport, root: str) -> None:
        for loss in losses:
            self._lost(rooted(loss.path, root), loss.reason, loss.code)

    def _converted(self, converted: Converted, *, replies: bool = True) -> list[Any]:
        """A tool-call converter's output: its messages written, its losses reported, its
        replies (answers to the agent) kept for the caller; returns the messages."""
        self._frame.messages.extend(converted.messages)
        for loss in converted.losses:
            self._lost(loss.path, loss.reason, loss.code)
        if replies:
            self._frame.replies.extend(converted.replies)
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
            session = _Session(session_id, Turns(self.to))
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

    def _ask(self, sender: Side, request_id: Any, asked: _Asked) -> None:
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

    def _answered(self, request_id: Any, sender: Side | None) -> tuple[Side, _Asked] | None:
        """The request a response answers (its asker, and what was asked), removed."""
        key = _id_key(request_id)
        if key is None:
            return None
        askers: tuple[Side, ...] = ("client", "agent")
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

    def _sender_of(self, method: str, params: Any) -> Side | None:
        spec = SENDERS.get(method)
        if spec is not None and spec.sender != "either":
            return spec.sender
        if method == "$/cancel_request" and isinstance(params, dict):  # the requester's way
            key = _id_key(params.get("requestId"))
            asked = [k for k in self._pending if k[1] == key] if key is not None else []
            if asked:
                return "client" if asked[-1][0] == "client" else "agent"
        return None

    def _remember_message(self, session: _Session, message_id: str) -> None:
        session.messages[message_id] = None
        if len(session.messages) > MAX_MESSAGES:
            del session.messages[next(iter(session.messages))]
