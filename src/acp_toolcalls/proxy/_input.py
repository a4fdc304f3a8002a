"""Reading a side's input: whole lines, with a limit, in the reads they came in.

Rules this module owns: lines are read with a limit: a longer line is reported and skipped,
never held in memory whole; it is not fatal. A reader holds at most ``2 * _READ_AHEAD`` bytes
it was not asked for yet, so a side that is not read costs that, not twice the line limit. A
stdin that cannot be polled (a file, ``/dev/null``) is read in chunks (``_FileFeed``); a closed
stdin is read as an empty one.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator

_READ_CHUNK = 1 << 16
_READ_AHEAD = 1 << 18  # a reader pauses its pipe past twice this, whatever the line limit


async def _batches(
    reader: asyncio.StreamReader, max_bytes: int
) -> AsyncIterator[list[bytes | int]]:
    """The lines of each read, in order, without their newline (blank lines left out); an
    ``int`` is the size of a line over ``max_bytes``, skipped (its bytes are discarded as they
    arrive). A line is put together here from as many reads as it takes, so the reader never
    holds more than twice its limit of what was not asked for yet. A read error ends the
    stream."""
    pieces: list[bytes] = []  # the start of a line whose end has not been read yet
    held = 0  # their bytes
    skipping = 0  # the bytes so far of a line over max_bytes
    while True:
        try:
            data = await reader.read(_READ_CHUNK)
        except OSError:
            return
        if not data:  # EOF: the last line may have no newline
            if skipping or held > max_bytes:
                yield [skipping + held]
            elif held:
                whole = b"".join(pieces)
                if not whole.isspace():
                    yield [whole.rstrip(b"\r")]
            return
        lines: list[bytes | int] = []
        parts = data.split(b"\n")
        rest = parts.pop()  # after the last newline: the start of the next line
        if parts and (held or skipping):  # the first part ends the line read so far
            size = skipping + held + len(parts[0]) + 1
            if skipping or size - 1 > max_bytes:
                lines.append(size)
                parts[0] = b""
            else:
                pieces.append(parts[0])
                parts[0] = b"".join(pieces)
            pieces, held, skipping = [], 0, 0
        for line in parts:
            if len(line) > max_bytes:
                lines.append(len(line) + 1)
            elif line and not line.isspace():
                lines.append(line.rstrip(b"\r") if line[-1] == 13 else line)
        if rest:
            if skipping:
                skipping += len(rest)
            elif held + len(rest) > max_bytes:
                skipping, pieces, held = held + len(rest), [], 0
            else:
                pieces.append(rest)
                held += len(rest)
        if lines:
            yield lines


class _FileFeed:
    """Reads a descriptor that cannot be polled (a regular file, ``/dev/null``) into a
    ``StreamReader`` in chunks, pausing when the reader asks (its transport)."""

    def __init__(self, reader: asyncio.StreamReader, fd: int) -> None:
        self.reader = reader
        self.fd = fd
        self.go = asyncio.Event()
        self.go.set()
        reader.set_transport(self)  # type: ignore[arg-type]

    def pause_reading(self) -> None:
        self.go.clear()

    def resume_reading(self) -> None:
        self.go.set()

    async def run(self) -> None:
        try:
            while True:
                await self.go.wait()
                data = os.read(self.fd, _READ_CHUNK)
                if not data:
                    break
                self.reader.feed_data(data)
                await asyncio.sleep(0)
        except OSError:
            pass
        self.reader.feed_eof()


def _pollable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
