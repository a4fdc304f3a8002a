"""The stateful v2 -> v1 bridge: a v2 agent's traffic, made right for a v1 client.

Rules this module owns (shared/spec/TOOL-CALLS.md 9.6-9.9; D10, D22, D28-D30, D39):

- The first v1 message about a ``toolCallId`` is a v1 ``tool_call`` built from the whole stored
  state, with a non-empty title (title, name, the permission's title when a permission request
  saw it first, a kind label, "Tool call"); every later one is a ``tool_call_update``.
- v1 has no append: content is kept in a v2 store (``ToolCallStore``) and every message that
  changes it carries the whole projected v1 content. Each v2 item is projected once and
  cached; terminal references are rendered from terminal state (text profile: a fenced
  transcript; ``meta`` profile: the ``_meta.terminal_*`` keys some v1 clients read).
- Coalescing (opt-in) is pure and timer-free: a call's first sight goes out at once, then
  its changes wait and merge (latest value per field, content re-projected once) until a
  permission request, a final status, a ``state_update`` or any other forwarded update but
  message text, the session's close, an eviction, or ``flush()``; a message about another
  call is no flush point. Per call, order is always kept; a time bound belongs to the I/O
  layer (``flush()``).
- Permission requests: the subject is applied first, the session's pending changes are
  flushed, a first-seen call gets its v1 ``tool_call``, then the v1 request goes out (9.7). A
  v1 client renders the prompt from the request's ``toolCall``, so the user sees what they
  approve there: the prompt's title, then its description and command ahead of the call's
  content (D28, amended). While the prompt is open, the call's updates keep that overlay; the
  answer (or a cancel) restores the call's own title and content with a ``tool_call_update``.
  The prompt never enters the store. Subject-less, unknown and ``command`` subjects the client
  does not show get a synthetic call (D28), which ends with the outcome: ``completed`` when an
  allow option was chosen, else ``failed``. Repeated option ids keep the first (D5).
- Each forwarded request is answered once: by the client's answer (mapped; one that is not a
  known outcome is never approval), or by the bridge, which answers ``cancelled`` when it gives
  the request up (a cap, ``withdraw``, the agent's ``$/cancel_request``) and then sends the
  client ``$/cancel_request`` and drops the client's late answer. A request reusing the id of a
  pending one is refused (``-32600``).
- v2-only session updates never reach the v1 side raw: mapped when a v1 variant exists,
  otherwise dropped and reported (9.8, D30). A ``compaction_update`` carries the compaction's
  whole merged ``_meta`` (a v1 client replaces it; D39); the agent's ``$/cancel_request`` is a
  flush point.
- Every loss is reported; caps come from the store's ``Limits`` (its terminals keep about
  the tail a v1 client is shown, ``4 * tail_chars`` bytes); ``close_session`` frees all. What
  the store drops, the bridge sends first what it held back about (``on_evict``); a dropped
  call it showed stays known as a ghost (10,000 ghosts at most), so a later
  update of it is not a first sight with another title. Where a cap dropped content items, a
  text item says how many; no message is longer than ``max_message_bytes``. A request with
  more than ``max_permission_options`` options is not forwarded (the agent is answered
  ``cancelled``); past ``max_pending_permissions`` unanswered requests the oldest is given
  up (as above); the ids of as many given-up requests are kept to drop late answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from . import v1, v2
from ._forwarded import Forwarded
from .codec import (
    DEFAULT_MAX_BYTES,
    FAST_PATH_MISSES,
    decode,
    decode_message,
    encode,
    fast_message_decoder,
    to_builtins,
)
from .events import (
    ContentAppended,
    DiagnosticReported,
    LimitReached,
    TerminalCleared,
    TerminalCreated,
    TerminalOutputAppended,
    TerminalPatched,
    ToolCallCleared,
    ToolCallCreated,
    ToolCallPatched,
    ToolCallReopened,
)
from .jsonrpc import (
    CANCELLED_OUTCOME,
    REQUEST_CANCELLED,
    Batch,
    InvalidMessage,
    JsonRpcMessage,
    response,
)
from .lenient import DecodeError
from .loss import NO_LOSSES, Converted, Loss, LossReport, unknown_keys
from .state import Limits, TerminalState, ToolCallState, patch_meta, trim_block
from .store import ToolCallStore
from .terminal_text import DEFAULT_TAIL_CHARS, TailRenderer, fenced
from .v2 import ALLOW_OPTION_KINDS, FINAL_STATUSES
from .v2_to_v1 import (
    content_to_v1,
    create_defaults,
    create_values,
    permission_request_to_v1,
    permission_response_to_v2,
    plain_fields,
    plain_stored_fields,
    prompt_items,
    session_update_to_v1,
    update_values,
)
from .wire import extras_seen, replace

__all__ = ["TerminalProfile", "V2ToV1Bridge"]

TerminalProfile = Literal["text", "meta"]

_FLUSHING_TAGS = frozenset({"state_update"})
"""Opaque v2 updates before which everything pending is flushed and which are not forwarded."""

_RENDERED = 256
"""Terminal renderings kept (each up to ``tail_chars`` characters)."""
_MAX_GHOSTS = 10_000
"""Calls the client was shown that the store no longer holds, remembered (the oldest go)."""
_GHOST_TITLE = 256
"""Characters of its title a ghost call keeps (the title a restore after a prompt sends)."""
_RENDERERS = 64
"""Terminals whose output's tail is rendered incrementally (the most recently rendered)."""
_MAX_COMPACTIONS = 1_000
"""Compactions whose merged ``_meta`` is kept (the least recently updated go)."""
_UNFLUSHING_TAGS = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})
"""Opaque v2 updates that are no flush point: message text streams beside tool calls."""
_FAST_DECODE = fast_message_decoder("v2")
_FAST_PATHS = True
"""Whether the common shapes take their fast paths (tests turn them off to compare: the
output is the same either way)."""
_QUIET_EVENTS = frozenset(
    {ToolCallCreated, ToolCallPatched, ToolCallCleared, ContentAppended, ToolCallReopened}
    | {TerminalCreated, TerminalPatched, TerminalCleared, TerminalOutputAppended}
)
"""Store events that need nothing from the bridge (the flush reads the state itself)."""


class _Call:
    """What the bridge tracks for one tool call on top of the store."""

    __slots__ = (
        "content_dirty",
        "count",
        "cut_at",
        "flat",
        "ghost",
        "known",
        "meta_dirty",
        "meta_sent",
        "pending",
        "prompt",
        "slots",
        "source",
        "source_dropped",
        "terminals",
        "title",
        "title_fallback",
    )

    def __init__(self) -> None:
        self.known = False  # the v1 client has seen a `tool_call` for it
        self.title: str | None = None  # what the v1 client displays
        self.title_fallback: str | None = None  # a permission title seen first (D10)
        self.pending: dict[str, Any] = {}  # attribute name -> latest v2 value, not yet sent
        self.content_dirty = False
        self.meta_dirty = False
        self.source: list[Any] | None = None  # the store's content list last projected
        self.source_dropped = 0
        self.count = 0  # v2 items projected so far
        self.flat: list[Any] = []  # their v1 items, a `None` slot where a terminal renders
        self.slots: list[tuple[int, str]] = []  # (index in `flat`, terminal id)
        self.terminals: set[str] = set()
        self.prompt: _Overlay | None = None  # a permission prompt shown on the call
        self.cut_at = 0  # where in `flat` the items a cap dropped were
        self.meta_sent: Any = None  # the `_meta` the v1 client was last sent
        self.ghost = False  # the store holds no state for it (evicted, or a synthetic call)


class _Overlay:
    """A permission prompt shown on a call the v1 client shows, until its answer."""

    __slots__ = ("items", "items_shown", "open", "title")

    def __init__(self, title: str, items: list[Any]) -> None:
        self.title = title  # shown instead of the call's own title
        self.items = items  # shown ahead of the call's own content
        self.items_shown = bool(items)  # the client was shown prompt items in the content
        self.open = 1  # prompts shown on the call and not answered yet


class _Asked:
    """A permission request forwarded to the v1 client, until its answer."""

    __slots__ = ("allow", "session_id", "synthetic", "tool_call_id")

    def __init__(
        self, session_id: str, tool_call_id: str, allow: frozenset[str], synthetic: bool
    ) -> None:
        self.session_id = session_id
        self.tool_call_id = tool_call_id  # the `toolCall` the client shows the prompt on
        self.allow = allow  # offered option ids of an approving kind
        self.synthetic = synthetic  # the bridge made the call up: it ends with the outcome


class _Session:
    __slots__ = ("calls", "order", "readers")

    def __init__(self) -> None:
        self.calls: dict[str, _Call] = {}
        self.order: dict[str, None] = {}  # calls with pending changes, oldest first
        self.readers: dict[str, set[str]] = {}  # terminal id -> calls whose content shows it


_PATCH_ATTRS: tuple[tuple[str, str], ...] = tuple(
    (f.name, f.encode_name)
    for f in msgspec.structs.fields(v2.ToolCallUpdate)
    if f.name not in ("tool_call_id", "content", "meta")
)


def _hold_fields(update: v2.ToolCallUpdate, pending: dict[str, Any]) -> None:
    """Put the fields ``update`` sets (but ``content`` and ``_meta``, which the flush reads
    from the store) into ``pending``, by attribute name: ``_PATCH_ATTRS``, written out."""
    value: Any = update.name
    if value is not UNSET:
        pending["name"] = value
    value = update.title
    if value is not UNSET:
        pending["title"] = value
    value = update.kind
    if value is not UNSET:
        pending["kind"] = value
    value = update.status
    if value is not UNSET:
        pending["status"] = value
    value = update.locations
    if value is not UNSET:
        pending["locations"] = value
    value = update.raw_input
    if value is not UNSET:
        pending["raw_input"] = value
    value = update.raw_output
    if value is not UNSET:
        pending["raw_output"] = value
    value = update.capabilities
    if value is not UNSET:
        pending["capabilities"] = value


class V2ToV1Bridge:
    """Converts a v2 agent's messages for a v1 client, one message at a time (sans-I/O).

    ``convert`` takes any message of the agent -> client direction, and the client's answers
    to permission requests (matched by JSON-RPC id), as raw bytes, JSON values or typed
    models; it returns a ``Converted`` whose ``messages`` are typed v1 models or
    ``JsonRpcMessage`` values to ``encode`` and send on.
    """

    def __init__(
        self,
        *,
        coalesce: bool = False,
        terminal_profile: TerminalProfile = "text",
        tail_chars: int = DEFAULT_TAIL_CHARS,
        limits: Limits | None = None,
        notices: bool = False,
        compaction: bool = False,
        max_message_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if terminal_profile not in ("text", "meta"):
            raise ValueError(f"unknown terminal profile {terminal_profile!r}")
        self.coalesce = coalesce
        # What the v1 client advertised (`session.notices`, `session.compaction`, D30).
        self.notices = notices
        self.compaction = compaction
        self.terminal_profile: TerminalProfile = terminal_profile
        self.tail_chars = tail_chars
        self.max_message_bytes = max_message_bytes
        self.store = ToolCallStore(protocol="v2", limits=limits, on_evict=self._evicted)
        terminal_cap = self.store.limits.max_terminal_bytes
        if terminal_cap is None or terminal_cap > 4 * tail_chars:
            # A v1 client is shown a terminal's tail only: the store keeps about that much.
            terminal_cap = max(4 * tail_chars, 1)
            self.store.limits = msgspec.structs.replace(
                self.store.limits, max_terminal_bytes=terminal_cap
            )
        self._ghosts: dict[tuple[str, str], None] = {}  # calls shown, not held by the store
        # (session, compaction id) -> its merged `_meta`, most recently updated last
        self._compactions: dict[tuple[str, str], dict[str, Any]] = {}
        self._dirty: dict[str, None] = {}  # sessions with changes held back
        self._sessions: dict[str, _Session] = {}
        self._forwarded: Forwarded[_Asked] = Forwarded(self.store.limits.max_pending_permissions)
        # (session, terminal id) -> its rendering: a v1 item (text profile) and `_meta` keys
        self._rendered: dict[tuple[str, str], tuple[Any, dict[str, Any]]] = {}
        # (session, terminal id) -> what renders its output's tail as it grows
        self._texts: dict[tuple[str, str], TailRenderer] = {}
        self._out: list[Any] = []
        self._replies: list[Any] = []
        self._losses: list[Loss] = []
        self._updates: dict[type, Callable[[str, Any], None]] = {
            v2.SessionToolCallUpdate: self._on_update,
            v2.ToolCallContentChunk: self._on_chunk,
            v2.TerminalUpdate: self._on_terminal,
            v2.TerminalOutputChunk: self._on_terminal,
            v2.OpaqueSessionUpdate: self._on_other_update,
        }

    # ----------------------------------------------------------------------------------------
    # Public API

    def convert(self, message: Any) -> Converted:
        """Convert one message (or batch); raises ``DecodeError`` for unreadable raw input."""
        if type(message) is bytes and len(message) <= DEFAULT_MAX_BYTES:
            try:  # noqa: SIM105 - the common line: straight to the strict decoder, no wrapper
                message = _FAST_DECODE(message)
            except FAST_PATH_MISSES:
                pass
        if type(message) is v2.SessionUpdateMessage:  # the common message: `_dispatch`'s first case
            params = message.params
            if type(params) is v2.UpdateSessionNotification and params.meta is UNSET:
                update = params.update
                if type(update) is v2.ToolCallContentChunk:  # (the common two: no table lookup)
                    self._on_chunk(params.session_id, update)
                    return self._take()
                if type(update) is v2.SessionToolCallUpdate:
                    self._on_update(params.session_id, update)
                    return self._take()
                handler = self._updates.get(type(update))
                if handler is not None:
                    handler(params.session_id, update)
                    return self._take()
        if isinstance(message, (bytes, bytearray, memoryview, str, dict, list)):
            decoded = decode_message(message, protocol="v2")
            for diagnostic in decoded.diagnostics:
                self._loss(diagnostic.path, f"input salvaged: {diagnostic.reason}")
            message = decoded.value
        if isinstance(message, Batch):
            for item in message.items:
                self._dispatch(item)
            outputs = self._take()
            if len(outputs.messages) > 1:
                return Converted((Batch(list(outputs.messages)),), outputs.replies, outputs.losses)
            return outputs
        self._dispatch(message)
        return self._take()

    def flush(self, session_id: str | None = None, *, max_bytes: int | None = None) -> Converted:
        """Send the pending changes (of one session, or of all), oldest first; with
        ``max_bytes``, stop once calls of about that many bytes (as the store counts them)
        went out, and ``pending`` says whether any change is left."""
        budget = max_bytes
        for sid in [session_id] if session_id is not None else list(self._dirty):
            session = self._sessions.get(sid)
            if session is None:
                self._dirty.pop(sid, None)
                continue
            for tool_call_id in list(session.order):
                if budget is not None and budget <= 0:
                    return self._take()
                held = self.store.tool_call(sid, tool_call_id)
                self._flush_call(sid, session, tool_call_id)
                if budget is not None and held is not None:
                    budget -= held.size
        return self._take()

    @property
    def pending(self) -> bool:
        """Whether a change is held back (coalescing)."""
        return bool(self._dirty)

    def close_session(self, session_id: str) -> Converted:
        """Flush the session, then forget everything about it (store state included)."""
        self._flush_session(session_id)
        self._sessions.pop(session_id, None)
        self._dirty.pop(session_id, None)
        self.store.drop_session(session_id)
        self._ghosts = {key: None for key in self._ghosts if key[0] != session_id}
        self._rendered = {k: v for k, v in self._rendered.items() if k[0] != session_id}
        self._compactions = {k: v for k, v in self._compactions.items() if k[0] != session_id}
        self._texts = {k: v for k, v in self._texts.items() if k[0] != session_id}
        self._forwarded.forget(lambda asked: asked.session_id == session_id)
        return self._take()

    def withdraw(self, request_id: Any) -> Converted:
        """Settle a forwarded permission request on the client's behalf (the session was
        cancelled, say): the agent is answered ``cancelled`` (``replies``), the client is sent
        ``$/cancel_request`` and the call's own state (``messages``), and the client's late
        answer will be dropped. Nothing happens for a request that is not pending."""
        self._give_up(request_id)
        return self._take()

    # ----------------------------------------------------------------------------------------
    # Dispatch

    def _dispatch(self, message: Any) -> None:
        kind = type(message)
        if kind is v2.SessionUpdateMessage or isinstance(message, v2.SessionUpdateMessage):
            params = message.params
            update = params.update
            if (
                params.meta is not UNSET
                or kind is not v2.SessionUpdateMessage
                or type(params) is not v2.UpdateSessionNotification
            ):
                self._envelope_losses(message)
            handler = self._updates.get(type(update))
            if handler is None:
                handler = next(
                    (h for cls, h in self._updates.items() if isinstance(update, cls)),
                    self._on_other_update,
                )
            handler(params.session_id, update)
        elif isinstance(message, v2.PermissionRequestMessage):
            self._on_permission(message)
        elif isinstance(message, JsonRpcMessage):
            self._on_other_message(message)
        elif isinstance(message, InvalidMessage):
            self._loss(message.error.path, f"batch element dropped: {message.error.reason}")
        else:
            raise TypeError(f"cannot convert a {type(message).__name__} from a v2 agent")

    def _envelope_losses(self, message: v2.SessionUpdateMessage) -> None:
        # What a v1 message cannot carry from the envelope: the notification's `_meta` (the
        # v1 update may merge several notifications) and unknown keys (D19).
        if message.params.meta is not UNSET:
            self._loss("$.params._meta", "notification metadata is not carried to v1")
        for root, obj in (("$", message), ("$.params", message.params)):
            self._losses.extend(unknown_keys(obj, root))

    def _take(self) -> Converted:
        out = self._out
        self._out = []
        if not self._losses and not self._replies:
            return Converted(tuple(out), (), NO_LOSSES)
        converted = Converted(tuple(out), tuple(self._replies), LossReport(self._losses))
        self._replies, self._losses = [], []
        return converted

    def _loss(self, path: str, reason: str) -> None:
        self._losses.append(Loss(path, reason))

    def _extend(self, losses: LossReport, root: str) -> None:
        """Losses of a mapping (rooted at what it mapped) as paths into the message."""
        for loss in losses:
            self._losses.append(Loss(root + loss.path[1:], loss.reason))

    def _apply(self, message: Any) -> None:
        self._absorb(self.store.apply(message))

    def _apply_update(self, session_id: str, update: Any) -> None:
        self._absorb(self.store.apply_update(session_id, update))

    def _absorb(self, events: list[Any]) -> None:
        for event in events:
            if type(event) in _QUIET_EVENTS:
                continue
            if isinstance(event, DiagnosticReported):
                if event.kind != "limit":  # a cap is reported once, by its LimitReached
                    self._loss(event.path, event.reason)
            elif isinstance(event, LimitReached):
                self._loss(f"$.{event.limit}", f"{event.subject}: {event.detail}")
                self._texts.pop((event.session_id, event.subject), None)  # output cut, maybe
            elif isinstance(event, (TerminalPatched, TerminalCleared)) and "output" in event.fields:
                self._texts.pop((event.session_id, event.terminal_id), None)  # output replaced

    def _evicted(self, session_id: str, state: Any) -> None:
        """The store is about to drop ``state`` (a call, terminal or session): what is held back
        about it goes out now; a call the client was shown stays known (a ghost), so a later
        update of it is no first sight."""
        session = self._sessions.get(session_id)
        if session is None:
            return
        if isinstance(state, ToolCallState):
            call = session.calls.get(state.tool_call_id)
            if call is not None:
                self._flush_call(session_id, session, state.tool_call_id, state)
                self._ghost(session_id, session, state.tool_call_id, call)
        elif isinstance(state, TerminalState):  # its readers go out while it can render
            for tool_call_id in list(session.readers.pop(state.terminal_id, ())):
                if tool_call_id in session.order:
                    self._flush_call(session_id, session, tool_call_id)
            self._rendered.pop((session_id, state.terminal_id), None)
            self._texts.pop((session_id, state.terminal_id), None)
        else:
            for tool_call_id in list(session.order):
                held = state.tool_calls.get(tool_call_id)
                self._flush_call(session_id, session, tool_call_id, held)
            for tool_call_id, call in list(session.calls.items()):
                self._ghost(session_id, session, tool_call_id, call)
            session.readers.clear()
            self._rendered = {k: v for k, v in self._rendered.items() if k[0] != session_id}
            self._texts = {k: v for k, v in self._texts.items() if k[0] != session_id}

    def _ghost(self, session_id: str, session: _Session, tool_call_id: str, call: _Call) -> None:
        """Keep only what the client was shown of a call the store no longer holds (bounded:
        ``_MAX_GHOSTS`` in all, the oldest forgotten first)."""
        self._unqueue(session_id, session, tool_call_id)
        if not call.known:
            del session.calls[tool_call_id]
            return
        for terminal_id in call.terminals:
            session.readers.get(terminal_id, set()).discard(tool_call_id)
        call.terminals = set()
        call.source, call.flat, call.slots, call.count = None, [], [], 0
        call.pending.clear()
        call.content_dirty = call.meta_dirty = False
        call.meta_sent = None
        if call.title is not None and len(call.title) > _GHOST_TITLE:
            call.title = call.title[:_GHOST_TITLE]
        call.ghost = True
        self._ghosts[(session_id, tool_call_id)] = None
        cap = _MAX_GHOSTS
        if len(self._ghosts) > cap:
            forgotten = list(self._ghosts)[: trim_block(cap)]
            for key in forgotten:
                del self._ghosts[key]
                held = self._sessions.get(key[0])
                if held is not None:
                    held.calls.pop(key[1], None)
                    if not held.calls and key[0] not in self.store.sessions:
                        del self._sessions[key[0]]
            self._loss(
                "$.max_tool_calls",
                f"forgot {len(forgotten)} tool call(s) the store no longer holds (the bridge "
                f"remembers {cap}): a later update of one is sent as a first sight",
            )

    def _revive(self, session_id: str, tool_call_id: str, call: _Call) -> None:
        """A ghost gets an update: the store holds it again."""
        call.ghost = False
        self._ghosts.pop((session_id, tool_call_id), None)

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            # The store's session comes first (its cap may evict another one, and ours with it).
            self._absorb(self.store.touch(session_id))
            session = self._sessions[session_id] = _Session()
        return session

    def _call(self, session: _Session, tool_call_id: str) -> _Call:
        call = session.calls.get(tool_call_id)
        if call is None:
            call = session.calls[tool_call_id] = _Call()
        return call

    def _touch(self, session_id: str, tool_call_id: str) -> tuple[_Session, _Call]:
        """A message about ``tool_call_id`` arrives: its changes wait (coalescing) with those
        of other calls; switching calls is no flush point (time is, ``flush``)."""
        session = self._session(session_id)
        call = self._call(session, tool_call_id)
        if call.ghost:
            self._revive(session_id, tool_call_id, call)
        session.order[tool_call_id] = None
        self._dirty[session_id] = None
        return session, call

    def _settle(self, session_id: str, session: _Session, tool_call_id: str, final: bool) -> None:
        if final or not self.coalesce:
            self._flush_call(session_id, session, tool_call_id)

    # ----------------------------------------------------------------------------------------
    # Session updates

    def _unknown_keys(self, update: Any, nested: bool = False) -> None:
        """Report the unknown keys of an update (``nested``: of every object in it, for
        terminals, which v1 is shown as text, not field by field)."""
        self._losses.extend(unknown_keys(update, "$.params.update", nested=nested))

    def _on_update(self, session_id: str, update: v2.ToolCallUpdate) -> None:
        session = self._sessions.get(session_id)
        call = session.calls.get(update.tool_call_id) if session is not None else None
        if (
            _FAST_PATHS
            and call is not None
            and call.known
            and not self.coalesce
            and not self._dirty
            and call.prompt is None
            and not (call.ghost or call.pending or call.content_dirty or call.meta_dirty)
            and update.content is UNSET
            and update.meta is UNSET
        ):
            values = plain_fields(update)
            if values is not None:
                assert session is not None
                self._update_shown(session_id, session, call, update, values)
                return
        session, call = self._touch(session_id, update.tool_call_id)
        if call.known and extras_seen():  # a first sight reports them with the whole call
            self._unknown_keys(update)
        self._absorb(self.store.apply_update(session_id, update))
        self._hold(session_id, session, call, update)

    def _hold(self, session_id: str, session: _Session, call: _Call, update: Any) -> None:
        """What an applied update changes of the call waits in ``pending`` (or goes out)."""
        _hold_fields(update, call.pending)
        if update.content is not UNSET:
            call.content_dirty = True
        if update.meta is not UNSET:
            call.meta_dirty = True
        final = isinstance(update.status, str) and update.status in v2.FINAL_STATUSES
        self._settle(session_id, session, update.tool_call_id, final or not call.known)

    def _update_shown(
        self,
        session_id: str,
        session: _Session,
        call: _Call,
        update: v2.ToolCallUpdate,
        values: dict[str, Any],
    ) -> None:
        """``_on_update`` for a call the client shows with nothing held back, without
        coalescing, of an update without content, ``_meta`` or unknown keys whose fields map
        to v1 as they are (``values``): what ``_flush_call`` would send once the store applied
        it. Where the store dropped the call, the general path goes on. (``_touch`` is left
        out: with nothing held back anywhere, the flush takes back what it would mark, and an
        eviction meanwhile flushes nothing of a call with nothing pending.)"""
        tool_call_id = update.tool_call_id
        self._absorb(self.store.apply_update(session_id, update))
        tc = self.store.tool_call(session_id, tool_call_id)
        if tc is None or call.ghost:
            self._hold(session_id, session, call, update)
            return
        if not values:
            return  # nothing v1 can show changed
        title = values.get("title")
        if isinstance(title, str):
            call.title = title
        update_v1 = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, **values)
        if tc.size * 2 + 65_536 >= self.max_message_bytes:  # (`_fit`'s own first test)
            update_v1 = self._fit(tc, update_v1)
        self._out.append(_notification(session_id, update_v1))
        if _final(tc):  # its projection is rebuilt if it ever changes again
            call.source, call.flat, call.slots, call.count = None, [], [], 0

    def _on_chunk(self, session_id: str, chunk: v2.ToolCallContentChunk) -> None:
        tool_call_id = chunk.tool_call_id
        session = self._sessions.get(session_id)
        if session is not None:
            call = session.calls.get(tool_call_id)
            if (
                _FAST_PATHS
                and call is not None
                and call.known
                and not self.coalesce
                and not self._dirty
                and call.prompt is None
                and not (call.ghost or call.pending or call.content_dirty or call.meta_dirty)
            ):
                # A call the client shows, nothing held back: the chunk goes out at once.
                self._append_shown(session_id, session, call, chunk)
                return
            if tool_call_id in session.order:
                call = session.calls[tool_call_id]  # the coalescing case: this call is pending
            else:
                session, call = self._touch(session_id, tool_call_id)
        else:
            session, call = self._touch(session_id, tool_call_id)
        if extras_seen():
            self._unknown_keys(chunk, nested=True)  # at the chunk's paths, when it comes
        self._absorb(self.store.apply_update(session_id, chunk))
        call.content_dirty = True
        if not self.coalesce or not call.known:  # a first sight goes out at once (9.9)
            self._flush_call(session_id, session, tool_call_id)

    def _append_shown(
        self, session_id: str, session: _Session, call: _Call, chunk: v2.ToolCallContentChunk
    ) -> None:
        """``_on_chunk`` for a call the client shows with nothing held back, without coalescing:
        what ``_touch`` and ``_flush_call`` would do, where the store only appended the item
        (no cap, no eviction) and the item is plain text appended to a projection with no
        terminal and nothing dropped; anything else takes ``_flush_call`` after the apply."""
        if extras_seen():
            self._unknown_keys(chunk, nested=True)  # at the chunk's paths, when it comes
        tool_call_id = chunk.tool_call_id
        events = self.store.apply_update(session_id, chunk)
        tc = None
        if len(events) == 1 and type(events[0]) is ContentAppended:
            held = self.store.sessions.get(session_id)  # (`store.tool_call`, without the call)
            tc = held.tool_calls.get(tool_call_id) if held is not None else None
        if tc is not None and not call.slots and not tc.dropped_items:
            items: list[Any] = tc.fields["content"]
            count = call.count
            item = None
            if len(items) == count + 1 and (items is call.source or not (count or call.terminals)):
                item = items[count]  # appended to what was projected (or to nothing)
            if type(item) is v2.Content and item.meta is UNSET and not call.source_dropped:
                block = item.content
                if (
                    type(block) is v2.TextContent
                    and block.annotations is UNSET
                    and block.meta is UNSET
                ):
                    flat = call.flat
                    flat.append(v1.Content(content=v1.TextContent(text=block.text)))
                    call.count = count + 1
                    if not count:
                        call.source, call.cut_at = items, 0
                    update = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, content=list(flat))
                    if tc.size * 2 + 65_536 >= self.max_message_bytes:
                        update = self._fit(tc, update)
                    self._out.append(_notification(session_id, update))
                    if _final(tc):  # its projection is rebuilt if it ever changes again
                        call.source, call.flat, call.slots, call.count = None, [], [], 0
                    return
        self._absorb(events)
        call.content_dirty = True
        self._flush_call(session_id, session, tool_call_id)

    def _on_terminal(self, session_id: str, update: Any) -> None:
        self._unknown_keys(update, nested=True)
        self._apply_update(session_id, update)
        session = self._session(session_id)
        terminal_id = update.terminal_id
        self._rendered.pop((session_id, terminal_id), None)
        readers = [tid for tid in session.readers.get(terminal_id, ()) if tid in session.calls]
        if not readers:
            return  # bytes wait in the store until a reference appears (D22)
        for tool_call_id in readers:
            session.calls[tool_call_id].content_dirty = True
            session.order[tool_call_id] = None
            self._dirty[session_id] = None
            self._settle(session_id, session, tool_call_id, False)

    def _on_other_update(self, session_id: str, update: Any) -> None:
        tag = update.tag if isinstance(update, v2.OpaqueSessionUpdate) else type(update).__name__
        if tag not in _UNFLUSHING_TAGS:
            self._flush_session(session_id)  # keeps the v1 client's view in stream order
        if tag in _FLUSHING_TAGS:
            self._loss("$.params.update", f"`{tag}` has no v1 form: not forwarded")
            return
        if tag == "compaction_update" and self.compaction:
            update = self._compaction_meta(session_id, update)
        mapped, losses = session_update_to_v1(
            update, notices=self.notices, compaction=self.compaction
        )
        self._extend(losses, "$.params.update")
        if mapped is not None:
            self._emit_update(session_id, mapped)

    def _compaction_meta(self, session_id: str, update: Any) -> Any:
        """A ``compaction_update`` whose ``_meta`` patch (v2: by top-level key) is replaced by
        the compaction's whole merged ``_meta``: a v1 client replaces it (D39, 9.8)."""
        data = update.data
        compaction_id = data.get("compactionId")
        patch = data.get("_meta", UNSET)
        if not isinstance(compaction_id, str) or not (patch is None or isinstance(patch, dict)):
            return update  # nothing to merge (a `_meta` that is no object is reported later)
        key = (session_id, compaction_id)
        merged = patch_meta(self._compactions.pop(key, None), patch)
        if isinstance(merged, dict):
            cap = self.store.limits.max_meta_keys
            if cap is not None and len(merged) > cap:
                for name in list(merged)[: len(merged) - cap]:
                    del merged[name]
                self._loss("$.params.update._meta", f"more than {cap} keys: the oldest dropped")
            self._compactions[key] = merged
            if len(self._compactions) > _MAX_COMPACTIONS:
                del self._compactions[next(iter(self._compactions))]
        return v2.OpaqueSessionUpdate({**data, "_meta": merged})

    # ----------------------------------------------------------------------------------------
    # Permissions and other messages

    def _on_permission(self, message: v2.PermissionRequestMessage) -> None:
        self._losses.extend(unknown_keys(message, "$"))
        params = message.params
        session_id = params.session_id
        subject = params.subject
        refusal = self._forwarded.refusal(message.id)
        if refusal is not None:  # two answers would go back under one id
            self._replies.append(refusal[0])
            self._losses += [refusal[1], *unknown_keys(params, "$.params", nested=True)]
            return
        session = self._session(session_id)
        named: str | None = None
        if isinstance(subject, v2.ToolCallPermissionSubject):
            named = subject.tool_call.tool_call_id
            self._apply(message)
        elif isinstance(subject, v2.CommandPermissionSubject):
            named = subject.tool_call_id if isinstance(subject.tool_call_id, str) else None
        self._flush_session(session_id)
        shown_before = False  # the client showed the subject's call before this request
        if isinstance(subject, v2.ToolCallPermissionSubject) and named is not None:
            known = self._call(session, named)
            shown_before = known.known
            if not known.known:  # the call goes out first, titled by the prompt if need be
                known.title_fallback = params.title
                self._flush_call(session_id, session, named)
        cap = self.store.limits.max_permission_options
        if cap is not None and len(params.options) > cap:
            self._loss(
                "$.params.options",
                f"{len(params.options)} options, over the cap of {cap} (max_permission_options): "
                "request not sent; answered the agent `cancelled`",
            )
            self._losses.extend(unknown_keys(params, "$.params", nested=True))
            self._replies.append(response(message.id, CANCELLED_OUTCOME))
            if shown_before and isinstance(subject, v2.ToolCallPermissionSubject):
                self._unasked_subject(session_id, subject.tool_call)
            return
        shown = self._shown(session_id, session, named)
        request, losses = permission_request_to_v1(params, request_id=message.id, shown=shown)
        self._extend(losses, "$.params")
        if request is None or not request.options:
            # Nothing a v1 client can show (D29): answer the agent ourselves; never approval.
            self._replies.append(response(message.id, CANCELLED_OUTCOME))
            if shown_before and isinstance(subject, v2.ToolCallPermissionSubject):
                self._unasked_subject(session_id, subject.tool_call)
            return
        tool_call_id = request.tool_call.tool_call_id
        call = self._call(session, tool_call_id)
        synthetic = not call.known
        if synthetic:  # a synthetic call for the prompt (D28)
            create = _synthetic_tool_call(request.tool_call, params.title)
            self._emit_update(session_id, create)
            call.known, call.title = True, create.title
            self._ghost(session_id, session, tool_call_id, call)  # the store holds none of it
        elif shown is not None and (request.tool_call.title != call.title or prompt_items(params)):
            if call.prompt is None:
                call.prompt = _Overlay(params.title, prompt_items(params))
            else:  # another prompt on the same call: the newest is shown
                call.prompt.title, call.prompt.items = params.title, prompt_items(params)
                call.prompt.items_shown = call.prompt.items_shown or bool(call.prompt.items)
                call.prompt.open += 1
        allow = frozenset(
            option.option_id for option in request.options if option.kind in ALLOW_OPTION_KINDS
        )
        oldest = self._forwarded.add(message.id, _Asked(session_id, tool_call_id, allow, synthetic))
        if oldest is not None:  # past the cap: the oldest is given up
            self._losses.append(oldest[1])
            self._give_up(oldest[0])
        self._out.append(v1.PermissionRequestMessage(id=message.id, params=request))

    def _unasked_subject(self, session_id: str, subject: v2.ToolCallUpdate) -> None:
        """A request the client is not asked: what its subject changed of a call the client
        shows (the store applied it) goes to the client as the agent's update would, else the
        client would never see it (found by the fuzz test's comparison with a fresh bridge)."""
        session, call = self._touch(session_id, subject.tool_call_id)
        self._hold(session_id, session, call, subject)

    def _shown(
        self, session_id: str, session: _Session, tool_call_id: str | None
    ) -> list[Any] | None:
        """The v1 content the client holds for a call it shows (``None``: it shows no such
        call), where a prompt on that call is shown ahead of it."""
        call = session.calls.get(tool_call_id) if tool_call_id is not None else None
        if call is None or not call.known:
            return None
        tc = self.store.tool_call(session_id, tool_call_id) if tool_call_id is not None else None
        return self._project(session_id, call, tc)[0] if tc is not None else []

    def _give_up(self, request_id: Any) -> None:
        """Answer a forwarded request ``cancelled`` on the client's behalf: the agent gets the
        answer, the client ``$/cancel_request`` and the call's own state."""
        gone = self._forwarded.give_up(request_id)
        if gone is not None:
            self._replies.append(gone.reply)
            self._out.append(gone.cancel)
            self._out.extend(self._settled(gone.value, None))

    def _settled(self, asked: _Asked, selected: str | None) -> list[Any]:
        """What the v1 client is sent once a prompt has its outcome (``selected``: the option
        chosen, ``None``: not approved): a synthetic call ends (D28); a call that showed the
        prompt gets its own title and content back."""
        session_id, tool_call_id = asked.session_id, asked.tool_call_id
        session = self._sessions.get(session_id)
        call = session.calls.get(tool_call_id) if session is not None else None
        if call is None:
            return []
        tc = self.store.tool_call(session_id, tool_call_id)
        if asked.synthetic and tc is None:
            status = "completed" if selected in asked.allow else "failed"
            update = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, status=status)
            return [_notification(session_id, update)]
        overlay = call.prompt
        if overlay is None:
            return []
        overlay.open -= 1
        if overlay.open > 0:
            return []
        call.prompt = None
        changes: dict[str, Any] = {}
        if overlay.title != call.title and call.title is not None:
            changes["title"] = call.title
        if overlay.items_shown:  # (an earlier prompt's items too: the client still shows them)
            changes["content"] = self._project(session_id, call, tc)[0] if tc is not None else []
            call.content_dirty = False
        if not changes:
            return []
        update = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, **changes)
        return [_notification(session_id, update)]

    def _on_other_message(self, message: JsonRpcMessage) -> None:
        data = message.data
        method = data.get("method")
        if method == "$/cancel_request":  # the agent withdraws a request it sent the client
            for session_id in list(self._dirty):  # a flush point: what was held goes first
                self._flush_session(session_id)
            params = data.get("params")
            request_id = params.get("requestId") if isinstance(params, dict) else None
            if request_id is not None and request_id in self._forwarded:
                self._give_up(request_id)  # answered `cancelled` at once (9.7)
                return
        elif method is None and "id" in data:  # the client's answer
            known, asked, late = self._forwarded.answered(data.get("id"))
            if late is not None:
                self._losses.append(late)
            if asked is not None:
                answer, selected = self._answer(data)
                self._out.append(answer)
                self._replies.extend(self._settled(asked, selected))
            if known:
                return
        self._out.append(message)  # not a tool-call message: passed through unchanged

    def _answer(self, data: Any) -> tuple[JsonRpcMessage, str | None]:
        """The client's answer as the agent's, and the option it selected (``None``: none)."""
        error = data.get("error")
        if isinstance(error, dict):
            if error.get("code") == REQUEST_CANCELLED:  # cancelled by the client
                return response(data.get("id"), CANCELLED_OUTCOME), None
            return JsonRpcMessage(data), None  # the agent reads any error as not approved
        try:
            answer = decode(data.get("result"), v1.RequestPermissionResponse).value
        except DecodeError:
            self._loss("$.result", "unreadable permission answer: answered `cancelled`")
            return response(data.get("id"), CANCELLED_OUTCOME), None
        mapped = permission_response_to_v2(answer)
        outcome = mapped.outcome
        selected = outcome.option_id if isinstance(outcome, v2.SelectedPermissionOutcome) else None
        return response(data.get("id"), to_builtins(mapped)), selected

    # ----------------------------------------------------------------------------------------
    # Flushing and projection

    def _unqueue(self, session_id: str, session: _Session, tool_call_id: str) -> None:
        session.order.pop(tool_call_id, None)
        if not session.order:
            self._dirty.pop(session_id, None)

    def _flush_session(self, session_id: str) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            for tool_call_id in list(session.order):
                self._flush_call(session_id, session, tool_call_id)

    def _flush_call(
        self,
        session_id: str,
        session: _Session,
        tool_call_id: str,
        tc: ToolCallState | None = None,
    ) -> None:
        """Send the call's held-back changes (``tc``: its state, when the store is about to
        drop it)."""
        self._unqueue(session_id, session, tool_call_id)
        call = session.calls.get(tool_call_id)
        if tc is None:
            tc = self.store.tool_call(session_id, tool_call_id)
        if call is None or tc is None:
            return
        if not call.known:  # first sight: a `tool_call`, even for a bare id
            self._send_create(session_id, call, tc)
            return
        pending = call.pending
        if not (pending or call.content_dirty or call.meta_dirty):
            return
        values: dict[str, Any] = {}  # attribute -> v1 value
        if pending:
            values, losses = update_values(v2.ToolCallUpdate(tool_call_id=tool_call_id, **pending))
            if losses:
                self._extend(losses, "$.params.update")
        meta: dict[str, Any] | None = None
        if call.content_dirty:
            values["content"], meta = self._project(session_id, call, tc)
        if call.meta_dirty or meta:
            stored = tc.meta if isinstance(tc.meta, dict) else {}
            merged = {**stored, **meta} if meta else dict(stored)  # the full merged `_meta` (D39)
            if merged != call.meta_sent:  # only when it changed
                values["meta"] = call.meta_sent = merged
        title = values.get("title")
        if isinstance(title, str):
            call.title = title
        if call.prompt is not None:  # a prompt shown on the call stays until its answer
            if isinstance(title, str):
                values["title"] = call.prompt.title
            if "content" in values and call.prompt.items:
                values["content"] = [*call.prompt.items, *values["content"]]
        pending.clear()
        call.content_dirty = call.meta_dirty = False
        if not values:
            return  # nothing v1 can show changed (a capabilities-only patch, say)
        update = v1.SessionToolCallUpdate(tool_call_id=tool_call_id, **values)
        self._emit_update(session_id, self._fit(tc, update))
        if tc.is_final:  # its projection is rebuilt if it ever changes again
            call.source, call.flat, call.slots, call.count = None, [], [], 0

    def _send_create(self, session_id: str, call: _Call, tc: ToolCallState) -> None:
        values = None
        if _FAST_PATHS and tc.extra is None and tc.raw is None:
            values = plain_stored_fields(tc.fields, tc.meta)  # the common call, read directly
        if values is not None:
            create_defaults(values, tc.fields.get("kind"), call.title_fallback)
        else:
            snapshot = replace(tc.snapshot(), content=UNSET)  # its unknown keys are reported
            values, losses = create_values(snapshot, title_fallback=call.title_fallback)
            if losses:
                self._extend(losses, "$.params.update")
        content, meta = self._project(session_id, call, tc)
        if content:
            values["content"] = content
        if meta:
            stored = tc.meta if isinstance(tc.meta, dict) else {}
            values["meta"] = call.meta_sent = {**stored, **meta}
        elif isinstance(tc.meta, dict):
            call.meta_sent = tc.meta
        call.known = True
        call.title = values["title"]
        call.pending.clear()
        call.content_dirty = call.meta_dirty = False
        self._emit_update(
            session_id, self._fit(tc, v1.ToolCall(tool_call_id=tc.tool_call_id, **values))
        )

    def _fit(self, tc: ToolCallState, update: Any) -> Any:
        """``update`` with content items left out of its middle when its line would be over
        ``max_message_bytes`` (a marker says how many); the store's count of the call's bytes
        says when to look."""
        limit = self.max_message_bytes
        content = update.content
        if tc.size * 2 + 65_536 < limit or not isinstance(content, list) or not content:
            return update
        session_id = "x" * 64  # the envelope around it, at most about this long
        size = len(encode(_notification(session_id, update)))
        if size <= limit:
            return update
        keep, cut = len(content), content
        while keep > 0 and size > limit:
            keep //= 2
            left = len(content) - keep
            marker = _text_item(f"[\u2026 {left:,} content item(s) omitted to fit a line]")
            cut = [*content[: keep // 2], marker, *content[len(content) - (keep - keep // 2) :]]
            shorter = replace(update, content=cut)
            size = len(encode(_notification(session_id, shorter)))
        self._loss(
            "$.params.update.content",
            f"{tc.tool_call_id}: {len(content) - keep} content item(s) left out so that the line "
            f"stays under {limit} bytes",
        )
        return replace(update, content=cut)

    def _project(
        self, session_id: str, call: _Call, tc: ToolCallState
    ) -> tuple[list[Any], dict[str, Any]]:
        """The v1 content of the call's current content, and the terminal ``_meta`` keys.

        v2 items are projected once, as they arrive (chunks extend the projection); a
        replacement array or a cap that trimmed the content starts it afresh. Terminal slots
        are filled at every flush from the (cached) rendering of the terminal's state. Where a
        cap dropped items, a text item says how many.
        """
        items = tc.content
        if (
            _FAST_PATHS
            and not items
            and not call.count
            and not call.terminals
            and not tc.dropped_items
        ):
            # no content yet (the common first sight): what the general path ends with
            call.source, call.source_dropped, call.cut_at = items, 0, 0
            return [], {}
        if (
            items is not call.source
            or len(items) < call.count
            or (tc.dropped_items != call.source_dropped)
        ):
            call.source, call.source_dropped = items, tc.dropped_items
            call.count, call.flat, call.slots = 0, [], []
            session = self._session(session_id)
            for terminal_id in call.terminals:
                session.readers.get(terminal_id, set()).discard(tc.tool_call_id)
            call.terminals = set()
        for index in range(call.count, len(items)):
            if index == tc.dropped_at:
                call.cut_at = len(call.flat)
            item = items[index]
            if (
                _FAST_PATHS and type(item) is v2.Content
            ):  # a plain text item, the bulk of streamed output
                block = item.content
                if (
                    type(block) is v2.TextContent
                    and block.annotations is UNSET
                    and block.meta is UNSET
                    and item.meta is UNSET
                ):
                    call.flat.append(v1.Content(content=v1.TextContent(text=block.text)))
                    continue
            if isinstance(item, v2.Terminal):
                call.slots.append((len(call.flat), item.terminal_id))
                call.flat.append(None)
                call.terminals.add(item.terminal_id)
                readers = self._session(session_id).readers
                readers.setdefault(item.terminal_id, set()).add(tc.tool_call_id)
                continue
            converted, losses = content_to_v1(item, path=f"$.content[{index}]")
            self._extend(losses, "$.params.update")
            call.flat.extend(converted)
        if tc.dropped_at >= len(items):
            call.cut_at = len(call.flat)
        call.count = len(items)
        out = list(call.flat)
        meta: dict[str, Any] = {}
        for position, terminal_id in call.slots:
            out[position], terminal_meta = self._render_terminal(session_id, terminal_id)
            meta.update(terminal_meta)
        if tc.dropped_items:
            marker = f"[\u2026 {tc.dropped_items:,} content item(s) omitted (memory caps)]"
            out.insert(call.cut_at, _text_item(marker))
        if call.slots:
            out = [item for item in out if item is not None]
        return out, meta

    def _render_terminal(self, session_id: str, terminal_id: str) -> tuple[Any, dict[str, Any]]:
        key = (session_id, terminal_id)
        cached = self._rendered.get(key)
        if cached is None:
            cached = self._rendered[key] = self._render_terminal_now(session_id, terminal_id)
            if len(self._rendered) > _RENDERED:  # renderings are a cache: the oldest go
                del self._rendered[next(iter(self._rendered))]
        return cached

    def _render_terminal_now(self, session_id: str, terminal_id: str) -> tuple[Any, dict[str, Any]]:
        session = self.store.sessions.get(session_id)
        terminal = session.terminals.get(terminal_id) if session is not None else None
        command = terminal.command if terminal is not None else None
        exit_status = terminal.exit_status if terminal is not None else None
        cwd = terminal.cwd if terminal is not None else None
        output = self._terminal_text(session_id, terminal) if terminal is not None else ""
        if self.terminal_profile == "meta":
            info: dict[str, Any] = {"terminal_id": terminal_id}
            if command is not None:
                info["command"] = command
            if cwd is not None:
                info["cwd"] = cwd
            meta: dict[str, Any] = {
                "terminal_info": info,
                "terminal_output": {"terminal_id": terminal_id, "data": output},
            }
            if exit_status is not None:
                meta["terminal_exit"] = {
                    "terminal_id": terminal_id,
                    "exit_code": _or_none(exit_status.exit_code),
                    "signal": _or_none(exit_status.signal),
                }
            return None, meta
        lines = [f"$ {command}"] if command is not None else []
        if output:
            lines.append(output.rstrip("\n"))
        if exit_status is not None:
            lines.append(_exit_line(exit_status))
        text = fenced("\n".join(lines))
        return v1.Content(content=v1.TextContent(text=text)), {}

    def _terminal_text(self, session_id: str, terminal: TerminalState) -> str:
        """The sanitized tail of the terminal's output, through its renderer (output that only
        grew since the last render costs what it grew by)."""
        data = terminal.output
        if not isinstance(data, bytearray):
            return ""
        key = (session_id, terminal.terminal_id)
        renderer = self._texts.pop(key, None) or TailRenderer(self.tail_chars)
        self._texts[key] = renderer  # the most recently rendered last
        if len(self._texts) > _RENDERERS:
            del self._texts[next(iter(self._texts))]
        return renderer.render(data)

    def _emit_update(self, session_id: str, update: Any) -> None:
        self._out.append(_notification(session_id, update))


def _final(tc: ToolCallState) -> bool:
    """``tc.is_final``, without its two properties."""
    status = tc.fields.get("status")
    return isinstance(status, str) and status in FINAL_STATUSES


def _text_item(text: str) -> v1.Content:
    return v1.Content(content=v1.TextContent(text=text))


def _notification(session_id: str, update: Any) -> v1.SessionUpdateMessage:
    return v1.SessionUpdateMessage(
        params=v1.SessionNotification(session_id=session_id, update=update)
    )


def _synthetic_tool_call(tool_call: v1.ToolCallUpdate, title: str) -> v1.ToolCall:
    body = {k: v for k, v in msgspec.structs.asdict(tool_call).items() if v is not None}
    if not isinstance(body.get("title"), str) or not body["title"]:
        body["title"] = title or "Permission required"
    body["content"] = body["content"] if body.get("content") else UNSET
    return v1.ToolCall(**body)


def _exit_line(status: v2.TerminalExitStatus) -> str:
    if isinstance(status.exit_code, int):
        return f"[exit code {status.exit_code}]"
    if isinstance(status.signal, str):
        return f"[signal {status.signal}]"
    return "[exited]"


def _or_none(value: Any) -> Any:
    return None if value is UNSET else value
