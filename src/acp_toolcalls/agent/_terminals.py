"""Display terminals an agent announces, feeds and closes (v2 ``terminal_update``).

Rules this module owns (D46 (sender obligations); D22): a terminal id is non-empty
and never reused in a session; ``cwd`` is an absolute native path, ``size`` 1..65535 each way;
output bytes go out base64-encoded, one ``terminal_output_chunk`` each (empty output sends
nothing); the exit is reported once (``exit_code`` a 64-bit integer) and the terminal then
takes no more output. Everything is checked, and encoded, before the id is taken.
"""

from __future__ import annotations

import base64
from typing import Any

from msgspec import UNSET, UnsetType

from .. import v2
from ._core import EmitterCore, Message
from ._patches import update_message
from ._senders import SenderError, check_absolute_path, check_meta, check_size, check_str, encoded


class TerminalsMixin(EmitterCore):
    """The emitter's terminal methods."""

    def start_terminal(
        self,
        terminal_id: str,
        *,
        command: str | UnsetType = UNSET,
        cwd: str | UnsetType = UNSET,
        size: v2.TerminalSize | UnsetType = UNSET,
        meta: dict[str, Any] | UnsetType = UNSET,
    ) -> list[Message]:
        """Announce a display terminal; show it in a call with ``v2.Terminal(terminal_id=...)``."""
        if not isinstance(terminal_id, str) or not terminal_id:
            raise SenderError("terminalId", "must be a non-empty string")
        if terminal_id in self._terminals:
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
        self._terminals[terminal_id] = False
        update = v2.TerminalUpdate(
            terminal_id=terminal_id, command=command, cwd=cwd, size=size, meta=meta
        )
        self._send(update_message(self.session_id, update))
        return self._take()

    def terminal_output(self, terminal_id: str, data: bytes) -> list[Message]:
        """Append output bytes (a ``terminal_output_chunk``, base64-encoded on its own)."""
        self._terminal(terminal_id)
        if not data:
            return []
        chunk = v2.TerminalOutputChunk(
            terminal_id=terminal_id, data=base64.b64encode(bytes(data)).decode("ascii")
        )
        self._send(update_message(self.session_id, chunk))
        return self._take()

    def exit_terminal(
        self, terminal_id: str, *, exit_code: int | None = None, signal: str | None = None
    ) -> list[Message]:
        """Report the terminal's process exit; the terminal takes no more output."""
        self._terminal(terminal_id)
        if exit_code is not None and not (type(exit_code) is int and -(2**63) <= exit_code < 2**63):
            raise SenderError("exitStatus.exitCode", f"not a 64-bit integer: {exit_code!r}")
        if signal is not None:
            check_str(signal, "exitStatus.signal")
            encoded(signal, "exitStatus.signal")
        status = v2.TerminalExitStatus(
            exit_code=UNSET if exit_code is None else exit_code,
            signal=UNSET if signal is None else signal,
        )
        self._terminals[terminal_id] = True
        update = v2.TerminalUpdate(terminal_id=terminal_id, exit_status=status)
        self._send(update_message(self.session_id, update))
        return self._take()

    def _terminal(self, terminal_id: str) -> None:
        exited = self._terminals.get(terminal_id)
        if exited is None:
            raise SenderError("terminalId", f"terminal {terminal_id!r} was never started")
        if exited:
            raise SenderError("terminalId", f"terminal {terminal_id!r} already exited")
