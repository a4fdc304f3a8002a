"""The stateful v2 -> v1 bridge: a v2 agent's traffic, made right for a v1 client.

Rules this module owns (D46 (terminal conversion to v2 to v1 bridge); D10, D22, D28-D30, D39): the
bridge's entry points and options, and what reaches which component.

- ``convert`` takes one message (or batch) of the agent -> client direction, or the client's
  answer to a forwarded permission request, as raw bytes, JSON values or typed models; raw
  input is decoded leniently (what was salvaged is reported), a batch's outputs go out as one
  batch. A batch is one flush unit (issue 27): its elements coalesce, then each call they
  touched goes out once (with ``coalesce``, the policy's own flush points decide). Session
  updates go to their handler by type, permission requests and other JSON-RPC messages to the
  permission component; notification ``_meta`` and unknown envelope keys are reported, never
  carried.
- Every loss is reported; caps come from the store's ``Limits`` (its terminals keep about the
  tail a v1 client is shown, ``4 * tail_chars`` bytes); ``close_session`` frees all.
- A ``notice`` reaches a client that did not advertise ``session.notices`` as agent message
  text of a message of its own (``acp-toolcalls-notice-`` and a number; D30 as amended), in
  stream order; one that did gets the ``notice``.
- The unstable updates (``convert._unstable``) reach a client that advertised ``subagents``
  (``subagent_update``, session messages) or ``plan`` (``plan_removed``, and ``plan_update``
  with its id) as their v1 forms.
  For one that did not, a session message's content is agent message text under its
  ``messageId`` (once per message: a later upsert of a message shown is reported, as v1 only
  appends); the rest is reported.

Theory of operation: ``V2ToV1Bridge`` holds one ``BridgeState`` (``_to_v1_state``: the
options the components read, the store, the per-session tables, the store's events) and the
components that share it, one module each, each holding the ones it calls:
``TerminalRendering`` (``_to_v1_terminals``: terminal renderings and the ``_meta`` extension),
``Projection`` (``_to_v1_projection``: what a flush sends: first sight, re-projected content,
line fitting), ``SessionUpdates`` (``_to_v1_calls``: session updates, coalescing, the store's
evictions) and ``Permissions`` (``_to_v1_permissions``: permission requests and answers). This
module has the options, the public API and the dispatch; the options the components read live
in the state (the bridge's properties). Each message's outputs collect in the state's ``out``,
``replies`` and ``losses`` and are taken as one ``Converted``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET

from .. import v1, v2
from .._mypyc import mypyc_attr
from ..codec import (
    DEFAULT_MAX_BYTES,
    FAST_PATH_MISSES,
    fast_message_decoder,
)
from ..convert import (
    NO_LOSSES,
    Converted,
    Losses,
    LossReport,
    batched,
    invalid_element,
    read_input,
    session_message_as_text,
    session_update_to_v1,
    unknown_keys,
)
from ..models import UNSTABLE_SESSION_UPDATES, Batch, InvalidMessage, JsonRpcMessage
from ..store import Limits, ToolCallStore
from ._disk_diffs import ReadFile
from ._terminal_text import DEFAULT_TAIL_CHARS
from ._to_v1_calls import SessionUpdates
from ._to_v1_permissions import Permissions
from ._to_v1_projection import Projection
from ._to_v1_state import TERMINAL_PROFILES, BridgeState, TerminalProfile
from ._to_v1_terminals import TerminalRendering

__all__ = ["TerminalProfile", "V2ToV1Bridge"]

_FAST_DECODE = fast_message_decoder("v2")
_UNSTABLE = UNSTABLE_SESSION_UPDATES["v2"]
_SESSION_MESSAGES = frozenset({"session_message", "session_message_chunk"})
_MAX_MESSAGES_SHOWN = 4096
"""Session messages shown as agent message text that are remembered (the oldest forgotten)."""


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassable, compiled or not
class V2ToV1Bridge:
    """Converts a v2 agent's messages for a v1 client, one message at a time (sans-I/O).

    ``convert`` takes any message of the agent -> client direction, and the client's answers
    to permission requests (matched by JSON-RPC id), as raw bytes, JSON values or typed
    models; it returns a ``Converted`` whose ``messages`` are typed v1 models or
    ``JsonRpcMessage`` values to ``encode`` and send on.

    ``prompts_end_on_update``: a prompt shown on a call (D28) ends at the call's next update
    as well as at its answer, for a log converted after the fact, which may hold no answer
    (``convert --to v1``); live, the prompt stays until its answer.

    ``read_file(path, roots)`` (optional, supplied by the I/O edge: the bridge reads no file
    itself) lets it show a v2 diff's files as v1 diffs, their texts rebuilt from the file and
    the diff's Git patch, for files under the directories ``set_roots`` gave the session
    (``_disk_diffs``, D27 as amended).

    ``notices``, ``compaction``, ``subagents`` and ``plan``: what the v1 client advertised
    (``session.notices``, ``session.compaction``, D30; the unstable ``subagents`` and ``plan``,
    which decide whether the unstable updates reach it in their v1 forms: ``convert._unstable``).
    """

    def __init__(
        self,
        *,
        coalesce: bool = False,
        prompts_end_on_update: bool = False,
        terminal_profile: TerminalProfile = "text",
        tail_chars: int = DEFAULT_TAIL_CHARS,
        limits: Limits | None = None,
        notices: bool = False,
        compaction: bool = False,
        subagents: bool = False,
        plan: bool = False,
        max_message_bytes: int = DEFAULT_MAX_BYTES,
        read_file: ReadFile | None = None,
    ) -> None:
        if terminal_profile not in TERMINAL_PROFILES:
            raise ValueError(f"unknown terminal profile {terminal_profile!r}")
        store = ToolCallStore(version="v2", limits=limits)
        terminal_cap = store.limits.max_terminal_bytes
        if terminal_cap is None or terminal_cap > 4 * tail_chars:
            # A v1 client is shown a terminal's tail only: the store keeps about that much.
            terminal_cap = max(4 * tail_chars, 1)
            store.limits = msgspec.structs.replace(store.limits, max_terminal_bytes=terminal_cap)
        self._state = state = BridgeState(
            store,
            coalesce=coalesce,
            prompts_end_on_update=prompts_end_on_update,
            terminal_profile=terminal_profile,
            tail_chars=tail_chars,
            notices=notices,
            compaction=compaction,
            max_message_bytes=max_message_bytes,
            read_file=read_file,
        )
        # What the v1 client advertised of the unstable surface (`convert._unstable`).
        self.subagents = subagents
        self.plan = plan
        self._projection = projection = Projection(state, TerminalRendering(state))
        self._updates = updates = SessionUpdates(state, projection)
        store.on_evict = updates.evicted
        self._permissions = Permissions(state, projection, updates)
        # Session updates by type (`_dispatch`); the rest go to `_on_other_update`.
        self._handlers: dict[type, Callable[[str, Any], None]] = {
            v2.SessionToolCallUpdate: updates.on_update,
            v2.ToolCallContentChunk: updates.on_chunk,
            v2.TerminalUpdate: updates.on_terminal,
            v2.TerminalOutputChunk: updates.on_terminal,
            v2.OpaqueSessionUpdate: self._on_other_update,
        }
        self._notices_shown = 0  # notices shown as agent message text: their ids' numbers

    # ----------------------------------------------------------------------------------------
    # Options (the components read them from the shared state)

    @property
    def store(self) -> ToolCallStore:
        """The v2 state of every call and terminal the agent sent (the bridge's own store)."""
        return self._state.store

    @property
    def coalesce(self) -> bool:
        """Whether changes are held back until a flush point (the coalescing policy)."""
        return self._state.coalesce

    @coalesce.setter
    def coalesce(self, value: bool) -> None:
        self._state.coalesce = value

    @property
    def prompts_end_on_update(self) -> bool:
        """Whether a prompt shown on a call ends at the call's next update, too."""
        return self._state.prompts_end_on_update

    @prompts_end_on_update.setter
    def prompts_end_on_update(self, value: bool) -> None:
        self._state.prompts_end_on_update = value

    @property
    def notices(self) -> bool:
        """Whether the v1 client advertised ``session.notices`` (D30)."""
        return self._state.notices

    @notices.setter
    def notices(self, value: bool) -> None:
        self._state.notices = value

    @property
    def compaction(self) -> bool:
        """Whether the v1 client advertised ``session.compaction`` (D30)."""
        return self._state.compaction

    @compaction.setter
    def compaction(self, value: bool) -> None:
        self._state.compaction = value

    @property
    def terminal_profile(self) -> TerminalProfile:
        """How the v1 client is shown a terminal (``TerminalProfile``)."""
        return self._state.terminal_profile

    @terminal_profile.setter
    def terminal_profile(self, value: TerminalProfile) -> None:
        self._state.terminal_profile = value

    @property
    def tail_chars(self) -> int:
        """Characters of a terminal's output the ``text`` profile shows (its tail)."""
        return self._state.tail_chars

    @tail_chars.setter
    def tail_chars(self, value: int) -> None:
        self._state.tail_chars = value

    @property
    def max_message_bytes(self) -> int:
        """The longest line the bridge sends (content items are left out to fit)."""
        return self._state.max_message_bytes

    @max_message_bytes.setter
    def max_message_bytes(self, value: int) -> None:
        self._state.max_message_bytes = value

    @property
    def read_file(self) -> ReadFile | None:
        """What reads a file under a session's roots for a diff's texts (``None``: off)."""
        return self._state.read_file

    @read_file.setter
    def read_file(self, value: ReadFile | None) -> None:
        self._state.read_file = value

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
                    self._updates.on_chunk(params.session_id, update)
                    return self._take()
                if type(update) is v2.SessionToolCallUpdate:
                    self._updates.on_update(params.session_id, update)
                    return self._take()
                handler = self._handlers.get(type(update))
                if handler is not None:
                    handler(params.session_id, update)
                    return self._take()
        state = self._state
        message = read_input(message, "v2", state.losses)
        if isinstance(message, Batch):
            # A batch is one flush unit (issue 27): its elements coalesce, then every call
            # they touched goes out once (v1 has no append: a chunk re-sends the whole content).
            coalesce, state.coalesce = state.coalesce, True
            try:
                for item in message.items:
                    self._dispatch(item)
            finally:
                state.coalesce = coalesce
            if not coalesce:  # (coalescing already, the policy's own flush points decide)
                for sid in list(state.dirty):
                    self._projection.flush_session(sid)
            outputs = self._take()
            return Converted(batched(list(outputs.messages)), outputs.replies, outputs.losses)
        self._dispatch(message)
        return self._take()

    def flush(self, session_id: str | None = None, *, max_bytes: int | None = None) -> Converted:
        """Send the pending changes (of one session, or of all), oldest first; with
        ``max_bytes``, stop once calls of about that many bytes (as the store counts them)
        went out, and ``pending`` says whether any change is left."""
        state = self._state
        budget = max_bytes
        for sid in [session_id] if session_id is not None else list(state.dirty):
            session = state.sessions.get(sid)
            if session is None:
                state.dirty.pop(sid, None)
                continue
            for tool_call_id in list(session.order):
                if budget is not None and budget <= 0:
                    return self._take()
                held = state.store.tool_call(sid, tool_call_id)
                self._projection.flush_call(sid, session, tool_call_id)
                if budget is not None and held is not None:
                    budget -= held.size
        return self._take()

    @property
    def pending(self) -> bool:
        """Whether a change is held back (coalescing)."""
        return bool(self._state.dirty)

    def set_roots(self, session_id: str, cwd: Any, additional_directories: Any = None) -> None:
        """The session's directories, from the params the client set it up with (``cwd``,
        ``additionalDirectories``): diffs of files under them are rebuilt from disk."""
        self._state.set_roots(session_id, cwd, additional_directories)

    def close_session(self, session_id: str) -> Converted:
        """Flush the session, then forget everything about it (store state included)."""
        self._projection.flush_session(session_id)
        self._state.forget_session(session_id)
        self._permissions.forget_session(session_id)
        return self._take()

    def withdraw(self, request_id: Any) -> Converted:
        """Settle a forwarded permission request on the client's behalf (the session was
        cancelled, say): the agent is answered ``cancelled`` (``replies``), the client is sent
        ``$/cancel_request`` and the call's own state (``messages``), and the client's late
        answer will be dropped. Nothing happens for a request that is not pending."""
        self._permissions.give_up(request_id)
        return self._take()

    # ----------------------------------------------------------------------------------------
    # Dispatch

    def _on_other_update(self, session_id: str, update: Any) -> None:
        """A ``notice`` for a client that did not advertise ``session.notices``: agent message
        text of a message of its own (D30 as amended); the unstable updates: ``_on_unstable``;
        any other update: ``SessionUpdates.on_other_update``."""
        state = self._state
        tag = update.tag if isinstance(update, v2.OpaqueSessionUpdate) else None
        if tag in _UNSTABLE or (tag == "plan_update" and self.plan):
            self._on_unstable(session_id, update)
            return
        if state.notices or tag != "notice":
            self._updates.on_other_update(session_id, update)
            return
        self._projection.flush_session(session_id)  # keeps the client's view in stream order
        self._notices_shown += 1
        notice_id = f"acp-toolcalls-notice-{self._notices_shown}"
        mapped, losses = session_update_to_v1(update, notice_id=notice_id)
        state.extend(losses, "$.params.update")
        if mapped is not None:
            state.emit_update(session_id, mapped)

    def _on_unstable(self, session_id: str, update: Any) -> None:
        """An unstable update (``convert._unstable``): its v1 form for a client that advertised
        its capability; a session message for one that did not, as agent message text once
        per message (v1 only appends: a later upsert of a message shown is reported)."""
        state = self._state
        self._projection.flush_session(session_id)  # keeps the client's view in stream order
        if update.tag == "subagent_update":  # its title names the child's `session` items
            state.apply_update(session_id, update)
        data = update.data
        if self.subagents or update.tag not in _SESSION_MESSAGES:
            mapped, report = session_update_to_v1(
                update,
                notices=state.notices,
                compaction=state.compaction,
                subagents=self.subagents,
                plan=self.plan,
            )
            state.extend(report, "$.params.update")
            if mapped is not None:
                state.emit_update(session_id, mapped)
            return
        key = (session_id, data.get("messageId"))
        if update.tag == "session_message":
            if not isinstance(data.get("content"), list):
                state.loss(
                    "$.params.update",
                    "`session_message` without content: its participants have no v1 form "
                    "for a client without `subagents`; not forwarded",
                )
                return
            if key in state.messages_shown:
                state.loss(
                    "$.params.update",
                    f"`session_message` replaces content a v1 client already has (messageId "
                    f"{key[1]!r}); not forwarded",
                )
                return
        losses = Losses(False)
        for chunk in session_message_as_text(data, losses):
            state.emit_update(session_id, v1.OpaqueSessionUpdate(chunk))
        state.extend(losses.report(), "$.params.update")
        shown = state.messages_shown
        shown.pop(key, None)
        shown[key] = None
        if len(shown) > _MAX_MESSAGES_SHOWN:
            del shown[next(iter(shown))]

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
            handler = self._handlers.get(type(update))
            if handler is None:
                handler = next(
                    (h for cls, h in self._handlers.items() if isinstance(update, cls)),
                    self._on_other_update,
                )
            handler(params.session_id, update)
        elif isinstance(message, v2.PermissionRequestMessage):
            self._permissions.on_permission(message)
        elif isinstance(message, JsonRpcMessage):
            self._permissions.on_other_message(message)
        elif isinstance(message, InvalidMessage):
            self._state.losses.append(invalid_element(message))
        else:
            raise TypeError(f"cannot convert a {type(message).__name__} from a v2 agent")

    def _envelope_losses(self, message: v2.SessionUpdateMessage) -> None:
        # What a v1 message cannot carry from the envelope: the notification's `_meta` (the
        # v1 update may merge several notifications) and unknown keys (D19).
        state = self._state
        if message.params.meta is not UNSET:
            state.loss("$.params._meta", "notification metadata is not carried to v1")
        for root, obj in (("$", message), ("$.params", message.params)):
            state.losses.extend(unknown_keys(obj, root))

    def _take(self) -> Converted:
        """The outputs of the message converted (the shared state's), taken."""
        state = self._state
        out = state.out
        state.out = []
        if not state.losses and not state.replies:
            return Converted(tuple(out), (), NO_LOSSES)
        converted = Converted(tuple(out), tuple(state.replies), LossReport(state.losses))
        state.replies, state.losses = [], []
        return converted
