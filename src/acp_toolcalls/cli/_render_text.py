"""Text from the log as ``replay`` shows it: plain, printable, on one line where it must be.

Rules this module owns (``render``'s, the text half): every string from the log is cleaned of
ANSI escape and control sequences (``sanitize``), bidirectional controls and marks are shown
as escapes, and in values (ids, titles, commands, paths, text excerpts) a carriage return or
backspace too (``\\x0d``); an excerpt is the first non-blank line, cut to ``EXCERPT_CHARS``.
"""

from __future__ import annotations

import re
from typing import Any

from .. import bridge
from ..report import printable

__all__ = ["EXCERPT_CHARS", "excerpt", "one_line", "sanitize", "variant_tag"]

EXCERPT_CHARS = 80
"""A text excerpt is cut to this many characters."""


def sanitize(text: str) -> str:
    """``text`` as safe plain text (``terminal_text.sanitize``), tabs as four spaces, and
    bidirectional controls and marks shown as escapes (``printable``)."""
    clean = bridge.sanitize(text).replace("\t", "    ")
    if clean.isascii():
        return clean
    return "\n".join(printable(line) for line in clean.split("\n"))


_HIDERS = re.compile("\r(?!\n)|\b")


def _value(text: str) -> str:
    """``sanitize`` of a value (not terminal output): a carriage return or a backspace, which
    would draw over what precedes it, is shown as an escape (``\\x0d``) instead."""
    return sanitize(_HIDERS.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


def one_line(text: object) -> str:
    """A value from the log as one printable line (ids, titles, commands)."""
    return _value(str(text)).replace("\n", " ")


def excerpt(text: str) -> str:
    lines = [line.strip() for line in _value(text).split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        return ""
    first = lines[0]
    if len(first) > EXCERPT_CHARS:
        return first[: EXCERPT_CHARS - 1] + "…"
    return first + (" …" if len(lines) > 1 else "")


def variant_tag(value: Any, key: str) -> str:
    """The discriminator of an unknown variant, kept verbatim in its ``data``."""
    data = getattr(value, "data", None)
    return one_line(data.get(key, "?")) if isinstance(data, dict) else "?"
