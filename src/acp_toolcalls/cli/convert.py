"""``acp-toolcalls convert``: a JSON Lines log of one protocol version as the other.

Rules this module owns (issue 4, item 4; the command line is fixed word for word):

- ``--to v1`` reads v2 messages through ``V2ToV1Bridge`` (``--coalesce``: its coalescing
  policy), or ``StatelessV2ToV1`` with ``--stateless``; ``--to v2`` reads v1 messages through
  ``V1ToV2Bridge``, or ``StatelessV1ToV2``. ``--coalesce`` exists only for the v2 -> v1 bridge:
  with ``--stateless`` or ``--to v2`` it is a usage error.
- Input is JSON Lines, read with ``validate.read_lines`` (bounded, numbered from 1); blank lines
  are skipped. Output on stdout is JSON Lines, one encoded message per line, written as each
  input line is converted; a batch line comes out as one batch line. Messages that are not
  session updates or permission requests pass through unchanged. At end of input the converter
  is flushed.
- stderr, one line each, with the input line number: every loss, ``line N: PATH: reason``;
  every unreadable line (skipped); every answer the converter gave the agent itself (``replies``:
  they go back to the sender, so they are not part of the output stream). Losses found by the
  end-of-input flush carry the number of the last line.
- Exit 0; ``--strict`` stops with exit 2 at the first line that loses anything or cannot be
  read (that line's output is not written; the lines before it stay written); 2 for a usage
  error, a FILE that cannot be read or an output that cannot be written; 1 when stdout is
  closed early; 130 on Ctrl-C; 70 for a bug (``_EXIT_CODES``, the ``--help`` epilog).
- A line over ``--max-line-bytes`` is reported as soon as it crosses the limit and skipped to
  its end unheld; a key repeated in one object is reported (the converter took the last
  value) and counts as a loss for ``--strict``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import IO, Any, Protocol, cast

from ..bridge_to_v1 import V2ToV1Bridge
from ..bridge_to_v2 import V1ToV2Bridge
from ..codec import DEFAULT_MAX_BYTES, duplicate_keys, encode, to_builtins
from ..convert import StatelessV1ToV2, StatelessV2ToV1
from ..jsonrpc import Batch
from ..lenient import DecodeError
from ..loss import ConversionError, Converted
from .lines import (
    NotJsonLines,
    ReadError,
    json_lines,
    open_input,
    overlong,
    plain,
    positive_int,
    printable,
    read_lines,
    reading,
    shown,
    unreadable,
    with_progress,
)

__all__ = ["MAX_LINE_BYTES", "Converter", "make_converter", "register", "run"]

PROG = "acp-toolcalls convert"
MAX_LINE_BYTES = DEFAULT_MAX_BYTES
"""Longest line read, in bytes; a longer one is reported and skipped unread."""

_EXIT_CODES = """\
exit status:
  0    converted; losses and unreadable lines are reported on stderr
  1    stdout was closed before the end
  2    usage error, FILE cannot be read or is not JSON Lines, stdout cannot be written, or
       (--strict) the first line that loses anything or cannot be read
  70   internal error (a bug in acp-toolcalls: one line on stderr says so)
  130  interrupted (Ctrl-C)

stderr: "line N: PATH: reason" for every loss and unreadable line, with the input line
number (losses of changes --coalesce held back until the end carry the last line's number).
docs/conversion.md lists what each version cannot carry, what is sent instead, and why.
"""


class Converter(Protocol):
    """What the command drives: a bridge or a stateless converter."""

    def convert(self, message: Any) -> Converted: ...

    def flush(self) -> Converted: ...


def make_converter(to: str, *, stateless: bool, coalesce: bool, strict: bool) -> Converter:
    """The converter ``convert --to TO`` uses. A stateless one is strict under ``--strict``
    (it raises ``ConversionError``); the bridges are always lossy and the command treats
    every loss they report as an error instead."""
    if to == "v1":
        return StatelessV2ToV1(strict=strict) if stateless else V2ToV1Bridge(coalesce=coalesce)
    return StatelessV1ToV2(strict=strict) if stateless else V1ToV2Bridge()


# --------------------------------------------------------------------------------------------
# The loop


class _WriteError(Exception):
    """Writing stdout failed (not a closed pipe): not the input's fault."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


class _Stop(Exception):
    """``--strict``: the line that cannot be converted without loss."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _Run:
    def __init__(
        self,
        converter: Converter,
        strict: bool,
        write: Callable[[bytes], None],
        max_line_bytes: int | None = None,
    ) -> None:
        self.converter = converter
        self.strict = strict
        self._write = write
        self.max_line_bytes = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
        self.line = 0

    def _say(self, line: int, path: str, reason: str) -> None:
        print(
            f"line {line}: {printable(path)}: {printable(plain(reason))}",
            file=sys.stderr,
            flush=True,
        )

    def _failed(self, line: int, path: str, reason: str) -> None:
        self._say(line, path, reason)
        if self.strict:
            raise _Stop(line)

    def feed(self, line: int, data: bytes | int) -> None:
        """Convert one line (``read_lines`` output) and write what it produced."""
        self.line = line
        if isinstance(data, int):
            self._failed(line, "$", overlong(self.max_line_bytes))
            return
        if not data or data.isspace():
            return
        for diagnostic in duplicate_keys(data):  # the converter takes the last value of each
            self._failed(line, diagnostic.path, diagnostic.reason)
        try:
            converted = self.converter.convert(data)
        except DecodeError as exc:
            self._failed(line, exc.path, unreadable(data, exc) + "; line skipped")
            return
        except ConversionError as exc:  # only a strict stateless converter raises it
            self._failed(line, exc.path, exc.reason)
            return
        except Exception as exc:  # a library bug must not end the conversion with a traceback
            reason = f"the converter failed ({type(exc).__name__}: {exc}); this is a bug"
            self._failed(line, "$", reason + "; line skipped")
            return
        self._emit(line, converted, batch=data.lstrip()[:1] == b"[")

    def finish(self) -> None:
        """End of input: flush the converter."""
        self._emit(self.line, self.converter.flush(), batch=False)

    def _emit(self, line: int, converted: Converted, batch: bool) -> None:
        for loss in converted.losses:
            self._say(line, loss.path, loss.reason)
        for reply in converted.replies:
            answer = json.dumps(to_builtins(reply), ensure_ascii=False, separators=(",", ":"))
            self._say(line, "$", f"answered the agent (not in the output): {answer}")
        if converted.losses and self.strict:
            raise _Stop(line)
        messages = list(converted.messages)
        if batch and messages and not (len(messages) == 1 and isinstance(messages[0], Batch)):
            messages = [Batch(messages)]  # a batch stays a batch
        if messages:
            self._write(b"".join(encode(message) + b"\n" for message in messages))


def _writer(out: IO[str]) -> Callable[[bytes], None]:
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        out.flush()

    def write(data: bytes) -> None:
        try:
            if buffer is not None:
                buffer.write(data)
                buffer.flush()  # a reader downstream sees each line as it is converted
            else:
                out.write(data.decode("utf-8"))
                out.flush()
        except BrokenPipeError:
            raise  # the dispatcher ends quietly
        except OSError as exc:
            raise _WriteError(exc) from exc

    return write


# --------------------------------------------------------------------------------------------
# The command


def register(subparsers: Any) -> None:
    """Add the ``convert`` subcommand to the dispatcher's subparsers."""
    parser = subparsers.add_parser(
        "convert",
        help="convert a JSON Lines log of ACP messages between v1 and v2",
        description=(
            "Read JSON Lines of ACP JSON-RPC messages (a line may be a batch) in one protocol "
            "version and write them, one message per line, in the other: --to v1 reads v2 "
            "through the stateful v2 -> v1 bridge (a v1 `tool_call` at the first sight of every "
            "id, chunks sent as whole content, terminals rendered as text), --to v2 reads v1. "
            "Messages that are not session updates or permission requests pass through "
            "unchanged. What cannot be carried over is reported on stderr."
        ),
        epilog=_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--to",
        required=True,
        choices=("v1", "v2"),
        help="the version to write (the input is read as the other one)",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="use the stateless converter instead of the bridge (chunks and terminal "
        "updates are dropped and reported)",
    )
    parser.add_argument(
        "--coalesce",
        action="store_true",
        help="--to v1: merge consecutive changes of one tool call until a flush point "
        "(another call, a permission request, a final status, state_update, the end)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="stop with exit 2 at the first line that loses anything or cannot be read",
    )
    parser.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"longest line read, in bytes; a longer one is reported and skipped "
        f"(default: {DEFAULT_MAX_BYTES})",
    )
    parser.add_argument("file", nargs="?", default="-", metavar="FILE", help="log, or - for stdin")
    parser.set_defaults(handler=run)


def _usage(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``convert`` for parsed arguments; returns the exit code."""
    to = cast(str, args.to)
    if args.coalesce and args.stateless:
        return _usage("--coalesce needs the bridge's state and cannot be used with --stateless")
    if args.coalesce and to == "v2":
        return _usage("--coalesce applies to --to v1 only (v1 -> v2 holds nothing back)")
    converter = make_converter(
        to, stateless=args.stateless, coalesce=args.coalesce, strict=args.strict
    )
    name = cast(str, args.file)
    conversion = _Run(converter, args.strict, _writer(sys.stdout), args.max_line_bytes)
    try:
        with open_input(name) as stream:
            lines = json_lines(reading(read_lines(stream, conversion.max_line_bytes, early=True)))
            for number, data in with_progress(lines, stream, "converting"):
                conversion.feed(number, data)
        conversion.finish()
    except _Stop as stop:
        print(
            f"{PROG}: line {stop.line} cannot be converted without loss (--strict): stopped",
            file=sys.stderr,
        )
        return 2
    except _WriteError as exc:
        print(
            f"{PROG}: cannot write the output: {exc.error.strerror or exc.error}", file=sys.stderr
        )
        return 2
    except ReadError as exc:  # any other OSError is the output's: the dispatcher says so
        reason = exc.error.strerror or str(exc.error)
        print(f"{PROG}: cannot read {shown(name)}: {reason}", file=sys.stderr)
        return 2
    except NotJsonLines as exc:
        print(f"{PROG}: {exc.describe(name)}", file=sys.stderr)
        return 2
    return 0
