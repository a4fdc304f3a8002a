"""The v1 -> v2 bridge: a v1 agent's traffic for a v2 client.

Rules this module owns (D46 (permission mapping, session-update mapping, v1 to v2 bridge); D9,
D20, D37, D38 amended):

- Every v1 ``tool_call`` and ``tool_call_update`` becomes one v2 ``tool_call_update`` (D46 (field
  mapping)); the first ``tool_call`` of an id keeps every field the agent set; a repeated one merges
  instead of wiping, because its default values are dropped (D9, amended). A v1 ``null`` never
  becomes a v2 clear. Content the client holds a prefix of goes as chunks of what is new
  (``_to_v2_state``); an update that then changes nothing the client holds of a call it has is not
  sent.
- A repeated ``tool_call`` for a call whose status is final is still merged, and reported (a
  probable id reuse, D20).
- A v1 permission request becomes a v2 one whose ``title`` is the tool call's title, else the
  title the bridge last saw for that call, else a neutral default (D37); its subject carries
  only the call's fields that differ from what the client holds (the bridge keeps a digest of
  each field it sent), so the prompt is not copied into a displayed call. With no options it
  is not sent and the agent is answered ``cancelled`` (D5); a repeated option id keeps the first.
  The client's answer is mapped back; an unknown outcome is never approval, nor is an answer
  with both ``result`` and ``error`` or one naming an id never offered (D34 amended).
- Each forwarded request is answered once: by the client's answer, or by the bridge, which
  answers ``cancelled`` when it gives the request up (a cap, ``withdraw``), sends the client
  ``$/cancel_request`` and drops the late answer. A request whose id is ``null`` (v2 ids never
  are) or the id of a pending request is refused (``-32600``). The agent's own
  ``$/cancel_request`` passes through: the client answers it (D46 (permission mapping)).
- The ``_meta`` terminal extension (the proxy offers it to the agent for the client) becomes
  v2 display terminals: ``terminal_update`` and ``terminal_output_chunk`` messages before the
  call's own, its keys consumed, its ``terminal`` items kept (``convert.TerminalReader``, D38
  amended 2026-12-06). Other client-owned v1 terminals have no v2 form: dropped, reported (D38).
- v2 requires a ``messageId`` on every message chunk: a v1 chunk without one continues the
  session's current message of its kind, and any other update, or ``end_message``, ends it.
- Every other message passes through unchanged.
- Memory is bounded by ``Limits`` (``_to_v2_state``); at most ``max_pending_permissions``
  unanswered requests (the oldest given up: the agent is answered ``cancelled``); a request
  with more than ``max_permission_options`` options is not forwarded and answered
  ``cancelled``. Every cap that bites is reported as a loss.
"""

from __future__ import annotations

from typing import Any, cast

from msgspec import UNSET

from .. import models, v1, v2
from ..codec import (
    DEFAULT_MAX_BYTES,
    FAST_PATH_MISSES,
    DecodeError,
    decode,
    fast_message_decoder,
    to_builtins,
)
from ..convert import (
    NO_LOSSES,
    Converted,
    Loss,
    Losses,
    LossReport,
    answer_ambiguity,
    batched,
    invalid_element,
    permission_request_to_v2,
    permission_response_to_v1,
    plain_tool_call_fields,
    read_input,
    rooted,
    session_update_to_v2,
    tool_call_to_v2,
    tool_call_update_to_v2,
    unknown_keys,
    uses_extension,
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
from ..store import Limits
from ._forwarded import Forwarded
from ._to_v2_state import HELD_FIELDS, Session, SessionTables, appended, content_digest, digest

__all__ = ["V1ToV2Bridge"]

_FAST_DECODE = fast_message_decoder("v1")
_TOOL_CALLS = (v1.ToolCall, v1.SessionToolCallUpdate)
_FAST_PATHS = True
"""Whether tool-call updates take their fast path (tests turn it off to compare: the output is
the same either way)."""
_MESSAGE_CHUNKS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})
_UPDATE_FIELDS = tuple(f.attr for f in models.TOOL_CALL_FIELDS)
"""Every patch field of the v2 model (issue 28): what the general path's update is read for."""


class V1ToV2Bridge:
    """Converts a v1 agent's messages for a v2 client, one message at a time (sans-I/O)."""

    def __init__(self, *, limits: Limits | None = None) -> None:
        # The losses of the message being converted: one list, emptied as they are taken (the
        # session tables append theirs to it).
        self._losses: list[Loss] = []
        self._tables = SessionTables(limits, self._losses)
        self._messages = 0  # message ids made up for chunks without one
        # Each forwarded request: its session and the option ids the client was offered.
        self._forwarded: Forwarded[tuple[str, frozenset[str]]] = Forwarded(
            self._tables.limits.max_pending_permissions
        )
        self._out: list[Any] = []
        self._replies: list[Any] = []

    @property
    def limits(self) -> Limits:
        """The caps of what the bridge remembers (``Limits``)."""
        return self._tables.limits

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
            self._replies = []
            self._losses.clear()
            return converted
        message = read_input(message, "v1", self._losses)
        if isinstance(message, Batch):
            for item in message.items:
                self._dispatch(item)
            return self._take(batched(self._out))
        self._dispatch(message)
        return self._take(tuple(self._out))

    def flush(self, session_id: str | None = None) -> Converted:
        """Nothing is ever held back (v1 has no chunks to coalesce): an empty ``Converted``."""
        del session_id
        return Converted()

    def end_message(self, session_id: str) -> None:
        """The session's next message chunk without a ``messageId`` starts a new message (a
        proxy calls this when a prompt turn starts and ends)."""
        session = self._tables.sessions.get(session_id)
        if session is not None:
            session.message = None

    def close_session(self, session_id: str) -> Converted:
        """Forget what the bridge remembers about the session."""
        self._tables.close(session_id)
        self._forwarded.forget(lambda asked: asked[0] == session_id)
        return Converted()

    def withdraw(self, request_id: Any) -> Converted:
        """Settle a forwarded permission request on the client's behalf (the session was
        cancelled, say): the agent is answered ``cancelled`` (``replies``), the client is sent
        ``$/cancel_request`` (``messages``), and the client's late answer will be dropped.
        Nothing happens for a request that is not pending."""
        self._give_up(request_id)
        return self._take(tuple(self._out))

    def _take(self, messages: tuple[Any, ...]) -> Converted:
        """The outputs of what was converted (``messages``: the ones sent, as they go out)."""
        converted = Converted(messages, tuple(self._replies), LossReport(self._losses))
        self._out, self._replies = [], []
        self._losses.clear()
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
        session = self._tables.session(params.session_id)
        if type(update) not in _TOOL_CALLS and not isinstance(update, _TOOL_CALLS):
            mapped, losses = session_update_to_v2(
                update, message_id=self._message_id(session, update)
            )
            self._extend(losses, "$.params.update")
            if mapped is not None:
                self._send(params, mapped)
            return
        session.message = None  # any other update ends the current message
        call = cast("v1.ToolCall | v1.SessionToolCallUpdate", update)
        tool_call_id = call.tool_call_id
        create = isinstance(call, v1.ToolCall)
        if create and tool_call_id in session.final:
            self._reused(tool_call_id)
        terminals: list[Any] = []
        reader = session.terminals
        if uses_extension(call) or (reader is not None and reader.wants(call)):
            call, terminals = self._read_terminals(session, call, "$.params.update")
        repeated = create and tool_call_id in session.seen
        values = plain_tool_call_fields(call, repeated) if _FAST_PATHS else None
        if values is None:  # the general path: the field tables, losses reported
            if create:
                patch, losses = tool_call_to_v2(cast(v1.ToolCall, call), repeated=repeated)
            else:
                patch, losses = tool_call_update_to_v2(cast(v1.ToolCallUpdate, call))
            self._extend(losses, "$.params.update")
            values = {
                name: value
                for name in _UPDATE_FIELDS
                if (value := getattr(patch, name)) is not UNSET
            }
        self._send_call(params, session, tool_call_id, values, terminals, create)

    def _read_terminals(self, session: Session, call: Any, path: str) -> tuple[Any, list[Any]]:
        """``call`` without the ``_meta`` terminal extension, and the v2 terminal updates it
        carried (``convert.TerminalReader``)."""
        reader = self._tables.reader(session)
        before = reader.size
        losses = Losses(False)
        call, terminals = reader.read(call, path, losses)
        self._losses.extend(losses.found)
        if reader.size != before:
            self._tables.grown(session, reader.size - before)
        return call, terminals

    def _send_call(
        self,
        params: v1.SessionNotification,
        session: Session,
        tool_call_id: str,
        values: dict[str, Any],
        terminals: list[Any],
        create: bool,
    ) -> None:
        """The v2 messages of one v1 tool-call update: its terminals' updates, the chunks of
        content the client holds a prefix of, then the patch (left out when it would change
        nothing the client holds of a call it has)."""
        for terminal in terminals:
            self._send(params, terminal)
        sent = bool(terminals)
        content = values.get("content")
        if content is not None:
            chain, added = appended(content, session.contents.get(tool_call_id))
            self._tables.hold_content(session, tool_call_id, chain)
            if added is not None:  # the client holds a prefix of it: only what is new
                del values["content"]
                for item in added:
                    chunk = v2.ToolCallContentChunk(tool_call_id=tool_call_id, content=item)
                    self._send(params, chunk)
                sent = True
        if not values and sent and not create and tool_call_id in session.seen:
            return  # nothing left the client does not hold
        patch = v2.SessionToolCallUpdate(tool_call_id=tool_call_id, **values)
        self._tables.remember(params.session_id, session, patch, values, content_held=True)
        self._send(params, patch)

    def _send(
        self, params: v1.SessionNotification | v1.RequestPermissionRequest, update: Any
    ) -> None:
        """``update`` as a ``session/update`` of the session ``params`` names (with the
        notification's ``_meta``; a permission request's is the request's own)."""
        meta = params.meta if isinstance(params, v1.SessionNotification) else UNSET
        notification = v2.UpdateSessionNotification(
            session_id=params.session_id, update=update, meta=meta
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

    def _message_id(self, session: Session, update: v1.SessionUpdate) -> str | None:
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

    def _on_permission(self, message: v1.PermissionRequestMessage) -> None:
        self._losses.extend(unknown_keys(message, "$"))
        params = message.params
        refusal = self._forwarded.refusal(message.id)
        if refusal is not None or message.id is None:  # v2 ids are never null; a reused one
            assert refusal is not None  # would get two answers
            self._replies.append(refusal[0])
            self._losses += [refusal[1], *unknown_keys(params, "$.params", nested=True)]
            return
        session = self._tables.session(params.session_id)
        if not params.options:  # v2 needs at least one option (D5)
            self._losses.append(Loss("$.params.options", "no options: answered `cancelled`"))
            self._losses.extend(unknown_keys(params, "$.params", nested=True))
            self._replies.append(response(message.id, CANCELLED_OUTCOME))
            return
        cap = self._tables.limits.max_permission_options
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
        reader = session.terminals
        if uses_extension(params.tool_call) or (
            reader is not None and reader.wants(params.tool_call)
        ):
            subject_call, terminals = self._read_terminals(
                session, params.tool_call, "$.params.toolCall"
            )
            params = models.replace(params, tool_call=subject_call)
            for terminal in terminals:
                self._send(params, terminal)
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
            self._tables.remember(params.session_id, session, patch)
        offered = frozenset(option.option_id for option in request.options)
        oldest = self._forwarded.add(message.id, (params.session_id, offered))
        if oldest is not None:  # past the cap: the oldest is given up
            self._losses.append(oldest[1])
            self._give_up(oldest[0])
        self._out.append(v2.PermissionRequestMessage(id=message.id, params=request))

    def _patch(self, session: Session, call: v2.ToolCallUpdate) -> v2.ToolCallUpdate:
        """The call's fields that differ from what the client holds (all of them for a call
        it was never sent): the subject patches the displayed call, and the prompt is the
        request's own ``title`` (D37, D46 (permissions))."""
        held = session.held.get(call.tool_call_id)
        if held is None:
            return call
        same = {
            name: UNSET
            for name in HELD_FIELDS
            if (value := getattr(call, name)) is not UNSET
            and held.get(name) == (content_digest(value) if name == "content" else digest(value))
        }
        return models.replace(call, **same) if same else call

    def _on_other(self, message: JsonRpcMessage) -> None:
        data = message.data
        if "method" in data or "id" not in data:
            self._out.append(message)
            return
        known, asked, late = self._forwarded.answered(data.get("id"))
        if late is not None:
            self._losses.append(late)
        if asked is None:
            if not known:
                self._out.append(message)  # not an answer to a permission request
            return
        ambiguity = answer_ambiguity(data, asked[1])
        if ambiguity is not None:  # only an offered id, unambiguously, is a selection (D34)
            self._losses.append(Loss("$.result", f"{ambiguity}: answered the agent `cancelled`"))
            self._out.append(response(data.get("id"), CANCELLED_OUTCOME))
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
