"""``acp-toolcalls convert``: a JSON Lines log of one protocol version as the other.

Rules this module owns (issue 4, item 4; issue 16, whole sessions; the command line is fixed
word for word, ``--side`` added):

- ``--to v1`` reads v2 messages, ``--to v2`` reads v1 messages, through a ``SessionConverter``
  (``acp_toolcalls.sessions``): the whole session, both sides, is converted with the proxy's
  mappings (``acp_toolcalls.lifecycle``: initialize, authentication, session setup, config
  options, modes, prompt turns, permission answers); the agent's tool calls, permission requests
  and other session updates go through ``V2ToV1Bridge`` (``--coalesce``: its coalescing policy)
  or ``StatelessV2ToV1`` with ``--stateless``, and ``V1ToV2Bridge`` or ``StatelessV1ToV2``.
  ``--coalesce`` exists only for the v2 -> v1 bridge: with ``--stateless`` or ``--to v2`` it is
  a usage error. docs/conversion.md says what maps and what is lost.
- The input's version: until ``initialize`` or a message of one version only says it
  (``detect.ProtocolDetector``, as ``validate`` reads it), at most ``LOOKAHEAD_LINES`` lines /
  ``LOOKAHEAD_BYTES`` bytes are held back (nothing is written); then, or at the end, the lines
  are converted (read as the version other than ``--to`` when nothing said). Input already in
  the ``--to`` version is exit 2 with one line on stderr and nothing on stdout.
- A log of ``acp-toolcalls bridge --log`` (its first line a traffic record) holds two
  conversations: ``--side client`` converts the client's (``client->proxy`` and
  ``proxy->client``), ``--side agent`` the agent's (``proxy->agent`` and ``agent->proxy``);
  the records say who sent each message and in which version. Without ``--side`` such a log
  is exit 2 with one line. Other logs are read whole (``--side`` does not apply).
- Input is JSON Lines, read with ``lines.read_lines`` (bounded, numbered from 1); blank lines
  are skipped. Output on stdout is JSON Lines, one encoded message per line, written as each
  input line is converted; a batch line comes out as one batch line. At end of input the
  converter is flushed.
- stderr, one line each, with the input line number: every loss, ``line N: PATH: reason``;
  every unreadable line (skipped); every answer the converter gave the agent itself (``replies``:
  they go back to the sender, so they are not part of the output stream). Losses found by the
  end-of-input flush carry the number of the last line.
- Exit 0; ``--strict`` stops with exit 2 at the first line that loses anything or cannot be
  read (that line's output is not written; the lines before it stay written); 2 for a usage
  error, a FILE that cannot be read, an output that cannot be written, input already in the
  target version or a bridge log without ``--side``; 1 when stdout is closed early; 130 on
  Ctrl-C; 70 for a bug (``_EXIT_CODES``, the ``--help`` epilog).
- A line over ``--max-line-bytes`` is reported as soon as it crosses the limit (it ends the
  lookahead: the lines held are converted first) and skipped to its end unheld; a key
  repeated in one object is reported (the converter took the last value) and counts as a loss
  for ``--strict``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import IO, Any, Protocol, cast

import msgspec

from ..bridge import V1ToV2Bridge, V2ToV1Bridge
from ..check import LOOKAHEAD_BYTES, LOOKAHEAD_LINES, ProtocolDetector
from ..codec import (
    DEFAULT_MAX_BYTES,
    DecodeError,
    check_depth,
    duplicate_keys,
    encode,
    to_builtins,
)
from ..convert import ConversionError, Converted, StatelessV1ToV2, StatelessV2ToV1
from ..models import Batch, VersionName
from ..records import Side, is_record
from ..sessions import SessionConverter
from . import _options
from ._output import write_all
from .lines import (
    NotJsonLines,
    ReadError,
    json_lines,
    open_input,
    overlong,
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
  2    usage error, FILE cannot be read or is not JSON Lines, stdout cannot be written, the
       input is in the --to version already, a bridge --log file without --side, or
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

    def close_session(self, session_id: str) -> Converted: ...


def make_converter(to: str, *, stateless: bool, coalesce: bool, strict: bool) -> Converter:
    """The converter ``convert --to TO`` uses. A stateless one is strict under ``--strict``
    (it raises ``ConversionError``); the bridges are always lossy and the command treats
    every loss they report as an error instead."""
    if to == "v1":  # a log may hold no answer: a prompt ends at its call's next update
        if stateless:
            return StatelessV2ToV1(strict=strict)
        return V2ToV1Bridge(coalesce=coalesce, prompts_end_on_update=True)
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


class _Refused(Exception):
    """The input cannot be converted at all (one line on stderr, exit 2)."""


_RECORD_HINT = b'"direction"'
_HINT_WINDOW = 96  # `records.log_line` writes "direction" within the first bytes of a record
_SENDERS: dict[str, Side] = {
    "client->proxy": "client",
    "proxy->client": "agent",
    "proxy->agent": "client",
    "agent->proxy": "agent",
}
"""Who sent a record's message, in the conversation of its side."""
_SIDES: dict[str, Side] = {
    "client->proxy": "client",
    "proxy->client": "client",
    "proxy->agent": "agent",
    "agent->proxy": "agent",
}


def _record(data: bytes) -> dict[str, Any] | None:
    """A line of a bridge log as its record, or ``None``: not a record."""
    if _RECORD_HINT not in data[:_HINT_WINDOW]:
        return None
    try:
        value = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    return cast(dict[str, Any], value) if is_record(value) else None


class _Run:
    def __init__(
        self,
        converter: SessionConverter,
        strict: bool,
        write: Callable[[bytes], None],
        max_line_bytes: int | None = None,
        side: Side | None = None,
    ) -> None:
        self.converter = converter
        self.strict = strict
        self._write = write
        self.max_line_bytes = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
        self.side = side
        self.line = 0
        self._bridge_log: bool | None = None  # decided by the first non-blank line
        self._detector = ProtocolDetector()
        self._held: list[tuple[int, bytes | int, Side | None]] | None = []
        self._held_bytes = 0

    # -- reading the input: bridge logs, the version ------------------------------------------

    def take(self, line: int, data: bytes | int) -> None:
        """One line of the input (``read_lines`` output)."""
        self.line = line
        sender: Side | None = None
        if self._bridge_log is None and isinstance(data, bytes) and data.strip():
            self._bridge_log = _record(data) is not None
            if self._bridge_log and self.side is None:
                raise _Refused(
                    "a log of `acp-toolcalls bridge --log` holds both conversations of the "
                    "proxy: choose the one to convert with --side client or --side agent"
                )
        if self._bridge_log and isinstance(data, bytes):
            record = _record(data)
            if record is not None:
                direction = str(record["direction"])
                if _SIDES[direction] != self.side:
                    return
                sender = _SENDERS[direction]
                self._side_version(record.get("protocol"), line)
                if "message" in record:
                    data = msgspec.json.encode(record["message"])
                elif isinstance(record.get("skipped"), int):
                    data = record["skipped"]
                else:
                    data = str(record.get("line", "")).encode("utf-8", "replace")
        if self._held is not None and isinstance(data, int):
            self._release()  # a line over the limit is reported as soon as it is seen
        if self._held is None:
            self.feed(line, data, sender)
            return
        self._held.append((line, data, sender))
        if isinstance(data, bytes):
            self._held_bytes += len(data)
            if self._detector.protocol is None:
                self._observe(data, line)
        if (
            self._detector.protocol is not None
            or len(self._held) >= LOOKAHEAD_LINES
            or self._held_bytes >= LOOKAHEAD_BYTES
        ):
            self._release()

    def _side_version(self, version: Any, line: int) -> None:
        if self._detector.protocol is None and version in (1, 2):
            self._detector.protocol = "v1" if version == 1 else "v2"
            self._detector.source = f"the {self.side} side of the bridge log, line {line}"

    def _observe(self, data: bytes, line: int) -> None:
        try:
            value = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError):
            return
        for message in value if isinstance(value, list) else [value]:
            self._detector.observe(message, line)
            if self._detector.protocol is not None:
                return

    def _release(self) -> None:
        held, self._held = self._held or [], None
        if self._detector.protocol == self.converter.to:
            to = self.converter.to
            raise _Refused(
                f"the input is ACP {to} already ({self._detector.source}): there is nothing to "
                f"convert to {to}"
            )
        for line, data, sender in held:
            self.feed(line, data, sender)

    # -- converting -----------------------------------------------------------------------------

    def _say(self, line: int, path: str, reason: str) -> None:
        print(
            f"line {line}: {printable(path)}: {printable(reason)}",
            file=sys.stderr,
            flush=True,
        )

    def _failed(self, line: int, path: str, reason: str) -> None:
        self._say(line, path, reason)
        if self.strict:
            raise _Stop(line)

    def feed(self, line: int, data: bytes | int, sender: Side | None = None) -> None:
        """Convert one line and write what it produced."""
        if isinstance(data, int):
            self._failed(line, "$", overlong(self.max_line_bytes))
            return
        if not data or data.isspace():
            return
        for diagnostic in duplicate_keys(data):  # the converter takes the last value of each
            self._failed(line, diagnostic.path, diagnostic.reason)
        try:
            check_depth(data)  # the codec's limit, which every writer meets (issue 27)
            converted = self.converter.convert(data, sender)
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
        """End of input: the lines held back, then the converter flushed."""
        if self._held is not None:
            self._release()
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
                write_all(buffer, data)  # every byte, or an error (issue 27)
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
            "Read JSON Lines of ACP JSON-RPC messages (a line may be a batch) of a session in "
            "one protocol version and write them, one message per line, as the session in the "
            "other: --to v1 reads v2, --to v2 reads v1. Both sides are converted: initialize, "
            "authentication, session setup, config options and modes, prompt turns, and the "
            "agent's tool calls through the stateful bridge (toward v1: a `tool_call` at the "
            "first sight of every id, chunks sent as whole content, terminals rendered as "
            "text). Input already in the --to version is refused. A log of `acp-toolcalls "
            "bridge --log` is converted one side at a time (--side). What cannot be carried "
            "over is reported on stderr."
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
    _options.add_side(
        parser,
        None,
        "in a log of `acp-toolcalls bridge --log`, the side to convert (required there; "
        "other logs are read whole)",
    )
    _options.add_max_line_bytes(parser, None)
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
    tool_calls = make_converter(
        to, stateless=args.stateless, coalesce=args.coalesce, strict=args.strict
    )
    converter = SessionConverter(cast(VersionName, to), tool_calls)
    name = cast(str, args.file)
    side = cast("Side | None", args.side)
    conversion = _Run(converter, args.strict, _writer(sys.stdout), args.max_line_bytes, side)
    try:
        with open_input(name) as stream:
            lines = json_lines(reading(read_lines(stream, conversion.max_line_bytes, early=True)))
            for number, data in with_progress(lines, stream, "converting"):
                conversion.take(number, data)
        conversion.finish()
    except _Refused as refused:
        print(f"{PROG}: {shown(name)}: {refused}", file=sys.stderr)
        return 2
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
