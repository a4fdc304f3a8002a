"""Following a growing file for ``replay --follow``: its complete lines as they are written.

Rules this module owns:

- ``FollowReader.poll`` returns the lines one read made complete, numbered from 1; a partial
  last line waits for its end (``finish`` takes it when the stream has ended). An overlong line
  is dropped as it is read, like ``lines.read_lines(..., early=True)`` does: reported as soon
  as it is over the limit, as the size read so far, and skipped to its end unheld. A read's
  ``OSError`` is raised as ``lines.ReadError``.
- ``changed``: a followed file replaced since it was opened (log rotation: another inode) or
  truncated below what was read; a file missing for a moment is neither (rotation in
  progress: keep waiting).
- ``reader_gone``: a pipe whose reader has gone (``poll`` says POLLERR or POLLHUP), which a
  follow that is waiting for lines would never hear of, since it writes nothing.
"""

from __future__ import annotations

import os
import select
import stat
from collections.abc import Callable
from typing import Any

from .lines import ReadError

__all__ = ["FollowReader", "changed", "is_regular", "reader_gone"]

_CHUNK = 64 * 1024  # what one poll reads at most


class FollowReader:
    """Complete lines of a stream that may still grow; a partial last line waits for its end.

    ``poll`` returns what one read made complete; an overlong line is dropped as it is read,
    like ``read_lines(..., early=True)`` does: reported as soon as it is over the limit, as
    the size read so far.
    """

    def __init__(self, stream: Any, max_bytes: int) -> None:
        read1 = getattr(stream, "read1", None)
        self._read: Callable[[int], bytes] = read1 if read1 is not None else stream.readline
        self._max = max_bytes
        self._pending = bytearray()
        self._skipping: int | None = None  # bytes of an overlong line dropped so far
        self.number = 0
        self.eof = False

    def poll(self) -> list[tuple[int, bytes | int]]:
        try:
            data = self._read(_CHUNK)
        except OSError as exc:
            raise ReadError(exc) from exc
        self.eof = not data
        out: list[tuple[int, bytes | int]] = []
        if not data:
            return out
        start = 0
        while True:
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if self._skipping is not None:
                self._skipping += len(piece)
            else:
                self._pending += piece
                if len(self._pending) > self._max:  # reported now, not at its (far) end
                    self.number += 1
                    out.append((self.number, len(self._pending)))
                    self._skipping = len(self._pending)
                    self._pending.clear()
            if end < 0:
                return out
            if self._skipping is not None:
                self._skipping = None  # the end of a line already reported
            else:
                self.number += 1
                out.append((self.number, bytes(self._pending)))
                self._pending.clear()
            start = end + 1

    def finish(self) -> list[tuple[int, bytes | int]]:
        """The last line when the stream ended without a newline."""
        if self._skipping is not None or not self._pending:
            self._skipping = None
            return []
        self.number += 1
        last = bytes(self._pending)
        self._pending.clear()
        return [(self.number, last)]


def is_regular(stream: Any) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):
        return False


def reader_gone(stream: Any) -> bool:
    """Whether ``stream`` is a pipe whose reader has gone (``poll`` says POLLERR): a follow
    that is waiting for lines writes nothing, so it would never hear of it otherwise."""
    try:
        fd = stream.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, 0)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def changed(name: str, stream: Any) -> str | None:
    """Whether the followed file was replaced (log rotation) or truncated since it was opened
    and read up to here: what to say of it, or ``None``."""
    try:
        now = os.stat(name)
        opened = os.fstat(stream.fileno())
        position = stream.tell()
    except (AttributeError, OSError, ValueError):
        return None  # gone for a moment (rotation in progress): keep waiting
    if (now.st_ino, now.st_dev) != (opened.st_ino, opened.st_dev):
        return "was replaced (log rotation?)"
    if now.st_size < position:
        return "was truncated"
    return None
