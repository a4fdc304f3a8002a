"""The stdio proxy behind ``acp-toolcalls bridge``: the I/O edge around ``ConnectionBridge``.

Rules this module owns (every decision about messages is connection.py's):

- asyncio, no threads. One task reads the client (our stdin), one the agent (its stdout), one
  sends coalesced tool-call changes when they are due. Each line read is handed to the core and
  what it returns is written (and drained) before the next line is read: no queue grows, a
  slow reader holds its writer back through the pipes.
- Lines are read with a limit: a longer line is reported and skipped, never held in memory
  whole; it is not fatal.
- The agent's stderr is ours. Our stderr gets one line per note (``--verbose`` adds losses).
- The client's EOF closes the agent's stdin; the agent gets ``grace`` seconds to exit, then
  SIGTERM, then SIGKILL. The agent's exit, crash or broken output ends the session: the client
  is answered everything it waits for (``agent_gone``), its stdout is closed, exit status 1.
- ``log``: every line read and written, with direction and time (traffic.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any, BinaryIO

from .codec import DEFAULT_MAX_BYTES
from .connection import ConnectionBridge, Outbox, VersionOption
from .traffic import Direction, log_line, skipped_line

__all__ = ["ProxyConfig", "run_proxy"]

_READ_CHUNK = 1 << 16


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
    grace: float = 5.0


class _Sink:
    """Where lines to one side go: an asyncio writer, or (for a regular file) plain writes."""

    def __init__(self, writer: asyncio.StreamWriter | None, fd: int | None = None) -> None:
        self.writer = writer
        self.fd = fd
        self.closed = False

    async def write(self, lines: list[bytes]) -> None:
        if self.closed or not lines:
            return
        data = b"".join(line + b"\n" for line in lines)
        try:
            if self.writer is not None:
                self.writer.write(data)
                await self.writer.drain()
            elif self.fd is not None:
                os.write(self.fd, data)
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.closed = True
            raise

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
        elif self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes | int]:
    """Lines without their newline; an ``int`` is the size of a line over the reader's limit,
    skipped (its bytes are discarded as they arrive)."""
    skipping = 0
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # EOF
            if skipping:
                yield skipping + len(exc.partial)
            elif exc.partial.strip():
                yield exc.partial.rstrip(b"\r")
            return
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)
            skipping += exc.consumed
            continue
        if skipping:
            yield skipping + len(line)
            skipping = 0
        elif line.strip():
            yield line[:-1].rstrip(b"\r")


class _Proxy:
    def __init__(self, config: ProxyConfig, stderr: IO[str]) -> None:
        self.config = config
        self.stderr = stderr
        self.core = ConnectionBridge(
            client_version=config.client_version,
            agent_version=config.agent_version,
            coalesce_interval=config.coalesce_ms / 1000.0,
        )
        self.loop = asyncio.get_running_loop()
        self.lock = asyncio.Lock()
        self.wake = asyncio.Event()
        self.log: BinaryIO | None = None
        self.client_out: _Sink
        self.agent_in: _Sink
        self.agent: asyncio.subprocess.Process
        self.client_ended = False
        self.lines = {"client": 0, "agent": 0}

    # -- reporting

    def say(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            print(f"acp-toolcalls bridge: {text}", file=self.stderr, flush=True)

    def _log(self, direction: Direction, protocol: int | None, lines: list[bytes]) -> None:
        if self.log is None or not lines:
            return
        now = time.time()
        self.log.write(b"".join(log_line(direction, protocol, line, now) for line in lines))
        self.log.flush()

    def _client_protocol(self) -> int | None:
        return self.core.client_version

    def _agent_protocol(self) -> int | None:
        return self.core.agent_side_version

    # -- output

    async def emit(self, out: Outbox) -> None:
        for note in out.notes:
            if note.kind == "error" or self.config.verbose:
                self.say(f"{note.side}: {note.text}")
        async with self.lock:
            if out.to_client:
                self._log("proxy->client", self._client_protocol(), out.to_client)
                with contextlib.suppress(OSError):
                    await self.client_out.write(out.to_client)
            if out.to_agent:
                self._log("proxy->agent", self._agent_protocol(), out.to_agent)
                with contextlib.suppress(OSError):
                    await self.agent_in.write(out.to_agent)
        if self.core.next_deadline() is not None:
            self.wake.set()

    # -- the three tasks

    async def pump_client(self, reader: asyncio.StreamReader) -> None:
        async for line in _lines(reader):
            self.lines["client"] += 1
            number = self.lines["client"]
            if isinstance(line, int):
                self._skipped("client->proxy", self._client_protocol(), line, "client", number)
                continue
            out = self._handle(self.core.from_client, line, "client", number)
            self._log("client->proxy", self._client_protocol(), [line])  # its version is known now
            await self.emit(out)
        self.client_ended = True

    async def pump_agent(self, reader: asyncio.StreamReader) -> None:
        async for line in _lines(reader):
            self.lines["agent"] += 1
            number = self.lines["agent"]
            if isinstance(line, int):
                self._skipped("agent->proxy", self._agent_protocol(), line, "agent", number)
                continue
            out = self._handle(self.core.from_agent, line, "agent", number)
            self._log("agent->proxy", self._agent_protocol(), [line])
            await self.emit(out)
            if self.core.gone:
                self.say(f"agent line {number}: the session ends")
                return

    def _handle(
        self, handle: Callable[[bytes, float], Outbox], line: bytes, side: str, number: int
    ) -> Outbox:
        try:
            return handle(line, self.loop.time())
        except Exception as exc:  # a bug must cost this line, not the session
            self.say(f"{side} line {number}: not handled ({type(exc).__name__}: {exc}); a bug")
            return Outbox()

    def _skipped(
        self, direction: Direction, protocol: int | None, size: int, side: str, number: int
    ) -> None:
        if self.log is not None:
            self.log.write(skipped_line(direction, protocol, size, time.time()))
            self.log.flush()
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
            await self.emit(self.core.poll(self.loop.time()))

    # -- the session

    async def run(self) -> int:
        config = self.config
        limit = config.max_line_bytes + 1
        try:
            self.agent = await asyncio.create_subprocess_exec(
                *config.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=limit,
            )
        except OSError as exc:
            self.say(f"cannot start the agent {config.command[0]!r}: {exc.strerror or exc}")
            return 2
        assert self.agent.stdin is not None and self.agent.stdout is not None
        self.agent_in = _Sink(self.agent.stdin)
        if config.log_path is not None:
            self.log = open(config.log_path, "ab")  # noqa: SIM115 - closed in `finally`
        try:
            client_in = await _open_reader(sys.stdin, limit)
            self.client_out = await _open_sink(sys.stdout)
            return await self._session(client_in)
        finally:
            if self.log is not None:
                self.log.close()

    async def _session(self, client_in: asyncio.StreamReader) -> int:
        assert self.agent.stdout is not None
        client = asyncio.ensure_future(self.pump_client(client_in))
        agent = asyncio.ensure_future(self.pump_agent(self.agent.stdout))
        flusher = asyncio.ensure_future(self.flusher())
        status = 0
        try:
            done, _ = await asyncio.wait({client, agent}, return_when=asyncio.FIRST_COMPLETED)
            if client in done:  # the client is done: let the agent finish, then stop it
                _raise_from(client)
                self.agent_in.close()
                await self._stop_agent(wait_first=True)
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(agent, timeout=1.0)
            else:
                _raise_from(agent)
                code = await self._stop_agent(wait_first=not self.core.gone)
                if not self.core.gone:
                    reason = _exit_reason(code)
                    self.say(reason)
                    await self.emit(self.core.agent_gone(reason))
                status = 1
        finally:
            for task in (client, agent, flusher):
                task.cancel()
            self.client_out.close()
            self.agent_in.close()
        return status

    async def _stop_agent(self, *, wait_first: bool) -> int | None:
        process = self.agent
        if wait_first:
            with contextlib.suppress(asyncio.TimeoutError):
                return await asyncio.wait_for(process.wait(), self.config.grace)
        for send in (process.terminate, process.kill):
            with contextlib.suppress(ProcessLookupError):
                send()
            with contextlib.suppress(asyncio.TimeoutError):
                return await asyncio.wait_for(process.wait(), 2.0)
        return process.returncode


def _raise_from(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "the agent closed its output and did not exit"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
        return f"the agent was killed by signal {name}"
    return f"the agent exited with code {code}"


async def _open_reader(stream: IO[Any], limit: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except ValueError:  # a regular file: it never blocks, read it in chunks
        _FEEDERS.add(loop.create_task(_feed(reader, stream.fileno())))
    return reader


_FEEDERS: set[asyncio.Task[None]] = set()


async def _feed(reader: asyncio.StreamReader, fd: int) -> None:
    while data := os.read(fd, _READ_CHUNK):
        reader.feed_data(data)
        await asyncio.sleep(0)
    reader.feed_eof()


async def _open_sink(stream: IO[Any]) -> _Sink:
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, stream
        )
    except ValueError:  # a regular file
        return _Sink(None, os.dup(stream.fileno()))
    return _Sink(asyncio.StreamWriter(transport, protocol, None, loop))


def run_proxy(config: ProxyConfig, stderr: IO[str] | None = None) -> int:
    """Run one proxied session on this process's stdin/stdout; returns the exit status."""

    async def main() -> int:
        proxy = _Proxy(config, stderr or sys.stderr)
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, task.cancel)
        try:
            return await proxy.run()
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await proxy._stop_agent(wait_first=False)
            return 130

    return asyncio.run(main())
