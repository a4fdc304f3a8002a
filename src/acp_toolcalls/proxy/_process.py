"""The agent's process: its pipes' protocol, its process group, how its exit is told.

Rules this module owns: the agent runs in a session (so a process group) of its own, with our
stderr; ``_Agent.exited`` is set as soon as the process exits, whatever holds its pipes; a
process of its group is alive until it is a zombie (``_group_has_members``); fds 0-2 that are
closed get ``/dev/null`` first, so that no pipe of ours lands on one.

Processes that leave the agent's group (``setsid``, a double-forked daemon) are found through a
child subreaper (Linux, ``prctl(PR_SET_CHILD_SUBREAPER)``; ``_Orphans``): the agent's orphans
are re-parented to us instead of PID 1, so at the end of the session every process below ours
that was not there before the agent started is one of the agent's, and is ended; those that
exit before are reaped as the session goes. Elsewhere (or where ``prctl`` fails) it does
nothing, and such a process may outlive the session as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from ._writers import _Writer


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


def _group_has_members(group: int) -> bool:
    """Whether a process of ``group`` is still running (zombies are not: nothing reaps the
    agent's orphans where PID 1 does not)."""
    stats = _stats()
    if stats is None:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True
    member = b"%d" % group
    return any(
        len(fields) > 2 and fields[2] == member and fields[0] not in (b"Z", b"X")
        for _pid, fields in stats
    )


def _set_blocking(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.set_blocking(fd, True)


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


_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


def _prctl() -> Any:
    """libc's ``prctl``, or ``None`` (not Linux, no libc)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


def _processes() -> dict[int, tuple[int, bytes]] | None:
    """Every process's parent and state, from ``/proc`` (``None``: no ``/proc``)."""
    stats = _stats()
    if stats is None:
        return None
    return {
        pid: (int(fields[1]), fields[0])
        for pid, fields in stats
        if len(fields) > 1 and fields[1].isdigit()
    }


def _stats() -> Iterator[tuple[int, list[bytes]]] | None:
    """Each process's ``/proc/PID/stat`` fields after its name (state, parent, group, ...),
    read as they are iterated; ``None``: no ``/proc``."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    return _stat_fields(entries)


def _stat_fields(entries: list[str]) -> Iterator[tuple[int, list[bytes]]]:
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rpartition(b")")[2].split()
        except OSError:
            continue
        yield int(entry), fields


class _Orphans:
    """The agent's processes that left its group, found as our descendants (this process is
    their child subreaper): ``start`` before the agent starts, ``reap`` now and then during
    the session, ``end`` once the agent's group is ended. A no-op where ``prctl`` is not."""

    def __init__(self) -> None:
        self.active = False
        self._restore = False  # we turned the subreaper on: turn it off at the end
        self._before: set[int] = set()  # our descendants before the agent: not its
        self.agent: int | None = None  # reaped by asyncio, never here

    def start(self) -> None:
        prctl = _prctl()
        if prctl is None:
            return
        was = ctypes.c_int(0)
        with contextlib.suppress(OSError, ctypes.ArgumentError):
            prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was), 0, 0, 0)
        if prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return
        self._restore = not was.value
        self._before = set(self._descendants(_processes() or {}))
        self.active = True

    def _descendants(self, table: dict[int, tuple[int, bytes]]) -> list[int]:
        children: dict[int, list[int]] = {}
        for pid, (parent, _) in table.items():
            children.setdefault(parent, []).append(pid)
        found: list[int] = []
        todo = [os.getpid()]
        while todo:
            for child in children.get(todo.pop(), ()):
                if child not in self._before:
                    found.append(child)
                    todo.append(child)
        return found

    def _ours(self) -> tuple[list[int], list[int]]:
        """The agent's descendants still running, and our zombie children to reap."""
        table = _processes()
        if table is None:
            return [], []
        running: list[int] = []
        zombies: list[int] = []
        me = os.getpid()
        for pid in self._descendants(table):
            if pid == self.agent:
                continue
            parent, state = table[pid]
            if state not in (b"Z", b"X"):
                running.append(pid)
            elif parent == me:
                zombies.append(pid)
        return running, zombies

    def reap(self) -> None:
        """Collect the agent's orphans that exited (they would stay zombies of ours)."""
        if self.active:
            _reap(self._ours()[1])

    async def end(self, term_grace: float, poll: float) -> list[int]:
        """SIGTERM to every process of the agent's left below ours, ``term_grace`` s, then
        SIGKILL; returns those found (empty when there were none or this is a no-op)."""
        if not self.active:
            return []
        found: list[int] = []
        try:
            loop = asyncio.get_running_loop()
            for sig, wait in ((signal.SIGTERM, term_grace), (signal.SIGKILL, 1.0)):
                deadline = loop.time() + wait
                while True:
                    running, zombies = self._ours()
                    _reap(zombies)
                    fresh = [pid for pid in running if pid not in found]
                    found += fresh
                    if not running:
                        return found
                    for pid in running if sig == signal.SIGKILL else fresh:
                        with contextlib.suppress(OSError):
                            os.kill(pid, sig)
                    if loop.time() >= deadline:
                        break
                    await asyncio.sleep(poll)
            return found
        finally:
            self.stop()

    def stop(self) -> None:
        """No more subreaper (unless this process was one before ``start``)."""
        if self._restore:
            self._restore = False
            prctl = _prctl()
            if prctl is not None:
                prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        self.active = False


def _reap(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.waitpid(pid, os.WNOHANG)
