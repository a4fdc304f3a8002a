"""Terminal bytes as safe plain text: the transcript fallback of TOOL-CALLS.md 9.6.

Rules this module owns:

- Bytes are decoded as UTF-8 with replacement characters; nothing in the output can style the
  reader's terminal or move its cursor.
- ANSI/VT sequences are removed: CSI (``ESC [`` ... final byte 0x40-0x7E), OSC (``ESC ]`` ...
  BEL or ``ESC \\``), other two-byte ``ESC x`` sequences and C1 controls.
- ``\\r\\n`` is a newline; a lone ``\\r`` returns to the start of the line, so only the text after
  the last one counts; backspace deletes the previous character; other control characters but
  ``\\t`` and ``\\n`` are dropped.
- A fenced block's fence is three backticks, or one more than the longest run of backticks
  inside the text, so no text can close it early (9.5).
- A transcript keeps only the last ``tail_chars`` characters, behind a line saying how many
  earlier ones were omitted.
"""

from __future__ import annotations

import re

__all__ = ["DEFAULT_TAIL_CHARS", "fenced", "sanitize", "tail"]

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


_BACKTICK_RUNS = re.compile(r"`+")


def fenced(text: str, info: str = "") -> str:
    """``text`` as a Markdown fenced code block that nothing inside can close early."""
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}"
