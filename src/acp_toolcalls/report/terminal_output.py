"""A terminal's output as text, kept up to date as bytes arrive, and told as deltas.

Rules this module owns:

- The text is ``terminal_text.sanitize`` of the output bytes (escape sequences and control
  characters removed, ``\\r`` and backspace applied), as ``replay`` shows a terminal.
- Appends cost what they add: the complete lines (up to the last ``\\n``) are sanitized once
  and kept; only the unfinished last line is sanitized again on each append. ``\\n`` never
  occurs inside a UTF-8 sequence and ``\\r``/backspace act within a line, so this equals
  sanitizing the whole output (an escape sequence split across a newline is the exception).
- Each change is told as ``(keep, added)``: the new text is the old text's first ``keep``
  characters followed by ``added``, so the page rebuilds the text at any message by
  concatenation, and the report holds each character about once.
"""

from __future__ import annotations

from ..bridge import sanitize

__all__ = ["TerminalText"]


class TerminalText:
    """The sanitized text of one terminal's output bytes."""

    def __init__(self) -> None:
        self._done = ""  # sanitized text of the complete lines
        self._cut = 0  # bytes of the output that ``_done`` covers
        self.text = ""

    def update(self, output: bytes | bytearray | None, appended: bool) -> tuple[int, str] | None:
        """The output is now ``output`` (``None``: cleared or never set); ``appended``: the
        old output is a prefix of it. Returns ``(keep, added)``, or ``None`` if unchanged."""
        old = self.text
        known = len(self._done) if appended else 0  # still a prefix after an append
        if output is None:
            self._done, self._cut, self.text = "", 0, ""
        else:
            if not appended or len(output) < self._cut:
                self._done, self._cut, known = "", 0, 0
            end = output.rfind(b"\n", self._cut)
            if end >= 0:
                self._done += sanitize(bytes(output[self._cut : end + 1]))
                self._cut = end + 1
            self.text = self._done + sanitize(bytes(output[self._cut :]))
        keep = _common_prefix(old, self.text, known if output is not None else 0)
        if keep == len(old) == len(self.text):
            return None
        return keep, self.text[keep:]


def _common_prefix(old: str, new: str, known: int) -> int:
    """Length of the common prefix of ``old`` and ``new``, of which the first ``known``
    characters are known to be part: a binary search over slices compared in C."""
    low, high = min(known, len(old), len(new)), min(len(old), len(new))
    while low < high:
        middle = (low + high + 1) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low
