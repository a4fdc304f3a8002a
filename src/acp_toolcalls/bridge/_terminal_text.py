"""Terminal bytes as safe plain text: the transcript fallback of D46 (terminal conversion).

Rules this module owns:

- Bytes are decoded as UTF-8 with replacement characters; nothing in the output can style the
  reader's terminal or move its cursor.
- ANSI/VT sequences are removed: CSI (``ESC [`` ... final byte 0x40-0x7E), OSC (``ESC ]`` ...
  BEL or ``ESC \\``), other two-byte ``ESC x`` sequences and C1 controls.
- ``\\r\\n`` is a newline; a lone ``\\r`` returns to the start of the line, so only the text after
  the last one counts; backspace deletes the previous character; other control characters but
  ``\\t`` and ``\\n`` are dropped.
- Transcripts are fenced with ``convert.fenced`` (the fence rule of 9.5 lives there: the
  converters use it too).
- A transcript keeps only the last ``tail_chars`` characters, behind a line saying how many
  earlier ones were omitted.
- ``TailRenderer`` gives the same transcript of output that grows at its end in time that does
  not grow with the output: complete lines are sanitized once, and what follows them on each
  render. Sanitizing is line by line but for escape strings (OSC, DCS) that may span lines, so
  a line end is settled only when no escape sequence runs over it.
"""

from __future__ import annotations

import re

from ..convert import fenced

__all__ = ["DEFAULT_TAIL_CHARS", "TailRenderer", "fenced", "sanitize", "tail"]

DEFAULT_TAIL_CHARS = 65_536
"""Characters of output a transcript keeps (the spec's ``terminal_tail_chars``)."""

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, ended by BEL or ST (or cut off)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]"  # other escape sequences (two bytes, maybe intermediates)
    r"|\x1b"  # a lone ESC left over (cut off at the end of the output)
    r"|[\x80-\x9f]"  # C1 controls
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _overstrike(line: str) -> str:
    if "\r" in line:  # the last segment drawn over the line (a trailing \r draws nothing)
        line = next((part for part in reversed(line.split("\r")) if part), "")
    if "\b" in line:
        out: list[str] = []
        for char in line:
            if char == "\b":
                if out:
                    out.pop()
            else:
                out.append(char)
        line = "".join(out)
    return line


def sanitize(data: bytes | str) -> str:
    """The printable text of terminal output bytes (or already decoded text)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = _ESCAPES.sub("", text).replace("\r\n", "\n")
    if "\r" in text or "\b" in text:
        text = "\n".join(_overstrike(line) for line in text.split("\n"))
    return _CONTROLS.sub("", text)


def tail(text: str, tail_chars: int = DEFAULT_TAIL_CHARS) -> str:
    """The last ``tail_chars`` characters of ``text``, saying how many were left out."""
    if len(text) <= tail_chars:
        return text
    omitted = len(text) - tail_chars
    return f"[… {omitted} earlier characters omitted]\n{text[omitted:]}"


class TailRenderer:
    """``tail(sanitize(data), tail_chars)`` of one output as it grows at its end.

    ``render(data)`` needs ``data`` to start with what the previous call was given (the
    caller makes a new renderer when the output was replaced or cut); it sanitizes only what
    came after the lines it settled before.
    """

    __slots__ = ("_consumed", "_kept", "_length", "tail_chars")

    def __init__(self, tail_chars: int = DEFAULT_TAIL_CHARS) -> None:
        self.tail_chars = tail_chars
        self._consumed = 0  # bytes of settled lines
        self._length = 0  # their sanitized length
        self._kept = ""  # the last `tail_chars` characters of their sanitized text

    def render(self, data: bytes | bytearray) -> str:
        """The transcript of ``data``."""
        if len(data) < self._consumed:  # not the output it was given: start again
            self._consumed, self._length, self._kept = 0, 0, ""
        rest = bytes(data[self._consumed :])
        text = sanitize(rest)
        total = self._length + len(text)
        if total <= self.tail_chars:
            out = self._kept + text
        else:
            omitted = total - self.tail_chars
            shown = (self._kept + text)[-self.tail_chars :] if self.tail_chars else ""
            out = f"[… {omitted} earlier characters omitted]\n{shown}"
        self._settle(rest, text)
        return out

    def _settle(self, rest: bytes, text: str) -> None:
        cut = rest.rfind(b"\n") + 1
        if cut == 0:
            return
        done = rest[:cut].decode("utf-8", "replace")
        start = done.rfind("\x1b")  # an escape string can only run on from the last ESC
        escape = _ESCAPES.match(done, start) if start >= 0 else None
        if escape is not None and escape.end() >= len(done):
            return  # it runs past the line end: what follows may end it
        lines = sanitize(done) if cut < len(rest) else text
        self._consumed += cut
        self._length += len(lines)
        self._kept = (self._kept + lines)[-self.tail_chars :] if self.tail_chars else ""
