"""How a line's problems are worded for a user: the words ``replay``, ``convert``, ``inspect``
and ``validate`` share.

Rules this module owns: a value from a log never moves the reader's cursor nor reorders the
text around it (``printable``: control characters escaped as ``\\x0d``, bidirectional
controls and marks as ``\\u202e``; the bridge's stderr notes escape the same set); a line
that is not UTF-8 is said to be so, at its byte. (Library messages cite no design decision of
the specification, which users do not have: tests/project/test_decisions.py.)
"""

from __future__ import annotations

from .._text import printable
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
