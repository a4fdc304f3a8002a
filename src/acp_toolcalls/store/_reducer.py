"""The client-side tool-call store: the reducer every ACP client needs, done once.

Rules this module owns (D46 (upsert to terminals, client store and v1 store); D16-D18, D35): how
each message reaches the rules of the other modules of ``acp_toolcalls.store``, which own everything
that changes stored tool-call or terminal state.

- A ``session/update`` goes by the type of its update: a tool-call update or content chunk
  (``_tool_calls``), a terminal update or output chunk (``_terminals``), a v1 tool call
  (``_v1``). Other updates and messages are ignored; a ``state_update`` is read for its
  ``background`` list only, a ``session_info_update`` or ``subagent_update`` for its title
  (``_sessions``); a v1-only ``tool_call`` on a v2 stream is ignored and reported
  (D17).
- A permission request's ``tool_call`` subject is applied exactly like an update, when the
  request is read (D18); its ``title`` and ``description`` never touch stored state, and a
  ``sessionUpdate`` key in it is dropped and reported (it would replace the tag of the export).
- A batch is applied element by element, in array order (D16); an element that could not be
  read is reported and skipped.
- ``initialize`` and its response choose how raw input is read when the version is ``"auto"``
  (``_version``); ``session/cancel`` and ``tool_call/cancel`` mark calls ended locally.
- Memory is bounded by ``Limits``; every eviction is reported and the export reflects what is
  retained (``_budgets``, ``_sessions``).

Theory of operation: ``apply`` decodes raw input with ``decode_message`` (the version given,
or the one the stream's ``initialize`` exchange negotiated), dispatches on the type of the
message and then of the update through tables, and returns the ``events`` of what changed.
The most common message, a content chunk for a call that has content already within every cap,
is applied inline. A message that cannot be read raises ``DecodeError`` before anything is
touched. The store keeps no clock: the caller passes ``now`` and it is recorded as the call's
last-update time. ``ToolCallStore`` holds its parts, each a class of its own module, and
dispatches to them: its state (``StoreState``: the sessions, bytes counted, titles and
limits), the byte budgets (``Budgets``), the terminals (``Terminals``), the tool calls
(``ToolCalls``) and the v1 input (``V1Input``), which all work on that one state; reading is
the functions of ``_view``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from .. import v1, v2
from .._mypyc import mypyc_attr
from ..codec import (
    DEFAULT_MAX_BYTES,
    FAST_PATH_MISSES,
    Decoded,
    decode_message,
    fast_message_decoder,
)
from ..events import ContentAppended, DiagnosticReported, Event
from ..models import (
    Batch,
    InvalidMessage,
    JsonRpcMessage,
    VersionChoice,
    VersionName,
    extra_fields,
    with_extra_fields,
)
from ._budgets import Budgets
from ._sessions import EvictionHook, StoreState
from ._sizes import size_of
from ._state import SessionState, ToolCallState
from ._structs import Limits, ToolCallView
from ._terminals import Terminals
from ._tool_calls import ToolCalls
from ._v1 import V1Input
from ._version import negotiated_version, store_version
from ._view import (
    call_snapshot,
    call_view,
    open_call_views,
    session_views,
    store_document,
    store_document_json,
)

_V2_MESSAGE = v2.SessionUpdateMessage
_V1_MESSAGE = v1.SessionUpdateMessage
_CHUNK = v2.ToolCallContentChunk
_CONTENT = v2.Content
_TEXT = v2.TextContent


@mypyc_attr(allow_interpreted_subclasses=True)  # a client may subclass it, compiled or not
class ToolCallStore:
    """Applies tool-call traffic, in received order, and answers what a UI needs.

    ``version`` says how raw input (bytes, str, JSON values) is read: ``"v2"`` (the default),
    ``"v1"``, or ``"auto"`` (the ``initialize`` exchange decides: the response wins over the
    request; with none, v2); the ints 1 and 2 mean ``"v1"`` and ``"v2"``. Typed messages carry
    their protocol in their type.
    """

    def __init__(
        self,
        *,
        version: object = None,  # VersionChoice, 1 or 2; anything else: ValueError (compiled too)
        limits: Limits | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        on_evict: EvictionHook | None = None,
    ) -> None:
        self.version: VersionChoice = store_version(version)
        self._state = state = StoreState(limits, on_evict)
        self._budgets = budgets = Budgets(state)
        self._tool_calls = tool_calls = ToolCalls(state, budgets)
        self._terminals = terminals = Terminals(state, budgets)
        self._v1 = v1_input = V1Input(state, budgets, tool_calls, terminals)
        self.max_bytes = max_bytes
        self._negotiated: VersionName | None = None
        self._fast_decode = fast_message_decoder(self.raw_version)
        self._initialize_ids: set[Any] = set()
        self._message_table: dict[type, Callable[[Any, list[Event], float | None], None]] = {
            v2.SessionUpdateMessage: self._v2_message,
            v2.UpdateSessionNotification: self._v2_notification,
            v2.PermissionRequestMessage: self._v2_permission_message,
            v2.RequestPermissionRequest: self._v2_permission,
            v1.SessionUpdateMessage: v1_input.message,
            v1.SessionNotification: v1_input.notification,
            v1.PermissionRequestMessage: v1_input.permission_message,
            v1.RequestPermissionRequest: v1_input.permission,
            JsonRpcMessage: self._other_message,
            Batch: self._batch,
            InvalidMessage: self._invalid_message,
        }
        self._v2_updates: dict[type, Callable[[SessionState, Any, list[Event], Any], None]] = {
            v2.SessionToolCallUpdate: tool_calls.update,
            v2.ToolCallContentChunk: tool_calls.append_chunk,
            v2.TerminalUpdate: terminals.update,
            v2.TerminalOutputChunk: terminals.append_output,
        }
        # Other updates and messages the store reads, by tag and by method.
        self._opaque_updates: dict[str, Callable[[str, Any, list[Event]], None]] = {
            "tool_call": self._stray_tool_call,
            "state_update": tool_calls.state_update,
            "session_info_update": state.session_info,
            "subagent_update": state.subagent_info,
        }
        self._methods: dict[str, Callable[[Mapping[str, Any], list[Event], Any], None]] = {
            "initialize": self._initialize,
            "session/cancel": tool_calls.cancel_session,
            "tool_call/cancel": tool_calls.cancel_call,
        }

    @property
    def raw_version(self) -> VersionName:
        """The protocol raw input is read with now."""
        if self.version != "auto":
            return self.version
        return self._negotiated or "v2"

    @property
    def limits(self) -> Limits:
        """The memory caps (``Limits``); may be replaced at any time."""
        return self._state.limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        if self._state.set_limits(limits):
            self._budgets.remeasure_calls()

    @property
    def sessions(self) -> dict[str, SessionState]:
        """The state of each session, by id."""
        return self._state.sessions

    @property
    def size(self) -> int:
        """Bytes held by every session (``size_of`` measures), which ``max_store_bytes`` caps."""
        return self._state.size

    @property
    def on_evict(self) -> EvictionHook | None:
        """Called with the session id and the state of each session, call or terminal just
        before a cap drops it (a bridge sends what it still holds back about it)."""
        return self._state.on_evict

    @on_evict.setter
    def on_evict(self, on_evict: EvictionHook | None) -> None:
        self._state.on_evict = on_evict

    def tool_call(self, session_id: str, tool_call_id: str) -> ToolCallState | None:
        """The stored state of one call, or ``None``."""
        session = self._state.sessions.get(session_id)
        return session.tool_calls.get(tool_call_id) if session is not None else None

    def snapshot(self, session_id: str, tool_call_id: str) -> v2.ToolCallUpdate:
        """The call's full state as one v2 ``ToolCallUpdate`` (``KeyError`` if unknown)."""
        return call_snapshot(self._state.sessions, session_id, tool_call_id)

    def view(self, session_id: str, tool_call_id: str) -> ToolCallView:
        """What a UI shows for one call (``KeyError`` if unknown)."""
        return call_view(self._state.sessions, session_id, tool_call_id)

    def views(self, session_id: str) -> list[ToolCallView]:
        """Every call of the session, in first-seen order."""
        return session_views(self._state.sessions, session_id)

    def open_calls(self, session_id: str | None = None) -> list[ToolCallView]:
        """Calls not in a final status (of one session, or of all), in first-seen order."""
        return open_call_views(self._state.sessions, session_id)

    def document(self) -> dict[str, Any]:
        """Every session as the ``replay --json`` document, in plain JSON values.

        ``{"sessions": {id: {"toolCalls": [...], "terminals": [...]}}}``: each tool call in the
        v2 ``ToolCallUpdate`` shape, each terminal in the ``terminal_update`` shape without its
        ``sessionUpdate`` tag, both as ``snapshot`` gives them.
        """
        return store_document(self._state.sessions)

    def document_json(self, *, decoded_only: bool = False) -> bytes:
        """``encode(self.document())``: the same bytes, written from each call's ``snapshot``
        without building its plain values first.

        ``decoded_only``: the caller applied nothing but what this package decoded from JSON text
        (raw lines, or what ``decode_message`` gave for them), so nothing held is a NaN or an
        infinite number, and the walk that refuses them is skipped (``codec.encode_decoded``).
        """
        return store_document_json(self._state.sessions, decoded_only)

    def session_title(self, session_id: str) -> str | None:
        """The session's title (its latest ``session_info_update`` or ``subagent_update``
        title), ``None`` when none was given; the session need not hold any call."""
        return self._state.titles.get(session_id)

    def session_titles(self) -> dict[str, str]:
        """Every session title kept (a copy), by session id, the latest set last."""
        return dict(self._state.titles)

    def drop_session(self, session_id: str) -> None:
        """Forget a session and everything in it (a closed session); no events."""
        self._state.drop_session(session_id)

    def touch(self, session_id: str) -> list[Event]:
        """Create the session if it is new and count it as the most recently updated one;
        returns the events (a new session past ``max_sessions`` evicts others). For bridges
        that keep their own per-session state next to the store's."""
        events: list[Event] = []
        self._state.session(session_id, events)
        return events

    def sweep(
        self, session_id: str, status: str = "failed", *, now: float | None = None
    ) -> list[Event]:
        """Mark every open call of the session that is not background work as ended with
        ``status`` by the client (a turn-end helper).

        The mark is the client's own conclusion, an overlay on the view (``ended_locally``),
        never protocol state: the call's status stays what the agent said, so ``snapshot``,
        ``document``, ``open_calls`` and the bridges do not see it, and the agent's next status
        for the call replaces it (D46 (client store), D14, D15). A client calls it when it decides
        the turn is over, for example after an idle ``state_update``; calls the latest background
        list names (or whose terminal it names) are left alone. ``now`` is recorded as each marked
        call's last-update time. Returns one ``ToolCallEndedLocally`` per call marked.
        """
        return self._tool_calls.sweep(session_id, status, now)

    def apply(self, message: Any, *, now: float | None = None) -> list[Event]:
        """Apply one message (or batch) and return what changed, in order.

        ``message`` is raw bytes or text of one JSON-RPC message or batch, its decoded JSON
        value, a ``Decoded`` or a typed message of ``acp_toolcalls.v1``/``v2`` (a whole
        ``session/update`` or ``session/request_permission``, or their params). ``now`` is
        recorded as the last-update time of what the message touches.

        Raises ``DecodeError`` for raw input that cannot be read at all; then nothing changed.
        """
        if type(message) is bytes and len(message) <= self.max_bytes:
            try:  # the fast path: a valid line, no salvage needed
                message = self._fast_decode(message)
            except FAST_PATH_MISSES:
                message = decode_message(message, version=self.raw_version)
        elif isinstance(message, (bytes, bytearray, memoryview, str, dict, list)):
            message = decode_message(message, version=self.raw_version, max_bytes=self.max_bytes)
        events: list[Event]
        if type(message) is _V2_MESSAGE:  # the common message, dispatched inline
            params = message.params
            update = params.update
            state = self._state
            session = state.sessions.get(params.session_id)
            if type(update) is _CHUNK and session is not None:
                # The most common update of all: a chunk for a call that has content already,
                # within every cap. Anything else takes `append_chunk`, which does the same.
                if session is not state.current:
                    state.switches += 1
                    session.touched = state.switches
                    state.current = session
                tc = session.tool_calls.get(update.tool_call_id)
                if tc is not None:
                    content = tc.fields.get("content")
                    item = update.content  # chunk `_meta` is chunk-scoped: not stored
                    inner = item.content if type(item) is _CONTENT else None
                    if type(inner) is _TEXT and inner.annotations is UNSET and inner.meta is UNSET:
                        text = inner.text  # what size_of says of a text block, said here
                        size = 209 + len(text) if text.isascii() else 236 + 4 * len(text)
                    else:
                        size = size_of(item)
                    if type(content) is list and size <= state.value_cap:
                        content.append(item)
                        sizes = tc.sizes
                        sizes["content"] = sizes.get("content", 0) + size
                        tc.size += size
                        session.size += size
                        state.size += size
                        if now is not None:
                            tc.updated_at = now
                        events = [
                            ContentAppended(session.session_id, tc.tool_call_id, len(content) - 1)
                        ]
                        if len(content) > state.item_cap:
                            self._budgets.cap_content(session, tc, events)
                        if (
                            tc.size > state.call_cap
                            or session.size > state.session_cap
                            or state.size > state.store_cap
                        ):
                            self._budgets.enforce(session, tc, events)
                        return events
                events = []
                self._tool_calls.append_chunk(session, update, events, now)
                return events
            apply_update = self._v2_updates.get(type(update))
            if apply_update is not None:
                events = []
                if session is None or session is not state.current:
                    session = state.session(params.session_id, events)
                apply_update(session, update, events, now)
                return events
        elif type(message) is _V1_MESSAGE:  # a v1 stream's common message
            events = []
            self._v1.notification(message.params, events, now)
            return events
        events = []
        if type(message) is Decoded:
            if message.diagnostics:
                session_id = _session_of(message.value)
                for diagnostic in message.diagnostics:
                    events.append(
                        DiagnosticReported(session_id, diagnostic.path, diagnostic.reason)
                    )
            message = message.value
        handler = self._message_table.get(type(message))
        if handler is None:
            handler = self._lookup(message)
        handler(message, events, now)
        return events

    def apply_update(
        self, session_id: str, update: Any, *, now: float | None = None
    ) -> list[Event]:
        """Apply one typed v2 ``session/update`` payload (``SessionToolCallUpdate``,
        ``ToolCallContentChunk``, ``TerminalUpdate``, ``TerminalOutputChunk``) of a session,
        without a message around it; any other update is ignored. For bridges and proxies
        that already hold decoded updates."""
        events: list[Event] = []
        handler = self._v2_updates.get(type(update))
        if handler is None:
            self._v2_notification(
                v2.UpdateSessionNotification(session_id=session_id, update=update), events, now
            )
            return events
        state = self._state
        session = state.sessions.get(session_id)
        if session is None or session is not state.current:
            session = state.session(session_id, events)
        handler(session, update, events, now)
        return events

    def _lookup(self, message: Any) -> Callable[[Any, list[Event], float | None], None]:
        # Objects with unknown keys are instances of a same-named subclass: find the base.
        for cls in type(message).__mro__[1:]:
            found = self._message_table.get(cls)
            if found is not None:
                return found
        raise TypeError(
            f"cannot apply a {type(message).__name__}: expected raw JSON, a Decoded or a "
            "v1/v2 session/update or session/request_permission message"
        )

    def _batch(self, batch: Batch, events: list[Event], now: float | None) -> None:
        for item in batch.items:  # in array order (D16)
            if isinstance(item, (bytes, str)):  # never produced by the codec; be safe
                continue
            handler = self._message_table.get(type(item)) or self._lookup(item)
            handler(item, events, now)

    def _invalid_message(self, item: InvalidMessage, events: list[Event], _now: Any) -> None:
        error = item.error
        events.append(DiagnosticReported("", error.path, f"batch element skipped: {error.reason}"))

    def _other_message(self, message: JsonRpcMessage, events: list[Event], now: Any) -> None:
        data = message.data
        method = data.get("method")
        if method is None:
            if _hashable(data.get("id")) in self._initialize_ids:
                result = data.get("result")
                version = result.get("protocolVersion") if isinstance(result, dict) else None
                negotiated = negotiated_version(version)
                if negotiated is not None:
                    self._negotiate(negotiated)  # the response wins
            return
        handler = self._methods.get(method) if isinstance(method, str) else None
        if handler is not None:
            handler(data, events, now)

    def _initialize(self, data: Mapping[str, Any], _events: Any, _now: Any) -> None:
        params = data.get("params")
        version = params.get("protocolVersion") if isinstance(params, dict) else None
        negotiated = negotiated_version(version)
        if negotiated is not None and self._negotiated is None:
            self._negotiate(negotiated)
        if "id" in data:
            self._initialize_ids.add(_hashable(data["id"]))

    def _negotiate(self, version: VersionName) -> None:
        self._negotiated = version
        self._fast_decode = fast_message_decoder(self.raw_version)

    def _v2_message(self, message: v2.SessionUpdateMessage, events: list[Event], now: Any) -> None:
        self._v2_notification(message.params, events, now)

    def _v2_notification(
        self, params: v2.UpdateSessionNotification, events: list[Event], now: Any
    ) -> None:
        update = params.update
        handler = self._v2_updates.get(type(update))
        if handler is None:
            if isinstance(update, v2.OpaqueSessionUpdate):
                read = self._opaque_updates.get(update.tag)
                if read is not None:
                    read(params.session_id, update, events)
                return
            for cls in type(update).__mro__[1:]:  # a model with unknown keys (a subclass)
                handler = self._v2_updates.get(cls)
                if handler is not None:
                    break
            else:
                return
        handler(self._state.session(params.session_id, events), update, events, now)

    def _v2_permission_message(
        self, message: v2.PermissionRequestMessage, events: list[Event], now: Any
    ) -> None:
        self._v2_permission(message.params, events, now)

    def _v2_permission(
        self, params: v2.RequestPermissionRequest, events: list[Event], now: Any
    ) -> None:
        subject = params.subject
        if isinstance(subject, v2.ToolCallPermissionSubject):
            call = subject.tool_call
            extra = extra_fields(call)
            if "sessionUpdate" in extra:
                # Kept, it would replace the tag of the `tool_call_update` the state is exported
                # and replayed as (D35): the snapshot would no longer recreate the call.
                events.append(
                    DiagnosticReported(
                        params.session_id,
                        "$.params.subject.toolCall.sessionUpdate",
                        "a tool call has no `sessionUpdate` key (it is the update's tag): ignored",
                        "ignored",
                    )
                )
                kept = {key: value for key, value in extra.items() if key != "sessionUpdate"}
                call = with_extra_fields(v2.ToolCallUpdate, kept, **msgspec.structs.asdict(call))
            session = self._state.session(params.session_id, events)
            self._tool_calls.update(session, call, events, now)

    def _stray_tool_call(self, session_id: str, _update: Any, events: list[Event]) -> None:
        events.append(
            DiagnosticReported(
                session_id,
                "$.params.update.sessionUpdate",
                "v1-only `tool_call` update on a v2 stream: ignored",
                "ignored",
            )
        )


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, type(None))) else repr(value)


def _session_of(value: Any) -> str:
    params = getattr(value, "params", None)
    session_id = getattr(params, "session_id", "")
    return session_id if isinstance(session_id, str) else ""
