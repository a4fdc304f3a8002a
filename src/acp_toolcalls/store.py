"""The client-side tool-call store: the reducer every ACP client needs, done once.

Rules this module owns (shared/spec/TOOL-CALLS.md 7.1-7.6, 7.11 and 8.7; decisions D1-D4, D9,
D11, D13-D15, D17, D18, D20, D22, D23, D32, D35). Everything that changes stored tool-call or
terminal state lives here.

- State is per ``sessionId``: tool calls by ``toolCallId`` in first-seen order, terminals by
  ``terminalId``. A session exists once it has seen a tool call or a terminal.
- Upsert: the first reference to an id (``tool_call_update``, ``tool_call_content_chunk``, a
  permission subject) creates the call with protocol defaults; there is no "not found" (D1).
- Patch fields: omitted leaves the value, ``null`` clears (stored as ``None``), a value
  replaces; ``content`` and ``locations`` are whole arrays, stored as received (``[]`` stays
  ``[]``, ``null`` stays ``None``: D2). An invalid value was already read as omitted (D11).
- ``_meta`` patches by top-level key, a key set to ``null`` is removed, ``null`` clears the
  whole map (7.3, D13). Unknown extra fields of an update are kept and patched like fields.
- A chunk appends its one item (absent or ``null`` content becomes ``[item]``); a later
  replacement array replaces everything, chunks included; its ``_meta`` is chunk-scoped.
- A permission request's ``tool_call`` subject is applied exactly like an update, when the
  request is read (D18); its ``title`` and ``description`` never touch stored state.
- v1 input goes through the v1 -> v2 mapping (``acp_toolcalls.v1_to_v2``, spec 9.3): a v1
  ``null`` changes nothing, a repeated v1 ``tool_call`` merges (D9). A ``kind`` or ``status``
  string v1 does not define (``v1.TOOL_CALL_ENUMS``: a leaked ``cancelled``, ``paused``, a
  custom kind) is not applied, as v1 reads it (the default on a create, no change on an
  update), and is kept beside the state only to be sent on (``snapshot``; D32). v2 input is
  applied as received (v2 enums are open).
- Terminals: same patch rules; ``output`` is a snapshot that replaces every stored byte, each
  ``terminal_output_chunk`` is base64-decoded on its own and appended; invalid base64 in a
  chunk drops that chunk; in a snapshot it was already read as omitted by the decoder (D22).
- The store applies any status as received and never invents one (D14, D23); a final call
  given a non-final status is applied and reported (``ToolCallReopened``, D20).
- What the client concludes on its own is a local overlay on the view, never stored as
  protocol state (7.11, D14, D15): ``session/cancel`` marks every open call not listed as
  background work (the latest ``state_update``'s ``background``) ``ended_locally="cancelled"``,
  ``tool_call/cancel`` its one call, ``sweep`` what it is given; the agent's next status for
  the call (a value or ``null``) replaces the mark. ``snapshot``, ``document`` and the bridges
  never see it.
- Memory is bounded by ``Limits``; every eviction is reported (``LimitReached``,
  ``ToolCallEvicted``, ``TerminalEvicted``, ``SessionEvicted``) and the export reflects what
  is retained. Bytes are measured as values are stored (``state.size_of``), per value, call,
  session and store: a cut value says what it omitted; finished calls, exited terminals and
  idle sessions go before open ones; ``on_evict`` sees each dropped state first.
- Other ``session/update`` variants and other messages are ignored (a ``state_update`` is read
  for its ``background`` list only); a v1-only ``tool_call`` on a v2 stream is ignored and
  reported (D17).

Theory of operation: ``apply`` decodes raw input with ``decode_message`` (the protocol given,
or the one the stream's ``initialize`` exchange negotiated), dispatches on the type of the
message and then of the update through tables, and returns the ``events`` of what changed.
A message that cannot be read raises ``DecodeError`` before anything is touched. The store
keeps no clock: the caller passes ``now`` and it is recorded as the call's last-update time.
"""

from __future__ import annotations

import heapq
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal, cast

import msgspec
from msgspec import UNSET

from . import v1, v2
from .codec import (
    DEFAULT_MAX_BYTES,
    FAST_PATH_MISSES,
    Decoded,
    decode_message,
    encode,
    encode_decoded,
    fast_message_decoder,
    to_builtins,
)
from .events import (
    ContentAppended,
    DiagnosticReported,
    Event,
    LimitReached,
    SessionEvicted,
    TerminalCleared,
    TerminalCreated,
    TerminalEvicted,
    TerminalOutputAppended,
    TerminalPatched,
    ToolCallCleared,
    ToolCallCreated,
    ToolCallEndedLocally,
    ToolCallEvicted,
    ToolCallPatched,
    ToolCallReopened,
)
from .jsonrpc import Batch, InvalidMessage, JsonRpcMessage
from .state import (
    COLLECTION_FIELDS,
    Limits,
    SessionState,
    TerminalState,
    ToolCallState,
    ToolCallView,
    omitted,
    patch_meta,
    size_of,
    trim_block,
    view_of,
)
from .v1_to_v2 import tool_call_to_v2, tool_call_update_to_v2
from .v2 import FINAL_STATUSES, background_work
from .wire import base64_bytes, extra_fields, replace, with_extra_fields

__all__ = ["StoreProtocol", "ToolCallStore"]

StoreProtocol = Literal["v1", "v2", "auto"]


def _compile_patcher(cls: type[msgspec.Struct], skip: frozenset[str]) -> _Patcher:
    """Compile ``patch(update, fields, patched, cleared)`` for one update type.

    It copies every field of ``update`` that is not ``UNSET`` into ``fields`` (keyed by wire
    name) and lists the wire name in ``cleared`` (``null``, or ``[]`` for a collection) or in
    ``patched``. The code is generated from the struct's field table and unrolled: the hot
    path of the store, about twice as fast as a loop over the fields. Collections are copied,
    because chunks later append to the stored list.
    """
    lines = ["def patch(update, fields, patched, cleared):"]
    for field in msgspec.structs.fields(cls):
        name, wire = field.name, field.encode_name
        if wire in skip:
            continue
        lines += [f"    value = update.{name}", "    if value is not UNSET:"]
        if wire in COLLECTION_FIELDS:
            lines += [
                f"        fields[{wire!r}] = value if value is None else list(value)",
                f"        (patched if value else cleared).append({wire!r})",
            ]
        else:
            lines += [
                f"        fields[{wire!r}] = value",
                f"        (cleared if value is None else patched).append({wire!r})",
            ]
    namespace: dict[str, Any] = {"UNSET": UNSET}
    exec("\n".join(lines), namespace)
    patch: _Patcher = namespace["patch"]
    return patch


_Patcher = Callable[[Any, dict[str, Any], list[str], list[str]], None]
_patch_call = _compile_patcher(v2.ToolCallUpdate, frozenset({"toolCallId", "_meta"}))
_patch_terminal = _compile_patcher(v2.TerminalUpdate, frozenset({"terminalId", "_meta", "output"}))
_PLAIN_UPDATES = frozenset({v2.ToolCallUpdate, v2.SessionToolCallUpdate})
"""Update types that never carry unknown keys (those come as same-named subclasses)."""
_V1_ENUMS = tuple(v1.TOOL_CALL_ENUMS.items())
_V2_MESSAGE = v2.SessionUpdateMessage
_V1_MESSAGE = v1.SessionUpdateMessage
_V1_CREATE = v1.ToolCall
_V1_UPDATE = v1.SessionToolCallUpdate
_V1_KINDS = v1.TOOL_CALL_ENUMS["kind"]
_V1_STATUSES = v1.TOOL_CALL_ENUMS["status"]
_CHUNK = v2.ToolCallContentChunk
_CONTENT = v2.Content
_TEXT = v2.TextContent
_NO_CAP = sys.maxsize
_ABSENT: Any = object()


def _cap(cap: int | None) -> int:
    """A cap as the hot path compares with it: disabled (``None``) is larger than any size."""
    return _NO_CAP if cap is None else cap


def _protocol_of(version: object) -> Literal["v1", "v2"] | None:
    if isinstance(version, int) and not isinstance(version, bool):
        return "v1" if version <= 1 else "v2"
    return None


class ToolCallStore:
    """Applies tool-call traffic, in received order, and answers what a UI needs.

    ``protocol`` says how raw input (bytes, str, JSON values) is read: ``"v2"``, ``"v1"``, or
    ``"auto"`` (the ``initialize`` exchange decides: the response wins over the request; with
    none, v2). Typed messages carry their protocol in their type.
    """

    def __init__(
        self,
        *,
        protocol: StoreProtocol = "v2",
        limits: Limits | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        on_evict: Callable[[str, SessionState | ToolCallState | TerminalState], None] | None = None,
    ) -> None:
        if protocol not in ("v1", "v2", "auto"):
            raise ValueError(f"unknown protocol {protocol!r}: expected 'v1', 'v2' or 'auto'")
        self.protocol: StoreProtocol = protocol
        self.limits = limits if limits is not None else Limits()  # (the caps below too)
        self.sessions: dict[str, SessionState] = {}
        self.size = 0
        """Bytes held by every session (``size_of`` measures), which ``max_store_bytes`` caps."""
        self.on_evict = on_evict
        """Called with the session id and the state of each session, call or terminal just
        before a cap drops it (a bridge sends what it still holds back about it)."""
        self.max_bytes = max_bytes
        self._negotiated: Literal["v1", "v2"] | None = None
        self._fast_decode = fast_message_decoder(self.raw_protocol)
        self._current: SessionState | None = None  # the session the last message was about
        self._switches = 0  # counts switches between sessions: `SessionState.touched`
        self._initialize_ids: set[Any] = set()
        self._message_table: dict[type, Callable[[Any, list[Event], float | None], None]] = {
            v2.SessionUpdateMessage: self._v2_message,
            v2.UpdateSessionNotification: self._v2_notification,
            v2.PermissionRequestMessage: self._v2_permission_message,
            v2.RequestPermissionRequest: self._v2_permission,
            v1.SessionUpdateMessage: self._v1_message,
            v1.SessionNotification: self._v1_notification,
            v1.PermissionRequestMessage: self._v1_permission_message,
            v1.RequestPermissionRequest: self._v1_permission,
            JsonRpcMessage: self._other_message,
            Batch: self._batch,
            InvalidMessage: self._invalid_message,
        }
        self._v2_updates: dict[type, Callable[[SessionState, Any, list[Event], Any], None]] = {
            v2.SessionToolCallUpdate: self._update_call,
            v2.ToolCallContentChunk: self._append_chunk,
            v2.TerminalUpdate: self._update_terminal,
            v2.TerminalOutputChunk: self._append_output,
        }
        # Other updates and messages the store reads, by tag and by method.
        self._opaque_updates: dict[str, Callable[[str, Any, list[Event]], None]] = {
            "tool_call": self._stray_tool_call,
            "state_update": self._state_update,
        }
        self._methods: dict[str, Callable[[Mapping[str, Any], list[Event], Any], None]] = {
            "initialize": self._initialize,
            "session/cancel": self._cancel_session,
            "tool_call/cancel": self._cancel_call,
        }

    @property
    def limits(self) -> Limits:
        """The memory caps (``Limits``); may be replaced at any time."""
        return self._limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        self._limits = limits
        # What the hot path compares with: a disabled cap never compares greater.
        self._item_cap = _cap(limits.max_content_items)
        self._value_cap = _cap(limits.max_value_bytes)
        self._call_cap = _cap(limits.max_call_bytes)
        self._session_cap = _cap(limits.max_session_bytes)
        self._store_cap = _cap(limits.max_store_bytes)

    # ----------------------------------------------------------------------------------------
    # Input

    @property
    def raw_protocol(self) -> Literal["v1", "v2"]:
        """The protocol raw input is read with now."""
        if self.protocol != "auto":
            return self.protocol
        return self._negotiated or "v2"

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
                message = decode_message(message, protocol=self.raw_protocol)
        elif isinstance(message, (bytes, bytearray, memoryview, str, dict, list)):
            message = decode_message(message, protocol=self.raw_protocol, max_bytes=self.max_bytes)
        events: list[Event]
        if type(message) is _V2_MESSAGE:  # the common message, dispatched inline
            params = message.params
            update = params.update
            session = self.sessions.get(params.session_id)
            if type(update) is _CHUNK and session is not None:
                # The most common update of all: a chunk for a call that has content already,
                # within every cap. Anything else takes `_append_chunk`, which does the same.
                if session is not self._current:
                    self._switches += 1
                    session.touched = self._switches
                    self._current = session
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
                    if type(content) is list and size <= self._value_cap:
                        content.append(item)
                        sizes = tc.sizes
                        sizes["content"] = sizes.get("content", 0) + size
                        tc.size += size
                        session.size += size
                        self.size += size
                        if now is not None:
                            tc.updated_at = now
                        events = [
                            ContentAppended(session.session_id, tc.tool_call_id, len(content) - 1)
                        ]
                        if len(content) > self._item_cap:
                            self._cap_content(session, tc, events)
                        if (
                            tc.size > self._call_cap
                            or session.size > self._session_cap
                            or self.size > self._store_cap
                        ):
                            self._budgets(session, tc, events)
                        return events
                events = []
                self._append_chunk(session, update, events, now)
                return events
            apply_update = self._v2_updates.get(type(update))
            if apply_update is not None:
                events = []
                if session is None or session is not self._current:
                    session = self._session(params.session_id, events)
                apply_update(session, update, events, now)
                return events
        elif type(message) is _V1_MESSAGE:  # a v1 stream's common message
            events = []
            self._v1_notification(message.params, events, now)
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
        session = self.sessions.get(session_id)
        if session is None or session is not self._current:
            session = self._session(session_id, events)
        handler(session, update, events, now)
        return events

    def drop_session(self, session_id: str) -> None:
        """Forget a session and everything in it (a closed session); no events."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.size -= session.size
            if session is self._current:
                self._current = None

    def touch(self, session_id: str) -> list[Event]:
        """Create the session if it is new and count it as the most recently updated one;
        returns the events (a new session past ``max_sessions`` evicts others). For bridges
        that keep their own per-session state next to the store's."""
        events: list[Event] = []
        self._session(session_id, events)
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
                negotiated = _protocol_of(version)
                if negotiated is not None:
                    self._negotiate(negotiated)  # the response wins
            return
        handler = self._methods.get(method) if isinstance(method, str) else None
        if handler is not None:
            handler(data, events, now)

    def _initialize(self, data: Mapping[str, Any], _events: Any, _now: Any) -> None:
        params = data.get("params")
        version = params.get("protocolVersion") if isinstance(params, dict) else None
        negotiated = _protocol_of(version)
        if negotiated is not None and self._negotiated is None:
            self._negotiate(negotiated)
        if "id" in data:
            self._initialize_ids.add(_hashable(data["id"]))

    def _negotiate(self, protocol: Literal["v1", "v2"]) -> None:
        self._negotiated = protocol
        self._fast_decode = fast_message_decoder(self.raw_protocol)

    # ----------------------------------------------------------------------------------------
    # v2

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
        handler(self._session(params.session_id, events), update, events, now)

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
            self._update_call(self._session(params.session_id, events), call, events, now)

    def _stray_tool_call(self, session_id: str, _update: Any, events: list[Event]) -> None:
        events.append(
            DiagnosticReported(
                session_id,
                "$.params.update.sessionUpdate",
                "v1-only `tool_call` update on a v2 stream: ignored",
                "ignored",
            )
        )

    def _state_update(self, session_id: str, update: v2.OpaqueSessionUpdate, _events: Any) -> None:
        # Only its background list is read: which open calls a cancel does not cover (D15).
        session = self.sessions.get(session_id)
        if session is not None:
            session.background = background_work(update.data)

    # ----------------------------------------------------------------------------------------
    # The client's own conclusions: a local overlay on the view, never protocol state (D15)

    def _cancel_session(self, data: Mapping[str, Any], events: list[Event], now: Any) -> None:
        params = data.get("params")
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is not None:
            self._end_locally(session, session.tool_calls.values(), "cancelled", events, now)

    def _cancel_call(self, data: Mapping[str, Any], events: list[Event], now: Any) -> None:
        params = data.get("params")
        if not isinstance(params, dict):
            return
        session_id, tool_call_id = params.get("sessionId"), params.get("toolCallId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None or not isinstance(tool_call_id, str):
            return
        tc = session.tool_calls.get(tool_call_id)
        if tc is not None:
            self._end_locally(session, (tc,), "cancelled", events, now, background=True)

    def _end_locally(
        self,
        session: SessionState,
        calls: Iterable[ToolCallState],
        status: str,
        events: list[Event],
        now: Any,
        *,
        background: bool = False,
    ) -> None:
        """Mark the open ones of ``calls`` ended with ``status`` by the client; unless
        ``background``, not those the latest background list names."""
        for tc in calls:
            if tc.is_final or tc.ended_locally == status:
                continue
            if not background and session.in_background(tc):
                continue
            tc.ended_locally = status
            if now is not None:
                tc.updated_at = now
            events.append(ToolCallEndedLocally(session.session_id, tc.tool_call_id, status))

    # ----------------------------------------------------------------------------------------
    # v1: mapped to v2 patches (spec 9.3), then the same rules

    def _v1_message(self, message: v1.SessionUpdateMessage, events: list[Event], now: Any) -> None:
        self._v1_notification(message.params, events, now)

    def _v1_notification(
        self, params: v1.SessionNotification, events: list[Event], now: Any
    ) -> None:
        kind = type(params.update)
        if kind is _V1_UPDATE:  # the common update, told by its exact type
            create = False
        elif kind is _V1_CREATE or isinstance(params.update, v1.ToolCall):
            create = True
        elif isinstance(params.update, v1.ToolCallUpdate):
            create = False
        else:
            return
        update = cast("v1.ToolCall | v1.ToolCallUpdate", params.update)
        session = self.sessions.get(params.session_id)
        if session is None or session is not self._current:
            session = self._session(params.session_id, events)
        known = session.tool_calls.get(update.tool_call_id)
        if create:  # a repeated one merges (D9)
            patch, losses = tool_call_to_v2(cast(v1.ToolCall, update), repeated=known is not None)
        else:
            patch, losses = tool_call_update_to_v2(cast(v1.ToolCallUpdate, update))
        if losses:
            for loss in losses:
                path = "$.params.update" + loss.path[1:]
                events.append(DiagnosticReported(params.session_id, path, loss.reason, "lossy"))
        raw = _unknown_v1_strings(update)
        if raw is None and (known is None or not create):
            self._update_call(session, patch, events, now)  # the common case
            return
        if create and known is not None and known.is_final:
            # A repeated create of a finished call: merged (D9) but reported (D20), even when
            # its default `pending` status leaves the stored status final.
            status = "pending" if raw and "status" in raw else update.status
            events.append(
                ToolCallReopened(
                    params.session_id,
                    update.tool_call_id,
                    known.status,
                    status if isinstance(status, str) else "pending",
                )
            )
        self._v1_update_call(session, patch, raw, events, now)

    def _v1_permission_message(
        self, message: v1.PermissionRequestMessage, events: list[Event], now: Any
    ) -> None:
        self._v1_permission(message.params, events, now)

    def _v1_permission(
        self, params: v1.RequestPermissionRequest, events: list[Event], now: Any
    ) -> None:
        patch, losses = tool_call_update_to_v2(params.tool_call)  # D33
        for loss in losses:
            path = "$.params.toolCall" + loss.path[1:]
            events.append(DiagnosticReported(params.session_id, path, loss.reason, "lossy"))
        session = self._session(params.session_id, events)
        self._v1_update_call(session, patch, _unknown_v1_strings(params.tool_call), events, now)

    def _v1_update_call(
        self,
        session: SessionState,
        patch: v2.ToolCallUpdate,
        raw: dict[str, str] | None,
        events: list[Event],
        now: Any,
    ) -> None:
        """Apply a v1 patch as v1 reads it: its ``kind``/``status`` strings that v1 does not
        define (``raw``) are not applied, only kept to be sent on (D32)."""
        if raw is None:
            self._update_call(session, patch, events, now)
            return
        self._update_call(session, replace(patch, **dict.fromkeys(raw, UNSET)), events, now)
        tc = session.tool_calls.get(patch.tool_call_id)
        if tc is None:  # dropped by a cap on the way
            return
        before = _raw_size(tc.raw)
        held = tc.raw if tc.raw is not None else {}
        cap = self.limits.max_value_bytes
        changed: list[str] = []
        for name, value in raw.items():
            size = size_of(value)
            if cap is not None and size > cap:
                value, _ = _cut(value, size, cap)
                detail = f"`{name}`: {size:,} bytes, over the cap of {cap:,}: cut"
                _limit_reached(
                    events, session.session_id, "max_value_bytes", tc.tool_call_id, detail
                )
            if held.get(name) != value:
                changed.append(name)
            held[name] = value
        tc.raw = held
        if changed:  # what is sent on (snapshot, document) changed, though the view did not
            events.append(ToolCallPatched(session.session_id, tc.tool_call_id, tuple(changed)))
        self._grow(session, _raw_size(held) - before, tc)
        self._budgets(session, tc, events)

    # ----------------------------------------------------------------------------------------
    # Tool calls

    def _session(self, session_id: str, events: list[Event]) -> SessionState:
        """The session (created on first sight), counted as the one most recently updated."""
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = SessionState(session_id)
            self.size += session.size
            cap = self.limits.max_sessions
            if cap is not None and len(self.sessions) > cap:
                self._evict_sessions(session, cap, events)
        if session is not self._current:
            self._switches += 1
            session.touched = self._switches
            self._current = session
        return session

    def _evict_sessions(self, new: SessionState, cap: int, events: list[Event]) -> None:
        count = min(trim_block(cap), len(self.sessions) - 1)
        others = (s for s in self.sessions.values() if s is not new)
        victims = heapq.nsmallest(count, others, key=lambda s: (s.live, s.touched))
        self._drop_sessions(victims, events)
        shown = ", ".join(repr(v.session_id) for v in victims[:3])
        more = f" and {len(victims) - 3} more" if len(victims) > 3 else ""
        _limit_reached(
            events,
            new.session_id,
            "max_sessions",
            new.session_id,
            f"evicted {len(victims)} session(s), idle and least recently updated first "
            f"({shown}{more}; cap {cap})",
        )

    def _drop_sessions(self, victims: list[SessionState], events: list[Event]) -> None:
        for victim in victims:
            if self.on_evict is not None:
                self.on_evict(victim.session_id, victim)
            del self.sessions[victim.session_id]
            self.size -= victim.size
            if victim is self._current:
                self._current = None
            events.append(
                SessionEvicted(victim.session_id, len(victim.tool_calls), len(victim.terminals))
            )

    def _call(self, session: SessionState, tool_call_id: str, events: list[Event]) -> ToolCallState:
        tc = session.tool_calls.get(tool_call_id)
        return tc if tc is not None else self._new_call(session, tool_call_id, events)

    def _new_call(
        self, session: SessionState, tool_call_id: str, events: list[Event]
    ) -> ToolCallState:
        tc = session.tool_calls[tool_call_id] = ToolCallState(tool_call_id)
        self._grow(session, tc.size)
        events.append(ToolCallCreated(session.session_id, tool_call_id))
        cap = self.limits.max_tool_calls
        if cap is not None and len(session.tool_calls) > cap:
            self._evict_calls(session, cap, events)
        return tc

    def _update_call(
        self, session: SessionState, update: v2.ToolCallUpdate, events: list[Event], now: Any
    ) -> None:
        tool_call_id = update.tool_call_id
        tc = session.tool_calls.get(tool_call_id)
        if tc is None:
            tc = self._new_call(session, tool_call_id, events)
        fields = tc.fields
        previous = fields.get("status")
        patched: list[str] = []
        cleared: list[str] = []
        _patch_call(update, fields, patched, cleared)
        meta = update.meta
        if meta is not UNSET:
            tc.meta = patch_meta(tc.meta, meta)
            (cleared if meta is None else patched).append("_meta")
        if type(update) not in _PLAIN_UPDATES:
            extra = extra_fields(update)
            if extra:
                if tc.extra is None:
                    tc.extra = {}
                tc.extra.update(extra)
                for key, value in extra.items():
                    (cleared if value is None else patched).append(key)
        if now is not None:
            tc.updated_at = now
        if tc.raw is not None or tc.ended_locally is not None:
            self._agent_spoke(session, tc, patched, cleared)
        sid = session.session_id
        if patched:
            events.append(ToolCallPatched(sid, tool_call_id, tuple(patched)))
        if cleared:
            events.append(ToolCallCleared(sid, tool_call_id, tuple(cleared)))
        if previous in FINAL_STATUSES and fields.get("status") not in FINAL_STATUSES:
            events.append(ToolCallReopened(sid, tool_call_id, previous, tc.status))
        if patched:
            self._measure_call(session, tc, patched, events)
        if cleared:
            self._measure_call(session, tc, cleared, events)
        if update.content and len(fields["content"]) > self._item_cap:
            self._cap_content(session, tc, events)
        if (
            tc.size > self._call_cap
            or session.size > self._session_cap
            or self.size > self._store_cap
        ):
            self._budgets(session, tc, events)

    def _agent_spoke(
        self, session: SessionState, tc: ToolCallState, patched: list[str], cleared: list[str]
    ) -> None:
        """What an applied value replaces beside the state: a kept v1 string of that field, and
        the client's own conclusion once the agent sets a status (D15: the agent wins)."""
        raw = tc.raw
        if raw is not None:
            before = _raw_size(raw)
            for name in [name for name in raw if name in patched or name in cleared]:
                del raw[name]
            if not raw:
                tc.raw = None
            self._grow(session, _raw_size(tc.raw) - before, tc)
        if tc.ended_locally is not None and ("status" in patched or "status" in cleared):
            tc.ended_locally = None

    def _append_chunk(
        self,
        session: SessionState,
        chunk: v2.ToolCallContentChunk,
        events: list[Event],
        now: Any,
    ) -> None:
        tc = self._call(session, chunk.tool_call_id, events)
        content = tc.fields.get("content")
        if type(content) is not list:
            content = tc.fields["content"] = []
        item = chunk.content  # chunk `_meta` is chunk-scoped: not stored
        size = size_of(item)
        if size > self._value_cap:
            item, size = self._cut_item(session, tc, item, size, self._value_cap, events)
        content.append(item)
        sizes = tc.sizes
        sizes["content"] = sizes.get("content", 0) + size
        self._grow(session, size, tc)
        if now is not None:
            tc.updated_at = now
        events.append(ContentAppended(session.session_id, tc.tool_call_id, len(content) - 1))
        if len(content) > self._item_cap:
            self._cap_content(session, tc, events)
        if (
            tc.size > self._call_cap
            or session.size > self._session_cap
            or self.size > self._store_cap
        ):
            self._budgets(session, tc, events)

    def _cap_content(self, session: SessionState, tc: ToolCallState, events: list[Event]) -> None:
        cap = self.limits.max_content_items
        content = tc.fields["content"]
        if cap is None or len(content) <= cap:
            return
        head, excess = _middle(len(content), cap)
        # What goes is measured, not what stays: the content's size is the sum of its items'.
        freed = sum(map(size_of, content[head : head + excess]))
        del content[head : head + excess]
        tc.dropped_items += excess
        tc.dropped_at = head
        tc.sizes["content"] = tc.sizes.get("content", 0) - freed
        self._grow(session, -freed, tc)
        _limit_reached(
            events,
            session.session_id,
            "max_content_items",
            tc.tool_call_id,
            f"dropped {excess} content item(s) after the first {head} "
            f"(cap {cap}; {tc.dropped_items} dropped in all)",
        )

    def _dropped_items(self, session: SessionState, tc: ToolCallState, head: int, n: int) -> None:
        """``n`` content items went from the middle, after the first ``head``: measured again."""
        tc.dropped_items += n
        tc.dropped_at = head
        content = tc.fields.get("content")
        size = sum(size_of(item) for item in content) if isinstance(content, list) else 0
        self._grow(session, size - tc.sizes.get("content", 0), tc)
        tc.sizes["content"] = size

    def _evict_calls(self, session: SessionState, cap: int, events: list[Event]) -> None:
        count = min(trim_block(cap), len(session.tool_calls) - 1)
        victims = [tc for tc in session.tool_calls.values() if tc.is_final][:count]
        if len(victims) < count:  # not enough finished calls: the oldest open ones go too
            chosen = {id(tc) for tc in victims}
            for tc in session.tool_calls.values():
                if len(victims) == count:
                    break
                if id(tc) not in chosen:
                    victims.append(tc)
        self._drop_calls(session, victims, events)
        _limit_reached(
            events,
            session.session_id,
            "max_tool_calls",
            session.session_id,
            f"evicted {len(victims)} tool call(s) (cap {cap} per session)",
        )

    def _drop_calls(
        self, session: SessionState, victims: list[ToolCallState], events: list[Event]
    ) -> None:
        for tc in victims:
            if self.on_evict is not None:
                self.on_evict(session.session_id, tc)
            del session.tool_calls[tc.tool_call_id]
            self._grow(session, -tc.size)
            events.append(ToolCallEvicted(session.session_id, tc.tool_call_id, tc.status))

    # ----------------------------------------------------------------------------------------
    # Terminals

    def _terminal(
        self, session: SessionState, terminal_id: str, events: list[Event]
    ) -> TerminalState:
        terminal = session.terminals.get(terminal_id)
        if terminal is None:
            terminal = session.terminals[terminal_id] = TerminalState(terminal_id)
            self._grow(session, terminal.size)
            events.append(TerminalCreated(session.session_id, terminal_id))
            cap = self.limits.max_terminals
            if cap is not None and len(session.terminals) > cap:
                self._evict_terminals(session, terminal, cap, events)
        return terminal

    def _evict_terminals(
        self, session: SessionState, new: TerminalState, cap: int, events: list[Event]
    ) -> None:
        count = min(trim_block(cap), len(session.terminals) - 1)
        candidates = [t for t in session.terminals.values() if t is not new]
        exited = [t for t in candidates if t.exited]
        running = [t for t in candidates if not t.exited]
        victims = exited[:count] + running[: max(0, count - len(exited))]
        self._drop_terminals(session, victims, events)
        _limit_reached(
            events,
            session.session_id,
            "max_terminals",
            session.session_id,
            f"evicted {len(victims)} terminal(s), exited ones first (cap {cap} per session)",
        )

    def _drop_terminals(
        self, session: SessionState, victims: list[TerminalState], events: list[Event]
    ) -> None:
        for terminal in victims:
            if self.on_evict is not None:
                self.on_evict(session.session_id, terminal)
            del session.terminals[terminal.terminal_id]
            self._grow(session, -terminal.size)
            events.append(TerminalEvicted(session.session_id, terminal.terminal_id))

    def _update_terminal(
        self, session: SessionState, update: v2.TerminalUpdate, events: list[Event], now: Any
    ) -> None:
        terminal = self._terminal(session, update.terminal_id, events)
        patched: list[str] = []
        cleared: list[str] = []
        _patch_terminal(update, terminal.fields, patched, cleared)
        output = update.output
        if output is None:
            terminal.output = None
            cleared.append("output")
        elif output is not UNSET:
            data = base64_bytes(output.data)
            if data is None:  # D22; decoded input never gets here (`TerminalOutput` checks)
                events.append(
                    DiagnosticReported(
                        session.session_id,
                        "$.params.update.output.data",
                        "not valid base64: output left unchanged",
                    )
                )
            else:
                terminal.output = bytearray(data)
                terminal.dropped_bytes = 0
                patched.append("output")
        meta = update.meta
        if meta is not UNSET:
            terminal.meta = patch_meta(terminal.meta, meta)
            (cleared if meta is None else patched).append("_meta")
        if now is not None:
            terminal.updated_at = now
        if patched:
            events.append(TerminalPatched(session.session_id, terminal.terminal_id, tuple(patched)))
        if cleared:
            events.append(TerminalCleared(session.session_id, terminal.terminal_id, tuple(cleared)))
        self._measure_terminal(session, terminal, patched, events)
        self._measure_terminal(session, terminal, cleared, events)
        if "output" in patched:
            self._cap_output(session, terminal, events)
        self._budgets(session, terminal, events)

    def _append_output(
        self,
        session: SessionState,
        chunk: v2.TerminalOutputChunk,
        events: list[Event],
        now: Any,
    ) -> None:
        data = base64_bytes(chunk.data)
        terminal = self._terminal(session, chunk.terminal_id, events)
        if data is None:  # D22: the whole chunk is dropped
            events.append(
                DiagnosticReported(
                    session.session_id,
                    "$.params.update.data",
                    "not valid base64: terminal output chunk dropped",
                )
            )
            return
        output = terminal.output
        if type(output) is bytearray:
            output += data
        else:
            output = terminal.output = bytearray(data)
        size = len(data)
        sizes = terminal.sizes
        sizes["output"] = sizes.get("output", 0) + size
        terminal.size += size
        session.size += size
        self.size += size
        if now is not None:
            terminal.updated_at = now
        events.append(TerminalOutputAppended(session.session_id, terminal.terminal_id, size))
        if len(output) > _cap(self.limits.max_terminal_bytes):
            self._cap_output(session, terminal, events)
        if session.size > self._session_cap or self.size > self._store_cap:
            self._budgets(session, terminal, events)

    def _cap_output(
        self,
        session: SessionState,
        terminal: TerminalState,
        events: list[Event],
        cap: int | None = None,
        limit: str = "max_terminal_bytes",
    ) -> None:
        cap = self.limits.max_terminal_bytes if cap is None else cap
        output = terminal.output
        if cap is None or not isinstance(output, bytearray) or len(output) <= cap:
            return
        head, excess = _trim_middle(output, cap)
        terminal.dropped_bytes += excess
        terminal.sizes["output"] = len(output)
        self._grow(session, -excess, terminal)
        _limit_reached(
            events,
            session.session_id,
            limit,
            terminal.terminal_id,
            f"dropped {excess} output byte(s) after the first {head} "
            f"(cap {cap}; {terminal.dropped_bytes} dropped in all)",
        )

    # ----------------------------------------------------------------------------------------
    # Bytes: every value measured as it is stored; caps applied after each change

    def _grow(
        self, session: SessionState, delta: int, held: ToolCallState | TerminalState | None = None
    ) -> None:
        if held is not None:
            held.size += delta
        session.size += delta
        self.size += delta

    def _measure_call(
        self, session: SessionState, tc: ToolCallState, names: list[str], events: list[Event]
    ) -> None:
        """Measure the values just stored under ``names`` (wire names), cutting any over
        ``max_value_bytes``, and the ``_meta`` keys over ``max_meta_keys``."""
        cap = self._value_cap
        fields, sizes, delta = tc.fields, tc.sizes, 0
        for name in names:
            value = fields.get(name, _ABSENT)
            if value is not _ABSENT and name != "content":  # a field: the common case
                size = size_of(value)
                if size > cap:
                    fields[name], size = _cut(value, size, cap)
                    _limit_reached(
                        events,
                        session.session_id,
                        "max_value_bytes",
                        tc.tool_call_id,
                        f"`{name}`: {size_of(value):,} bytes, over the cap of {cap:,}: cut",
                    )
            elif name == "content":
                size = 0
                if isinstance(value, list):
                    for index, item in enumerate(value):
                        item_size = size_of(item)
                        if item_size > cap:
                            value[index], item_size = self._cut_item(
                                session, tc, item, item_size, cap, events
                            )
                        size += item_size
            elif name == "_meta":
                self._cap_meta_keys(session, tc.tool_call_id, tc, events)
                size = self._measure_meta(
                    session, tc.tool_call_id, tc, self.limits.max_value_bytes, events
                )
            else:  # an unknown key kept beside the fields
                held = tc.extra
                value = held.get(name) if held is not None else None
                size = size_of(value)
                if size > cap and held is not None:
                    held[name], size = _cut(value, size, cap)
                    _limit_reached(
                        events,
                        session.session_id,
                        "max_value_bytes",
                        tc.tool_call_id,
                        f"`{name}`: {size_of(value):,} bytes, over the cap of {cap:,}: cut",
                    )
            delta += size - sizes.get(name, 0)
            sizes[name] = size
        tc.size += delta
        session.size += delta
        self.size += delta

    def _measure_terminal(
        self, session: SessionState, terminal: TerminalState, names: list[str], events: list[Event]
    ) -> None:
        if not names:
            return
        cap = self.limits.max_value_bytes
        fields, sizes, delta = terminal.fields, terminal.sizes, 0
        for name in names:
            if name == "output":
                output = terminal.output
                size = len(output) if isinstance(output, bytearray) else 0
            elif name == "_meta":
                self._cap_meta_keys(session, terminal.terminal_id, terminal, events)
                size = self._measure_meta(session, terminal.terminal_id, terminal, cap, events)
            else:
                value = fields.get(name)
                size = size_of(value)
                if cap is not None and size > cap:
                    fields[name], size = _cut(value, size, cap)
                    _limit_reached(
                        events,
                        session.session_id,
                        "max_value_bytes",
                        terminal.terminal_id,
                        f"`{name}`: {size_of(value):,} bytes, over the cap of {cap:,}: cut",
                    )
            delta += size - sizes.get(name, 0)
            sizes[name] = size
        self._grow(session, delta, terminal)

    def _cap_meta_keys(
        self,
        session: SessionState,
        subject: str,
        held: ToolCallState | TerminalState,
        events: list[Event],
    ) -> None:
        cap = self.limits.max_meta_keys
        meta = held.meta
        if cap is None or not isinstance(meta, dict) or len(meta) <= cap:
            return
        excess = len(meta) - cap + trim_block(cap) - 1
        for key in list(meta)[:excess]:
            del meta[key]
        _limit_reached(
            events,
            session.session_id,
            "max_meta_keys",
            subject,
            f"`_meta` had more than {cap} keys: dropped the {excess} oldest",
        )

    def _measure_meta(
        self,
        session: SessionState,
        subject: str,
        held: ToolCallState | TerminalState,
        cap: int | None,
        events: list[Event],
    ) -> int:
        meta = held.meta
        if not isinstance(meta, dict):
            return 0
        size = 64
        for key, value in meta.items():
            value_size = size_of(value)
            if cap is not None and value_size > cap:
                meta[key], value_size = _cut(value, value_size, cap)
                _limit_reached(
                    events,
                    session.session_id,
                    "max_value_bytes",
                    subject,
                    f"`_meta.{key}`: over the cap of {cap:,} bytes: cut",
                )
            size += size_of(key) + value_size + 24
        return size

    def _cut_item(
        self,
        session: SessionState,
        tc: ToolCallState,
        item: Any,
        size: int,
        cap: int,
        events: list[Event],
    ) -> tuple[Any, int]:
        """A content item over ``max_value_bytes``: a text block keeps its head, anything
        else becomes a text block saying what was omitted."""
        inner = item.content if isinstance(item, v2.Content) else None
        if isinstance(inner, v2.TextContent):
            text = _head(inner.text, cap) + "\n" + omitted(size, "max_value_bytes")
            cut: Any = v2.Content(content=v2.TextContent(text=text))
        else:
            cut = v2.Content(content=v2.TextContent(text=omitted(size, "max_value_bytes")))
        _limit_reached(
            events,
            session.session_id,
            "max_value_bytes",
            tc.tool_call_id,
            f"a content item of {size:,} bytes, over the cap of {cap:,}: cut",
        )
        return cut, size_of(cut)

    def _budgets(
        self, session: SessionState, held: ToolCallState | TerminalState, events: list[Event]
    ) -> None:
        """After a change to ``held``: the call, session and store byte caps, in that order.
        Each cut goes below the cap by an eighth of it, so that growth past it stays cheap."""
        cap = self._call_cap
        if held is not None and held.size > cap and isinstance(held, ToolCallState):
            self._shrink_call(session, held, cap - trim_block(cap), "max_call_bytes", events)
        cap = self._session_cap
        if session.size > cap:
            self._shrink_session(session, held, cap - trim_block(cap), events)
        cap = self._store_cap
        if self.size > cap:
            self._shrink_store(session, held, cap - trim_block(cap), events)

    def _shrink_call(
        self,
        session: SessionState,
        tc: ToolCallState,
        target: int,
        limit: str,
        events: list[Event],
    ) -> None:
        """Cut a call down to ``target`` bytes: the middle of its content first (its head
        quarter and its tail are kept), then its head, on up to its last item, then its largest
        values."""
        before = tc.size
        content = tc.fields.get("content")
        if isinstance(content, list) and len(content) > 1:
            head = max(1, len(content) // 4)
            excess, freed = 0, 0
            need = tc.size - target
            while head + excess < len(content) - 1 and freed < need:
                freed += size_of(content[head + excess])
                excess += 1
            if excess:
                del content[head : head + excess]
                self._dropped_items(session, tc, head, excess)
            if tc.size > target and len(content) > 1:  # then the head, and on to the last item
                cut, freed = head, sum(size_of(item) for item in content[:head])
                need = tc.size - target
                while cut < len(content) - 1 and freed < need:
                    freed += size_of(content[cut])
                    cut += 1
                del content[:cut]
                self._dropped_items(session, tc, 0, cut)
        held = {**tc.fields, **(tc.extra or {})}
        for name in sorted(tc.sizes, key=tc.sizes.__getitem__, reverse=True):
            if tc.size <= target or tc.sizes[name] <= 256:
                break
            if name in ("content", "_meta"):
                value = tc.fields.get(name) if name == "content" else tc.meta
                replacement: Any = [] if name == "content" else {}
            else:
                value = held.get(name)
                replacement, _ = _cut(value, tc.sizes[name], 1_024, limit)
            if name == "content":
                tc.dropped_items += len(value) if isinstance(value, list) else 0
                tc.dropped_at = 0
                tc.fields["content"] = replacement
            elif name == "_meta":
                tc.meta = replacement
            elif name in tc.fields:
                tc.fields[name] = replacement
            elif tc.extra is not None:
                tc.extra[name] = replacement
            size = 0 if name == "content" else size_of(replacement)
            self._grow(session, size - tc.sizes[name], tc)
            tc.sizes[name] = size
        _limit_reached(
            events,
            session.session_id,
            limit,
            tc.tool_call_id,
            f"cut from {before:,} to {tc.size:,} bytes ({tc.dropped_items} content item(s) "
            "dropped in all)",
        )

    def _shrink_session(
        self,
        session: SessionState,
        keep: ToolCallState | TerminalState | None,
        target: int,
        events: list[Event],
    ) -> None:
        """Cut a session down to ``target`` bytes, keeping ``keep`` (what just changed) last:
        finished calls go first (oldest first), then exited terminals, then the content of
        open calls and the output of running terminals is cut (oldest first)."""
        before = session.size
        finished = [tc for tc in session.tool_calls.values() if tc.is_final and tc is not keep]
        self._drop_calls(session, _until(finished, session.size - target), events)
        if session.size > target:
            exited = [t for t in session.terminals.values() if t.exited and t is not keep]
            self._drop_terminals(session, _until(exited, session.size - target), events)
        # What each open call and running terminal keeps: an equal share of the session.
        each = max(4096, target // (len(session.tool_calls) + len(session.terminals) + 1))
        for tc in list(session.tool_calls.values()):
            if session.size <= target:
                break
            if tc is not keep and tc.size > each:
                self._shrink_call(session, tc, each, "max_session_bytes", events)
        for terminal in list(session.terminals.values()):
            if session.size <= target:
                break
            if terminal is not keep:
                self._cap_output(session, terminal, events, each, "max_session_bytes")
        if session.size > target and isinstance(keep, ToolCallState):
            self._shrink_call(session, keep, each, "max_session_bytes", events)
        elif session.size > target and isinstance(keep, TerminalState):
            self._cap_output(session, keep, events, each, "max_session_bytes")
        _limit_reached(
            events,
            session.session_id,
            "max_session_bytes",
            session.session_id,
            f"cut from {before:,} to {session.size:,} bytes",
        )

    def _shrink_store(
        self,
        current: SessionState,
        keep: ToolCallState | TerminalState | None,
        target: int,
        events: list[Event],
    ) -> None:
        """Cut the store down to ``target`` bytes: finished calls and exited terminals of the
        least recently updated sessions first, then idle sessions, then the least recently
        updated ones; the session just changed goes last."""
        before = self.size
        others = sorted(
            (s for s in self.sessions.values() if s is not current), key=lambda s: s.touched
        )
        for session in others:
            if self.size <= target:
                break
            finished = [tc for tc in session.tool_calls.values() if tc.is_final]
            self._drop_calls(session, _until(finished, self.size - target), events)
            exited = [t for t in session.terminals.values() if t.exited]
            self._drop_terminals(session, _until(exited, self.size - target), events)
        empty = [s for s in others if not s.tool_calls and not s.terminals]
        self._drop_sessions(empty, events)  # nothing left in them
        if self.size > target:
            idle = [s for s in others if s.session_id in self.sessions and not s.live]
            self._drop_sessions(_until(idle, self.size - target), events)
        if self.size > target:
            rest = [s for s in others if s.session_id in self.sessions]
            self._drop_sessions(_until(rest, self.size - target), events)
        if self.size > target:
            self._shrink_session(current, keep, max(0, target - (self.size - current.size)), events)
        _limit_reached(
            events,
            current.session_id,
            "max_store_bytes",
            current.session_id,
            f"cut the store from {before:,} to {self.size:,} bytes",
        )

    # ----------------------------------------------------------------------------------------
    # Reading

    def tool_call(self, session_id: str, tool_call_id: str) -> ToolCallState | None:
        """The stored state of one call, or ``None``."""
        session = self.sessions.get(session_id)
        return session.tool_calls.get(tool_call_id) if session is not None else None

    def snapshot(self, session_id: str, tool_call_id: str) -> v2.ToolCallUpdate:
        """The call's full state as one v2 ``ToolCallUpdate`` (``KeyError`` if unknown)."""
        tc = self.tool_call(session_id, tool_call_id)
        if tc is None:
            raise KeyError(f"no tool call {tool_call_id!r} in session {session_id!r}")
        return tc.snapshot()

    def view(self, session_id: str, tool_call_id: str) -> ToolCallView:
        """What a UI shows for one call (``KeyError`` if unknown)."""
        tc = self.tool_call(session_id, tool_call_id)
        if tc is None:
            raise KeyError(f"no tool call {tool_call_id!r} in session {session_id!r}")
        return view_of(session_id, tc)

    def views(self, session_id: str) -> list[ToolCallView]:
        """Every call of the session, in first-seen order."""
        session = self.sessions.get(session_id)
        if session is None:
            return []
        return [view_of(session_id, tc) for tc in session.tool_calls.values()]

    def open_calls(self, session_id: str | None = None) -> list[ToolCallView]:
        """Calls not in a final status (of one session, or of all), in first-seen order."""
        return [
            view_of(session.session_id, tc)
            for session in self._sessions(session_id)
            for tc in session.tool_calls.values()
            if not tc.is_final
        ]

    def sweep(
        self, session_id: str, status: str = "failed", *, now: float | None = None
    ) -> list[Event]:
        """Mark every open call of the session that is not background work as ended with
        ``status`` by the client (a turn-end helper).

        The mark is the client's own conclusion, an overlay on the view (``ended_locally``),
        never protocol state: the call's status stays what the agent said, so ``snapshot``,
        ``document``, ``open_calls`` and the bridges do not see it, and the agent's next status
        for the call replaces it (7.11, D14, D15). A client calls it when it decides the turn is
        over, for example after an idle ``state_update``; calls the latest background list
        names (or whose terminal it names) are left alone. ``now`` is recorded as each marked
        call's last-update time. Returns one ``ToolCallEndedLocally`` per call marked.
        """
        if status not in FINAL_STATUSES:
            raise ValueError(f"sweep needs a final status, one of {sorted(FINAL_STATUSES)}")
        session = self.sessions.get(session_id)
        events: list[Event] = []
        if session is not None:
            self._end_locally(session, session.tool_calls.values(), status, events, now)
        return events

    def document(self) -> dict[str, Any]:
        """Every session as the ``replay --json`` document, in plain JSON values.

        ``{"sessions": {id: {"toolCalls": [...], "terminals": [...]}}}``: each tool call in the
        v2 ``ToolCallUpdate`` shape, each terminal in the ``terminal_update`` shape without its
        ``sessionUpdate`` tag, both as ``snapshot`` gives them.
        """
        sessions: dict[str, Any] = {}
        for session in self.sessions.values():
            terminals = []
            for terminal in session.terminals.values():
                plain = to_builtins(terminal.snapshot())
                del plain["sessionUpdate"]
                terminals.append(plain)
            sessions[session.session_id] = {
                "toolCalls": [to_builtins(tc.snapshot()) for tc in session.tool_calls.values()],
                "terminals": terminals,
            }
        return {"sessions": sessions}

    def document_json(self, *, decoded_only: bool = False) -> bytes:
        """``encode(self.document())``: the same bytes, written from each call's ``snapshot``
        without building its plain values first.

        ``decoded_only``: the caller applied nothing but what this package decoded from JSON text
        (raw lines, or what ``decode_message`` gave for them), so nothing held is a NaN or an
        infinite number, and the walk that refuses them is skipped (``codec.encode_decoded``).
        """
        sessions: dict[str, Any] = {}
        for session in self.sessions.values():
            terminals = []
            for terminal in session.terminals.values():
                plain = to_builtins(terminal.snapshot())
                del plain["sessionUpdate"]
                terminals.append(plain)
            sessions[session.session_id] = {
                "toolCalls": [tc.snapshot() for tc in session.tool_calls.values()],
                "terminals": terminals,
            }
        document = {"sessions": sessions}
        return encode_decoded(document) if decoded_only else encode(document)

    def _sessions(self, session_id: str | None) -> Iterator[SessionState]:
        if session_id is None:
            yield from self.sessions.values()
        elif session_id in self.sessions:
            yield self.sessions[session_id]


def _trim_middle(buffer: list[Any] | bytearray, cap: int) -> tuple[int, int]:
    """Cut ``buffer`` (longer than ``cap``) to keep its first quarter-cap and its tail.

    Cuts an extra block past the cap so that appending past it stays amortised O(1).
    Returns the head kept and how many elements went.
    """
    head, excess = _middle(len(buffer), cap)
    del buffer[head : head + excess]
    return head, excess


def _middle(length: int, cap: int) -> tuple[int, int]:
    """Where ``_trim_middle`` cuts a buffer of ``length`` elements: the head kept and how many
    elements go after it."""
    head = cap // 4
    return head, min(length - cap + trim_block(cap), length - head)


def _until(held: list[Any], need: int) -> list[Any]:
    """The first of ``held`` (things with a ``size``) whose sizes add up to ``need`` bytes."""
    chosen: list[Any] = []
    freed = 0
    for item in held:
        if freed >= need:
            break
        chosen.append(item)
        freed += item.size
    return chosen


def _head(text: str, cap: int) -> str:
    """The head of ``text`` that keeps it well under ``cap`` bytes (a quarter of it)."""
    return text[: max(0, cap // 4)]


def _cut(value: Any, size: int, cap: int, limit: str = "max_value_bytes") -> tuple[Any, int]:
    """A value over a cap of ``cap`` bytes, made to fit and stay valid where it is: a string
    keeps its head and says what went; a list (``locations``) keeps the items that fit; a
    model (``capabilities``, ``size``) is cleared; any other JSON value is replaced by the
    saying."""
    cut: Any
    if isinstance(value, str):
        cut = _head(value, cap) + " " + omitted(size, limit)
    elif isinstance(value, list):
        cut, room = [], cap // 2
        for item in value:
            room -= size_of(item) + 8
            if room < 0:
                break
            cut.append(item)
    elif isinstance(value, msgspec.Struct):
        cut = None
    else:
        cut = omitted(size, limit)
    return cut, size_of(cut)


def _limit_reached(
    events: list[Event], session_id: str, limit: str, subject: str, detail: str
) -> None:
    # A cap is an event for the UI and a diagnostic for the log (nothing is dropped silently).
    events.append(LimitReached(session_id, limit, subject, detail))
    events.append(DiagnosticReported(session_id, "$", f"{limit}: {subject}: {detail}", "limit"))


def _unknown_v1_strings(update: v1.ToolCall | v1.ToolCallUpdate) -> dict[str, str] | None:
    """The ``kind``/``status`` strings of a v1 update that v1 does not define, by wire name
    (D32); ``None`` when there are none, as almost always."""
    kind, status = update.kind, update.status
    if (not isinstance(kind, str) or kind in _V1_KINDS) and (
        not isinstance(status, str) or status in _V1_STATUSES
    ):
        return None  # the common case, decided without a loop
    raw = None
    for name, known in _V1_ENUMS:
        value = getattr(update, name)
        if isinstance(value, str) and value not in known:
            if raw is None:
                raw = {}
            raw[name] = value
    return raw


def _raw_size(raw: dict[str, str] | None) -> int:
    return sum(size_of(value) for value in raw.values()) if raw else 0


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, type(None))) else repr(value)


def _session_of(value: Any) -> str:
    params = getattr(value, "params", None)
    session_id = getattr(params, "session_id", "")
    return session_id if isinstance(session_id, str) else ""
