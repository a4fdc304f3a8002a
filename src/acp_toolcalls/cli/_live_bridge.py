"""``bridge --inspect``: the session's live report, served by a process of its own (D48).

Rules this module owns (issue 31):

- The bridge starts ``python -m acp_toolcalls.cli._live_bridge`` (the watcher) before the
  agent and waits for it to say ``ready`` on its stdout: it has bound its port and said its
  URL on stderr (``_serve.start_server``); if it cannot (the extra missing, the port taken),
  it says why in one line and exits 2, and so does the bridge, without starting the agent.
- The pipe's end the bridge keeps is above fd 2 (the bridge's stdin may be closed, and fd 0
  is then the proxy's to find closed) and closed on exec (the agent does not hold it).
- The bridge hands it every line the log would get (``Feed``, given to the proxy as
  ``ProxyConfig.watch``) as frames on a pipe it never waits for: one write per call, on a
  non-blocking pipe (1 MiB where Linux allows). A frame the pipe cannot take is not written
  and its lines are counted; a frame the pipe took in part is finished first, as the pipe
  drains (the event loop's writer callback), so the watcher never reads half a frame. The
  count goes with the next frame written (``!`` frame): the page says how many lines it
  misses. The bridge holds at most one frame that way.
- A frame is one line: ``<direction> <protocol or -> <time> <the wire line>``, or
  ``<direction> <protocol or -> <time> #<size>`` for a line over the limit (skipped), or
  ``! <lines not sent so far>``; directions by their index in ``DIRECTIONS``. A wire line
  holds no newline (the proxy splits on them), so a frame is one line.
- The watcher reads the frames into its ``LiveServer`` (which makes each line its record,
  credentials redacted as ``--log`` redacts them), waiting for room when its fold is behind:
  the pipe then fills and the bridge counts what it cannot send. It ignores SIGINT
  (Ctrl-C ends the bridge, which closes the pipe) and ends when the pipe does; a failure of
  its own is one line on stderr (the bridge's pipe then breaks, and the session goes on).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import msgspec

from ..records import Direction
from ..store import Limits

__all__ = ["DIRECTIONS", "Feed", "frames", "main", "read_frame", "start_watcher"]

DIRECTIONS: tuple[Direction, ...] = (
    "client->proxy",
    "proxy->client",
    "agent->proxy",
    "proxy->agent",
)
_PIPE_BYTES = 1 << 20
_CODES = {direction: b"%d" % number for number, direction in enumerate(DIRECTIONS)}
_READY_SECONDS = 60.0  # for the watcher to import, bind and say its URL


def frames(
    direction: Direction, protocol: int | None, lines: Sequence[bytes | int], when: float
) -> bytes:
    """The frames of ``lines`` (a wire line, or the size of one skipped)."""
    head = b"%s %s %r " % (_CODES[direction], b"-" if protocol is None else b"%d" % protocol, when)
    return b"".join(
        head + line + b"\n" if isinstance(line, bytes) else head + b"#%d\n" % line for line in lines
    )


def read_frame(frame: bytes) -> tuple[Direction, int | None, bytes | int, float] | int:
    """A frame (without its newline) as (direction, protocol, line or skipped size, time), or
    the count of an ``!`` frame; ``ValueError`` for anything else."""
    if frame.startswith(b"! "):
        return int(frame[2:])
    code, protocol, when, line = frame.split(b" ", 3)
    data: bytes | int = int(line[1:]) if line.startswith(b"#") else line
    return DIRECTIONS[int(code)], None if protocol == b"-" else int(protocol), data, float(when)


class Feed:
    """The bridge's side of the pipe: ``ProxyConfig.watch``; never waits."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.unsent = 0  # lines not sent, in all
        self._told = 0  # the count the watcher was last sent
        self._rest = memoryview(b"")  # of a frame the pipe took in part
        self._loop: asyncio.AbstractEventLoop | None = None
        self.closed = False

    def __call__(
        self, direction: Direction, protocol: int | None, lines: Sequence[bytes | int], when: float
    ) -> None:
        if self.closed:
            return
        if self._rest:
            self._flush()
        if self._rest:
            self.unsent += len(lines)
            return
        data = frames(direction, protocol, lines, when)
        if self.unsent != self._told:
            data = b"! %d\n" % self.unsent + data
        try:
            written = os.write(self.fd, data)
        except BlockingIOError:
            self.unsent += len(lines)
            return
        except OSError:  # the watcher is gone: the session goes on without it
            self.closed = True
            return
        self._told = self.unsent
        if written < len(data):
            self._rest = memoryview(data)[written:]
            self._wait_for_room()

    def _wait_for_room(self) -> None:
        with contextlib.suppress(RuntimeError):  # no running loop: the next call writes it
            self._loop = asyncio.get_running_loop()
            self._loop.add_writer(self.fd, self._flush)

    def _flush(self) -> None:
        try:
            written = os.write(self.fd, self._rest)
        except BlockingIOError:
            return
        except OSError:
            self.closed, self._rest = True, memoryview(b"")
            written = 0
        self._rest = self._rest[written:]
        if not self._rest and self._loop is not None:
            self._loop.remove_writer(self.fd)
            self._loop = None

    def close(self) -> None:
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.remove_writer(self.fd)
        self.closed = True
        with contextlib.suppress(OSError):
            os.close(self.fd)


class Watcher:
    """The watcher's process, seen from the bridge."""

    def __init__(self, process: subprocess.Popen[bytes], feed: Feed) -> None:
        self.process = process
        self.feed = feed

    def stop(self) -> None:
        """Close the pipe (the watcher ends with it); a watcher that does not is killed."""
        self.feed.close()
        try:
            self.process.wait(2.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_watcher(
    title: str, port: int, max_line_bytes: int, limits: Limits | None
) -> Watcher | None:
    """The watcher started and serving, or ``None`` once it said why not (exit status 2)."""
    command = [
        sys.executable, "-m", "acp_toolcalls.cli._live_bridge", "--title", title,
        "--port", str(port), "--max-line-bytes", str(max_line_bytes),
        "--limits", msgspec.json.encode(limits or Limits()).decode(),
    ]  # fmt: skip
    try:
        os.fstat(2)
        stderr = None  # ours: it says its URL, or why it has none, itself
    except OSError:  # closed: nobody reads what it would say
        stderr = subprocess.DEVNULL
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
    )
    assert process.stdin is not None and process.stdout is not None
    ready = process.stdout.readline()  # its stderr is ours: it says why itself
    process.stdout.close()
    if ready != b"ready\n":
        process.stdin.close()
        try:
            process.wait(_READY_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        return None
    # Above the standard descriptors: with our stdin closed, a plain dup would be fd 0, which
    # the proxy would then read as the client.
    fd = fcntl.fcntl(process.stdin.fileno(), fcntl.F_DUPFD_CLOEXEC, 3)
    process.stdin.close()
    os.set_blocking(fd, False)
    with contextlib.suppress(OSError, AttributeError):  # Linux: room for bursts
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    return Watcher(process, Feed(fd))


def main(argv: list[str] | None = None) -> int:
    """The watcher's process: serve what the bridge sends until the pipe ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the bridge's to take
    parser = argparse.ArgumentParser(prog="acp-toolcalls bridge --inspect")
    parser.add_argument("--title", default="bridge")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--max-line-bytes", type=int, required=True)
    parser.add_argument("--limits", required=True)
    args = parser.parse_args(argv)
    from ..report.live import LiveModel
    from ._serve import start_server

    limits = msgspec.json.decode(args.limits, type=Limits)
    title = args.title
    model = LiveModel(name=title, max_line_bytes=args.max_line_bytes, limits=limits)
    server = start_server(
        model,
        title,
        port=args.port,
        prog="acp-toolcalls bridge",
        option="--inspect",
        what="the session",
        until="until it ends",
        redact=True,
    )
    if server is None:
        return 2
    sys.stdout.buffer.write(b"ready\n")
    sys.stdout.flush()
    sys.stdout.close()
    try:
        _serve_frames(server, sys.stdin.buffer)
    except Exception as exc:  # a bug ends the page, never the session, and shows no traceback
        from ..report import printable

        why = printable(f"{type(exc).__name__}: {exc}")
        print(
            f"acp-toolcalls bridge: the live page stopped ({why}); this is a bug; the session "
            "goes on",
            file=sys.stderr,
        )
        return 70
    finally:
        server.stop()
    return 0


def _serve_frames(server: Any, frames_in: Any) -> None:
    for frame in frames_in:
        try:
            read = read_frame(frame.rstrip(b"\n"))
        except (ValueError, IndexError):
            continue  # never from the bridge
        if isinstance(read, int):
            server.dropped = read
            continue
        direction, protocol, data, when = read
        server.offer_wait(data, direction=direction, protocol=protocol, when=when)


if __name__ == "__main__":
    sys.exit(main())
