"""Tool calls: upsert, patches, content chunks, and the client's own conclusions about them.

Rules this module owns (D46 (upsert, patch semantics, meta patches, client store); D1, D2, D11,
D14, D15, D20, D23):

- Upsert: the first reference to an id (``tool_call_update``, ``tool_call_content_chunk``, a
  permission subject) creates the call with protocol defaults; there is no "not found" (D1).
  Calls are kept in first-seen order.
- Patch fields as ``_patch`` applies them (an invalid value was already read as omitted, D11);
  unknown extra fields of an update are kept and patched like fields.
- A chunk appends its one item (absent or ``null`` content becomes ``[item]``); a later
  replacement array replaces everything, chunks included; its ``_meta`` is chunk-scoped.
- The store applies any status as received and never invents one (D14, D23); a final call
  given a non-final status is applied and reported (``ToolCallReopened``, D20).
- What the client concludes on its own is a local overlay on the view, never stored as
  protocol state (D46 (client store), D14, D15): ``session/cancel`` marks every open call not listed
  as background work (the latest ``state_update``'s ``background``) ``ended_locally="cancelled"``,
  ``tool_call/cancel`` its one call, ``sweep`` what it is given; the agent's next status for the
  call (a value or ``null``) replaces the mark. ``snapshot``, ``document`` and the bridges never see
  it.
- Past ``max_tool_calls`` per session, finished calls go first, then the oldest open ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from msgspec import UNSET

from .. import v2
from ..events import (
    ContentAppended,
    Event,
    ToolCallCleared,
    ToolCallCreated,
    ToolCallEndedLocally,
    ToolCallPatched,
    ToolCallReopened,
)
from ..v2 import FINAL_STATUSES, background_work
from ._budgets import Budgets
from ._limits import limit_reached, trim_block
from ._patch import PLAIN_UPDATES, patch_call, patch_extra, patch_meta
from ._sessions import StoreState
from ._sizes import size_of
from ._state import SessionState, ToolCallState


class ToolCalls:
    """Tool-call updates and content chunks, and the local overlay of ``ended_locally``, on a
    store's state."""

    def __init__(self, state: StoreState, budgets: Budgets) -> None:
        self.state = state
        self.budgets = budgets

    def _call(self, session: SessionState, tool_call_id: str, events: list[Event]) -> ToolCallState:
        tc = session.tool_calls.get(tool_call_id)
        return tc if tc is not None else self._new_call(session, tool_call_id, events)

    def _new_call(
        self, session: SessionState, tool_call_id: str, events: list[Event]
    ) -> ToolCallState:
        tc = session.tool_calls[tool_call_id] = ToolCallState(tool_call_id)
        self.state.grow(session, tc.size)
        events.append(ToolCallCreated(session.session_id, tool_call_id))
        cap = self.state.limits.max_tool_calls
        if cap is not None and len(session.tool_calls) > cap:
            self._evict_calls(session, cap, events)
        return tc

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
        self.state.drop_calls(session, victims, events)
        limit_reached(
            events,
            session.session_id,
            "max_tool_calls",
            session.session_id,
            f"evicted {len(victims)} tool call(s) (cap {cap} per session)",
        )

    def update(
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
        patch_call(update, fields, patched, cleared)
        meta = update.meta
        if meta is not UNSET:
            tc.meta = patch_meta(tc.meta, meta)
            (cleared if meta is None else patched).append("_meta")
        if type(update) not in PLAIN_UPDATES:
            tc.extra = patch_extra(update, tc.extra, patched, cleared)
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
        state = self.state
        if state.measures:  # (an uncapped store does not measure)
            if patched:
                self.budgets.measure_call(session, tc, patched, events)
            if cleared:
                self.budgets.measure_call(session, tc, cleared, events)
        if update.content and len(fields["content"]) > state.item_cap:
            self.budgets.cap_content(session, tc, events)
        if (
            tc.size > state.call_cap
            or session.size > state.session_cap
            or state.size > state.store_cap
        ):
            self.budgets.enforce(session, tc, events)

    def _agent_spoke(
        self, session: SessionState, tc: ToolCallState, patched: list[str], cleared: list[str]
    ) -> None:
        """What an applied value replaces beside the state: a kept v1 string of that field, and
        the client's own conclusion once the agent sets a status (D15: the agent wins)."""
        raw = tc.raw
        if raw is not None:
            before = raw_size(raw)
            for name in [name for name in raw if name in patched or name in cleared]:
                del raw[name]
            if not raw:
                tc.raw = None
            self.state.grow(session, raw_size(tc.raw) - before, tc)
        if tc.ended_locally is not None and ("status" in patched or "status" in cleared):
            tc.ended_locally = None

    def append_chunk(
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
        state = self.state
        if size > state.value_cap:
            item, size = self.budgets.cut_item(session, tc, item, size, state.value_cap, events)
        content.append(item)
        sizes = tc.sizes
        sizes["content"] = sizes.get("content", 0) + size
        state.grow(session, size, tc)
        if now is not None:
            tc.updated_at = now
        events.append(ContentAppended(session.session_id, tc.tool_call_id, len(content) - 1))
        if len(content) > state.item_cap:
            self.budgets.cap_content(session, tc, events)
        if (
            tc.size > state.call_cap
            or session.size > state.session_cap
            or state.size > state.store_cap
        ):
            self.budgets.enforce(session, tc, events)

    def state_update(self, session_id: str, update: v2.OpaqueSessionUpdate, _events: Any) -> None:
        # Only its background list is read: which open calls a cancel does not cover (D15).
        session = self.state.sessions.get(session_id)
        if session is not None:
            session.background = background_work(update.data)

    def cancel_session(self, data: Mapping[str, Any], events: list[Event], now: Any) -> None:
        params = data.get("params")
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        session = self.state.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is not None:
            self._end_locally(session, session.tool_calls.values(), "cancelled", events, now)

    def cancel_call(self, data: Mapping[str, Any], events: list[Event], now: Any) -> None:
        params = data.get("params")
        if not isinstance(params, dict):
            return
        session_id, tool_call_id = params.get("sessionId"), params.get("toolCallId")
        session = self.state.sessions.get(session_id) if isinstance(session_id, str) else None
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

    def sweep(self, session_id: str, status: str, now: float | None) -> list[Event]:
        """``ToolCallStore.sweep``: every open call of the session that is not background work
        ended with ``status`` by the client."""
        if status not in FINAL_STATUSES:
            raise ValueError(f"sweep needs a final status, one of {sorted(FINAL_STATUSES)}")
        session = self.state.sessions.get(session_id)
        events: list[Event] = []
        if session is not None:
            self._end_locally(session, session.tool_calls.values(), status, events, now)
        return events


def raw_size(raw: dict[str, str] | None) -> int:
    """Bytes held by the v1 strings a call keeps to send on (``ToolCallState.raw``)."""
    return sum(size_of(value) for value in raw.values()) if raw else 0
