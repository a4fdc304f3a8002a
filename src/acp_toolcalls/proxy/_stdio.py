"""The stdio proxy behind ``acp-toolcalls bridge``: the I/O edge around ``ConnectionCore``.

Rules this module owns (every decision about messages is ``_core``'s; the writers and the
notes thread are ``_writers``', reading lines ``_input``'s, the agent's process ``_process``',
the log ``_log``'s):

- asyncio, one thread for the messages. One task reads the client (our stdin), one the agent
  (its stdout), one sends coalesced tool-call changes when they are due; the agent process is
  watched for its exit. A reader takes what one read brought, whole lines, to the core
  ``_STEP`` lines at a time (a batch line a slice of its elements at a time, what each makes
  written and the other side read in between: ``slice_batches``); what the core returns goes
  to each side's writer in the core's order, with one write per side for the lines of a read
  (or per ``_BURST_BYTES`` of what they make), and nothing is awaited between the core's
  answer and that write. A message that arrives alone is handled and written at once:
  nothing waits for more to arrive.
- After each write, a reader waits while a side it wrote to has more than ``QUEUE_BYTES``
  waiting (the agent's reader always waits on the client's writer, which its lines reach
  later too, through coalescing; so does the timer that sends them), and never waits on a
  side it does not write to: each direction makes progress on its own (an agent that writes
  a burst before it reads is still read while the client's prompt waits for it), and a side
  that does not read holds back, through the pipes, only the peer that writes to it. A writer
  holds at most its bound plus what ``_STEP`` lines make.
- Nothing on the message path loads lazily mid-stream: what the converters check rare
  session updates with is built as the proxy starts (``prepare_update_checks``), while the
  agent starts, before the first line is read.
- With ``watch`` (``bridge --inspect``), the lines read and written are handed to it as the
  log gets them (direction, the versions known after the line, the time), the lines of one
  read or write at a time, in the same order, before what they make is written; a line over
  the limit as its size. The watcher must return at once (``cli._live_bridge.Feed`` writes
  to a non-blocking pipe, or counts what it cannot): the proxy never waits for it. While a
  side's version is unknown its lines are taken one at a time, so that each carries the
  version its own line decided.
- Our stderr gets one line per note (errors and caps that bite; ``--verbose`` adds losses),
  naming the line it is about (``agent line 7: ...``).
- The session ends when the client's input ends (the agent's stdin is closed and it gets
  ``grace`` seconds to exit; exit status 0), or when the agent's process exits or its stdout
  ends or breaks the protocol, whichever comes first: the client is answered everything it
  waits for (``agent_gone``), the exit is reported once, exit status 1. Either way whatever is
  left of the agent's group gets SIGTERM, ``term_grace`` seconds, then SIGKILL; no task,
  transport or process outlives the event loop.
- The client's input also ends when the client closes its end of our stdin while lines of it
  still wait there because the agent is not reading (a pipe's hang-up, seen by polling our
  stdin while it is not read): the agent gets ``grace`` seconds in all to take them and exit.
- With ``adopt_orphans`` (the command), this process is the agent's child subreaper (Linux):
  its processes that left its group are ended with it, SIGTERM, ``term_grace`` seconds,
  SIGKILL, reported in one line; those that exit during the session are reaped.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from .._text import printable
from ..convert import prepare_update_checks
from ..records import Direction, Side
from ._config import ProxyConfig
from ._core import ConnectionCore, Outbox
from ._files import DiskFiles
from ._input import _READ_AHEAD, Oversized, _batches, _FileFeed, _pollable
from ._log import _Log, _log_error, open_log
from ._process import (
    _Agent,
    _exit_reason,
    _group_has_members,
    _occupy_closed_fds,
    _Orphans,
    _set_blocking,
)
from ._writers import QUEUE_BYTES, _Notes, _Pipe, _Writer

__all__ = ["QUEUE_BYTES", "run_proxy"]

_STEP = 32  # lines given to the core at a time
_BURST_BYTES = 1 << 18  # what the lines of one read make, written as soon as it is this much
_POLL = 0.02  # seconds between looks at the agent's process group while it ends
_HANGUP_POLL = 0.25  # seconds between looks for the client's hang-up while it is not read
_REAP_EVERY = 1.0  # seconds between collections of the agent's orphans that exited


class _Proxy:
    def __init__(self, config: ProxyConfig, notes: _Notes, stdin_closed: bool) -> None:
        self.config = config
        self.notes = notes
        self.stdin_closed = stdin_closed
        self.core = ConnectionCore(
            client_version=config.client_version,
            agent_version=config.agent_version,
            coalesce_interval=config.coalesce_ms / 1000.0,
            limits=config.limits,
            max_line_bytes=config.max_line_bytes,
            read_file=DiskFiles(config.disk_diff_max_bytes) if config.disk_diffs else None,
        )
        self.core.slice_batches = True  # a batch line never holds up the other side
        self.loop = asyncio.get_running_loop()
        self.wake = asyncio.Event()
        self.log: _Log | None = None
        self.watch = config.watch
        self.to_client = _Writer()
        self.to_agent = _Writer()
        self.agent: _Agent | None = None
        self.process: asyncio.SubprocessTransport | None = None
        self.lines = {"client": 0, "agent": 0}
        self.interrupted = False  # SIGINT/SIGTERM: whoever sent it will not wait long
        self.orphans = _Orphans()
        self._closers: list[Callable[[], object]] = []

    def say(self, text: str) -> None:
        self.notes.say(printable(text))  # every note: nothing from either side shows raw

    def _client_protocol(self) -> int | None:
        return self.core.client_version

    def _agent_protocol(self) -> int | None:
        return self.core.agent_side_version

    def _record(self, direction: Direction, protocol: int | None, lines: list[bytes]) -> None:
        """The lines to the log and the watcher."""
        if self.log is not None:
            self.log.lines(direction, protocol, lines)
        if self.watch is not None:
            self.watch(direction, protocol, lines, time.time())

    # -- output

    def deliver(self, out: Outbox, side: str | None = None, first: int = 0) -> None:
        """Notes, log, and each side's lines into its writer, now. ``side``, ``first``: the
        side and the number of the first line ``out`` answers (a note's ``line`` counts from
        it), named by the notes about them."""
        self._say(out, side, first)
        if out.to_client:
            self._record("proxy->client", self._client_protocol(), out.to_client)
            self.to_client.put(out.to_client)
        if out.to_agent:
            self._record("proxy->agent", self._agent_protocol(), out.to_agent)
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

    async def _handle(self, side: Side, batch: list[bytes | Oversized]) -> None:
        """The lines of one read through the core, ``_STEP`` at a time, what they make written
        together (one write per side) at the end or as soon as it holds ``_BURST_BYTES``; after
        each write, wait while a side written to has more than its bound waiting (a read whose
        lines make much more, terminal output toward v1 say, goes out in bursts as the side
        reads). With ``--log``, line by line: each record carries the versions known after its
        line, in the order of the lines. A line over the limit goes to the core as what was
        read of it (``oversized_line``: a request is answered)."""
        client = side == "client"
        handle = self.core.from_client_lines if client else self.core.from_agent_lines
        direction: Direction = "client->proxy" if client else "agent->proxy"
        protocol = self._client_protocol if client else self._agent_protocol
        step, burst = (1, 0) if self.log is not None else (_STEP, _BURST_BYTES)
        if self.watch is not None and protocol() is None:
            step = 1  # each line with the version known after it
        held, size = Outbox(), 0
        start = 0
        while start < len(batch):
            item = batch[start]
            number = self.lines[side] + 1
            if isinstance(item, Oversized):
                self.lines[side] = number
                start += 1
                if self.log is not None:
                    self.log.skipped(direction, protocol(), item.size)
                if self.watch is not None:
                    self.watch(direction, protocol(), [item.size], time.time())
                try:
                    out = self.core.oversized_line(
                        side, item.size, item.request_id, item.has_method, self.loop.time()
                    )
                except Exception as exc:  # a bug must cost this line, not the session
                    self.say(f"{side} line {number}: not handled ({type(exc).__name__}); a bug")
                    out = Outbox()
            else:
                end = start + 1
                while end < len(batch) and end - start < step and type(batch[end]) is bytes:
                    end += 1
                lines: list[bytes] = batch[start:end]  # type: ignore[assignment]
                self.lines[side] += len(lines)
                start = end
                try:
                    out = handle(lines, self.loop.time())
                except Exception as exc:  # a bug must cost these lines, not the session
                    self.say(
                        f"{side} line {number}: not handled ({type(exc).__name__}: {exc}); a bug"
                    )
                    out = Outbox()
                self._record(direction, protocol(), lines)
                while self.core.unfinished(side):  # a batch line, a slice at a time: what a
                    self._say(out, side, number)  # slice makes is written, the other side
                    held.to_client += out.to_client  # read, before the next (issue 27)
                    held.to_agent += out.to_agent
                    await self.send(held)
                    held, size = Outbox(), 0
                    await asyncio.sleep(0)
                    out = self.core.more(side, self.loop.time())
            self._say(out, side, number)
            held.to_client += out.to_client
            held.to_agent += out.to_agent
            size += sum(map(len, out.to_client)) + sum(map(len, out.to_agent))
            if size >= burst:
                await self.send(held)
                held, size = Outbox(), 0
        await self.send(held)

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
        if config.adopt_orphans:
            self.orphans.start()
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
            self.orphans.agent = self.process.get_pid()
            # While the agent starts: what the first rare update would otherwise wait for.
            prepare_update_checks()
            try:
                client_in = await self._open_client()
                return await self._session(client_in)
            finally:
                await self._end_group()
                await self._end_orphans()
                await self.to_client.close(0.5 if self.interrupted else config.grace)
                await self.to_agent.close(0.0)
                self.process.close()
        finally:
            self.orphans.stop()  # the agent did not start, or its orphans are ended
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
        hangup = asyncio.ensure_future(self._client_hangup())
        tasks = [client, agent, hangup, asyncio.ensure_future(self.flusher())]
        if self.orphans.active:
            tasks.append(asyncio.ensure_future(self._reap_orphans()))
        exited = self.agent.exited
        try:
            await asyncio.wait({client, agent, exited, hangup}, return_when=asyncio.FIRST_COMPLETED)
            if (client.done() or hangup.done()) and not agent.done() and not exited.done():
                _raise_from(client)
                return await self._client_ended(client, agent)
            _raise_from(agent)
            return await self._agent_ended(agent)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _client_hangup(self) -> None:
        """Returns once the client has closed its end of our stdin (a pipe's or a socket's
        hang-up), seen even while lines of it wait there unread; never where stdin cannot
        say so (a regular file, ``/dev/null``: those end by themselves)."""
        if self.stdin_closed or not _pollable(0):
            await asyncio.Event().wait()
        poller = select.poll()
        hangup = select.POLLHUP | select.POLLERR | getattr(select, "POLLRDHUP", 0)
        poller.register(0, hangup & ~select.POLLHUP & ~select.POLLERR)
        while True:
            await asyncio.sleep(_HANGUP_POLL)
            with contextlib.suppress(OSError):
                if any(events & hangup for _, events in poller.poll(0)):
                    return

    async def _reap_orphans(self) -> None:
        while True:
            await asyncio.sleep(_REAP_EVERY)
            self.orphans.reap()

    async def _end_orphans(self) -> None:
        """The agent's processes that left its group (a daemon): ended, said in one line."""
        left = await self.orphans.end(self.config.term_grace, _POLL)
        if left:
            pids = ", ".join(map(str, left[:5])) + (", ..." if len(left) > 5 else "")
            self.say(
                f"{len(left)} process(es) the agent started outside its process group were "
                f"still running at the end of the session (pid {pids}); stopped"
            )

    async def _client_ended(self, client: asyncio.Future[None], agent: asyncio.Future[None]) -> int:
        """The client's input ended: the agent's ends too, and it gets ``grace`` s to exit.
        When the client hung up while its lines wait for an agent that does not read them,
        the agent gets the same ``grace`` s, in all, to take them and exit."""
        assert self.agent is not None
        deadline = self.loop.time() + self.config.grace
        if not client.done():  # the client hung up: what it sent waits for the agent
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(client), self.config.grace)
            _raise_from(client)
        unread = not client.done()
        if self.stdin_closed:
            self.say("stdin is closed: there is no client to serve; the agent is stopped")
        elif not self.lines["client"]:
            self.say("stdin ended before the client sent anything; the agent is stopped")
        if not unread:
            self.to_agent.end()  # after what waits for it is written
        try:
            remaining = max(0.0, deadline - self.loop.time())
            await asyncio.wait_for(asyncio.shield(self.agent.exited), remaining)
        except asyncio.TimeoutError:
            if unread:
                self.say(
                    "the client closed its input while the agent was not reading it; the agent "
                    f"did not take the rest within {self.config.grace:g} s and is stopped"
                )
            else:
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


def _raise_from(task: asyncio.Future[Any]) -> None:
    if task.done() and not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


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
