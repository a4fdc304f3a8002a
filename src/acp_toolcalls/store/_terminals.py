"""Terminals: agent-owned display terminals of a session, patched and appended to.

Rules this module owns (D46 (terminals); D22):

- A terminal is created on its first ``terminal_update`` or ``terminal_output_chunk``; its
  fields follow the patch rules of ``_patch``.
- ``output`` is a snapshot that replaces every stored byte (``null`` clears it); each
  ``terminal_output_chunk`` is base64-decoded on its own and appended. Invalid base64 in a
  chunk drops that chunk; in a snapshot it was already read as omitted by the decoder, and a
  typed one given directly leaves the output unchanged; both are reported.
- The snapshot's ``_meta`` and unknown keys are kept with the output until the next snapshot or
  ``null`` (chunks add bytes only); an update's unknown keys are kept and patched like fields
  (D19 amended).
- Past ``max_terminals`` per session, exited terminals go first, then the oldest running ones.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from .. import v2
from ..events import (
    DiagnosticReported,
    Event,
    TerminalCleared,
    TerminalCreated,
    TerminalOutputAppended,
    TerminalPatched,
)
from ..models import base64_bytes, extra_fields, replace
from ._budgets import Budgets
from ._limits import as_cap, limit_reached, trim_block
from ._patch import patch_extra, patch_meta, patch_terminal
from ._sessions import StoreState
from ._state import SessionState, TerminalState


class Terminals:
    """Terminal updates and output chunks, on a store's state."""

    def __init__(self, state: StoreState, budgets: Budgets) -> None:
        self.state = state
        self.budgets = budgets

    def terminal(
        self, session: SessionState, terminal_id: str, events: list[Event]
    ) -> TerminalState:
        terminal = session.terminals.get(terminal_id)
        if terminal is None:
            terminal = session.terminals[terminal_id] = TerminalState(terminal_id)
            self.state.grow(session, terminal.size)
            events.append(TerminalCreated(session.session_id, terminal_id))
            cap = self.state.limits.max_terminals
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
        self.state.drop_terminals(session, victims, events)
        limit_reached(
            events,
            session.session_id,
            "max_terminals",
            session.session_id,
            f"evicted {len(victims)} terminal(s), exited ones first (cap {cap} per session)",
        )

    def update(
        self, session: SessionState, update: v2.TerminalUpdate, events: list[Event], now: Any
    ) -> None:
        terminal = self.terminal(session, update.terminal_id, events)
        patched: list[str] = []
        cleared: list[str] = []
        patch_terminal(update, terminal.fields, patched, cleared)
        output = update.output
        if output is None:
            terminal.output = terminal.output_object = None
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
                terminal.output_object = (
                    replace(output, data="")
                    if output.meta is not UNSET or extra_fields(output)
                    else None
                )
                patched.append("output")
        meta = update.meta
        if meta is not UNSET:
            terminal.meta = patch_meta(terminal.meta, meta)
            (cleared if meta is None else patched).append("_meta")
        terminal.extra = patch_extra(update, terminal.extra, patched, cleared)
        if now is not None:
            terminal.updated_at = now
        if patched:
            events.append(TerminalPatched(session.session_id, terminal.terminal_id, tuple(patched)))
        if cleared:
            events.append(TerminalCleared(session.session_id, terminal.terminal_id, tuple(cleared)))
        budgets = self.budgets
        budgets.measure_terminal(session, terminal, patched, events)
        budgets.measure_terminal(session, terminal, cleared, events)
        if "output" in patched:
            budgets.cap_output(session, terminal, events)
        budgets.enforce(session, terminal, events)

    def append_output(
        self,
        session: SessionState,
        chunk: v2.TerminalOutputChunk,
        events: list[Event],
        now: Any,
    ) -> None:
        data = base64_bytes(chunk.data)
        terminal = self.terminal(session, chunk.terminal_id, events)
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
        state = self.state
        state.size += size
        if now is not None:
            terminal.updated_at = now
        events.append(TerminalOutputAppended(session.session_id, terminal.terminal_id, size))
        if len(output) > as_cap(state.limits.max_terminal_bytes):
            self.budgets.cap_output(session, terminal, events)
        if session.size > state.session_cap or state.size > state.store_cap:
            self.budgets.enforce(session, terminal, events)
