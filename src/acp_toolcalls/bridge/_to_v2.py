"""The v1 -> v2 bridge: a v1 agent's traffic for a v2 client.

Rules this module owns (shared/spec/TOOL-CALLS.md 9.7, 9.8, 9.10; D9, D20, D37, D38):

- Every v1 ``tool_call`` and ``tool_call_update`` becomes one v2 ``tool_call_update`` (9.3);
  the first ``tool_call`` of an id keeps every field the agent set; a repeated one merges
  instead of wiping, because its default values are dropped (D9, amended). A v1 ``null``
  never becomes a v2 clear; nothing is ever sent as a chunk.
- A repeated ``tool_call`` for a call whose status is final is still merged, and reported (a
  probable id reuse, D20).
- A v1 permission request becomes a v2 one whose ``title`` is the tool call's title, else the
  title the bridge last saw for that call, else a neutral default (D37); its subject carries
  only the call's fields that differ from what the client holds (the bridge keeps a digest of
  each field it sent), so the prompt is not copied into a displayed call. With no options it
  is not sent and the agent is answered ``cancelled`` (D5); a repeated option id keeps the first.
  The client's answer is mapped back; an unknown outcome is never approval.
- Each forwarded request is answered once: by the client's answer, or by the bridge, which
  answers ``cancelled`` when it gives the request up (a cap, ``withdraw``), sends the client
  ``$/cancel_request`` and drops the late answer. A request whose id is ``null`` (v2 ids never
  are) or the id of a pending request is refused (``-32600``). The agent's own
  ``$/cancel_request`` passes through: the client answers it (9.7).
- Client-owned v1 terminals have no v2 form: dropped and reported (D38).
- v2 requires a ``messageId`` on every message chunk: a v1 chunk without one continues the
  session's current message of its kind, and any other update, or ``end_message``, ends it.
- Every other message passes through unchanged.
- Memory is bounded by ``Limits``: per session the titles (their first 1,024 characters),
  field digests and final statuses of at most ``max_tool_calls`` ids (oldest forgotten first),
  at most ``max_sessions`` sessions (least recently used forgotten first), about
  ``max_store_bytes`` in all (least recently used sessions first, then the oldest calls of the
  current one), at most
  ``max_pending_permissions`` unanswered requests (the oldest given up: the agent is
  answered ``cancelled``); a request with more than ``max_permission_options`` options is not
  forwarded and answered ``cancelled``. Every cap that bites is reported as a loss.
"""

from __future__ import annotations

from typing import Any, cast

from msgspec import UNSET

from .. import models, v1, v2
from ..codec import (
    DEFAULT_MAX_BYTES,
    FAST_PATH_MISSES,
    DecodeError,
    canonical_json,
    decode,
    fast_message_decoder,
    to_builtins,
)
from ..convert import (
    NO_LOSSES,
    Converted,
    Loss,
    LossReport,
    batched,
    invalid_element,
    permission_request_to_v2,
    permission_response_to_v1,
    plain_tool_call_fields,
    read_input,
    rooted,
    session_update_to_v2,
    unknown_keys,
)
from ..models import (
    CANCELLED_OUTCOME,
    REQUEST_CANCELLED,
    Batch,
    InvalidMessage,
    JsonRpcMessage,
    extras_seen,
    response,
)
from ..store import Limits, trim_block
from ._forwarded import Forwarded

__all__ = ["V1ToV2Bridge"]

_FAST_DECODE = fast_message_decoder("v1")
_TOOL_CALLS = (v1.ToolCall, v1.SessionToolCallUpdate)
_FAST_PATHS = True
"""Whether tool-call updates take their fast path (tests turn it off to compare: the output is
the same either way)."""
_MESSAGE_CHUNKS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})
_FORGOTTEN = (
    "their titles for permission prompts, what the client holds of them, id-reuse reports, and "
    "that a later `tool_call` of one merges"
)
_TITLE_KEPT = 1_024
"""Characters of a call's title remembered for a permission prompt that has none (D37)."""


_HELD_FIELDS = tuple(
    name for name in v2.ToolCallUpdate.__struct_fields__ if name not in ("tool_call_id", "meta")
)
"""The fields a permission subject sends only when they differ from what the client holds."""


def _digest(value: Any) -> int:
    """A value's fingerprint (equal wire values, equal fingerprints): what the bridge keeps of
    what the client holds, instead of the value."""
    if value is None or type(value) is str:
        return hash((type(value), value))
    return hash(canonical_json(value))


_CALL_BYTES = 400
"""What the bridge keeps per call (its id in three tables, a digest per field sent), about, in
bytes; a title it keeps counts a byte a character more."""


class _Session:
    __slots__ = ("bytes", "final", "held", "message", "seen", "titles", "touched")

    def __init__(self) -> None:
        self.seen: dict[str, None] = {}  # ids the v2 client was sent an update about
        self.held: dict[str, dict[str, int]] = {}  # id -> field -> digest of what it holds
        self.titles: dict[str, str] = {}
        self.final: dict[str, None] = {}  # ids whose last status was final, oldest first
        self.message: tuple[str, str] | None = None  # (chunk kind, messageId) being streamed
        self.touched = 0  # when the bridge last switched to this session
        self.bytes = 0  # what the tables above hold, about (`_CALL_BYTES`)


class V1ToV2Bridge:
    """Converts a v1 agent's messages for a v2 client, one message at a time (sans-I/O)."""

    def __init__(self, *, limits: Limits | None = None) -> None:
        self.limits = limits if limits is not None else Limits()
        self._sessions: dict[str, _Session] = {}
        self._bytes = 0  # what all sessions keep, about
        self._current: _Session | None = None
        self._switches = 0
        self._messages = 0  # message ids made up for chunks without one
        self._forwarded: Forwarded[str] = Forwarded(self.limits.max_pending_permissions)
        self._out: list[Any] = []
        self._replies: list[Any] = []
        self._losses: list[Loss] = []

    def convert(self, message: Any) -> Converted:
        """Convert one message (or batch); raises ``DecodeError`` for unreadable raw input."""
        if type(message) is bytes and len(message) <= DEFAULT_MAX_BYTES:
            try:  # noqa: SIM105 - the common line: straight to the strict decoder, no wrapper
                message = _FAST_DECODE(message)
            except FAST_PATH_MISSES:
                pass
        if type(message) is v1.SessionUpdateMessage:  # the common message: `_dispatch`'s first
            self._on_update(message)
            out = self._out
            self._out = []
            if not self._losses and not self._replies:
                return Converted(tuple(out), (), NO_LOSSES)
            converted = Converted(tuple(out), tuple(self._replies), LossReport(self._losses))
            self._replies, self._losses = [], []
            return converted
        message = read_input(message, "v1", self._losses)
        if isinstance(message, Batch):
            for item in message.items:
                self._dispatch(item)
            out, replies, losses = self._out, self._replies, self._losses
            self._out, self._replies, self._losses = [], [], []
            return Converted(batched(out), tuple(replies), LossReport(losses))
        self._dispatch(message)
        converted = Converted(tuple(self._out), tuple(self._replies), LossReport(self._losses))
        self._out, self._replies, self._losses = [], [], []
        return converted

    def flush(self, session_id: str | None = None) -> Converted:
        """Nothing is ever held back (v1 has no chunks to coalesce): an empty ``Converted``."""
        del session_id
        return Converted()

    def end_message(self, session_id: str) -> None:
        """The session's next message chunk without a ``messageId`` starts a new message (a
        proxy calls this when a prompt turn starts and ends)."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.message = None

    def close_session(self, session_id: str) -> Converted:
        """Forget what the bridge remembers about the session."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._bytes -= session.bytes
            if session is self._current:
                self._current = None
        self._forwarded.forget(lambda session: session == session_id)
        return Converted()

    def withdraw(self, request_id: Any) -> Converted:
        """Settle a forwarded permission request on the client's behalf (the session was
        cancelled, say): the agent is answered ``cancelled`` (``replies``), the client is sent
        ``$/cancel_request`` (``messages``), and the client's late answer will be dropped.
        Nothing happens for a request that is not pending."""
        self._give_up(request_id)
        converted = Converted(tuple(self._out), tuple(self._replies), LossReport(self._losses))
        self._out, self._replies, self._losses = [], [], []
        return converted

    def _give_up(self, request_id: Any) -> None:
        gone = self._forwarded.give_up(request_id)
        if gone is not None:
            self._replies.append(gone.reply)
            self._out.append(gone.cancel)

    def _extend(self, losses: LossReport, root: str) -> None:
        """Losses of a mapping (rooted at what it mapped) as paths into the message."""
        for loss in losses:
            self._losses.append(Loss(rooted(loss.path, root), loss.reason, loss.code))

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session()
            cap = self.limits.max_sessions
            if cap is not None and len(self._sessions) > cap:
                self._evict_sessions(session, cap)
        if session is not self._current:
            self._switches += 1
            session.touched = self._switches
            self._current = session
        return session

    def _evict_sessions(self, new: _Session, cap: int) -> None:
        others = [(s.touched, sid) for sid, s in self._sessions.items() if s is not new]
        others.sort()
        victims = [sid for _, sid in others[: trim_block(cap)]]
        for sid in victims:
            self._bytes -= self._sessions.pop(sid).bytes
        self._losses.append(
            Loss(
                "$.max_sessions",
                f"forgot {len(victims)} least recently used session(s) (cap {cap}): their "
                "tool-call titles and final statuses",
            )
        )

    def _dispatch(self, message: Any) -> None:
        if isinstance(message, v1.SessionUpdateMessage):
            self._on_update(message)
        elif isinstance(message, v1.PermissionRequestMessage):
            self._on_permission(message)
        elif isinstance(message, JsonRpcMessage):
            self._on_other(message)
        elif isinstance(message, InvalidMessage):
            self._losses.append(invalid_element(message))
        else:
            raise TypeError(f"cannot convert a {type(message).__name__} from a v1 agent")

    def _on_update(self, message: v1.SessionUpdateMessage) -> None:
        params = message.params
        update = params.update
        if extras_seen():  # (no model in the process has any until then)
            self._losses.extend(unknown_keys(message, "$"))
            self._losses.extend(unknown_keys(params, "$.params", nested=True))
        session = self._session(params.session_id)
        if _FAST_PATHS and type(update) in _TOOL_CALLS:  # the common update, without the table
            call = cast("v1.ToolCall | v1.SessionToolCallUpdate", update)
            tool_call_id = call.tool_call_id
            create = type(call) is v1.ToolCall
            values = plain_tool_call_fields(call, create and tool_call_id in session.seen)
            if values is not None:
                if create and tool_call_id in session.final:
                    self._reused(tool_call_id)
                session.message = None  # any other update ends the current message
                patch = v2.SessionToolCallUpdate(tool_call_id=tool_call_id, **values)
                self._remember(params.session_id, session, patch, values)
                notification = v2.UpdateSessionNotification(
                    session_id=params.session_id, update=patch, meta=params.meta
                )
                self._out.append(v2.SessionUpdateMessage(params=notification))
                return
        if isinstance(update, v1.ToolCall) and update.tool_call_id in session.final:
            self._reused(update.tool_call_id)
        repeated = isinstance(update, v1.ToolCall) and update.tool_call_id in session.seen
        mapped, losses = session_update_to_v2(
            update, message_id=self._message_id(session, update), repeated=repeated
        )
        self._extend(losses, "$.params.update")
        if mapped is None:
            return
        if isinstance(mapped, v2.ToolCallUpdate):
            self._remember(params.session_id, session, mapped)
        notification = v2.UpdateSessionNotification(
            session_id=params.session_id, update=mapped, meta=params.meta
        )
        self._out.append(v2.SessionUpdateMessage(params=notification))

    def _reused(self, tool_call_id: str) -> None:
        self._losses.append(
            Loss(
                "$.params.update.toolCallId",
                f"`tool_call` re-creates {tool_call_id!r}, which had a final status: "
                "merged (probable id reuse)",
            )
        )

    def _message_id(self, session: _Session, update: v1.SessionUpdate) -> str | None:
        """The ``messageId`` of a message chunk (its own, or the current message's); any
        other update ends the current message."""
        tag = update.tag if isinstance(update, v1.OpaqueSessionUpdate) else None
        if tag not in _MESSAGE_CHUNKS:
            session.message = None
            return None
        assert isinstance(update, v1.OpaqueSessionUpdate) and tag is not None
        own = update.data.get("messageId")
        if isinstance(own, str):
            session.message = (tag, own)
            return None
        if session.message is None or session.message[0] != tag:
            self._messages += 1
            session.message = (tag, f"acp-toolcalls-msg-{self._messages}")
        return session.message[1]

    def _remember(
        self,
        session_id: str,
        session: _Session,
        update: v2.ToolCallUpdate,
        values: dict[str, Any] | None = None,
    ) -> None:
        """Note what the client now holds of the call (``values``: the fields ``update`` sets,
        by attribute name, when the caller has them)."""
        tool_call_id = update.tool_call_id
        grown = 0
        if tool_call_id not in session.seen:
            session.seen[tool_call_id] = None
            grown = _CALL_BYTES
        held = session.held.setdefault(tool_call_id, {})
        if values is not None:
            for name, value in values.items():
                if name != "meta":
                    held[name] = _digest(value)
        else:
            for name in _HELD_FIELDS:
                value = getattr(update, name)
                if value is not UNSET:
                    held[name] = _digest(value)
        if isinstance(update.title, str) and update.title:
            kept = update.title[:_TITLE_KEPT]
            grown += len(kept) - len(session.titles.get(tool_call_id, ""))
            session.titles[tool_call_id] = kept
        session.bytes += grown
        self._bytes += grown
        if isinstance(update.status, str):
            if update.status in v2.FINAL_STATUSES:
                session.final[tool_call_id] = None
            else:
                session.final.pop(tool_call_id, None)
        cap = self.limits.max_tool_calls
        if cap is not None and len(session.seen) > cap:  # a block at a time: amortised O(1)
            count = len(session.seen) - cap + trim_block(cap) - 1
            self._forget_calls(session, count)
            self._losses.append(
                Loss(
                    "$.max_tool_calls",
                    f"{session_id}: forgot the {count} oldest tool-call id(s) (cap {cap} per "
                    f"session): {_FORGOTTEN}",
                )
            )
        budget = self.limits.max_store_bytes
        if budget is not None and self._bytes > budget:
            self._over_budget(session, budget)

    def _forget_calls(self, session: _Session, count: int) -> None:
        """Forget the session's ``count`` oldest calls."""
        for tool_call_id in list(session.seen)[:count]:
            del session.seen[tool_call_id]
            session.held.pop(tool_call_id, None)
            session.titles.pop(tool_call_id, None)
            session.final.pop(tool_call_id, None)
        kept = len(session.seen) * _CALL_BYTES + sum(map(len, session.titles.values()))
        self._bytes += kept - session.bytes
        session.bytes = kept

    def _over_budget(self, current: _Session, budget: int) -> None:
        """Past ``max_store_bytes``: the least recently used sessions are forgotten, then the
        oldest calls of the current one, until what is kept fits."""
        sessions = 0
        others = sorted((s.touched, sid) for sid, s in self._sessions.items() if s is not current)
        for _, session_id in others:
            if self._bytes <= budget:
                break
            self._bytes -= self._sessions.pop(session_id).bytes
            sessions += 1
        calls = 0
        while self._bytes > budget and current.seen:
            count = trim_block(len(current.seen))
            self._forget_calls(current, count)
            calls += count
        self._losses.append(
            Loss(
                "$.max_store_bytes",
                f"what the bridge keeps went over {budget} bytes: forgot {sessions} least "
                f"recently used session(s) and {calls} tool-call id(s) of this one: {_FORGOTTEN}",
            )
        )

    def _on_permission(self, message: v1.PermissionRequestMessage) -> None:
        self._losses.extend(unknown_keys(message, "$"))
        params = message.params
        refusal = self._forwarded.refusal(message.id)
        if refusal is not None or message.id is None:  # v2 ids are never null; a reused one
            assert refusal is not None  # would get two answers
            self._replies.append(refusal[0])
            self._losses += [refusal[1], *unknown_keys(params, "$.params", nested=True)]
            return
        session = self._session(params.session_id)
        if not params.options:  # v2 needs at least one option (D5)
            self._losses.append(Loss("$.params.options", "no options: answered `cancelled`"))
            self._losses.extend(unknown_keys(params, "$.params", nested=True))
            self._replies.append(response(message.id, CANCELLED_OUTCOME))
            return
        cap = self.limits.max_permission_options
        if cap is not None and len(params.options) > cap:
            self._losses.append(
                Loss(
                    "$.params.options",
                    f"{len(params.options)} options, over the cap of {cap} "
                    "(max_permission_options): request not sent; answered the agent `cancelled`",
                )
            )
            self._losses.extend(unknown_keys(params, "$.params", nested=True))
            self._replies.append(response(message.id, CANCELLED_OUTCOME))
            return
        tool_call_id = params.tool_call.tool_call_id
        request, losses = permission_request_to_v2(
            params, stored_title=session.titles.get(tool_call_id)
        )
        self._extend(losses, "$.params")
        if request is None:  # nothing a v2 client can show: never approval
            self._replies.append(response(message.id, CANCELLED_OUTCOME))
            return
        subject = request.subject
        if isinstance(subject, v2.ToolCallPermissionSubject):
            patch = self._patch(session, subject.tool_call)
            request = models.replace(request, subject=models.replace(subject, tool_call=patch))
            self._remember(params.session_id, session, patch)
        oldest = self._forwarded.add(message.id, params.session_id)
        if oldest is not None:  # past the cap: the oldest is given up
            self._losses.append(oldest[1])
            self._give_up(oldest[0])
        self._out.append(v2.PermissionRequestMessage(id=message.id, params=request))

    def _patch(self, session: _Session, call: v2.ToolCallUpdate) -> v2.ToolCallUpdate:
        """The call's fields that differ from what the client holds (all of them for a call
        it was never sent): the subject patches the displayed call, and the prompt is the
        request's own ``title`` (D37, 7.5)."""
        held = session.held.get(call.tool_call_id)
        if held is None:
            return call
        same = {
            name: UNSET
            for name in _HELD_FIELDS
            if (value := getattr(call, name)) is not UNSET and held.get(name) == _digest(value)
        }
        return models.replace(call, **same) if same else call

    def _on_other(self, message: JsonRpcMessage) -> None:
        data = message.data
        if "method" in data or "id" not in data:
            self._out.append(message)
            return
        known, session_id, late = self._forwarded.answered(data.get("id"))
        if late is not None:
            self._losses.append(late)
        if session_id is None:
            if not known:
                self._out.append(message)  # not an answer to a permission request
            return
        error = data.get("error")
        if isinstance(error, dict):
            if error.get("code") == REQUEST_CANCELLED:
                self._out.append(response(data.get("id"), CANCELLED_OUTCOME))
            else:
                self._out.append(message)
            return
        try:
            answer: v2.RequestPermissionResponse | None = decode(
                data.get("result"), v2.RequestPermissionResponse
            ).value
        except DecodeError:
            answer = None
        if answer is None:
            self._losses.append(Loss("$.result", "unreadable permission answer: `cancelled`"))
            self._out.append(response(data.get("id"), CANCELLED_OUTCOME))
            return
        mapped, losses = permission_response_to_v1(answer)
        self._extend(losses, "$.result")
        self._out.append(response(data.get("id"), to_builtins(mapped)))
