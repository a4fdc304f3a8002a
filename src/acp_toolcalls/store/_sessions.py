"""Sessions: where the store's state lives, which session is current, and eviction by count.

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
  (``_grow``), which the byte caps (``_budgets``) compare with. A store whose limits cap no
  byte (``MEASURED_BY`` all ``None``, as ``Limits.unlimited()``) does not measure the values
  it stores in calls (``_measures``); given such a cap later, it measures what it holds then
  (``_remeasure_calls``), and the caps apply from its next change.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from .._mypyc import mypyc_attr
from ..events import Event, SessionEvicted, TerminalEvicted, ToolCallEvicted
from ._limits import Limits, as_cap, limit_reached, trim_block
from ._state import SessionState, TerminalState, ToolCallState
from ._view import _Views

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


@mypyc_attr(allow_interpreted_subclasses=True)  # (the public class's base)
class _Sessions(_Views):
    """The sessions of a store, their byte counts and their eviction (on the reading side)."""

    def __init__(self, limits: Limits | None, on_evict: EvictionHook | None) -> None:
        self._measures = True  # (the limits decide, below)
        self.sessions: dict[str, SessionState] = {}
        self.limits = limits if limits is not None else Limits()  # (the caps below too)
        self.size = 0
        """Bytes held by every session (``size_of`` measures), which ``max_store_bytes`` caps."""
        self.on_evict = on_evict
        """Called with the session id and the state of each session, call or terminal just
        before a cap drops it (a bridge sends what it still holds back about it)."""
        self._current: SessionState | None = None  # the session the last message was about
        self._switches = 0  # counts switches between sessions: `SessionState.touched`
        self._titles: dict[str, str] = {}  # session id -> its title, the latest set last

    @property
    def limits(self) -> Limits:
        """The memory caps (``Limits``); may be replaced at any time."""
        return self._limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        self._limits = limits
        # What the hot path compares with: a disabled cap never compares greater.
        self._item_cap = as_cap(limits.max_content_items)
        self._value_cap = as_cap(limits.max_value_bytes)
        self._call_cap = as_cap(limits.max_call_bytes)
        self._session_cap = as_cap(limits.max_session_bytes)
        self._store_cap = as_cap(limits.max_store_bytes)
        measures = any(getattr(limits, name) is not None for name in MEASURED_BY)
        if measures and not self._measures:
            self._remeasure_calls()
        self._measures = measures

    def _remeasure_calls(self) -> None:
        """Measure the values of every call held, which were not measured (``_budgets``)."""

    def session_title(self, session_id: str) -> str | None:
        """The session's title (its latest ``session_info_update`` or ``subagent_update``
        title), ``None`` when none was given; the session need not hold any call."""
        return self._titles.get(session_id)

    def session_titles(self) -> dict[str, str]:
        """Every session title kept (a copy), by session id, the latest set last."""
        return dict(self._titles)

    def _set_title(self, session_id: Any, title: Any) -> None:
        if not isinstance(session_id, str):
            return
        if title is None:
            self._titles.pop(session_id, None)
            return
        if not isinstance(title, str):
            return  # a malformed title: the validation reports it
        if len(title) > TITLE_CHARS:
            title = title[: TITLE_CHARS - 1] + "\u2026"
        self._titles.pop(session_id, None)
        self._titles[session_id] = title
        cap = self.limits.max_sessions
        if cap is not None and len(self._titles) > cap:
            del self._titles[next(iter(self._titles))]

    def _session_info(self, session_id: str, update: Any, _events: Any) -> None:
        # Only its title is read: what references to the session show (``session`` items).
        data = update.data
        if "title" in data:
            self._set_title(session_id, data["title"])

    def _subagent_info(self, _session_id: str, update: Any, _events: Any) -> None:
        # A subagent's title, announced in its parent session, under the subagent's id.
        data = update.data
        if "title" in data:
            self._set_title(data.get("sessionId"), data["title"])

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
        limit_reached(
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

    def _drop_calls(
        self, session: SessionState, victims: list[ToolCallState], events: list[Event]
    ) -> None:
        for tc in victims:
            if self.on_evict is not None:
                self.on_evict(session.session_id, tc)
            del session.tool_calls[tc.tool_call_id]
            self._grow(session, -tc.size)
            events.append(ToolCallEvicted(session.session_id, tc.tool_call_id, tc.status))

    def _drop_terminals(
        self, session: SessionState, victims: list[TerminalState], events: list[Event]
    ) -> None:
        for terminal in victims:
            if self.on_evict is not None:
                self.on_evict(session.session_id, terminal)
            del session.terminals[terminal.terminal_id]
            self._grow(session, -terminal.size)
            events.append(TerminalEvicted(session.session_id, terminal.terminal_id))

    def _grow(
        self, session: SessionState, delta: int, held: ToolCallState | TerminalState | None = None
    ) -> None:
        if held is not None:
            held.size += delta
        session.size += delta
        self.size += delta
