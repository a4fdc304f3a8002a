"""The stdio proxy behind ``acp-toolcalls bridge``: the I/O edge around ``ConnectionBridge``.

Rules this module owns (every decision about messages is connection.py's):

- asyncio, one thread for the messages. One task reads the client (our stdin), one the agent
  (its stdout), one sends coalesced tool-call changes when they are due; the agent process is
  watched for its exit. A reader takes what one read brought, whole lines, to the core
  ``_STEP`` lines at a time; what the core returns goes to each side's writer in the core's
  order, with one write per side for the lines of a read (or per ``_BURST_BYTES`` of what
  they make), and nothing is awaited between the core's answer and that write. A message
  that arrives alone is handled and written at once: nothing waits for more to arrive.
- Each side has its own writer: a buffer bounded in bytes (``QUEUE_BYTES``) that the event
  loop writes out as that side reads. After each write, its reader waits while a side it
  wrote to has more than that waiting (the agent's reader always waits on the client's
  writer, which its lines reach later too, through coalescing; so does the timer that sends
  them), and never waits on a side it does not write to: each direction makes progress on
  its own (an agent that writes a burst before it reads is still read while the client's
  prompt waits for it), and a side that does not read holds back, through the pipes, only the
  peer that writes to it. A writer holds at most its bound plus what ``_STEP`` lines make.
- Lines are read with a limit: a longer line is reported and skipped, never held in memory
  whole; it is not fatal. A reader holds at most ``2 * _READ_AHEAD`` bytes it was not asked
  for yet, so a side that is not read costs that, not twice the line limit. A stdin that
  cannot be polled (a file, ``/dev/null``) is read in chunks; a closed stdin is read as an
  empty one.
- Our stderr gets one line per note (errors and caps that bite; ``--verbose`` adds losses),
  naming the line it is about (``agent line 7: ...``), written by a helper thread from a buffer
  bounded in bytes: a stderr nobody reads never blocks the message path; notes past the bound
  while a write to stderr is under way are dropped and counted, and the count is said when
  stderr takes lines again.
- The agent runs in a session (so a process group) of its own, with our stderr. The session
  ends when the client's input ends (the agent's stdin is closed and it gets ``grace``
  seconds to exit; exit status 0), or when the agent's process exits or its stdout ends or
  breaks the protocol, whichever comes first: the client is answered everything it waits for
  (``agent_gone``), the exit is reported once, exit status 1. Either way whatever is left of
  the agent's group gets SIGTERM, ``term_grace`` seconds, then SIGKILL; no task, transport or
  process outlives the event loop.
- ``log``: every line read and written, with direction and time (traffic.py's records,
  credentials redacted unless ``log_secrets``), in a file created 0600 and never opened
  through a symbolic link; past ``log_max_bytes`` or on a write error, logging stops with one
  line on stderr and the session goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import select
import signal
import stat
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from .codec import DEFAULT_MAX_BYTES
from .connection import ConnectionBridge, Outbox, VersionOption
from .state import Limits
from .traffic import Direction, Redactor, log_line, skipped_line

__all__ = ["QUEUE_BYTES", "ProxyConfig", "run_proxy"]

QUEUE_BYTES = 1 << 20
"""Bytes waiting for one side past which the readers that write to it pause."""
_NOTES_BYTES = 1 << 18  # notes waiting for stderr past which they are dropped and counted
_HANDOFF = 0.05  # seconds the event loop waits, at most, for the notes thread to take notes
_READ_CHUNK = 1 << 16
_FEED_BYTES = 1 << 18  # what a writer hands its transport at a time, at most
_STEP = 32  # lines given to the core at a time
_BURST_BYTES = 1 << 18  # what the lines of one read make, written as soon as it is this much
_READ_AHEAD = 1 << 18  # a reader pauses its pipe past twice this, whatever the line limit
_POLL = 0.02  # seconds between looks at the agent's process group while it ends
PREFIX = "acp-toolcalls bridge: "


@dataclass(frozen=True)
class ProxyConfig:
    """What ``acp-toolcalls bridge`` was asked to do."""

    command: Sequence[str]
    client_version: VersionOption = "auto"
    agent_version: VersionOption = "auto"
    coalesce_ms: float = 50.0
    log_path: str | None = None
    max_line_bytes: int = DEFAULT_MAX_BYTES
    verbose: bool = False
    log_max_bytes: int | None = None
    log_secrets: bool = False
    limits: Limits | None = None
    """Memory caps of the connection and its bridges (``None``: the defaults)."""
    grace: float = 5.0
    """Seconds the agent gets to exit once its stdin is closed."""
    term_grace: float = 2.0
    """Seconds between SIGTERM and SIGKILL to what is left of the agent's process group."""


# --------------------------------------------------------------------------------------------
# Output: notes, writers, the log


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
        self._feed()

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


class _Log:
    """The ``--log`` file: whole records; past ``max_bytes`` written or on a write error,
    logging stops with one line and the session goes on."""

    def __init__(self, config: ProxyConfig, fd: int, say: Callable[[str], None]) -> None:
        self.path = config.log_path
        self.fd: int | None = fd
        self.max_bytes = config.log_max_bytes
        self.redactor = None if config.log_secrets else Redactor()
        self.say = say
        self.written = 0

    def lines(self, direction: Direction, protocol: int | None, lines: list[bytes]) -> None:
        if self.fd is None or not lines:
            return
        now = time.time()
        record = log_line if self.redactor is None else self.redactor.record
        self._write([record(direction, protocol, line, now) for line in lines])

    def skipped(self, direction: Direction, protocol: int | None, size: int) -> None:
        if self.fd is not None:
            self._write([skipped_line(direction, protocol, size, time.time())])

    def _write(self, records: list[bytes]) -> None:
        assert self.fd is not None
        data = b"".join(records)
        full = self.max_bytes is not None and self.written + len(data) > self.max_bytes
        if full:  # whole records up to the limit
            room, fits = (self.max_bytes or 0) - self.written, 0
            for record in records:
                if fits + len(record) > room:
                    break
                fits += len(record)
            data = data[:fits]
        try:
            while data:
                written = os.write(self.fd, data)
                self.written += written
                data = data[written:]
        except OSError as exc:
            self.stop(f"cannot write to it ({exc.strerror or exc})")
            return
        if full:
            self.stop(f"{self.max_bytes} bytes written, the limit of --log-max-bytes")

    def stop(self, why: str) -> None:
        self.close()
        self.say(f"--log {self.path}: {why}; logging stopped, the session goes on")

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def open_log(path: str) -> int:
    """``path`` opened to append: created 0600, never through a symbolic link at its last
    component (``OSError``, ``ELOOP``, for one)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK  # a FIFO with no reader: fail
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):
        raise OSError(40, "Too many levels of symbolic links")
    fd = os.open(path, flags, 0o600)
    os.set_blocking(fd, True)
    return fd


def _log_error(path: str, exc: OSError) -> str:
    if os.path.islink(path):
        return f"error: --log {path} is a symbolic link: refused (name the file itself)"
    return f"error: cannot open --log {path}: {exc.strerror or exc}"


# --------------------------------------------------------------------------------------------
# Input


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


class _Agent(asyncio.subprocess.SubprocessStreamProtocol):
    """The agent's protocol: its stdout as a ``StreamReader`` (the base class), its stdin's flow
    control to its writer, and ``exited`` as soon as the process exits, whatever holds its
    pipes."""

    def __init__(self, writer: _Writer, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.writer = writer
        self.exited: asyncio.Future[None] = loop.create_future()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self.writer.attach(transport.get_pipe_transport(0))

    def pause_writing(self) -> None:
        super().pause_writing()
        self.writer.pause()

    def resume_writing(self) -> None:
        super().resume_writing()
        self.writer.resume()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        super().pipe_connection_lost(fd, exc)
        if fd == 0:
            self.writer.lost()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


# --------------------------------------------------------------------------------------------
# The session


class _Proxy:
    def __init__(self, config: ProxyConfig, notes: _Notes, stdin_closed: bool) -> None:
        self.config = config
        self.notes = notes
        self.stdin_closed = stdin_closed
        self.core = ConnectionBridge(
            client_version=config.client_version,
            agent_version=config.agent_version,
            coalesce_interval=config.coalesce_ms / 1000.0,
            limits=config.limits,
            max_line_bytes=config.max_line_bytes,
        )
        self.loop = asyncio.get_running_loop()
        self.wake = asyncio.Event()
        self.log: _Log | None = None
        self.to_client = _Writer()
        self.to_agent = _Writer()
        self.agent: _Agent | None = None
        self.process: asyncio.SubprocessTransport | None = None
        self.lines = {"client": 0, "agent": 0}
        self.interrupted = False  # SIGINT/SIGTERM: whoever sent it will not wait long
        self._closers: list[Callable[[], object]] = []

    def say(self, text: str) -> None:
        self.notes.say(text)

    def _client_protocol(self) -> int | None:
        return self.core.client_version

    def _agent_protocol(self) -> int | None:
        return self.core.agent_side_version

    def _log(self, direction: Direction, protocol: int | None, lines: list[bytes]) -> None:
        if self.log is not None:
            self.log.lines(direction, protocol, lines)

    # -- output

    def deliver(self, out: Outbox, side: str | None = None, first: int = 0) -> None:
        """Notes, log, and each side's lines into its writer, now. ``side``, ``first``: the
        side and the number of the first line ``out`` answers (a note's ``line`` counts from
        it), named by the notes about them."""
        self._say(out, side, first)
        if out.to_client:
            self._log("proxy->client", self._client_protocol(), out.to_client)
            self.to_client.put(out.to_client)
        if out.to_agent:
            self._log("proxy->agent", self._agent_protocol(), out.to_agent)
            self.to_agent.put(out.to_agent)
        if self.core.next_deadline() is not None:
            self.wake.set()

    def _say(self, out: Outbox, side: str | None, first: int) -> None:
        for note in out.notes:
            if note.kind != "loss" or self.config.verbose:  # errors and caps that bite
                where: str = note.side
                if side == note.side and note.line is not None:
                    where = f"{note.side} line {first + note.line}"
                self.say(f"{where}: {note.text}")

    async def send(self, out: Outbox) -> None:
        """``deliver``, then wait while a side written to has more than its bound waiting."""
        self.deliver(out)
        if out.to_client:
            await self.to_client.room.wait()
        if out.to_agent:
            await self.to_agent.room.wait()

    # -- the tasks

    async def pump_client(self, reader: asyncio.StreamReader) -> None:
        async for batch in _batches(reader, self.config.max_line_bytes):
            await self._handle("client", batch)

    async def pump_agent(self, reader: asyncio.StreamReader) -> None:
        async for batch in _batches(reader, self.config.max_line_bytes):
            await self._handle("agent", batch)
            # What the agent says reaches the client later too (coalesced tool-call changes):
            # the agent is read on only while the client's writer has room.
            await self.to_client.room.wait()
            if self.core.gone:  # a line ended the session: its note said so, once
                return

    async def _handle(self, side: str, batch: list[bytes | int]) -> None:
        """The lines of one read through the core, ``_STEP`` at a time, what they make written
        together (one write per side) at the end or as soon as it holds ``_BURST_BYTES``; after
        each write, wait while a side written to has more than its bound waiting (a read whose
        lines make much more, terminal output toward v1 say, goes out in bursts as the side
        reads). With ``--log``, line by line: each record carries the versions known after its
        line, in the order of the lines."""
        client = side == "client"
        handle = self.core.from_client_lines if client else self.core.from_agent_lines
        direction: Direction = "client->proxy" if client else "agent->proxy"
        protocol = self._client_protocol if client else self._agent_protocol
        step, burst = (1, 0) if self.log is not None else (_STEP, _BURST_BYTES)
        held, size = Outbox(), 0
        start = 0
        while start < len(batch):
            item = batch[start]
            number = self.lines[side] + 1
            if isinstance(item, int):
                self.lines[side] = number
                self._skipped(direction, protocol(), item, side, number)
                start += 1
                continue
            end = start + 1
            while end < len(batch) and end - start < step and not isinstance(batch[end], int):
                end += 1
            lines: list[bytes] = batch[start:end]  # type: ignore[assignment]
            self.lines[side] += len(lines)
            start = end
            try:
                out = handle(lines, self.loop.time())
            except Exception as exc:  # a bug must cost these lines, not the session
                self.say(f"{side} line {number}: not handled ({type(exc).__name__}: {exc}); a bug")
                out = Outbox()
            if self.log is not None:
                self.log.lines(direction, protocol(), lines)
            self._say(out, side, number)
            held.to_client += out.to_client
            held.to_agent += out.to_agent
            size += sum(map(len, out.to_client)) + sum(map(len, out.to_agent))
            if size >= burst:
                await self.send(held)
                held, size = Outbox(), 0
        await self.send(held)

    def _skipped(
        self, direction: Direction, protocol: int | None, size: int, side: str, number: int
    ) -> None:
        if self.log is not None:
            self.log.skipped(direction, protocol, size)
        self.say(
            f"{side} line {number}: {size} bytes is over the limit of "
            f"{self.config.max_line_bytes} bytes; skipped"
        )

    async def flusher(self) -> None:
        while True:
            deadline = self.core.next_deadline()
            if deadline is None:
                await self.wake.wait()
                self.wake.clear()
                continue
            delay = deadline - self.loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            await self.to_client.room.wait()  # one burst at a time
            self.deliver(self.core.poll(self.loop.time()))

    # -- start and end

    async def run(self) -> int:
        config = self.config
        if config.log_path is not None:
            try:
                fd = open_log(config.log_path)
            except OSError as exc:
                self.say(_log_error(config.log_path, exc))
                return 2
            self.log = _Log(config, fd, self.say)
        try:
            try:
                self.process, self.agent = await self.loop.subprocess_exec(
                    lambda: _Agent(self.to_agent, _READ_AHEAD, self.loop),
                    *config.command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=None,
                    start_new_session=True,
                )
            except (OSError, ValueError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                self.say(f"cannot start the agent {config.command[0]!r}: {reason}")
                return 2
            try:
                client_in = await self._open_client()
                return await self._session(client_in)
            finally:
                await self._end_group()
                await self.to_client.close(0.5 if self.interrupted else config.grace)
                await self.to_agent.close(0.0)
                self.process.close()
        finally:
            for close in reversed(self._closers):
                close()
            if self.log is not None:
                self.log.close()
            await asyncio.sleep(0)  # the transports' last callbacks run before the loop closes

    async def _open_client(self) -> asyncio.StreamReader:
        """Our stdin as a reader, our stdout as ``to_client``."""
        reader = asyncio.StreamReader(limit=_READ_AHEAD)
        for fd in (0, 1):
            if os.get_blocking(fd):  # the event loop makes pipes non-blocking; undo it at exit
                self._closers.append(functools.partial(_set_blocking, fd))
        if _pollable(0):
            stdin = open(0, "rb", buffering=0, closefd=False)  # noqa: SIM115 - the transport's
            transport, _ = await self.loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), stdin
            )
            self._closers.append(transport.close)
        else:
            feed = asyncio.ensure_future(_FileFeed(reader, 0).run())
            self._closers.append(feed.cancel)
        stdout = open(1, "wb", buffering=0, closefd=False)  # noqa: SIM115 - the transport's
        try:
            await self.loop.connect_write_pipe(lambda: _Pipe(self.to_client), stdout)
        except ValueError:  # a regular file
            self.to_client.fd = os.dup(1)
        return reader

    async def _session(self, client_in: asyncio.StreamReader) -> int:
        assert self.agent is not None and self.agent.stdout is not None
        client = asyncio.ensure_future(self.pump_client(client_in))
        agent = asyncio.ensure_future(self.pump_agent(self.agent.stdout))
        tasks = [client, agent, asyncio.ensure_future(self.flusher())]
        exited = self.agent.exited
        try:
            await asyncio.wait({client, agent, exited}, return_when=asyncio.FIRST_COMPLETED)
            if client.done() and not agent.done() and not exited.done():
                _raise_from(client)
                return await self._client_ended(agent)
            _raise_from(agent)
            return await self._agent_ended(agent)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _client_ended(self, agent: asyncio.Future[None]) -> int:
        """The client's input ended: the agent's ends too, and it gets ``grace`` s to exit."""
        assert self.agent is not None
        if self.stdin_closed:
            self.say("stdin is closed: there is no client to serve; the agent is stopped")
        elif not self.lines["client"]:
            self.say("stdin ended before the client sent anything; the agent is stopped")
        self.to_agent.end()  # after what waits for it is written
        try:
            await asyncio.wait_for(asyncio.shield(self.agent.exited), self.config.grace)
        except asyncio.TimeoutError:
            self.say(
                f"the agent did not exit within {self.config.grace:g} s of the end of its "
                "input; it is stopped"
            )
        await self._end_group()
        with contextlib.suppress(asyncio.TimeoutError):  # its last lines still reach the client
            await asyncio.wait_for(asyncio.shield(agent), 1.0)
        self.deliver(self.core.flush())  # and the tool-call changes still held back
        return 0

    async def _agent_ended(self, agent: asyncio.Future[None]) -> int:
        """The agent exited, closed its output or broke the protocol: the client is answered
        everything it waits for."""
        assert self.agent is not None and self.process is not None
        if not self.core.gone and not self.agent.exited.done():  # its output ended first
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.agent.exited), self.config.grace)
        code = self.process.get_returncode()
        await self._end_group()  # whatever still holds its stdout goes too
        with contextlib.suppress(asyncio.TimeoutError):  # the lines it wrote before it exited
            await asyncio.wait_for(asyncio.shield(agent), 1.0)
        if not self.core.gone:
            self.deliver(self.core.agent_gone(_exit_reason(code)))
        return 1

    async def _end_group(self) -> None:
        """SIGTERM to what is left of the agent's process group, ``term_grace`` seconds, then
        SIGKILL; returns once none of it is left (or a second after SIGKILL)."""
        if self.process is None or self.agent is None:
            return
        group = self.process.get_pid()
        for sig, wait in ((signal.SIGTERM, self.config.term_grace), (signal.SIGKILL, 1.0)):
            if not self._group_alive(group):
                return
            with contextlib.suppress(OSError):
                os.killpg(group, sig)
            deadline = self.loop.time() + wait
            while self._group_alive(group) and self.loop.time() < deadline:
                await asyncio.sleep(_POLL)

    def _group_alive(self, group: int) -> bool:
        assert self.agent is not None
        return not self.agent.exited.done() or _group_has_members(group)


def _group_has_members(group: int) -> bool:
    """Whether a process of ``group`` is still running (zombies are not: nothing reaps the
    agent's orphans where PID 1 does not)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == b"%d" % group and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _set_blocking(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.set_blocking(fd, True)


def _raise_from(task: asyncio.Future[Any]) -> None:
    if task.done() and not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "the agent closed its output and did not exit"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
        return f"the agent was killed by signal {name}"
    return f"the agent exited with code {code}"


def _occupy_closed_fds() -> bool:
    """Put ``/dev/null`` on whichever of fds 0-2 is closed, so that no pipe of ours lands on
    one; whether stdin was closed."""
    stdin_closed = False
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            stdin_closed = stdin_closed or fd == 0
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    return stdin_closed


def run_proxy(config: ProxyConfig, stderr: IO[str] | None = None) -> int:
    """Run one proxied session on this process's stdin/stdout; returns the exit status."""
    stdin_closed = _occupy_closed_fds()
    notes = _Notes(stderr or sys.stderr)

    async def main() -> int:
        proxy = _Proxy(config, notes, stdin_closed)
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def interrupt() -> None:  # once: a second signal must not cut the agent's ending short
            if not proxy.interrupted:
                proxy.interrupted = True
                task.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, interrupt)
        try:
            return await proxy.run()
        except asyncio.CancelledError:
            return 130

    try:
        return asyncio.run(main())
    finally:
        notes.close(1.0)
