"""v1 input: v1 tool-call messages mapped to v2 patches (D46 (field mapping)), then the same rules.

Rules this module owns (D9, D20, D32, D33, D38 amended):

- A v1 ``tool_call`` or ``tool_call_update`` goes through the v1 -> v2 mapping
  (``acp_toolcalls.convert``): a v1 ``null`` changes nothing; a repeated ``tool_call`` merges
  (D9), and one of a finished call is reported as reopening it (D20); what the mapping loses is
  reported (``lossy`` diagnostics).
- A ``kind`` or ``status`` string v1 does not define (``v1.TOOL_CALL_ENUMS``: a leaked
  ``cancelled``, ``paused``, a custom kind) is not applied, as v1 reads it (the default on a
  create, no change on an update), and is kept beside the state (``raw``) only to be sent on
  (``snapshot``; D32); a later applied value of that field replaces it.
- A v1 permission request's ``toolCall`` is applied as an update when the request is read
  (D18, D33).
- A ``session_info_update`` is read for its title only (``_sessions``), as on v2.
- The ``_meta`` terminal extension of a tool call (or a permission ``toolCall``) is read as the
  v1 -> v2 bridge reads it (``convert.TerminalReader``, one per session): its terminal updates
  are applied first (``_terminals``), then the call without the extension's keys, its display
  terminal items kept; what the reader reports is a ``lossy`` diagnostic.
"""

from __future__ import annotations

from typing import Any, cast

from msgspec import UNSET

from .. import v1, v2
from ..convert import (
    Losses,
    TerminalReader,
    tool_call_to_v2,
    tool_call_update_to_v2,
    uses_extension,
)
from ..events import DiagnosticReported, Event, ToolCallPatched, ToolCallReopened
from ..models import replace
from ._budgets import Budgets
from ._limits import cut_value, limit_reached
from ._sessions import StoreState
from ._sizes import size_of
from ._state import SessionState
from ._terminals import Terminals
from ._tool_calls import ToolCalls, raw_size

_V1_ENUMS = tuple(v1.TOOL_CALL_ENUMS.items())
_V1_CREATE = v1.ToolCall
_V1_UPDATE = v1.SessionToolCallUpdate
_V1_KINDS = v1.TOOL_CALL_ENUMS["kind"]
_V1_STATUSES = v1.TOOL_CALL_ENUMS["status"]


class V1Input:
    """v1 ``session/update`` and ``session/request_permission`` messages, applied by a store's
    tool calls and terminals."""

    def __init__(
        self, state: StoreState, budgets: Budgets, tool_calls: ToolCalls, terminals: Terminals
    ) -> None:
        self.state = state
        self.budgets = budgets
        self.tool_calls = tool_calls
        self.terminals = terminals

    def message(self, message: v1.SessionUpdateMessage, events: list[Event], now: Any) -> None:
        self.notification(message.params, events, now)

    def notification(self, params: v1.SessionNotification, events: list[Event], now: Any) -> None:
        kind = type(params.update)
        if kind is _V1_UPDATE:  # the common update, told by its exact type
            create = False
        elif kind is _V1_CREATE or isinstance(params.update, v1.ToolCall):
            create = True
        elif isinstance(params.update, v1.ToolCallUpdate):
            create = False
        else:
            other = params.update
            if isinstance(other, v1.OpaqueSessionUpdate) and other.tag == "session_info_update":
                self.state.session_info(params.session_id, other, events)  # its title
            return
        update = cast("v1.ToolCall | v1.ToolCallUpdate", params.update)
        state = self.state
        session = state.sessions.get(params.session_id)
        if session is None or session is not state.current:
            session = state.session(params.session_id, events)
        reader = session.v1_terminals
        if uses_extension(update) or (reader is not None and reader.wants(update)):
            update = self._apply_terminal_extension(session, update, "$.params.update", events, now)
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
            self.tool_calls.update(session, patch, events, now)  # the common case
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
        self._update_call(session, patch, raw, events, now)

    def permission_message(
        self, message: v1.PermissionRequestMessage, events: list[Event], now: Any
    ) -> None:
        self.permission(message.params, events, now)

    def permission(
        self, params: v1.RequestPermissionRequest, events: list[Event], now: Any
    ) -> None:
        session = self.state.session(params.session_id, events)
        call = params.tool_call
        reader = session.v1_terminals
        if uses_extension(call) or (reader is not None and reader.wants(call)):
            call = self._apply_terminal_extension(session, call, "$.params.toolCall", events, now)
        patch, losses = tool_call_update_to_v2(call)  # D33
        for loss in losses:
            path = "$.params.toolCall" + loss.path[1:]
            events.append(DiagnosticReported(params.session_id, path, loss.reason, "lossy"))
        self._update_call(session, patch, _unknown_v1_strings(call), events, now)

    def _apply_terminal_extension(
        self, session: SessionState, call: Any, path: str, events: list[Event], now: Any
    ) -> Any:
        """The terminal updates of ``call``'s ``_meta`` terminal extension applied, and
        ``call`` without the extension (``convert.TerminalReader``; D38 amended)."""
        reader = session.v1_terminals
        if reader is None:
            reader = session.v1_terminals = TerminalReader(self.state.limits.max_terminals)
        losses = Losses(False)
        call, updates = reader.read(call, path, losses)
        for loss in losses.found:
            events.append(DiagnosticReported(session.session_id, loss.path, loss.reason, "lossy"))
        for update in updates:
            if type(update) is v2.TerminalOutputChunk:
                self.terminals.append_output(session, update, events, now)
            else:
                self.terminals.update(session, cast(v2.TerminalUpdate, update), events, now)
        return call

    def _update_call(
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
            self.tool_calls.update(session, patch, events, now)
            return
        self.tool_calls.update(session, replace(patch, **dict.fromkeys(raw, UNSET)), events, now)
        tc = session.tool_calls.get(patch.tool_call_id)
        if tc is None:  # dropped by a cap on the way
            return
        before = raw_size(tc.raw)
        held = tc.raw if tc.raw is not None else {}
        cap = self.state.limits.max_value_bytes
        changed: list[str] = []
        for name, value in raw.items():
            size = size_of(value)
            if cap is not None and size > cap:
                value, _ = cut_value(value, size, cap)
                detail = f"`{name}`: {size:,} bytes, over the cap of {cap:,}: cut"
                limit_reached(
                    events, session.session_id, "max_value_bytes", tc.tool_call_id, detail
                )
            if held.get(name) != value:
                changed.append(name)
            held[name] = value
        tc.raw = held
        if changed:  # what is sent on (snapshot, document) changed, though the view did not
            events.append(ToolCallPatched(session.session_id, tc.tool_call_id, tuple(changed)))
        self.state.grow(session, raw_size(held) - before, tc)
        self.budgets.enforce(session, tc, events)


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
