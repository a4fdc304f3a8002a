"""Display terminals an agent announces, feeds and closes (v2 ``terminal_update``).

Rules this module owns (D46 (sender obligations); D22): a terminal id is non-empty
and never reused in a session; ``cwd`` is an absolute native path, ``size`` 1..65535 each way;
output bytes go out base64-encoded, one ``terminal_output_chunk`` each (empty output sends
nothing); the exit is reported once (``exit_code`` a 64-bit integer) and the terminal then
takes no more output. Everything is checked, and encoded, before the id is taken.

``Terminals`` is the emitter's part for them: it holds the emitter's state and the terminal
ids used (whether each exited); ``ToolCallEmitter``'s terminal methods call it.
"""

from __future__ import annotations

import base64
from typing import Any

from msgspec import UNSET, UnsetType

from .. import v2
from ._core import EmitterState, Message
from ._patches import update_message
from ._senders import SenderError, check_absolute_path, check_meta, check_size, check_str, encoded


class Terminals:
    """The display terminals of an emitter's session."""

    def __init__(self, state: EmitterState) -> None:
        self.state = state
        self.exited: dict[str, bool] = {}  # terminal id -> exited

    def start(
        self,
        terminal_id: str,
        command: str | UnsetType,
        cwd: str | UnsetType,
        size: v2.TerminalSize | UnsetType,
        meta: dict[str, Any] | UnsetType,
    ) -> list[Message]:
        if not isinstance(terminal_id, str) or not terminal_id:
            raise SenderError("terminalId", "must be a non-empty string")
        if terminal_id in self.exited:
            raise SenderError("terminalId", f"terminal id {terminal_id!r} was already used")
        for where, value, check in (
            ("command", command, check_str),
            ("cwd", cwd, check_absolute_path),
            ("size", size, check_size),
            ("_meta", meta, check_meta),
        ):
            if value is not UNSET:
                check(value, where)
                encoded(value, where)  # what JSON cannot carry is refused before the id is taken
        self.exited[terminal_id] = False
        update = v2.TerminalUpdate(
            terminal_id=terminal_id, command=command, cwd=cwd, size=size, meta=meta
        )
        self.state.send(update_message(self.state.session_id, update))
        return self.state.take()

    def output(self, terminal_id: str, data: bytes) -> list[Message]:
        self._running(terminal_id)
        if not data:
            return []
        chunk = v2.TerminalOutputChunk(
            terminal_id=terminal_id, data=base64.b64encode(bytes(data)).decode("ascii")
        )
        self.state.send(update_message(self.state.session_id, chunk))
        return self.state.take()

    def exit(self, terminal_id: str, exit_code: int | None, signal: str | None) -> list[Message]:
        self._running(terminal_id)
        if exit_code is not None and not (type(exit_code) is int and -(2**63) <= exit_code < 2**63):
            raise SenderError("exitStatus.exitCode", f"not a 64-bit integer: {exit_code!r}")
        if signal is not None:
            check_str(signal, "exitStatus.signal")
            encoded(signal, "exitStatus.signal")
        status = v2.TerminalExitStatus(
            exit_code=UNSET if exit_code is None else exit_code,
            signal=UNSET if signal is None else signal,
        )
        self.exited[terminal_id] = True
        update = v2.TerminalUpdate(terminal_id=terminal_id, exit_status=status)
        self.state.send(update_message(self.state.session_id, update))
        return self.state.take()

    def _running(self, terminal_id: str) -> None:
        exited = self.exited.get(terminal_id)
        if exited is None:
            raise SenderError("terminalId", f"terminal {terminal_id!r} was never started")
        if exited:
            raise SenderError("terminalId", f"terminal {terminal_id!r} already exited")
