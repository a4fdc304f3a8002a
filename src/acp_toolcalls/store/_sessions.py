"""Sessions: the store's shared state (``StoreState``), the current session, eviction by count.

Rules this module owns (D46 (upsert, v1 store)):

- State is per ``sessionId``: a session exists once it has seen a tool call or a terminal (or
  a bridge ``touch``es it); ``drop_session`` forgets one without events.
- The session a message is about becomes the most recently updated one (``touched``, the
  store's own counter of switches between sessions: the store keeps no clock).
- Past ``max_sessions`` an eighth of the cap goes: idle sessions before live ones (an open call
  or a running terminal), least recently updated first; past ``max_tool_calls`` or
  ``max_terminals`` the same goes for a session's calls or terminals (``_tool_calls``,
  ``_terminals`` choose them). ``on_evict`` sees each dropped state first, and each eviction
  is reported (``SessionEvicted``, ``ToolCallEvicted``, ``TerminalEvicted``).
- A session's title (``session_title``) is the latest ``title`` of its ``session_info_update``
  (``null`` forgets it), or of a ``subagent_update`` naming it: what a ``session`` content item
  referring to it is shown with. Titles are kept beside the sessions, never create one (a title
  is no tool-call state), at most ``TITLE_CHARS`` each and, past ``max_sessions`` of them, the
  oldest set goes first.
- Every byte a state holds is counted three times, in the state, its session and the store
  (``grow``), which the byte caps (``_budgets``) compare with. A store whose limits cap no
  byte (``MEASURED_BY`` all ``None``, as ``Limits.unlimited()``) does not measure the values
  it stores in calls (``measures``); given such a cap later, it measures what it holds then
  (``set_limits`` says so; ``_budgets`` measures), and the caps apply from its next change.

Theory of operation: ``StoreState`` is the one object every part of the store works on (the
terminals, tool calls, budgets and v1 input each hold it): the sessions, the bytes counted, the
current session, the titles, the limits and the caps the hot path compares with.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from ..events import Event, SessionEvicted, TerminalEvicted, ToolCallEvicted
from ._limits import as_cap, limit_reached, trim_block
from ._state import SessionState, TerminalState, ToolCallState
from ._structs import Limits

TITLE_CHARS = 500
"""Characters of a session title kept (a longer one is cut, with an ellipsis)."""

MEASURED_BY = (
    "max_value_bytes",
    "max_meta_keys",
    "max_call_bytes",
    "max_session_bytes",
    "max_store_bytes",
)
"""The limits that need the sizes of a call's values: with all of them ``None`` they are not
measured."""

EvictionHook = Callable[[str, SessionState | ToolCallState | TerminalState], None]


class StoreState:
    """The state of a store: its sessions, the bytes they hold, the current one, the session
    titles, the limits and the eviction hook."""

    def __init__(self, limits: Limits | None, on_evict: EvictionHook | None) -> None:
        self.sessions: dict[str, SessionState] = {}
        self.size = 0
        """Bytes held by every session (``size_of`` measures), which ``max_store_bytes`` caps."""
        self.on_evict = on_evict
        """Called with the session id and the state of each session, call or terminal just
        before a cap drops it."""
        self.current: SessionState | None = None  # the session the last message was about
        self.switches = 0  # counts switches between sessions: `SessionState.touched`
        self.titles: dict[str, str] = {}  # session id -> its title, the latest set last
        self.measures = True  # (the limits decide, below)
        self.set_limits(limits if limits is not None else Limits())

    def set_limits(self, limits: Limits) -> bool:
        """Take ``limits`` (and the caps the hot path compares with); ``True`` when the values
        held were not measured and now must be (``Budgets.remeasure_calls``)."""
        self.limits = limits
        # What the hot path compares with: a disabled cap never compares greater.
        self.item_cap = as_cap(limits.max_content_items)
        self.value_cap = as_cap(limits.max_value_bytes)
        self.call_cap = as_cap(limits.max_call_bytes)
        self.session_cap = as_cap(limits.max_session_bytes)
        self.store_cap = as_cap(limits.max_store_bytes)
        measures = any(getattr(limits, name) is not None for name in MEASURED_BY)
        unmeasured = measures and not self.measures
        self.measures = measures
        return unmeasured

    def set_title(self, session_id: Any, title: Any) -> None:
        if not isinstance(session_id, str):
            return
        if title is None:
            self.titles.pop(session_id, None)
            return
        if not isinstance(title, str):
            return  # a malformed title: the validation reports it
        if len(title) > TITLE_CHARS:
            title = title[: TITLE_CHARS - 1] + "\u2026"
        self.titles.pop(session_id, None)
        self.titles[session_id] = title
        cap = self.limits.max_sessions
        if cap is not None and len(self.titles) > cap:
            del self.titles[next(iter(self.titles))]

    def session_info(self, session_id: str, update: Any, _events: Any) -> None:
        """A ``session_info_update``: only its title is read (what ``session`` items show)."""
        data = update.data
        if "title" in data:
            self.set_title(session_id, data["title"])

    def subagent_info(self, _session_id: str, update: Any, _events: Any) -> None:
        """A ``subagent_update``: a subagent's title, announced in its parent session, under the
        subagent's id."""
        data = update.data
        if "title" in data:
            self.set_title(data.get("sessionId"), data["title"])

    def drop_session(self, session_id: str) -> None:
        """Forget a session and everything in it; no events."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.size -= session.size
            if session is self.current:
                self.current = None

    def session(self, session_id: str, events: list[Event]) -> SessionState:
        """The session (created on first sight), counted as the one most recently updated."""
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = SessionState(session_id)
            self.size += session.size
            cap = self.limits.max_sessions
            if cap is not None and len(self.sessions) > cap:
                self._evict_sessions(session, cap, events)
        if session is not self.current:
            self.switches += 1
            session.touched = self.switches
            self.current = session
        return session

    def _evict_sessions(self, new: SessionState, cap: int, events: list[Event]) -> None:
        count = min(trim_block(cap), len(self.sessions) - 1)
        others = (s for s in self.sessions.values() if s is not new)
        victims = heapq.nsmallest(count, others, key=lambda s: (s.live, s.touched))
        self.drop_sessions(victims, events)
        shown = ", ".join(repr(v.session_id) for v in victims[:3])
        more = f" and {len(victims) - 3} more" if len(victims) > 3 else ""
        limit_reached(
            events,
            new.session_id,
            "max_sessions",
            new.session_id,
            f"evicted {len(victims)} session(s), idle and least recently updated first "
            f"({shown}{more}; cap {cap})",
        )

    def drop_sessions(self, victims: list[SessionState], events: list[Event]) -> None:
        for victim in victims:
            if self.on_evict is not None:
                self.on_evict(victim.session_id, victim)
            del self.sessions[victim.session_id]
            self.size -= victim.size
            if victim is self.current:
                self.current = None
            events.append(
                SessionEvicted(victim.session_id, len(victim.tool_calls), len(victim.terminals))
            )

    def drop_calls(
        self, session: SessionState, victims: list[ToolCallState], events: list[Event]
    ) -> None:
        for tc in victims:
            if self.on_evict is not None:
                self.on_evict(session.session_id, tc)
            del session.tool_calls[tc.tool_call_id]
            self.grow(session, -tc.size)
            events.append(ToolCallEvicted(session.session_id, tc.tool_call_id, tc.status))

    def drop_terminals(
        self, session: SessionState, victims: list[TerminalState], events: list[Event]
    ) -> None:
        for terminal in victims:
            if self.on_evict is not None:
                self.on_evict(session.session_id, terminal)
            del session.terminals[terminal.terminal_id]
            self.grow(session, -terminal.size)
            events.append(TerminalEvicted(session.session_id, terminal.terminal_id))

    def grow(
        self, session: SessionState, delta: int, held: ToolCallState | TerminalState | None = None
    ) -> None:
        """Count ``delta`` bytes more in ``held`` (if given), its session and the store."""
        if held is not None:
            held.size += delta
        session.size += delta
        self.size += delta
