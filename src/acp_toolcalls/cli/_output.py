"""Writing a command's output: every byte of it, or an error.

Rules this module owns:

- ``write_all`` hands ``data`` to a binary stream until the stream has taken every byte: a
  short write (Linux's ``write(2)`` takes at most 2,147,479,552 bytes at a time, a signal or a
  file-size limit can stop one early, and ``BufferedWriter.write`` then returns the short count
  rather than raise) is followed by another write of the rest, and a write that takes nothing
  is an ``OSError`` (``EIO``), never a silent cut. Each write is at most ``PIECE`` bytes.
- ``write_out`` writes bytes to a command's text output (``sys.stdout``) through its binary
  buffer, whole, after flushing the text written before, and flushes them (a reader
  downstream sees each piece as it is made). A text stream without a buffer (a replaced
  ``sys.stdout``) gets the text.
- An ``OSError`` of writing is raised as it is: the dispatcher says "cannot write the
  output" (exit 2), ``convert`` wraps it.

Every command writes its machine-readable output through these two (``replay --json``,
``convert``, ``inspect -o -``, and ``inspect``'s report file); issue 27 found a 2 GiB line cut
where the count a write returned was ignored.
"""

from __future__ import annotations

import errno
from typing import IO, Any, Final

__all__ = ["PIECE", "write_all", "write_out"]

PIECE: Final = 1 << 30
"""The most bytes handed to one ``write`` call (1 GiB: under every platform's cap)."""


def write_all(stream: Any, data: bytes | bytearray | memoryview) -> None:
    """Write every byte of ``data`` to the binary ``stream`` (see the module)."""
    view = memoryview(data).cast("B")
    while view:
        taken = stream.write(view[:PIECE])
        if not taken:  # 0, or None from a non-blocking raw stream that took nothing
            raise OSError(errno.EIO, f"the output took none of the last {len(view):,} bytes")
        view = view[taken:]


def write_out(out: IO[str], data: bytes) -> None:
    """Write ``data`` whole to the text stream ``out`` through its buffer, then flush it."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(data.decode("utf-8"))
        out.flush()
        return
    out.flush()
    write_all(buffer, data)
    buffer.flush()
