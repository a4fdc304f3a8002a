"""Terminals as a v1 client is shown them: rendered from the store's terminal state.

Rules this module owns (shared/spec/TOOL-CALLS.md 9.6; D22):

- A terminal reference in a call's content is rendered at every flush from the terminal's
  state: the ``text`` profile as one fenced transcript item (``$ command``, the sanitized tail
  of the output, an exit line; then the working directory of a command), or no item while a
  terminal has nothing to show (no command, output or exit yet); the ``meta`` profile as the
  ``_meta.terminal_info``, ``terminal_output`` and ``terminal_exit`` keys some v1 clients
  read, with no item.
- Renderings are a cache (``_RENDERED``, the oldest go), dropped when the terminal changes
  (``_on_terminal``); the output's tail is rendered incrementally (``TailRenderer``) for the
  ``_RENDERERS`` terminals most recently rendered, so output that only grew costs what it
  grew by.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from .. import v1, v2
from .._mypyc import mypyc_attr
from ..store import TerminalState
from ._terminal_text import TailRenderer, fenced
from ._to_v1_state import _BridgeState

_RENDERED = 256
"""Terminal renderings kept (each up to ``tail_chars`` characters)."""
_RENDERERS = 64
"""Terminals whose output's tail is rendered incrementally (the most recently rendered)."""


@mypyc_attr(allow_interpreted_subclasses=True)  # (the public class's base)
class _TerminalRendering(_BridgeState):
    """The bridge's terminal renderings (a layer of ``V2ToV1Bridge``)."""

    def _render_terminal(self, session_id: str, terminal_id: str) -> tuple[Any, dict[str, Any]]:
        key = (session_id, terminal_id)
        cached = self._rendered.get(key)
        if cached is None:
            cached = self._rendered[key] = self._render_terminal_now(session_id, terminal_id)
            if len(self._rendered) > _RENDERED:  # renderings are a cache: the oldest go
                del self._rendered[next(iter(self._rendered))]
        return cached

    def _render_terminal_now(self, session_id: str, terminal_id: str) -> tuple[Any, dict[str, Any]]:
        session = self.store.sessions.get(session_id)
        terminal = session.terminals.get(terminal_id) if session is not None else None
        command = terminal.command if terminal is not None else None
        exit_status = terminal.exit_status if terminal is not None else None
        cwd = terminal.cwd if terminal is not None else None
        output = self._terminal_text(session_id, terminal) if terminal is not None else ""
        if self.terminal_profile == "meta":
            info: dict[str, Any] = {"terminal_id": terminal_id}
            if command is not None:
                info["command"] = command
            if cwd is not None:
                info["cwd"] = cwd
            meta: dict[str, Any] = {
                "terminal_info": info,
                "terminal_output": {"terminal_id": terminal_id, "data": output},
            }
            if exit_status is not None:
                meta["terminal_exit"] = {
                    "terminal_id": terminal_id,
                    "exit_code": _or_none(exit_status.exit_code),
                    "signal": _or_none(exit_status.signal),
                }
            return None, meta
        lines = [f"$ {command}"] if command is not None else []
        if output:
            lines.append(output.rstrip("\n"))
        if exit_status is not None:
            lines.append(_exit_line(exit_status))
        if not lines:  # no command, output or exit yet: nothing to show (not an empty block)
            return None, {}
        text = fenced("\n".join(lines))
        if command is not None and cwd is not None:  # where it runs is part of what it does
            text += f"\nWorking directory: {cwd}"
        return v1.Content(content=v1.TextContent(text=text)), {}

    def _terminal_text(self, session_id: str, terminal: TerminalState) -> str:
        """The sanitized tail of the terminal's output, through its renderer (output that only
        grew since the last render costs what it grew by)."""
        data = terminal.output
        if not isinstance(data, bytearray):
            return ""
        key = (session_id, terminal.terminal_id)
        renderer = self._texts.pop(key, None) or TailRenderer(self.tail_chars)
        self._texts[key] = renderer  # the most recently rendered last
        if len(self._texts) > _RENDERERS:
            del self._texts[next(iter(self._texts))]
        return renderer.render(data)


def _exit_line(status: v2.TerminalExitStatus) -> str:
    if isinstance(status.exit_code, int):
        return f"[exit code {status.exit_code}]"
    if isinstance(status.signal, str):
        return f"[signal {status.signal}]"
    return "[exited]"


def _or_none(value: Any) -> Any:
    return None if value is UNSET else value
