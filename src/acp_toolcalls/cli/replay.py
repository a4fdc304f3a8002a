"""``acp-toolcalls replay``: fold a JSON Lines log of ACP messages into tool-call state.

Rules this module owns (issue 3, item 4; the contract there is fixed word for word):

- Input is JSON Lines, read with ``validate.read_lines`` (bounded, numbered from 1); blank
  lines are skipped; every other line is decoded with the protocol the store reads raw input
  with now (``--protocol``, default ``auto``: the ``initialize`` exchange decides, v2 without
  one) and applied to one ``ToolCallStore``.
- Diagnostics go to stderr, one line each, ``line N: PATH: reason``: unreadable lines (not
  JSON, invalid UTF-8, not a message, over ``MAX_LINE_BYTES``) are skipped; everything the
  store salvaged, ignored or dropped by a cap is reported too.
- ``--strict``: the first *invalid* line stops the replay with exit 2 and nothing on stdout.
  Invalid means unreadable, salvaged by the decoder (wrong-typed or invalid values, items
  dropped, unreadable batch elements) or an invalid value the store had to drop (bad base64).
  Not invalid: a v1-only ``tool_call`` on a v2 stream (ignored by the contract, D17), what the
  v1 -> v2 mapping cannot carry over, cap events and reused ids (notes, still reported).
- ``--json`` prints ``store.document()`` as ONE JSON document; otherwise the rich tables of
  ``render.render_store``. Exit 0; 2 for an unreadable input or a usage error.
- The store has no caps: the contract's document is the complete state. ``--follow`` (which
  may run for days and only shows the latest calls) keeps the store's default caps, and
  reports each cap it hits like a diagnostic.
- ``--follow`` redraws the tables live while reading; a regular file is polled every
  ``POLL_SECONDS`` for new complete lines until Ctrl-C (exit 0); a pipe or the demo ends at
  its end. It cannot be combined with ``--json`` (one document needs an end).
- No FILE and stdin a terminal: the bundled demo session (``data/demo-session.jsonl``).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from typing import IO, Any, BinaryIO, cast

from rich.console import Console
from rich.live import Live

from ..codec import DEFAULT_MAX_BYTES, decode_message, encode
from ..events import DiagnosticReported, ToolCallReopened
from ..jsonrpc import Batch, InvalidMessage
from ..lenient import DecodeError
from ..state import Limits
from ..store import StoreProtocol, ToolCallStore
from ..traffic import LogSide, one_side
from .render import render_store
from .validate import _printable, _TextAsBinary, read_lines

__all__ = ["DEMO", "MAX_LINE_BYTES", "POLL_SECONDS", "Replayer", "demo_path", "register", "run"]

PROG = "acp-toolcalls replay"
MAX_LINE_BYTES = DEFAULT_MAX_BYTES
"""Longest line read, in bytes; a longer one is reported and skipped unread."""
POLL_SECONDS = 0.25
"""How often ``--follow`` looks for new lines in a file it has read to the end."""
DEMO = "demo-session.jsonl"
"""The bundled example session, in ``acp_toolcalls/data``."""

_CHUNK = 64 * 1024
_UNCAPPED = Limits(max_content_items=None, max_terminal_bytes=None, max_tool_calls=None)


def demo_path() -> Any:
    """The bundled demo session as an ``importlib.resources`` traversable."""
    return resources.files("acp_toolcalls") / "data" / DEMO


# --------------------------------------------------------------------------------------------
# Feeding lines to the store


class Replayer:
    """Applies numbered lines to one store and reports each diagnostic through ``report``."""

    def __init__(self, store: ToolCallStore, report: Callable[[str], None]) -> None:
        self.store = store
        self._report = report
        self.changed = False
        """Whether any line changed the store since the caller last cleared this."""

    def _say(self, line: int, path: str, reason: str) -> None:
        self._report(f"line {line}: {_printable(path)}: {_printable(reason)}")

    def feed(self, line: int, data: bytes | int) -> bool:
        """Apply one line (``read_lines`` output); returns False when the line was invalid."""
        if isinstance(data, int):
            self._say(
                line, "$", f"line of {data} bytes is over the limit of {MAX_LINE_BYTES}; skipped"
            )
            return False
        if not data or data.isspace():
            return True
        protocol = self.store.raw_protocol
        try:
            decoded = decode_message(data, protocol=protocol, max_bytes=MAX_LINE_BYTES)
            valid = not decoded.diagnostics and not _has_invalid_element(decoded.value)
            events = self.store.apply(decoded)
        except DecodeError as exc:
            self._say(line, exc.path, _unreadable(data, exc) + "; line skipped")
            return False
        except Exception as exc:  # a library bug must not end the replay with a traceback
            reason = f"the decoder or store failed ({type(exc).__name__}: {exc}); this is a bug"
            self._say(line, "$", reason)
            return False
        for event in events:
            if isinstance(event, DiagnosticReported):
                self._say(line, event.path, event.reason)
                if event.kind == "invalid":
                    valid = False
            elif isinstance(event, ToolCallReopened):
                self._say(
                    line,
                    "$",
                    f"tool call {event.tool_call_id!r} reopened: {event.status!r} after "
                    f"{event.previous_status!r} (an id reused after it finished?)",
                )
        if events:
            self.changed = True
        return valid


def _has_invalid_element(value: object) -> bool:
    return isinstance(value, Batch) and any(isinstance(i, InvalidMessage) for i in value.items)


def _unreadable(data: bytes, exc: DecodeError) -> str:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not valid UTF-8 at byte {bad.start}: {bad.reason}"
    return exc.reason


# --------------------------------------------------------------------------------------------
# Following a growing file


class _FollowReader:
    """Complete lines of a stream that may still grow; a partial last line waits for its end.

    ``poll`` returns what one read made complete; an overlong line is dropped as it is read,
    like ``read_lines`` does, and reported as its size.
    """

    def __init__(self, stream: Any, max_bytes: int) -> None:
        read1 = getattr(stream, "read1", None)
        self._read: Callable[[int], bytes] = read1 if read1 is not None else stream.readline
        self._max = max_bytes
        self._pending = bytearray()
        self._skipping: int | None = None  # bytes of an overlong line dropped so far
        self.number = 0
        self.eof = False

    def poll(self) -> list[tuple[int, bytes | int]]:
        data = self._read(_CHUNK)
        self.eof = not data
        out: list[tuple[int, bytes | int]] = []
        if not data:
            return out
        start = 0
        while True:
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if self._skipping is not None:
                self._skipping += len(piece)
            else:
                self._pending += piece
                if len(self._pending) > self._max:
                    self._skipping = len(self._pending)
                    self._pending.clear()
            if end < 0:
                return out
            self.number += 1
            if self._skipping is not None:
                out.append((self.number, self._skipping))
                self._skipping = None
            else:
                out.append((self.number, bytes(self._pending)))
                self._pending.clear()
            start = end + 1

    def finish(self) -> list[tuple[int, bytes | int]]:
        """The last line when the stream ended without a newline."""
        if self._skipping is None and not self._pending:
            return []
        self.number += 1
        last: bytes | int = self._skipping if self._skipping is not None else bytes(self._pending)
        self._pending.clear()
        self._skipping = None
        return [(self.number, last)]


def _is_regular(stream: Any) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):
        return False


def _follow(
    stream: Any, replayer: Replayer, console: Console, strict: bool, grows: bool, side: LogSide
) -> int:
    regular = grows and _is_regular(stream)  # only a regular file grows after its end
    reader = _FollowReader(stream, MAX_LINE_BYTES)
    store = replayer.store

    def view() -> Any:
        # One screen: Live crops what does not fit anyway, so do not render it.
        return render_store(store, max_rows=max(3, (console.height - 6) // 2))

    with Live(view(), console=console, auto_refresh=False, vertical_overflow="ellipsis") as live:
        drawn = time.monotonic()
        try:
            while True:
                lines = reader.poll()
                if reader.eof and not regular:
                    lines += reader.finish()
                for number, data in one_side(lines, side):
                    if not replayer.feed(number, data) and strict:
                        live.update(view())
                        return _stopped(number)
                now = time.monotonic()
                caught_up = reader.eof or not lines
                if replayer.changed and (caught_up or now - drawn >= POLL_SECONDS):
                    live.update(view(), refresh=True)
                    replayer.changed = False
                    drawn = now
                if reader.eof:
                    if not regular:
                        return 0
                    time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            live.update(view())  # the final frame is drawn as the Live stops
            return 0


# --------------------------------------------------------------------------------------------
# The command


def register(subparsers: Any) -> None:
    """Add the ``replay`` subcommand to the dispatcher's subparsers."""
    parser = subparsers.add_parser(
        "replay",
        help="fold a JSON Lines log of ACP messages into tool-call state and show it",
        description=(
            "Replay JSON Lines of ACP JSON-RPC messages through the reference tool-call store "
            "and print the resulting tool calls and terminals: tables for people, or with "
            "--json one JSON document. Diagnostics go to stderr with their line numbers. With "
            "no FILE and a terminal on stdin, a bundled example session is replayed."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="stop with exit 2 at the first invalid line (default: report it and go on)",
    )
    parser.add_argument(
        "--protocol",
        choices=("v1", "v2", "auto"),
        default="auto",
        help="protocol version of the log (default: auto, from the initialize exchange; "
        "v2 without one)",
    )
    parser.add_argument(
        "--side",
        choices=("client", "agent"),
        default="client",
        help="in a log of `acp-toolcalls bridge --log`, the side to replay (default: client, "
        "what the editor saw); other logs are read whole",
    )
    parser.add_argument(
        "--follow",
        action="store_true",
        help="keep reading a growing file and redraw the tables live, until Ctrl-C",
    )
    parser.add_argument(
        "file",
        nargs="?",
        default=None,
        metavar="FILE",
        help="log, or - for stdin (default: stdin, or the bundled demo when stdin is a terminal)",
    )
    parser.set_defaults(handler=run)


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError, OSError):
        return False


@contextmanager
def _opened(name: str | None) -> Iterator[BinaryIO]:
    """The input as a binary stream; raises ``OSError`` when it cannot be opened."""
    if name is None and _stdin_is_terminal():
        with demo_path().open("rb") as demo:
            yield demo
    elif name is None or name == "-":
        stdin = sys.stdin
        if stdin is None:
            raise OSError("no standard input")
        buffer = getattr(stdin, "buffer", None)
        yield cast(BinaryIO, buffer if buffer is not None else _TextAsBinary(stdin))
    else:
        with open(name, "rb") as stream:
            yield stream


def _shown(name: str | None) -> str:
    if name is None and _stdin_is_terminal():
        return "the bundled demo session"
    return "standard input" if name in (None, "-") else repr(name)


def _stopped(line: int) -> int:
    print(f"{PROG}: line {line} is invalid (--strict): stopped", file=sys.stderr)
    return 2


def _write_json(document: Any) -> None:
    data = encode(document) + b"\n"
    out: IO[str] = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        out.flush()
        buffer.write(data)
        buffer.flush()
    else:
        out.write(data.decode("utf-8"))
        out.flush()


def _diagnostic(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Run ``replay`` for parsed arguments; returns the exit code."""
    if args.follow and args.json:
        print(
            f"{PROG}: error: --follow redraws tables for people and cannot be used with --json",
            file=sys.stderr,
        )
        return 2
    name = cast("str | None", args.file)
    # The document is the complete state ("nothing else is lost"): no caps, memory grows with
    # the log. --follow may run for days and shows the latest calls only: the default caps.
    limits = Limits() if args.follow else _UNCAPPED
    store = ToolCallStore(protocol=cast(StoreProtocol, args.protocol), limits=limits)
    replayer = Replayer(store, _diagnostic)
    console = Console(file=sys.stdout, highlight=False)
    try:
        with _opened(name) as stream:
            if args.follow:
                grows = name is not None or not _stdin_is_terminal()  # not the demo
                return _follow(stream, replayer, console, args.strict, grows, args.side)
            for number, data in one_side(read_lines(stream, MAX_LINE_BYTES), args.side):
                if not replayer.feed(number, data) and args.strict:
                    return _stopped(number)
    except BrokenPipeError:
        raise  # a closed stdout or stderr: the dispatcher ends quietly
    except OSError as exc:
        reason = exc.strerror or str(exc)
        print(f"{PROG}: cannot read {_shown(name)}: {reason}", file=sys.stderr)
        return 2
    if args.json:
        _write_json(store.document())
    else:
        console.print(render_store(store))
    return 0
