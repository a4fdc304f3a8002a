"""The codec's size limit on one message.

Rules this module owns:

- One encoded message (one line of JSON Lines) is at most ``max_bytes`` bytes, by default
  ``DEFAULT_MAX_BYTES`` (16 MiB); a larger one is a ``DecodeError`` at ``$`` before any parse.
- Text is measured in UTF-8 bytes (a lone surrogate counted as its three bytes), and only
  encoded when its length could exceed the limit.
"""

from __future__ import annotations

from .._errors import DecodeError

__all__ = ["DEFAULT_MAX_BYTES", "check_size"]

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Default limit on one encoded message (one line of JSON Lines), in bytes."""


def check_size(data: bytes | bytearray | memoryview | str, max_bytes: int) -> None:
    """Raise ``DecodeError`` when ``data`` is over ``max_bytes`` bytes."""
    size = len(data)
    if isinstance(data, str) and size * 4 > max_bytes:
        size = len(data.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise DecodeError("$", f"message of {size} bytes exceeds the limit of {max_bytes} bytes")
