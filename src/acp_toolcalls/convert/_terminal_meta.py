"""The ``_meta`` terminal extension of v1 agents, read as v2 display terminals (D38, amended
2026-12-06).

Rules this module owns (v1 -> v2; docs/conversion.md, "Terminals"):

- A v1 agent offered ``clientCapabilities._meta.terminal_output`` (or
  ``terminal_output_delta``) streams a command's output in the ``_meta`` of its ``tool_call``
  and ``tool_call_update``: ``terminal_info {terminal_id, cwd?}`` announces a terminal (the
  call's content carries ``{"type": "terminal", "terminalId"}``), ``terminal_output_delta
  {terminal_id, data}`` appends text, ``terminal_output {terminal_id, data}`` gives the whole
  output so far, ``terminal_exit {terminal_id, exit_code, signal}`` ends it. That is a v2
  display terminal, not the client-owned terminal of D38: ``TerminalReader`` (one per
  session) turns each into v2 updates, in this order: a ``terminal_update`` for a terminal
  first seen (with its ``cwd``) or a new ``cwd``, its output, then a ``terminal_update`` with
  ``exitStatus`` (a ``null`` code or signal is omitted: unknown).
- Output is v2 bytes: the UTF-8 of ``data``, base64. ``terminal_output_delta`` is a
  ``terminal_output_chunk``. ``terminal_output`` that begins with every byte the terminal
  holds sends only the bytes after them (a chunk; nothing when there are none), so a resent
  whole output costs what it adds; the terminal holds ``data`` either way. One that does not
  is told apart by the terminal's history: after a resend, a new whole output (a
  ``terminal_update`` with the ``output`` snapshot, which replaces); otherwise the agent sends
  new output under ``terminal_output`` (as Zed reads the key, and codex-acp sends it to a
  client that offers only ``terminal_output``): appended, from then on, reported once.
- The four keys are consumed: the call's ``_meta`` goes on without them (left out when nothing
  else is in it). A key whose value is not the extension's shape stays in ``_meta`` and is
  reported; keys of an extension value it does not define are dropped and reported.
- A v1 ``terminal`` content item naming a terminal the extension announced (in this message
  or before) becomes a ``DisplayTerminal``, which ``_content`` converts to a v2 ``terminal``
  item; any other stays the client-owned terminal of D38 (dropped, reported).
- Per session at most ``max_terminals`` terminals are remembered (exited ones forgotten
  first, then the oldest); forgetting is reported. A terminal keeps its size and a digest of
  its output, never the output.
"""

from __future__ import annotations

import hashlib
from base64 import b64encode
from collections.abc import Mapping
from typing import Any

from msgspec import UNSET

from .. import v1, v2
from ..models import extra_fields, replace, with_extra_fields
from ._kernel import Losses, copy_meta
from ._loss import key_path

__all__ = [
    "EXTENSION_KEYS",
    "TERMINAL_BYTES",
    "DisplayTerminal",
    "TerminalReader",
    "extension_offer",
    "uses_extension",
]

EXTENSION_KEYS = frozenset(
    {"terminal_info", "terminal_output", "terminal_output_delta", "terminal_exit"}
)
"""The tool-call ``_meta`` keys of the extension."""

_ORDER = ("terminal_info", "terminal_output", "terminal_output_delta", "terminal_exit")
_KEYS: dict[str, tuple[str, ...]] = {
    "terminal_info": ("terminal_id", "cwd"),
    "terminal_output": ("terminal_id", "data"),
    "terminal_output_delta": ("terminal_id", "data"),
    "terminal_exit": ("terminal_id", "exit_code", "signal"),
}
"""The keys each value of the extension has."""
_INT64 = (-(2**63), 2**63 - 1)
_UNKNOWN, _RESENT, _APPENDED = 0, 1, 2
"""What a terminal's ``terminal_output`` values were seen to be: not told yet, resends of
the whole output, new output."""


def extension_offer(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``clientCapabilities._meta`` a v1 agent is given on behalf of a v2 client: the
    client's own ``meta`` (copied) with both flags of the extension set."""
    offered = dict(meta) if meta else {}
    offered["terminal_output"] = True
    offered["terminal_output_delta"] = True
    return offered


class DisplayTerminal(v1.Terminal):
    """A v1 ``terminal`` item naming a display terminal of the extension: ``_content`` makes
    it a v2 ``terminal`` item (a client-owned one is dropped, D38)."""


def uses_extension(update: v1.ToolCall | v1.ToolCallUpdate) -> bool:
    """Whether ``update``'s ``_meta`` carries a key of the extension (cheap: the common update
    has no ``_meta``)."""
    meta = update.meta
    return type(meta) is dict and bool(meta) and not EXTENSION_KEYS.isdisjoint(meta)


def _has_terminal(content: Any) -> bool:
    if type(content) is not list:
        return False
    return any(isinstance(item, v1.Terminal) for item in content)


def _digest(data: bytes | memoryview) -> hashlib._Hash:
    """A running digest of output bytes (SHA-1: the fastest of ``hashlib`` here, hardware
    accelerated; it tells a resend from new output, it guards nothing)."""
    return hashlib.sha1(data, usedforsecurity=False)


class _Terminal:
    """What a reader keeps of one terminal: the bytes it holds (their count and a digest),
    how its ``terminal_output`` values read, its ``cwd``, whether it exited."""

    __slots__ = ("cwd", "digest", "exited", "mode", "size")

    def __init__(self) -> None:
        self.size = 0
        self.digest = _digest(b"")
        self.mode = _UNKNOWN
        self.cwd: str | None = None
        self.exited = False

    def append(self, data: bytes) -> None:
        self.digest.update(data)
        self.size += len(data)

    def reset(self, data: bytes) -> None:
        self.digest = _digest(data)
        self.size = len(data)

    def extended_by(self, data: bytes) -> bool:
        """Whether ``data`` begins with every byte the terminal holds."""
        size = self.size
        if len(data) < size:
            return False
        return _digest(memoryview(data)[:size]).digest() == self.digest.digest()


TERMINAL_BYTES = 400
"""What a reader keeps per terminal, about, in bytes (for a caller's memory budget)."""


class TerminalReader:
    """One session's terminals of the extension, read as a v2 client holds them (sans-I/O)."""

    __slots__ = ("max_terminals", "terminals")

    def __init__(self, max_terminals: int | None = 10_000) -> None:
        self.max_terminals = max_terminals
        self.terminals: dict[str, _Terminal] = {}

    def wants(self, update: v1.ToolCall | v1.ToolCallUpdate) -> bool:
        """Whether ``read`` changes anything in ``update``: extension keys in its ``_meta``,
        or a ``terminal`` item while the session has terminals."""
        return uses_extension(update) or (bool(self.terminals) and _has_terminal(update.content))

    def read(
        self, update: Any, path: str, losses: Losses
    ) -> tuple[Any, list[v2.TerminalUpdate | v2.TerminalOutputChunk]]:
        """``update`` (a v1 ``tool_call``, ``tool_call_update`` or permission ``toolCall``,
        at ``path`` in its message) without the extension's keys, its display terminal items
        marked (``DisplayTerminal``), and the v2 terminal updates it carried, in order."""
        out: list[v2.TerminalUpdate | v2.TerminalOutputChunk] = []
        changes: dict[str, Any] = {}
        meta = update.meta
        if type(meta) is dict and not EXTENSION_KEYS.isdisjoint(meta):
            kept: dict[str, Any] = {}
            found: dict[str, Mapping[str, Any]] = {}
            for key, value in meta.items():
                where = key_path(f"{path}._meta", key)
                if key not in EXTENSION_KEYS:
                    kept[key] = value
                elif _valid(key, value):
                    found[key] = value
                    for extra in value:
                        if extra not in _KEYS[key]:
                            losses.lost(
                                key_path(where, extra),
                                "not a key of the terminal extension: dropped",
                            )
                else:
                    kept[key] = value
                    losses.lost(
                        where,
                        "not the terminal extension's shape ({terminal_id, ...} with the "
                        "values it defines): kept in `_meta`",
                    )
            for key in _ORDER:
                value = found.get(key)
                if value is not None:
                    self._read(key, value, key_path(f"{path}._meta", key), out, losses)
            changes["meta"] = kept if kept else UNSET
        content = update.content
        if _has_terminal(content) and self.terminals:
            marked = []
            for item in content:
                if isinstance(item, v1.Terminal) and item.terminal_id in self.terminals:
                    item = with_extra_fields(
                        DisplayTerminal,
                        extra_fields(item),
                        terminal_id=item.terminal_id,
                        meta=item.meta,
                    )
                marked.append(item)
            changes["content"] = marked
        if changes:
            update = replace(update, **changes)
        return update, _merged(out)

    def _read(
        self,
        key: str,
        value: Mapping[str, Any],
        path: str,
        out: list[v2.TerminalUpdate | v2.TerminalOutputChunk],
        losses: Losses,
    ) -> None:
        terminal_id: str = value["terminal_id"]
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            terminal = self.terminals[terminal_id] = _Terminal()
            self._bound(terminal, losses)
            out.append(v2.TerminalUpdate(terminal_id=terminal_id))  # created, even without cwd
        if key == "terminal_info":
            cwd = value.get("cwd")
            if isinstance(cwd, str) and cwd != terminal.cwd:
                terminal.cwd = cwd
                out.append(v2.TerminalUpdate(terminal_id=terminal_id, cwd=cwd))
        elif key == "terminal_output_delta":
            data = _bytes(value["data"])
            if data:
                terminal.append(data)
                out.append(_chunk(terminal_id, data))
        elif key == "terminal_output":
            self._output(terminal_id, terminal, _bytes(value["data"]), path, out, losses)
        else:  # terminal_exit
            terminal.exited = True
            code, signal = value.get("exit_code"), value.get("signal")
            status = v2.TerminalExitStatus(
                exit_code=code if isinstance(code, int) else UNSET,
                signal=signal if isinstance(signal, str) else UNSET,
            )
            out.append(v2.TerminalUpdate(terminal_id=terminal_id, exit_status=status))

    @staticmethod
    def _output(
        terminal_id: str,
        terminal: _Terminal,
        data: bytes,
        path: str,
        out: list[v2.TerminalUpdate | v2.TerminalOutputChunk],
        losses: Losses,
    ) -> None:
        """``terminal_output``: the whole output so far, or (once seen to be) new output."""
        if terminal.mode == _APPENDED or terminal.size == 0:
            if data:
                terminal.append(data)
                out.append(_chunk(terminal_id, data))
            return
        if terminal.extended_by(data):
            terminal.mode = _RESENT
            added = data[terminal.size :]
            if added:
                terminal.append(added)
                out.append(_chunk(terminal_id, added))
            return
        if terminal.mode == _RESENT:  # a new whole output: it replaces
            terminal.reset(data)
            snapshot = v2.TerminalOutput(data=b64encode(data).decode("ascii"))
            out.append(v2.TerminalUpdate(terminal_id=terminal_id, output=snapshot))
            return
        terminal.mode = _APPENDED
        losses.lost(
            path,
            f"terminal {terminal_id!r}: `terminal_output` does not repeat the output so far; "
            "read as new output (appended, as Zed reads the key) from here on",
        )
        if data:
            terminal.append(data)
            out.append(_chunk(terminal_id, data))

    def _bound(self, new: _Terminal, losses: Losses) -> None:
        cap = self.max_terminals
        if cap is None or len(self.terminals) <= cap:
            return
        count = len(self.terminals) - cap
        others = [(tid, t) for tid, t in self.terminals.items() if t is not new]
        victims = [tid for tid, t in others if t.exited][:count]
        victims += [tid for tid, t in others if not t.exited][: count - len(victims)]
        for terminal_id in victims:
            del self.terminals[terminal_id]
        losses.lost(
            "$.max_terminals",
            f"forgot {len(victims)} terminal(s) of the session, exited ones first (cap {cap}): "
            "a later `terminal_output` of one starts its output over",
        )

    @property
    def size(self) -> int:
        """What the reader keeps, about, in bytes."""
        return len(self.terminals) * TERMINAL_BYTES


def _valid(key: str, value: Any) -> bool:
    """Whether ``value`` has the shape the extension gives ``key``."""
    if not isinstance(value, Mapping) or not isinstance(value.get("terminal_id"), str):
        return False
    if key == "terminal_info":
        return value.get("cwd") is None or isinstance(value.get("cwd"), str)
    if key == "terminal_exit":
        code, signal = value.get("exit_code"), value.get("signal")
        code_ok = code is None or (type(code) is int and _INT64[0] <= code <= _INT64[1])
        return code_ok and (signal is None or isinstance(signal, str))
    return isinstance(value.get("data"), str)


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _chunk(terminal_id: str, data: bytes) -> v2.TerminalOutputChunk:
    return v2.TerminalOutputChunk(terminal_id=terminal_id, data=b64encode(data).decode("ascii"))


def _merged(
    out: list[v2.TerminalUpdate | v2.TerminalOutputChunk],
) -> list[v2.TerminalUpdate | v2.TerminalOutputChunk]:
    """``out`` with each ``terminal_update`` folded into the one just before it when that one
    is of the same terminal and sets none of its fields: one update where the message had
    one change of the terminal's state."""
    merged: list[v2.TerminalUpdate | v2.TerminalOutputChunk] = []
    for update in out:
        last = merged[-1] if merged else None
        if (
            type(update) is v2.TerminalUpdate
            and type(last) is v2.TerminalUpdate
            and last.terminal_id == update.terminal_id
        ):
            fields = {
                name: value
                for name in _STATE_FIELDS
                if (value := getattr(update, name)) is not UNSET
            }
            if all(getattr(last, name) is UNSET for name in fields):
                merged[-1] = replace(last, **fields)
                continue
        merged.append(update)
    return merged


_STATE_FIELDS = ("cwd", "output", "exit_status")


def display_terminal_to_v2(item: DisplayTerminal) -> v2.Terminal:
    """The v2 ``terminal`` item of a display terminal's v1 item."""
    return v2.Terminal(terminal_id=item.terminal_id, meta=copy_meta(item.meta))
