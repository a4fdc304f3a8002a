"""The codec's limits on one message: its size, and how deep its JSON nests.

Rules this module owns:

- One encoded message (one line of JSON Lines) is at most ``max_bytes`` bytes, by default
  ``DEFAULT_MAX_BYTES`` (16 MiB); a larger one is a ``DecodeError`` at ``$`` before any parse.
- Text is measured in UTF-8 bytes (a lone surrogate counted as its three bytes), and only
  encoded when its length could exceed the limit.
- A message nests at most ``MAX_DEPTH`` arrays and objects deep (the message object itself is
  level 1); a deeper one is a ``DecodeError`` at ``$`` ("nesting is too deep (over the limit of
  256 levels)"), whichever decoder reads it, on every Python. This is the one depth limit of the
  package (issue 27): every writer of what the codec accepted (``encode``, the stores' size
  measure, ``inspect``'s data and page, ``replay --json``, ``convert``, the bridge's lines and
  notes) writes a value ``MAX_DEPTH`` deep at any call depth the package reaches, so nothing
  accepted can end a command with a ``RecursionError``. Without it the limit was where
  msgspec's parser met Python's recursion limit: about 990 levels in a command, fewer deeper
  in a call stack, far more on Python 3.12+ (whose C recursion limit msgspec uses), and the
  writers, which recurse in Python, failed from about 400.

Theory of operation: the depth is measured on the bytes without parsing. A line with at most
``MAX_DEPTH`` opening brackets cannot nest deeper (two ``bytes.count`` calls, what almost every
message costs); any other line has its strings removed by one regular expression and its
brackets counted (``nesting``), stopping at the first level over the limit.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .._errors import DecodeError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_DEPTH",
    "check_depth",
    "check_size",
    "check_value_depth",
    "nesting",
    "shallow",
]

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Default limit on one encoded message (one line of JSON Lines), in bytes."""

MAX_DEPTH: Final = 256
"""How deep (arrays and objects, the message itself counted) a message the codec accepts
nests at most."""

_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_OPEN: Final = frozenset(b"[{")
_BRACKETS = re.compile(rb"[^\[\]{}]+")


def check_size(data: bytes | bytearray | memoryview | str, max_bytes: int) -> None:
    """Raise ``DecodeError`` when ``data`` is over ``max_bytes`` bytes."""
    size = len(data)
    if isinstance(data, str) and size * 4 > max_bytes:
        size = len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise DecodeError("$", f"message of {size} bytes exceeds the limit of {max_bytes} bytes")


def shallow(data: bytes | bytearray | str) -> bool:
    """Whether JSON text ``data`` certainly nests no deeper than ``MAX_DEPTH`` (few brackets)."""
    if isinstance(data, str):
        return data.count("[") + data.count("{") <= MAX_DEPTH
    return data.count(b"[") + data.count(b"{") <= MAX_DEPTH


def nesting(data: bytes | bytearray | memoryview | str, limit: int = MAX_DEPTH) -> int:
    """How deep JSON text ``data`` nests, counted up to ``limit + 1`` (the first level over
    ``limit`` ends the count). Brackets inside strings do not count; text that is not JSON
    gets some number, which only says that the parser will refuse it or not."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    brackets = _BRACKETS.sub(b"", _STRINGS.sub(b"", raw))
    depth = deepest = 0
    for mark in brackets:
        if mark in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def check_depth(data: bytes | bytearray | memoryview | str) -> None:
    """Raise ``DecodeError`` when JSON text ``data`` nests deeper than ``MAX_DEPTH``."""
    if not isinstance(data, memoryview) and shallow(data):
        return
    if nesting(data) > MAX_DEPTH:
        raise DecodeError("$", _too_deep())


def check_value_depth(value: Any) -> None:
    """Raise ``DecodeError`` when a parsed JSON value (dicts, lists, scalars) nests deeper
    than ``MAX_DEPTH``; walked without recursion, and only as far as the limit."""
    level: list[tuple[Any, int]] = [(value, 1)]
    while level:
        item, depth = level.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise DecodeError("$", _too_deep())
        level.extend((child, depth + 1) for child in children if isinstance(child, _NESTS))
    return


_NESTS = (dict, list, tuple)


def _too_deep() -> str:
    return f"nesting is too deep (over the limit of {MAX_DEPTH} levels)"
