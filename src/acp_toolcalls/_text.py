"""Text for a person's terminal or page: what would hide or reorder it is shown, not obeyed.

Rules this module owns (issue 27, item 9): C0 and C1 control characters and DEL are shown as
``\\x1b``; the bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E,
U+200F, U+202A-U+202E, U+2066-U+2069) and the line and paragraph separators (U+2028, U+2029)
as ``\\u202e``. Every human line the package writes (the commands' reports and notes, the
bridge's stderr notes) goes through ``printable``; JSON output and forwarded messages never do.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

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
    """``text`` with what would hide or reorder it escaped (``\\x1b``, ``\\u202e``): one line
    as written, shown in the order written."""
    return _UNPRINTABLE.sub(_escape, text)
