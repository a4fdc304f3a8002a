"""The input side of ``replay``, ``validate`` and ``convert``: JSON Lines read safely.

Rules this module owns:

- ``read_lines`` numbers lines from 1 and never holds more than ``max_bytes`` of one line: the
  rest of an overlong line is read in ``_CHUNK`` pieces only to count it. A UTF-8 byte-order
  mark at the start of the input is skipped.
- ``json_lines``: input whose first ``NOT_JSON_LINES_AFTER`` non-blank lines are all
  unreadable (not UTF-8, or not JSON: a binary file, a pretty-printed JSON document) is not
  JSON Lines; the command stops with one line saying so (``NotJsonLines``, exit 2) instead of
  reporting every line. One readable line among them and every line is read as usual.
- ``with_progress``: on a terminal (stderr), input that takes more than ``PROGRESS_AFTER``
  seconds gets a rich progress bar, drawn on stderr and erased at the end; never on a pipe.
- ``log_messages``: the messages of a log in any format ``report.captures`` reads (D43):
  a plain or ``bridge --log`` log passes unchanged, a wrapped capture gives its
  messages, each readable line of another shape in it goes to ``note`` instead (``line N: $:
  reason``); input whose JSON objects are no log at all raises ``NotACapture`` (exit 2).
- ``side_lines``: one side of a ``bridge --log`` file (``records.one_side``); a file whose every
  line is the other side's raises ``NoLineOfSide`` (exit 2), never "no findings".
- ``open_log``: the log a command reads, a file, stdin (``-`` or no name) or with ``--demo``
  the bundled demo session (``DEMO``, in ``acp_toolcalls/data``).
- An ``OSError`` of the reading is raised as ``ReadError`` (``reading``), so that any other
  ``OSError`` is known to be the output's.
- Values from the log are shown through ``printable``: they never move the cursor.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, BinaryIO, cast

import msgspec

from ..records import Side, one_side
from ..report import overlong, printable, unreadable
from ..report.captures import Captured, CaptureReader, NotACapture

__all__ = [
    "DEMO",
    "NOT_JSON_LINES_AFTER",
    "PROGRESS_AFTER",
    "Lines",
    "NoLineOfSide",
    "NotACapture",
    "NotJsonLines",
    "ReadError",
    "demo_path",
    "json_lines",
    "log_messages",
    "open_input",
    "open_log",
    "overlong",
    "printable",
    "read_lines",
    "reading",
    "shown",
    "side_lines",
    "unreadable",
    "with_progress",
]

Lines = Iterator[tuple[int, "bytes | int"]]
"""``(line number, bytes without "\\n")``, or ``(line number, size)`` for an overlong line."""

NOT_JSON_LINES_AFTER = 5
"""This many unreadable non-blank lines at the start, and nothing readable: not JSON Lines."""
PROGRESS_AFTER = 1.0
"""Seconds of reading after which a terminal gets a progress bar."""

_CHUNK = 64 * 1024  # read size when skipping the rest of an overlong line
_BOM = b"\xef\xbb\xbf"


# --------------------------------------------------------------------------------------------
# Reading lines


def read_lines(stream: BinaryIO, max_bytes: int, *, early: bool = False) -> Lines:
    """``(line number, bytes without "\\n")``, or ``(line number, size)`` for an overlong line.

    ``readline(max_bytes + 1)`` never buffers more than the limit; the rest of an overlong
    line is read and dropped in ``_CHUNK`` pieces, only to count its size. With ``early`` the
    overlong line is yielded as soon as it is known to be one, its size then being what was
    read so far (``max_bytes + 1``), and its rest is dropped when the caller asks for the next
    line: a caller that reports as it reads (or stops there) is not kept waiting by an endless
    line. A UTF-8 byte-order mark before the first line is not part of it.
    """
    number = 0
    while True:
        data = stream.readline(max_bytes + 1)
        if not data:
            return
        if number == 0 and data.startswith(_BOM):
            data = data[len(_BOM) :]
            if not data:  # the mark alone
                continue
        number += 1
        complete = data.endswith(b"\n")
        if complete:
            data = data[:-1]
        if len(data) <= max_bytes:
            yield number, data
            continue
        size = len(data)
        del data
        if early:
            yield number, size
        while not complete:
            rest = stream.readline(_CHUNK)
            complete = not rest or rest.endswith(b"\n")
            size += len(rest) - (1 if rest.endswith(b"\n") else 0)
        if not early:
            yield number, size


class ReadError(Exception):
    """Reading the input failed (``error``); raised by ``reading``, so that an ``OSError``
    anywhere else is known to be the output's."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


def reading(lines: Lines) -> Lines:
    """``lines``, with an ``OSError`` of the reading raised as ``ReadError``."""
    try:
        yield from lines  # the reading's own errors come out of `lines`, and only they
    except OSError as exc:
        raise ReadError(exc) from exc


class TextAsBinary:
    """A text stream (e.g. a replaced ``sys.stdin`` without ``.buffer``) read as UTF-8 bytes."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def readline(self, limit: int) -> bytes:
        # Characters are at least one byte each: never read more characters than bytes wanted.
        out = bytearray()
        while len(out) < limit:
            piece = self._stream.readline(min(_CHUNK, limit - len(out)))
            if not piece:
                break
            out += piece.encode("utf-8", "surrogateescape")
            if piece.endswith("\n"):
                break
        return bytes(out)


def stdin_stream() -> BinaryIO:
    """Standard input as a binary stream; ``ReadError`` when there is none."""
    stdin = sys.stdin
    if stdin is None:
        raise ReadError(OSError("no standard input"))
    buffer = getattr(stdin, "buffer", None)
    return cast(BinaryIO, buffer if buffer is not None else TextAsBinary(stdin))


@contextmanager
def open_input(name: str) -> Iterator[BinaryIO]:
    """``name`` (``-``: stdin) as a binary stream; ``ReadError`` when it cannot be opened."""
    if name == "-":
        yield stdin_stream()
        return
    try:
        stream = open(name, "rb")  # noqa: SIM115 - closed by the `with` below
    except OSError as exc:
        raise ReadError(exc) from exc
    with stream:
        yield stream


DEMO = "demo-session.jsonl"
"""The bundled example session, in ``acp_toolcalls/data``."""


def demo_path() -> Any:
    """The bundled demo session as an ``importlib.resources`` traversable."""
    from importlib import resources

    return resources.files("acp_toolcalls") / "data" / DEMO


@contextmanager
def open_log(name: str | None, demo: bool) -> Iterator[BinaryIO]:
    """The log a command reads: the bundled demo session, or ``name`` (``None``: stdin) as
    ``open_input`` opens it; ``ReadError`` when a named file cannot be opened."""
    if demo:
        with demo_path().open("rb") as stream:
            yield stream
    else:
        with open_input("-" if name is None else name) as stream:
            yield stream


def shown(name: str | None) -> str:
    """How a message names the input."""
    return "standard input" if name in (None, "-") else repr(name)


# --------------------------------------------------------------------------------------------
# Input that is not JSON Lines


class NotJsonLines(Exception):
    """The input's first lines are none of them JSON: it is not a log of JSON-RPC messages."""

    def __init__(self, line: int, reason: str, document: bool) -> None:
        super().__init__(line, reason)
        self.line = line
        self.reason = reason
        self.document = document

    def describe(self, name: str | None) -> str:
        """One line for the user: what the input is, and what a log looks like."""
        hint = (
            "it looks like one JSON document over several lines: write one message per line "
            "(for example `jq -c . FILE`)"
            if self.document
            else "each line must be one JSON-RPC message"
        )
        return (
            f"{shown(name)} is not JSON Lines: none of its first {self.line} lines is JSON "
            f"({self.reason}); {hint}"
        )


def _unreadable(data: bytes) -> str | None:
    """Why a line is not JSON, or ``None`` when it is."""
    try:
        msgspec.json.decode(data)
    except msgspec.ValidationError:
        return None  # JSON all the same (a number out of range)
    except (msgspec.DecodeError, RecursionError):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "not UTF-8 text"
        return "not valid JSON"
    return None


def json_lines(lines: Lines) -> Lines:
    """``lines``, or ``NotJsonLines`` when the first ``NOT_JSON_LINES_AFTER`` non-blank lines
    are all unreadable. Lines are held back only while every one so far was unreadable."""
    held: list[tuple[int, bytes | int]] = []
    first: str | None = None
    document = False
    for item in lines:
        number, data = item
        if isinstance(data, int) or not data.strip():
            held.append(item)  # neither evidence for nor against
            continue
        why = _unreadable(data)
        if why is None:
            yield from held
            yield item
            yield from lines
            return
        if first is None:
            first, document = f"line {number} is {why}", data.strip() in (b"{", b"[")
        held.append(item)
        if sum(1 for _, d in held if isinstance(d, bytes) and d.strip()) >= NOT_JSON_LINES_AFTER:
            raise NotJsonLines(number, first, document)
    yield from held


# --------------------------------------------------------------------------------------------
# Capture formats


def log_messages(
    lines: Iterable[tuple[int, bytes | int]],
    note: Callable[[int, str], None],
    reader: CaptureReader | None = None,
    *,
    end: bool = True,
) -> Lines:
    """The numbered messages of a log in any format ``report.captures`` reads; a line of
    another shape in a wrapped capture goes to ``note`` (its number, why it is not read).
    Once the log is known to be plain or a ``bridge --log`` file, its lines pass as they are.
    ``reader`` carries the format over calls (``replay --follow``), ``end``: the input ends
    with ``lines``."""
    reader = reader if reader is not None else CaptureReader()
    lines = iter(lines)
    for number, data in lines:
        if reader.passes:
            yield number, data
            yield from lines
            return
        yield from _messages(reader.feed(number, data), note)
    if end:
        yield from _messages(reader.finish(), note)


class NoLineOfSide(Exception):
    """A ``bridge --log`` file all of whose lines are records of the other side."""

    def __init__(self, side: Side) -> None:
        super().__init__(side)
        self.side = side

    def describe(self, shown: str) -> str:
        """One line for the user: what the log holds, and the option that reads it."""
        other = "agent" if self.side == "client" else "client"
        return (
            f"{shown} is a `bridge --log` file with no line of the {self.side} side (all its "
            f"records are the {other} side's): read it with --side {other}"
        )


def side_lines(lines: Lines, side: Side) -> Lines:
    """``records.one_side`` of ``lines``, raising ``NoLineOfSide`` at their end when lines were
    read and every one was a record of the other side (reading nothing is not a clean log)."""
    read = passed = 0

    def counted() -> Lines:
        nonlocal read
        for item in lines:
            read += 1
            yield item

    for item in one_side(counted(), side):
        passed += 1
        yield item
    if read and not passed:
        raise NoLineOfSide(side)


def _messages(items: list[Captured], note: Callable[[int, str], None]) -> Lines:
    for item in items:
        if item.note is not None:
            note(item.line, item.note)
        else:
            yield item.line, item.message


# --------------------------------------------------------------------------------------------
# Progress on a terminal


def _size(stream: Any) -> int | None:
    try:
        status = os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) and status.st_size > 0 else None


def with_progress(lines: Lines, stream: Any, what: str) -> Lines:
    """``lines``; on a terminal a progress bar on stderr once reading takes longer than
    ``PROGRESS_AFTER`` seconds (bytes of a file, or lines and bytes of a stream)."""
    if not _stderr_is_terminal():
        yield from lines
        return
    started = time.monotonic()
    total = _size(stream)
    done = 0
    bar: _Bar | None = None
    try:
        for count, item in enumerate(lines, 1):
            data = item[1]
            done += (data if isinstance(data, int) else len(data)) + 1
            if count & 255 == 0:
                if bar is not None:
                    bar.update(done, item[0])
                elif time.monotonic() - started > PROGRESS_AFTER:
                    bar = _Bar(what, total)
                    bar.update(done, item[0])
            yield item
    finally:
        if bar is not None:
            bar.stop()


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError, OSError):
        return False


class _Bar:
    """A transient rich progress bar on stderr; what the command prints meanwhile goes above."""

    def __init__(self, what: str, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TextColumn("line {task.fields[line]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=sys.stderr),
            transient=True,
        )
        self._task = self._progress.add_task(what, total=total, line=0)
        self._progress.start()

    def update(self, done: int, line: int) -> None:
        self._progress.update(self._task, completed=done, line=line)

    def stop(self) -> None:
        self._progress.stop()


# --------------------------------------------------------------------------------------------
# Messages
