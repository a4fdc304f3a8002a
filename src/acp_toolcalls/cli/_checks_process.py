"""``inspect``'s checks in a second process, fed the same lines while the first records the history.

Rules this module owns (issue 29: ``inspect`` at about the cost of ``replay``):

- ``report.model`` splits a report into two parts: the history and the checks (``validate``'s
  findings, the conversion losses). With ``--jobs 2`` (the default on a machine with two
  processors or more) a forked child process computes the checks while the parent computes
  the history; the parent takes the child's ``Checks`` before it writes the report, which is
  the same bytes either way (the tests compare them).
- The child is fed the parent's lines, as read (``feed``: numbered lines in batches of at most
  ``BATCH_LINES`` lines or ``BATCH_BYTES`` bytes, through a pipe), and reads them as the
  parent does (``feed_line``, ``captures.CaptureReader``), so both parts are of the same
  lines: stdin works, and a log that grows while it is read cannot differ between them. A
  batch waits while the pipe is full, so the lines in flight stay bounded in bytes; the pipe
  holds several batches (``PIPE_BYTES``, on Linux), so neither process waits for the other's
  every batch.
- The child sends the checks, then the packed lines one part at a time (so neither process
  holds them twice in one message). The child writes nothing to the terminal and ignores
  Ctrl-C; ``stop`` ends it (always called, also when the parent ends early). A child that
  fails or dies is ``ChecksFailed``, with the reason: the command says so (it is a bug) rather
  than write a report without its findings.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
from multiprocessing.connection import Connection
from typing import Any

from ..report.captures import CaptureReader
from ..report.model import Checks, ReportBuilder

__all__ = [
    "BATCH_BYTES",
    "BATCH_LINES",
    "ChecksFailed",
    "ChecksProcess",
    "can_fork",
    "feed_line",
    "finish_capture",
    "forks",
]

BATCH_LINES = 250
"""Lines sent to the child at a time, at most."""
BATCH_BYTES = 1 << 17
"""Bytes of lines sent to the child at a time, about (a longer line goes alone)."""
PIPE_BYTES = 1 << 20
"""What the pipe to the child holds (Linux's default limit for a pipe's size), so that either
process may run ahead of the other by several batches."""


class ChecksFailed(Exception):
    """The checks' process failed or died: why."""


def forks() -> bool:
    """Whether this system starts processes by ``fork``."""
    return "fork" in multiprocessing.get_all_start_methods()


def can_fork() -> bool:
    """Whether a second process can share the work here: ``fork`` and two processors."""
    if not forks():
        return False
    try:
        processors = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        processors = os.cpu_count() or 1
    return processors >= 2


def feed_line(
    builder: ReportBuilder, capture: CaptureReader, number: int, data: bytes | int
) -> None:
    """One numbered line of the log into ``builder``, unwrapped when the log is a capture."""
    if capture.passes:  # a plain or a bridge log: every line as it is
        builder.feed(number, data)
    else:
        for item in capture.feed(number, data):
            builder.feed(item.line, item.data, item)


def finish_capture(builder: ReportBuilder, capture: CaptureReader) -> None:
    """The lines ``capture`` still held when the log ended."""
    for item in capture.finish():
        builder.feed(item.line, item.data, item)


class ChecksProcess:
    """The checks of the lines ``feed`` is given, computed by a forked child process."""

    def __init__(self, options: dict[str, Any]) -> None:
        context = multiprocessing.get_context("fork")
        lines_in, self._lines = context.Pipe(duplex=False)
        self._checks, checks_out = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_child, args=(lines_in, checks_out, options), daemon=True
        )
        _widen(self._lines)
        self._process.start()
        lines_in.close()
        checks_out.close()
        self._batch: list[tuple[int, bytes | int]] = []
        self._bytes = 0

    @property
    def pid(self) -> int | None:
        """The child's process id."""
        return self._process.pid

    def feed(self, number: int, data: bytes | int) -> None:
        """One numbered line, as read (``lines.read_lines`` output)."""
        self._batch.append((number, data))
        self._bytes += len(data) if isinstance(data, bytes) else 0
        if len(self._batch) >= BATCH_LINES or self._bytes >= BATCH_BYTES:
            self._send(self._batch)
            self._batch, self._bytes = [], 0

    def result(self) -> Checks:
        """The checks of every line fed, once the child has read them all."""
        self._send(self._batch)
        self._send(None)
        self._batch = []
        try:
            kind, value = self._checks.recv()
            if kind != "checks":
                raise ChecksFailed(value)
            while (part := self._checks.recv()) is not None:  # the lines' parts, one by one
                value.lines.append(part)
        except (EOFError, OSError) as exc:
            raise ChecksFailed(self._ended(exc)) from None
        return value  # type: ignore[no-any-return]

    def stop(self) -> None:
        """End the child (if it still runs) and close the pipes."""
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()
        self._lines.close()
        self._checks.close()

    def _send(self, batch: list[tuple[int, bytes | int]] | None) -> None:
        try:
            self._lines.send(batch)
        except OSError as exc:  # the child is gone
            raise ChecksFailed(self._ended(exc)) from None

    def _ended(self, exc: BaseException) -> str:
        self._process.join(5)
        code = self._process.exitcode
        if code is not None and code < 0:
            return f"it was ended by signal {-code}"
        return f"it ended with exit status {code}" if code is not None else str(exc)


def _widen(pipe: Connection) -> None:
    """The pipe's buffer grown to ``PIPE_BYTES`` where the system allows it (Linux)."""
    try:
        import fcntl  # (not on every system)

        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):  # not Linux, or over its limit: as it is
        pass


def _child(lines: Connection, checks: Connection, options: dict[str, Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it
    gc.freeze()  # the parent's objects: the collector need not walk them here
    message: tuple[str, Any]
    try:
        builder = ReportBuilder(part="checks", **options)
        capture = CaptureReader()
        while (batch := lines.recv()) is not None:
            for number, data in batch:
                feed_line(builder, capture, number, data)
        finish_capture(builder, capture)
        found = builder.checks()
        message = ("checks", found._replace(lines=[]))
        parts = found.lines
    except BaseException as exc:  # said by the parent (nothing is printed here)
        message, parts = ("error", f"{type(exc).__name__}: {exc}"), []
    try:
        checks.send(message)
        if message[0] == "checks":
            # The lines' parts one at a time: no message the size of the log's lines.
            for part in parts:
                checks.send(part)
            checks.send(None)
    except BaseException:  # the parent is gone or stopping: nothing to tell
        pass
    finally:
        checks.close()
