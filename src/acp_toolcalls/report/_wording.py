"""How a line's problems are worded for a user: the words ``replay``, ``convert``, ``inspect``
and ``validate`` share.

Rules this module owns: a value from a log never moves the reader's cursor nor reorders the
text around it (``printable``: control characters escaped as ``\\x0d``, bidirectional
controls and marks as ``\\u202e``; the bridge's stderr notes escape the same set); a line
that is not UTF-8 is said to be so, at its byte. (Library messages cite no design decision of
the specification, which users do not have: tests/test_decisions.py.)
"""

from __future__ import annotations

import re

from ..codec import DecodeError

__all__ = ["overlong", "printable", "unreadable"]


def overlong(max_bytes: int) -> str:
    """What ``replay`` and ``convert`` say of a line ``read_lines(..., early=True)`` skips."""
    return (
        f"line of more than {max_bytes} bytes: over the limit of {max_bytes} (--max-line-bytes); "
        "skipped to its end"
    )


def unreadable(data: bytes, exc: DecodeError) -> str:
    """What to say of a line the decoder could not read: its UTF-8 error, else the decoder's."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not valid UTF-8 at byte {bad.start}: {bad.reason}"
    return exc.reason


_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f"  # C0, DEL, C1
    "\u061c\u200e\u200f"  # the bidirectional marks
    "\u202a-\u202e\u2066-\u2069"  # the bidirectional embeddings, overrides and isolates
    "\u2028\u2029]"  # line and paragraph separators
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\x1b``; bidirectional controls and marks
    as ``\\u202e``): log values never move the cursor nor reorder what is shown."""
    return _UNPRINTABLE.sub(_escape, text)
