"""The proxy's writers: each side's bounded output buffer, and the notes thread for stderr.

Rules this module owns:

- Each side has its own writer (``_Writer``): a buffer bounded in bytes (``QUEUE_BYTES``) that
  the event loop writes out as that side reads, the core's lines kept as they are (no copy,
  no join of large ones) and handed to the transport ``_FEED_BYTES`` at a time; ``room`` is
  clear while more than ``QUEUE_BYTES`` wait. A regular file is written with plain writes.
- Our stderr gets one line per note, written by a helper thread (``_Notes``) from a buffer
  bounded in bytes: a stderr nobody reads never blocks the message path; notes past the bound
  while a write to stderr is under way are dropped and counted, and the count is said when
  stderr takes lines again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import threading
from collections import deque
from typing import IO, Any

QUEUE_BYTES = 1 << 20
"""Bytes waiting for one side past which the readers that write to it pause."""
_NOTES_BYTES = 1 << 18  # notes waiting for stderr past which they are dropped and counted
_HANDOFF = 0.05  # seconds the event loop waits, at most, for the notes thread to take notes
_READ_CHUNK = 1 << 16
_FEED_BYTES = 1 << 18  # what a writer hands its transport at a time, at most
PREFIX = "acp-toolcalls bridge: "


class _Notes:
    """Lines for our stderr, written by a helper thread (a stderr nobody reads blocks it, never
    the event loop); past ``limit`` bytes waiting while the thread is writing, notes are
    dropped and counted. While it is not writing (it waits for the interpreter's lock, behind
    a burst of notes the event loop makes in one go), the waiting notes are handed to it
    first: notes are dropped only because a write to stderr is taking its time."""

    def __init__(self, stream: IO[str] | None, limit: int = _NOTES_BYTES) -> None:
        self._stream = stream
        self._fd = _fileno(stream)
        self._limit = limit
        self._waiting: list[str] = []
        self._size = 0
        self._dropped = 0
        self._done = False
        self._writing = False
        self._stopped = False  # the thread ended: a write failed, or close
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="bridge-notes", daemon=True)
        self._thread.start()

    def say(self, text: str) -> None:
        line = f"{PREFIX}{text}\n"
        with self._cond:
            if self._size + len(line) > self._limit and not (self._writing or self._stopped):
                self._cond.notify_all()  # hand them over; a write in progress is not waited on
                self._cond.wait_for(lambda: self._writing or self._stopped, _HANDOFF)
            if self._size + len(line) > self._limit:
                self._dropped += 1
                return
            self._waiting.append(line)
            self._size += len(line)
            self._cond.notify_all()

    def close(self, timeout: float) -> None:
        """Write what waits, giving up after ``timeout`` seconds (stderr may never be read)."""
        with self._cond:
            self._done = True
            self._cond.notify_all()
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    while not (self._waiting or self._dropped or self._done):
                        self._cond.wait()
                    if not (self._waiting or self._dropped):
                        return
                    lines, self._waiting, self._size = self._waiting, [], 0
                    dropped, self._dropped = self._dropped, 0
                    self._writing = True
                    self._cond.notify_all()
                if dropped:
                    lines.append(f"{PREFIX}{dropped} note(s) dropped: stderr was not being read\n")
                written = self._write("".join(lines))
                with self._cond:
                    self._writing = False
                if not written:
                    return
        finally:
            with self._cond:
                self._stopped = True
                self._cond.notify_all()

    def _write(self, text: str) -> bool:
        if self._fd is None:
            try:
                assert self._stream is not None
                self._stream.write(text)
                self._stream.flush()
            except (OSError, ValueError):
                return False
            return True
        data = text.encode("utf-8", "replace")
        while data:
            try:
                data = data[os.write(self._fd, data) :]
            except BlockingIOError:  # a terminal shared with a non-blocking stdin
                select.select([], [self._fd], [], 1.0)
            except OSError:
                return False
        return True


def _fileno(stream: IO[str] | None) -> int | None:
    """The descriptor to write ``stream`` through without its buffer (``None``: use ``write``)."""
    if stream is None:
        return 2
    try:
        stream.flush()
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


class _Writer:
    """Lines to one side, kept as the core made them (no copy, no join of large ones) and
    handed to the transport ``_FEED_BYTES`` at a time as it drains, so what waits is held once;
    the event loop writes them as the side reads. ``room`` is clear while more than
    ``QUEUE_BYTES`` wait (here and in the transport). A regular file is written with plain
    writes (it never makes anyone wait)."""

    def __init__(self) -> None:
        self.transport: asyncio.WriteTransport | None = None
        self.fd: int | None = None
        self.room = asyncio.Event()
        self.room.set()
        self.ended = asyncio.Event()
        self.closed = False
        self._waiting: deque[bytes | memoryview] = deque()  # not in the transport yet
        self._waiting_bytes = 0
        self._full = False  # the transport holds past its high mark: it says when it drained
        self._ending = False  # close the transport once everything is in it

    def attach(self, transport: Any) -> None:
        self.transport = transport
        transport.set_write_buffer_limits(high=_FEED_BYTES)
        self._feed()

    # flow control, from the transport's protocol
    def pause(self) -> None:
        self._full = True

    def resume(self) -> None:
        self._full = False
        # Not from inside the transport's resume_writing: a close there (``end``) while the
        # transport holds what was just written makes CPython's pipe transport (3.11's
        # _write_ready) lose its connection with its writer still registered; the callbacks
        # that follow raise (tracebacks at the end of a session whose peer stopped reading).
        asyncio.get_running_loop().call_soon(self._feed)

    def lost(self) -> None:
        self.closed = True
        self._waiting.clear()
        self._waiting_bytes = 0
        self.room.set()
        self.ended.set()

    def put(self, lines: list[bytes]) -> None:
        if self.closed or not lines:
            return
        size = sum(map(len, lines)) + len(lines)
        if self.fd is not None:
            self._write_file(lines, size)
            return
        if size <= _FEED_BYTES:
            self._waiting.append(b"\n".join([*lines, b""]))
        else:  # large lines are not copied into one
            for line in lines:
                self._waiting.append(line)
                self._waiting.append(b"\n")
        self._waiting_bytes += size
        self._feed()

    def _write_file(self, lines: list[bytes], size: int) -> None:
        assert self.fd is not None
        pieces = [b"\n".join([*lines, b""])] if size <= _FEED_BYTES else lines
        try:
            for piece in pieces:
                data = memoryview(piece if size <= _FEED_BYTES else piece + b"\n")
                while data:
                    data = data[os.write(self.fd, data) :]
        except OSError:
            self.closed = True

    def _feed(self) -> None:
        """What waits into the transport until it is past its high mark."""
        transport = self.transport
        if transport is None or self.closed:
            return
        if transport.is_closing():  # the side stopped reading for good
            if not self._ending:
                self.lost()
            return
        waiting = self._waiting
        while waiting and not self._full:
            piece = waiting.popleft()
            if len(piece) > _FEED_BYTES:
                view = memoryview(piece)
                waiting.appendleft(view[_FEED_BYTES:])
                piece = view[:_FEED_BYTES]
            self._waiting_bytes -= len(piece)
            transport.write(piece)  # may call pause()
        if not waiting and self._ending:
            transport.close()
        if self._waiting_bytes + transport.get_write_buffer_size() > QUEUE_BYTES:
            self.room.clear()  # the transport is full: its resume() comes
        else:
            self.room.set()

    def end(self) -> None:
        """Close the side once everything waiting is written."""
        self._ending = True
        self._feed()

    async def close(self, timeout: float) -> None:
        """Let what waits be written (at most ``timeout`` seconds), then close."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
        elif self.transport is not None and not self.ended.is_set():
            self.end()
            try:
                await asyncio.wait_for(self.ended.wait(), timeout)
            except asyncio.TimeoutError:
                # A transport already closed and drained is on its way out (its
                # connection_lost may even have run): aborting it again would fail.
                if not self.transport.is_closing() or self.transport.get_write_buffer_size():
                    self.transport.abort()
        self.closed = True


class _Pipe(asyncio.Protocol):
    """The protocol of our stdout's transport: flow control goes to its writer."""

    def __init__(self, writer: _Writer) -> None:
        self.writer = writer

    def connection_made(self, transport: Any) -> None:
        self.writer.attach(transport)

    def pause_writing(self) -> None:
        self.writer.pause()

    def resume_writing(self) -> None:
        self.writer.resume()

    def connection_lost(self, exc: Exception | None) -> None:
        self.writer.lost()
