"""Terminals as a v1 client is shown them: rendered from the store's terminal state.

Rules this module owns (D46 (terminal conversion); D22):

- A terminal reference in a call's content is rendered at every flush from the terminal's
  state: the ``text`` profile as one fenced transcript item (``$ command``, the sanitized tail
  of the output, an exit line; then the working directory of a command), or no item while a
  terminal has nothing to show (no command, output or exit yet).
- The ``meta`` and ``meta_delta`` profiles (a v1 client that offers the ``_meta`` terminal
  extension, D38 as amended) show a live terminal: the ``terminal`` item stays in the
  content, and the call's update carries, once each, ``terminal_info`` (id, cwd),
  each output byte as it arrives (``terminal_output``, appended as Zed does, or
  ``terminal_output_delta``; UTF-8 split across chunks decoded whole, the bytes otherwise as
  the agent wrote them: the client's terminal renders them) and ``terminal_exit``. A
  replaced output that does not continue what was sent is sent after a line saying so
  (appending cannot take text back; reported).
- Renderings are a cache (``_RENDERED``, the oldest go), dropped when the terminal changes
  (``SessionUpdates.on_terminal``); the output's tail is rendered incrementally
  (``TailRenderer``) for the ``_RENDERERS`` terminals most recently rendered, so output that
  only grew costs what it grew by.
"""

from __future__ import annotations

import codecs
from typing import Any

from msgspec import UNSET

from .. import v1, v2
from ..store import TerminalState
from ._terminal_text import TailRenderer, fenced
from ._to_v1_state import BridgeState

_RENDERED = 256
"""Terminal renderings kept (each up to ``tail_chars`` characters)."""
_RENDERERS = 64
"""Terminals whose output's tail is rendered incrementally (the most recently rendered)."""
_STREAMS = 4_096
"""Terminals whose ``_meta`` extension stream is remembered (the most recently sent)."""
_TAIL = 64
"""Bytes of sent output remembered, to tell a replacement that continues it."""


class _Stream:
    """What the ``_meta`` terminal extension has sent a v1 client of one terminal."""

    __slots__ = ("announced", "decoder", "exited", "replaced", "sent", "tail")

    def __init__(self) -> None:
        self.announced = False  # `terminal_info` sent
        self.exited = False  # `terminal_exit` sent
        self.replaced = False  # the store's output was replaced since the last send
        self.sent = 0  # output bytes sent (counting what the store's cap dropped)
        self.tail = b""  # the last bytes sent
        self.decoder: Any = codecs.getincrementaldecoder("utf-8")("replace")


class TerminalRendering:
    """How the bridge shows terminals (a component of ``V2ToV1Bridge``; its caches are the
    shared state's ``rendered``, ``texts`` and ``streams``)."""

    def __init__(self, state: BridgeState) -> None:
        self.state = state

    def render(self, session_id: str, terminal_id: str) -> Any:
        key = (session_id, terminal_id)
        renderings = self.state.rendered
        if key in renderings:  # (`None` is a rendering too: nothing to show)
            return renderings[key]
        rendered = renderings[key] = self._render_now(session_id, terminal_id)
        if len(renderings) > _RENDERED:  # renderings are a cache: the oldest go
            del renderings[next(iter(renderings))]
        return rendered

    def _render_now(self, session_id: str, terminal_id: str) -> Any:
        """The ``text`` profile's item for the terminal (``None``: nothing to show yet)."""
        session = self.state.store.sessions.get(session_id)
        terminal = session.terminals.get(terminal_id) if session is not None else None
        command = terminal.command if terminal is not None else None
        exit_status = terminal.exit_status if terminal is not None else None
        cwd = terminal.cwd if terminal is not None else None
        output = self._tail_text(session_id, terminal) if terminal is not None else ""
        lines = [f"$ {command}"] if command is not None else []
        if output:
            lines.append(output.rstrip("\n"))
        if exit_status is not None:
            lines.append(_exit_line(exit_status))
        if not lines:  # no command, output or exit yet: nothing to show (not an empty block)
            return None
        text = fenced("\n".join(lines))
        if command is not None and cwd is not None:  # where it runs is part of what it does
            text += f"\nWorking directory: {cwd}"
        return v1.Content(content=v1.TextContent(text=text))

    def meta(self, session_id: str, terminal_id: str) -> dict[str, Any]:
        """The ``_meta`` terminal extension keys of what the client has not been sent of the
        terminal yet (``terminal_info`` once, the output appended since, ``terminal_exit``
        once); sending them is up to the caller, and they are not sent again."""
        state = self.state
        key = (session_id, terminal_id)
        streams = state.streams
        stream = streams.pop(key, None) or _Stream()
        streams[key] = stream  # the most recently sent last
        if len(streams) > _STREAMS:
            del streams[next(iter(streams))]
        session = state.store.sessions.get(session_id)
        terminal = session.terminals.get(terminal_id) if session is not None else None
        meta: dict[str, Any] = {}
        if not stream.announced:
            stream.announced = True
            info: dict[str, Any] = {"terminal_id": terminal_id}
            cwd = terminal.cwd if terminal is not None else None
            if cwd is not None:
                info["cwd"] = cwd
            meta["terminal_info"] = info
        if terminal is None:
            return meta
        data = self._appended(stream, terminal)
        if data:
            name = (
                "terminal_output_delta"
                if state.terminal_profile == "meta_delta"
                else "terminal_output"
            )
            meta[name] = {"terminal_id": terminal_id, "data": data}
        status = terminal.exit_status
        if status is not None and not stream.exited:
            stream.exited = True
            meta["terminal_exit"] = {
                "terminal_id": terminal_id,
                "exit_code": _or_none(status.exit_code),
                "signal": _or_none(status.signal),
            }
        return meta

    def _appended(self, stream: _Stream, terminal: TerminalState) -> str:
        """The terminal's output the client has not been sent, as text (UTF-8 split across
        chunks decoded whole); a replacement that does not continue what was sent is said."""
        output = terminal.output
        if not isinstance(output, bytearray):
            if stream.replaced:  # cleared: nothing new (the client keeps what it has)
                stream.replaced = False
                stream.sent, stream.tail = 0, b""
            return ""
        total = len(output) + terminal.dropped_bytes
        prefix = ""
        if stream.replaced:
            stream.replaced = False
            start = stream.sent - len(stream.tail)
            if terminal.dropped_bytes or output[start : stream.sent] != stream.tail:
                # Appending cannot take back what the client holds: the new output follows.
                self.state.loss(
                    f"$.terminal.{terminal.terminal_id}.output",
                    "output replaced by other text: a v1 client that appends is sent it again",
                )
                stream.sent, stream.tail = 0, b""
                prefix = "\r\n[output replaced]\r\n"
        if total <= stream.sent:
            return prefix
        missing = total - stream.sent
        if missing > len(output):  # the store's cap dropped some of it
            new = bytes(output)
            prefix += f"[\u2026 {missing - len(output):,} bytes omitted]\r\n"
        else:
            new = bytes(output[len(output) - missing :])
        stream.sent = total
        stream.tail = bytes(output[-_TAIL:])
        text: str = stream.decoder.decode(new)
        return prefix + text

    def _tail_text(self, session_id: str, terminal: TerminalState) -> str:
        """The sanitized tail of the terminal's output, through its renderer (output that only
        grew since the last render costs what it grew by)."""
        state = self.state
        data = terminal.output
        if not isinstance(data, bytearray):
            return ""
        key = (session_id, terminal.terminal_id)
        texts = state.texts
        renderer = texts.pop(key, None) or TailRenderer(state.tail_chars)
        texts[key] = renderer  # the most recently rendered last
        if len(texts) > _RENDERERS:
            del texts[next(iter(texts))]
        return renderer.render(data)


def _exit_line(status: v2.TerminalExitStatus) -> str:
    if isinstance(status.exit_code, int):
        return f"[exit code {status.exit_code}]"
    if isinstance(status.signal, str):
        return f"[signal {status.signal}]"
    return "[exited]"


def _or_none(value: Any) -> Any:
    return None if value is UNSET else value
