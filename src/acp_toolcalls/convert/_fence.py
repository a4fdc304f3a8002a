"""Markdown fenced code blocks that nothing inside can close early (D46 (diff conversion)).

Rules this module owns: a fenced block's fence is three backticks, or one more than the
longest run of backticks inside the text; the text ends with a newline before the closing
fence. Used where v2 content becomes v1 text (diffs, commands, terminal transcripts).
"""

from __future__ import annotations

import re

__all__ = ["fenced"]

_BACKTICK_RUNS = re.compile(r"`+")


def fenced(text: str, info: str = "") -> str:
    """``text`` as a Markdown fenced code block that nothing inside can close early."""
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}"
