"""The emitter's state (``EmitterState``): options, call ids, the outgoing queue, pending text.

Rules this module owns (D46 (sender obligations, evidence: null as omitted); D16, D20):

- Ids: the caller's ids (a model's or provider's) map to session-unique ``toolCallId``\\s. An id
  whose call reached a final status is never reopened: starting it again gets a fresh namespaced
  ``toolCallId`` (``call#2``, ...: ``reuse="namespace"``) or raises ``ToolCallIdReused``
  (``reuse="refuse"``). A finished call takes no more updates (``ToolCallNotOpen``).
- Messages are queued in order (D16) and handed out by the public method that made them (``take``);
  with a v1 client every message goes through the ``V2ToV1Bridge`` first, whose losses go to
  ``on_loss`` (logged by default) and whose replies are read by the caller that asked.
- Pending growing text is sent as a whole-content replacement (``flush_text``) when due
  (``poll``), on ``flush()``, and before any other message about its call.

Theory of operation: ``EmitterState`` is the one object the emitter's parts work on (the
emitter, ``Terminals``, ``Asks`` and ``CallEndings`` each hold it): the options, the calls by the
caller's id, the ids sent, the open growing texts and the outgoing queue. The parts keep only
their own tables (``Terminals``: terminal ids; ``Asks``: the open permission requests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeAlias

from .. import v1, v2
from ..bridge import V2ToV1Bridge
from ..convert import Loss
from ..models import JsonRpcMessage
from ._content import text_content
from ._patches import CallRecord, logger, update_message
from ._senders import Fields, SenderError, encoded
from ._throttle import TextThrottle

Message: TypeAlias = (
    v2.SessionUpdateMessage
    | v2.PermissionRequestMessage
    | v1.SessionUpdateMessage
    | v1.PermissionRequestMessage
    | JsonRpcMessage
)
"""What the emitter hands out to send: v2 messages, or (with a v1 client) what the bridge made
of them (v1 messages; ``JsonRpcMessage`` for anything it passes on as it is)."""

Reuse = Literal["namespace", "refuse"]


class ToolCallIdReused(SenderError):
    """``start`` of an id that is already in use (open, or final with ``reuse="refuse"``)."""


class ToolCallNotOpen(SenderError):
    """An update, chunk or permission request about a call that was never started or is final."""


class EmitterState:
    """The state of an emitter: its options, its calls, and the messages not yet handed out."""

    def __init__(
        self,
        session_id: str,
        throttle: TextThrottle,
        reuse: Reuse,
        allow_kinds: frozenset[str],
        bridge: V2ToV1Bridge | None,
        on_loss: Callable[[Loss], None],
    ) -> None:
        self.session_id = session_id
        self.throttle = throttle
        self.reuse = reuse
        self.allow_kinds = allow_kinds
        self.bridge = bridge  # a v1 client's: every message goes through it
        self.on_loss = on_loss
        self.calls: dict[str, CallRecord] = {}  # the caller's id -> its current call
        self.used: set[str] = set()  # every toolCallId sent in this session
        self.texts: dict[str, CallRecord] = {}  # calls with an open growing text, by caller id
        self.out: list[Message] = []

    def tool_call_id(self, call_id: str) -> str:
        """The ``toolCallId`` the client knows the caller's ``call_id`` by."""
        return self.get(call_id, open_only=False).tool_call_id

    def is_open(self, call_id: str) -> bool:
        """Whether ``call_id`` was started and has not reached a final status."""
        call = self.calls.get(call_id)
        return call is not None and not call.final

    def open_calls(self) -> list[str]:
        """The caller's ids of every started call without a final status, in start order."""
        return [cid for cid, call in self.calls.items() if not call.final]

    def poll(self, now: float) -> list[Message]:
        """Send the growing texts that are due at ``now``."""
        throttle = self.throttle
        for call_id, call in list(self.texts.items()):
            text = call.text
            if text is None:
                continue
            if text.due(throttle, now):
                self.flush_text(call_id, call, now)
        return self.take()

    def next_deadline(self) -> float | None:
        """When ``poll`` next has something to send (``None``: nothing is pending)."""
        throttle = self.throttle
        deadlines = []
        for call in self.texts.values():
            text = call.text
            due = text.deadline(throttle) if text is not None else None
            if due is not None:
                deadlines.append(due)
        return min(deadlines, default=None)

    def flush(self) -> list[Message]:
        """Send every pending growing text now (and what a coalescing bridge holds)."""
        for call_id, call in list(self.texts.items()):
            self.flush_text(call_id, call)
        if self.bridge is not None:
            self.bridged(self.bridge.flush(self.session_id))
        return self.take()

    # ----------------------------------------------------------------------------------------
    # Steps the parts share

    def new_id(self, call_id: str) -> str:
        if not isinstance(call_id, str) or not call_id:
            raise SenderError("toolCallId", "must be a non-empty string")
        current = self.calls.get(call_id)
        if current is None and call_id not in self.used:
            return call_id
        if current is not None and not current.final:
            raise ToolCallIdReused("toolCallId", f"{call_id!r} is already open: use `update`")
        if self.reuse == "refuse":
            raise ToolCallIdReused("toolCallId", f"{call_id!r} already reached a final status")
        n = 2
        while f"{call_id}#{n}" in self.used:
            n += 1
        return f"{call_id}#{n}"

    def get(self, call_id: str, *, open_only: bool = True) -> CallRecord:
        call = self.calls.get(call_id)
        if call is None:
            raise ToolCallNotOpen("toolCallId", f"{call_id!r} was never started")
        if open_only and call.final:
            raise ToolCallNotOpen("toolCallId", f"{call_id!r} already reached a final status")
        return call

    def send_patch(self, call: CallRecord, patch: Fields) -> None:
        if patch:  # else the client holds all of it already: nothing to send
            update = v2.SessionToolCallUpdate(tool_call_id=call.tool_call_id, **patch)
            self.send(update_message(self.session_id, update))

    def append(self, call: CallRecord, item: Any, key: bytes) -> None:
        call.items.append(item)
        call.keys.append(key)
        chunk = v2.ToolCallContentChunk(tool_call_id=call.tool_call_id, content=item)
        self.send(update_message(self.session_id, chunk))

    def flush_text(self, call_id: str, call: CallRecord, now: float | None = None) -> None:
        text = call.text
        self.texts.pop(call_id, None)
        if text is None or not text.pending:
            return
        whole = "".join(text.parts)
        text.parts = [whole]
        text.sent = len(whole)
        item = text_content(whole)
        call.items[text.index] = item
        call.keys[text.index] = encoded(item, "content")
        text.pending = 0
        if now is not None:
            text.last_sent = now
        patch = v2.SessionToolCallUpdate(tool_call_id=call.tool_call_id, content=list(call.items))
        self.send(update_message(self.session_id, patch))

    def send(self, message: Any) -> None:
        if self.bridge is None:
            self.out.append(message)
        else:
            self.bridged(self.bridge.convert(message))

    def bridged(self, converted: Any) -> list[Any]:
        """Queue a bridge result's messages; returns its replies."""
        for loss in converted.losses:
            self.on_loss(loss)
        self.out.extend(converted.messages)
        return list(converted.replies)

    def queue(self, messages: list[Message]) -> None:
        # `self.out.extend(self.flush())` would extend the list `flush` just took away.
        self.out.extend(messages)

    def take(self) -> list[Message]:
        out, self.out = self.out, []
        return out


def log_loss(loss: Loss) -> None:
    logger.info("not carried to the v1 client: %s", loss)
