"""Byte budgets: every value measured as it is stored, and the caps applied after each change.

Rules this module owns (``Limits``; D46 (v1 store)):

- A stored value over ``max_value_bytes`` is cut where it is (``_limits.cut_value``); a
  content item over it becomes a text block, its head kept when it was text.
- A call's content past ``max_content_items``, and a terminal's output past
  ``max_terminal_bytes``, keep their head and tail; what went is counted (``dropped_items``,
  ``dropped_bytes``) and said.
- ``_meta`` keeps at most ``max_meta_keys`` keys, the oldest going first.
- After each change the call, session and store caps are checked in that order; each cut goes
  an eighth of the cap below it. A call loses the middle of its content, then its head, then
  its largest values; a session its finished calls, then its exited terminals, then a share
  of each open call and running terminal; the store the finished calls and exited terminals
  of the least recently updated sessions, then idle sessions, then the least recently updated
  ones. What just changed goes last.
"""

from __future__ import annotations

from typing import Any

from .. import v2
from ..events import Event
from ._limits import (
    cut_value,
    limit_reached,
    middle,
    omitted,
    text_head,
    trim_block,
    trim_middle,
    until,
)
from ._sessions import StoreState
from ._sizes import size_of
from ._state import SessionState, TerminalState, ToolCallState

_ABSENT: Any = object()


_META_BASE = 64
"""What a ``_meta`` map counts for, besides its entries (``_meta_entry``)."""


def _meta_entry(key: str, value_size: int) -> int:
    """What one ``_meta`` key counts for, its value measuring ``value_size``."""
    return size_of(key) + value_size + 24


def _meta_size(meta: Any) -> int:
    """What a ``_meta`` map counts for."""
    if not isinstance(meta, dict):
        return 0
    return _META_BASE + sum(_meta_entry(key, size_of(value)) for key, value in meta.items())


def _held_size(tc: ToolCallState, name: str) -> int:
    """What ``_measure_call`` counts for ``name`` (a wire name) of what ``tc`` holds now."""
    value = tc.fields.get(name, _ABSENT)
    if name == "content":
        return sum(map(size_of, value)) if isinstance(value, list) else 0
    if value is not _ABSENT:
        return size_of(value)
    if name == "_meta":
        return _meta_size(tc.meta)
    return size_of(tc.extra.get(name) if tc.extra is not None else None)


class Budgets:
    """The measuring of stored values and the cuts of every byte and count cap, on a store's
    state."""

    def __init__(self, state: StoreState) -> None:
        self.state = state

    def measure_call(
        self, session: SessionState, tc: ToolCallState, names: list[str], events: list[Event]
    ) -> None:
        """Measure the values just stored under ``names`` (wire names), cutting any over
        ``max_value_bytes``, and the ``_meta`` keys over ``max_meta_keys``."""
        cap = self.state.value_cap
        fields, sizes, delta = tc.fields, tc.sizes, 0
        for name in names:
            value = fields.get(name, _ABSENT)
            if value is not _ABSENT and name != "content":  # a field: the common case
                size = size_of(value)
                if size > cap:
                    fields[name], size = _cut(
                        events, session, tc.tool_call_id, name, value, size, cap
                    )
            elif name == "content":
                size = 0
                if isinstance(value, list):
                    for index, item in enumerate(value):
                        item_size = size_of(item)
                        if item_size > cap:
                            value[index], item_size = self.cut_item(
                                session, tc, item, item_size, cap, events
                            )
                        size += item_size
            elif name == "_meta":
                self._cap_meta_keys(session, tc.tool_call_id, tc, events)
                size = self._measure_meta(
                    session, tc.tool_call_id, tc, self.state.limits.max_value_bytes, events
                )
            else:  # an unknown key kept beside the fields
                held = tc.extra
                value = held.get(name) if held is not None else None
                size = size_of(value)
                if size > cap and held is not None:
                    held[name], size = _cut(
                        events, session, tc.tool_call_id, name, value, size, cap
                    )
            delta += size - sizes.get(name, 0)
            sizes[name] = size
        tc.size += delta
        session.size += delta
        self.state.size += delta

    def measure_terminal(
        self, session: SessionState, terminal: TerminalState, names: list[str], events: list[Event]
    ) -> None:
        if not names:
            return
        cap = self.state.limits.max_value_bytes
        fields, sizes, delta = terminal.fields, terminal.sizes, 0
        for name in names:
            if name == "output":
                output, shell = terminal.output, terminal.output_object
                size = size_of(shell) if shell is not None else 0
                if cap is not None and size > cap:
                    terminal.output_object, size = _cut(
                        events, session, terminal.terminal_id, "output", shell, size, cap
                    )
                size += len(output) if isinstance(output, bytearray) else 0
            elif name == "_meta":
                self._cap_meta_keys(session, terminal.terminal_id, terminal, events)
                size = self._measure_meta(session, terminal.terminal_id, terminal, cap, events)
            else:  # a field, or an unknown key kept beside the fields
                held = fields if name in fields else terminal.extra
                value = held.get(name) if held is not None else None
                size = size_of(value)
                if cap is not None and size > cap and held is not None:
                    held[name], size = _cut(
                        events, session, terminal.terminal_id, name, value, size, cap
                    )
            delta += size - sizes.get(name, 0)
            sizes[name] = size
        self.state.grow(session, delta, terminal)

    def _cap_meta_keys(
        self,
        session: SessionState,
        subject: str,
        held: ToolCallState | TerminalState,
        events: list[Event],
    ) -> None:
        cap = self.state.limits.max_meta_keys
        meta = held.meta
        if cap is None or not isinstance(meta, dict) or len(meta) <= cap:
            return
        excess = len(meta) - cap + trim_block(cap) - 1
        for key in list(meta)[:excess]:
            del meta[key]
        limit_reached(
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
        size = _META_BASE
        for key, value in meta.items():  # each value measured once, cut or not
            value_size = size_of(value)
            if cap is not None and value_size > cap:
                meta[key], value_size = cut_value(value, value_size, cap)
                limit_reached(
                    events,
                    session.session_id,
                    "max_value_bytes",
                    subject,
                    f"`_meta.{key}`: over the cap of {cap:,} bytes: cut",
                )
            size += _meta_entry(key, value_size)
        return size

    def remeasure_calls(self) -> None:
        """Measure the values of every call held, which were not measured."""
        for session in self.state.sessions.values():
            for tc in session.tool_calls.values():
                names = {*tc.sizes, *tc.fields, *(tc.extra or ())}
                if tc.meta is not None:
                    names.add("_meta")
                sizes, delta = tc.sizes, 0
                for name in names:
                    size = _held_size(tc, name)
                    delta += size - sizes.get(name, 0)
                    sizes[name] = size
                self.state.grow(session, delta, tc)

    def cut_item(
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
            text = text_head(inner.text, cap) + "\n" + omitted(size, "max_value_bytes")
            cut: Any = v2.Content(content=v2.TextContent(text=text))
        else:
            cut = v2.Content(content=v2.TextContent(text=omitted(size, "max_value_bytes")))
        limit_reached(
            events,
            session.session_id,
            "max_value_bytes",
            tc.tool_call_id,
            f"a content item of {size:,} bytes, over the cap of {cap:,}: cut",
        )
        return cut, size_of(cut)

    def cap_content(self, session: SessionState, tc: ToolCallState, events: list[Event]) -> None:
        cap = self.state.limits.max_content_items
        content = tc.fields["content"]
        if cap is None or len(content) <= cap:
            return
        head, excess = middle(len(content), cap)
        # What goes is measured, not what stays: the content's size is the sum of its items'.
        freed = sum(map(size_of, content[head : head + excess]))
        del content[head : head + excess]
        tc.dropped_items += excess
        tc.dropped_at = head
        tc.sizes["content"] = tc.sizes.get("content", 0) - freed
        self.state.grow(session, -freed, tc)
        limit_reached(
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
        self.state.grow(session, size - tc.sizes.get("content", 0), tc)
        tc.sizes["content"] = size

    def cap_output(
        self,
        session: SessionState,
        terminal: TerminalState,
        events: list[Event],
        cap: int | None = None,
        limit: str = "max_terminal_bytes",
    ) -> None:
        cap = self.state.limits.max_terminal_bytes if cap is None else cap
        output = terminal.output
        if cap is None or not isinstance(output, bytearray) or len(output) <= cap:
            return
        head, excess = trim_middle(output, cap)
        terminal.dropped_bytes += excess
        terminal.sizes["output"] -= excess
        self.state.grow(session, -excess, terminal)
        limit_reached(
            events,
            session.session_id,
            limit,
            terminal.terminal_id,
            f"dropped {excess} output byte(s) after the first {head} "
            f"(cap {cap}; {terminal.dropped_bytes} dropped in all)",
        )

    def enforce(
        self, session: SessionState, held: ToolCallState | TerminalState, events: list[Event]
    ) -> None:
        """After a change to ``held``: the call, session and store byte caps, in that order.
        Each cut goes below the cap by an eighth of it, so that growth past it stays cheap."""
        state = self.state
        cap = state.call_cap
        if held is not None and held.size > cap and isinstance(held, ToolCallState):
            self._shrink_call(session, held, cap - trim_block(cap), "max_call_bytes", events)
        cap = state.session_cap
        if session.size > cap:
            self._shrink_session(session, held, cap - trim_block(cap), events)
        cap = state.store_cap
        if state.size > cap:
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
                replacement, _ = cut_value(value, tc.sizes[name], 1_024, limit)
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
            self.state.grow(session, size - tc.sizes[name], tc)
            tc.sizes[name] = size
        limit_reached(
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
        self.state.drop_calls(session, until(finished, session.size - target), events)
        if session.size > target:
            exited = [t for t in session.terminals.values() if t.exited and t is not keep]
            self.state.drop_terminals(session, until(exited, session.size - target), events)
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
                self.cap_output(session, terminal, events, each, "max_session_bytes")
        if session.size > target and isinstance(keep, ToolCallState):
            self._shrink_call(session, keep, each, "max_session_bytes", events)
        elif session.size > target and isinstance(keep, TerminalState):
            self.cap_output(session, keep, events, each, "max_session_bytes")
        limit_reached(
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
        state = self.state
        before = state.size
        others = sorted(
            (s for s in state.sessions.values() if s is not current), key=lambda s: s.touched
        )
        for session in others:
            if state.size <= target:
                break
            finished = [tc for tc in session.tool_calls.values() if tc.is_final]
            state.drop_calls(session, until(finished, state.size - target), events)
            exited = [t for t in session.terminals.values() if t.exited]
            state.drop_terminals(session, until(exited, state.size - target), events)
        empty = [s for s in others if not s.tool_calls and not s.terminals]
        state.drop_sessions(empty, events)  # nothing left in them
        if state.size > target:
            idle = [s for s in others if s.session_id in state.sessions and not s.live]
            state.drop_sessions(until(idle, state.size - target), events)
        if state.size > target:
            rest = [s for s in others if s.session_id in state.sessions]
            state.drop_sessions(until(rest, state.size - target), events)
        if state.size > target:
            self._shrink_session(
                current, keep, max(0, target - (state.size - current.size)), events
            )
        limit_reached(
            events,
            current.session_id,
            "max_store_bytes",
            current.session_id,
            f"cut the store from {before:,} to {state.size:,} bytes",
        )


def _cut(
    events: list[Event],
    session: SessionState,
    owner: str,
    name: str,
    value: Any,
    size: int,
    cap: int,
) -> tuple[Any, int]:
    """``value`` (of ``size`` bytes) cut to ``cap`` (``cut_value``) and the cap reported on its
    owner, a call or a terminal: the value kept and its size."""
    kept, kept_size = cut_value(value, size, cap)
    limit_reached(
        events,
        session.session_id,
        "max_value_bytes",
        owner,
        f"`{name}`: {size:,} bytes, over the cap of {cap:,}: cut",
    )
    return kept, kept_size
