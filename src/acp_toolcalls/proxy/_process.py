"""The agent's process: its pipes' protocol, its process group, how its exit is told.

Rules this module owns: the agent runs in a session (so a process group) of its own, with our
stderr; ``_Agent.exited`` is set as soon as the process exits, whatever holds its pipes; a
process of its group is alive until it is a zombie (``_group_has_members``); fds 0-2 that are
closed get ``/dev/null`` first, so that no pipe of ours lands on one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
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
