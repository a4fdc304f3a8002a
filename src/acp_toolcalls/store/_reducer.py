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
last-update time. ``ToolCallStore`` is built in layers, each a class of its own module:
the views (reading), sessions, byte budgets, terminals, tool calls, v1 input, then this
dispatch: one chain of single inheritance (what mypyc compiles).
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
from ._limits import Limits
from ._sessions import EvictionHook
from ._sizes import size_of
from ._state import SessionState
from ._v1 import _V1Input
from ._version import negotiated_version, store_version

_V2_MESSAGE = v2.SessionUpdateMessage
_V1_MESSAGE = v1.SessionUpdateMessage
_CHUNK = v2.ToolCallContentChunk
_CONTENT = v2.Content
_TEXT = v2.TextContent


@mypyc_attr(allow_interpreted_subclasses=True)  # a client may subclass it, compiled or not
class ToolCallStore(_V1Input):
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
        super().__init__(limits, on_evict)
        self.max_bytes = max_bytes
        self._negotiated: VersionName | None = None
        self._fast_decode = fast_message_decoder(self.raw_version)
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
            "session_info_update": self._session_info,
            "subagent_update": self._subagent_info,
        }
        self._methods: dict[str, Callable[[Mapping[str, Any], list[Event], Any], None]] = {
            "initialize": self._initialize,
            "session/cancel": self._cancel_session,
            "tool_call/cancel": self._cancel_call,
        }

    @property
    def raw_version(self) -> VersionName:
        """The protocol raw input is read with now."""
        if self.version != "auto":
            return self.version
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
                message = decode_message(message, version=self.raw_version)
        elif isinstance(message, (bytes, bytearray, memoryview, str, dict, list)):
            message = decode_message(message, version=self.raw_version, max_bytes=self.max_bytes)
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


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, type(None))) else repr(value)


def _session_of(value: Any) -> str:
    params = getattr(value, "params", None)
    session_id = getattr(params, "session_id", "")
    return session_id if isinstance(session_id, str) else ""
