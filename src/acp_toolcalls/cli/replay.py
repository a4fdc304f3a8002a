"""``acp-toolcalls replay``: fold a JSON Lines log of ACP messages into tool-call state.

Rules this module owns (issue 3, item 4; the contract there is fixed word for word):

- Input is JSON Lines, read with ``lines.read_lines`` (bounded, numbered from 1) and applied
  to one ``ToolCallStore`` by the sans-I/O ``Replayer`` (``report/_replayer.py``: blank lines,
  decoding, which lines are invalid, the diagnostics), with the protocol ``--protocol`` asks
  for (default ``auto``: as ``validate`` decides, the ``initialize`` exchange, else the
  first message of one version, lines waiting for the decision: ``_Versions``; v2 when
  nothing tells). Input that is
  not JSON Lines at all (``lines.json_lines``) is one line on stderr and exit 2. A wrapped
  capture (``report.captures``) is replayed message by message (``lines.log_messages``); a
  line of another shape in it is a diagnostic (``--strict``: it stops the replay); JSON
  objects that are no log at all: one line on stderr, exit 2. ``--follow`` reads the
  same formats.
- Diagnostics go to stderr, one line each, ``line N: PATH: reason``, as the ``Replayer`` words
  them: unreadable lines (over ``MAX_LINE_BYTES`` too) are skipped; what the store salvaged,
  ignored or dropped by a cap is reported; what the v2 view cannot hold of valid v1 input as
  "not shown, valid v1".
- ``--strict``: the first line the ``Replayer`` calls invalid stops the replay with exit 2 and
  nothing on stdout.
- ``--json`` prints ``store.document()`` as ONE JSON document; otherwise the rich tables of
  ``render.render_parts``, summarized past ``render.SUMMARY_AFTER`` calls unless ``--all``,
  written one session at a time: a closed stdout stops them at the first failed write (exit
  1). Exit 0; 2 for an unreadable input or a usage error.
- The store has no caps: the contract's document is the complete state. ``--follow`` (which
  may run for days and only shows the latest calls) keeps the store's default caps, and
  reports each cap it hits like a diagnostic; so does ``--bounded`` without ``--follow``.
- A line over ``--max-line-bytes`` (default ``MAX_LINE_BYTES``) is reported as soon as it
  crosses the limit (an endless line does not keep the report waiting; ``--strict`` stops
  there) and skipped to its end without being held. A key repeated in one object is reported
  (the store took the last value) and makes the line invalid for ``--strict``.
- Exit codes: ``EXIT_CODES`` (the ``--help`` epilog).
- ``--follow`` redraws the tables live while reading; a regular file is polled every
  ``POLL_SECONDS`` for new complete lines (``_follow.FollowReader``) until Ctrl-C (exit 0); a
  file truncated or replaced meanwhile is replayed from its start into a new store, and stderr
  says so; a pipe or the demo ends at its end. It cannot be combined with ``--json`` (one
  document needs an end).
- ``--demo``, or no FILE and stdin a terminal: the bundled demo session
  (``data/demo-session.jsonl``). No FILE and an empty stdin: stderr says how to see it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..check import VersionLookahead
from ..codec import DEFAULT_MAX_BYTES
from ..models import VersionChoice
from ..records import one_side
from ..report import Replayer
from ..report.captures import CaptureReader
from ..store import Limits, ToolCallStore
from . import _options
from ._follow import FollowReader, changed, is_regular, reader_gone
from ._output import write_out
from .lines import (
    DEMO,
    NoLineOfSide,
    NotACapture,
    NotJsonLines,
    ReadError,
    demo_path,
    json_lines,
    log_messages,
    open_log,
    printable,
    read_lines,
    reading,
    shown,
    side_lines,
    with_progress,
)

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "DEMO",
    "EXIT_CODES",
    "MAX_LINE_BYTES",
    "POLL_SECONDS",
    "Replayer",
    "demo_path",
    "register",
    "run",
]

PROG = "acp-toolcalls replay"
MAX_LINE_BYTES = DEFAULT_MAX_BYTES
"""Longest line read, in bytes; a longer one is reported and skipped unread."""
POLL_SECONDS = 0.25
"""How often ``--follow`` looks for new lines in a file it has read to the end."""

EXIT_CODES = """\
exit status:
  0    replayed; every line the store could not take whole is reported on stderr as
       "line N: PATH: reason" and skipped or salvaged
  2    usage error, FILE cannot be read or is not a log, stdout cannot be written,
       or (--strict) the first invalid line
  70   internal error (a bug in acp-toolcalls: one line on stderr says so)
  130  interrupted (Ctrl-C; with --follow, Ctrl-C is the normal end: exit 0)
A closed stdout (`| head`) ends quietly with status 1.
"""

_UNCAPPED = Limits.unlimited()


# --------------------------------------------------------------------------------------------
# --follow: the tables redrawn as the file grows


class _Versions:
    """Under ``--protocol auto``, the lines wait until the version is decided as ``validate``
    decides it (``check.VersionLookahead``: an ``initialize``, else the first message of one
    version), so a capture that starts after its ``initialize`` is read in its version (D45);
    the store is then made for that version. ``feed`` and ``settle`` return the first invalid
    line read (``--strict`` stops there)."""

    def __init__(
        self, replayer: Replayer, make_store: Callable[..., ToolCallStore], version: str
    ) -> None:
        self._replayer, self._make_store = replayer, make_store
        self._lookahead: VersionLookahead[tuple[int, bytes | int]] | None = (
            VersionLookahead() if version == "auto" else None
        )

    def feed(self, number: int, data: bytes | int, strict: bool) -> int | None:
        lookahead = self._lookahead
        if lookahead is None:
            return None if self._replayer.feed(number, data) or not strict else number
        return self._read(lookahead.feed((number, data), number, data), strict)

    def settle(self, strict: bool) -> int | None:
        """No more lines for now (the end, or ``--follow`` caught up): read what waits."""
        lookahead = self._lookahead
        return None if lookahead is None else self._read(lookahead.settle(), strict)

    def _read(self, lines: list[tuple[int, bytes | int]], strict: bool) -> int | None:
        lookahead = self._lookahead
        if not lines or lookahead is None:
            return None
        self._lookahead = None
        if lookahead.version != "auto":
            self._replayer.store = self._make_store(lookahead.version)  # nothing read yet
        for number, data in lines:
            if not self._replayer.feed(number, data) and strict:
                return number
        return None


def _follow(
    stream: Any,
    replayer: Replayer,
    console: Console,
    args: argparse.Namespace,
    name: str | None,
    make_store: Callable[..., ToolCallStore],
) -> int:
    from rich.live import Live

    render_store = _rendering("render_store")
    # Only a regular file named on the command line grows after its end (and can be rotated).
    regular = name not in (None, "-") and not args.demo and is_regular(stream)
    reader = FollowReader(stream, replayer.max_line_bytes)
    capture = CaptureReader()
    noted = _noted(args.strict)
    reopened: Any = None
    versions = _Versions(replayer, make_store, args.protocol)

    def view() -> Any:
        # One screen: Live crops what does not fit anyway, so do not render it.
        return render_store(replayer.store, max_rows=max(3, (console.height - 6) // 2))

    with Live(view(), console=console, auto_refresh=False, vertical_overflow="ellipsis") as live:
        drawn = time.monotonic()
        try:
            while True:
                lines = reader.poll()
                if reader.eof and not regular:
                    lines += reader.finish()
                messages = log_messages(lines, noted, capture, end=reader.eof and not regular)
                stopped = None
                for number, data in one_side(messages, args.side):
                    stopped = versions.feed(number, data, args.strict)
                    if stopped is not None:
                        break
                now = time.monotonic()
                caught_up = reader.eof or not lines
                if stopped is None and caught_up:  # the version from what the log holds now
                    stopped = versions.settle(args.strict)
                if stopped is not None:
                    live.update(view())
                    return _stopped(stopped)
                if replayer.changed and (caught_up or now - drawn >= POLL_SECONDS):
                    live.update(view(), refresh=True)
                    replayer.changed = False
                    drawn = now
                if reader.eof:
                    if not regular:
                        return 0
                    if reader_gone(console.file):
                        raise BrokenPipeError("stdout was closed")  # ends quietly, exit 1
                    what = changed(cast(str, name), stream)
                    if what is not None:
                        # Start over on what the file holds now, and say so.
                        _diagnostic(f"{PROG}: {name!r} {what}: replaying it from the start")
                        if what.startswith("was replaced"):
                            try:
                                fresh = open(cast(str, name), "rb")  # noqa: SIM115
                            except OSError:
                                time.sleep(POLL_SECONDS)
                                continue
                            if reopened is not None:
                                reopened.close()
                            stream = reopened = fresh
                        else:
                            stream.seek(0)
                        reader = FollowReader(stream, replayer.max_line_bytes)
                        capture = CaptureReader()
                        replayer.store = make_store()
                        versions = _Versions(replayer, make_store, args.protocol)
                        live.update(view(), refresh=True)
                        continue
                    time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            live.update(view())  # the final frame is drawn as the Live stops
            return 0
        finally:
            if reopened is not None:
                reopened.close()


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
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _options.add_json(parser)
    parser.add_argument(
        "--strict",
        action="store_true",
        help="stop with exit 2 at the first invalid line (default: report it and go on)",
    )
    _options.add_protocol(parser)
    _options.add_side(
        parser,
        "client",
        "in a log of `acp-toolcalls bridge --log`, the side to replay (default: client, "
        "what the editor saw); other logs are read whole",
    )
    parser.add_argument(
        "--follow",
        action="store_true",
        help="keep reading a growing file and redraw the tables live, until Ctrl-C",
    )
    parser.add_argument(
        "--bounded",
        action="store_true",
        help="keep the store's default memory caps (tool calls, terminals and sessions kept, "
        "content items per call, terminal bytes) without --follow too: what a cap drops is "
        "reported and missing from the output (default: the whole log is kept)",
    )
    _options.add_max_line_bytes(parser, None)
    every_call = parser.add_argument(
        "--all",
        action="store_true",
        help="a row for every tool call (default: past %(summary_after)s calls in the log, each "
        "session is summarized: counts by status and kind, the open calls, the failed ones and "
        "the last %(last_calls)s)",
    )
    # Read from `render` when the help is shown: `render` imports rich, which --json does not
    # need (a third of the command's start-up).
    every_call.summary_after = _RenderConstant("SUMMARY_AFTER")
    every_call.last_calls = _RenderConstant("LAST_CALLS")
    parser.add_argument(
        "--width",
        type=_options.positive_int,
        default=None,
        metavar="N",
        help="draw the tables N columns wide (default: the terminal's width; 80 on a pipe "
        "unless COLUMNS says otherwise)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="replay the bundled example session (what a bare `acp-toolcalls replay` does on "
        "a terminal)",
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


class _Invalid(Exception):
    """A line that stops a ``--strict`` replay."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _noted(strict: bool) -> Callable[[int, str], None]:
    """What a line of another shape in a capture does: a diagnostic; with ``strict``, the
    end of the replay."""

    def note(line: int, why: str) -> None:
        _diagnostic(f"line {line}: $: {printable(why)}")
        if strict:
            raise _Invalid(line)

    return note


def _stopped(line: int) -> int:
    print(f"{PROG}: line {line} is invalid (--strict): stopped", file=sys.stderr)
    return 2


def _write_json(store: ToolCallStore) -> None:
    # The replayer applied only what decode_message read from the lines: no NaN to look for.
    write_out(sys.stdout, store.document_json(decoded_only=True) + b"\n")  # whole (issue 27)


_FROM_RENDER = frozenset(
    {"LAST_CALLS", "SUMMARY_AFTER", "render_parts", "render_store", "should_summarize"}
)


def __getattr__(name: str) -> Any:
    # What this module uses of `render` is imported from it when first needed: `render`
    # imports rich, which --json does not need (a third of the command's start-up).
    if name in _FROM_RENDER:
        from . import render

        value = getattr(render, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _rendering(name: str) -> Any:
    """``render``'s ``name`` as this module has it (a test may have replaced it here)."""
    found = globals().get(name)
    return found if found is not None else __getattr__(name)


class _RenderConstant:
    """A constant of ``render``, read when a help text that names it is printed."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return str(_rendering(self.name))


def _output(width: int | None) -> Console:
    """stdout for the tables: a reader that went away (``| head``) ends the command at the
    first write it misses (the dispatcher's quiet exit 1), not with rich's own exit."""
    from rich.console import Console

    class _Output(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError("stdout was closed")

    return _Output(file=sys.stdout, highlight=False, width=width)


def _write_tables(console: Console, store: ToolCallStore, every_call: bool) -> None:
    summarize = not every_call and _rendering("should_summarize")(store)
    for part in _rendering("render_parts")(store, summarize=summarize):
        console.print(part)
        console.file.flush()  # one session at a time: a closed stdout stops the rest


def _diagnostic(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _usage(message: str) -> int:
    print(f"{PROG}: error: {message} (see {PROG} --help)", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``replay`` for parsed arguments; returns the exit code."""
    name = cast("str | None", args.file)
    if args.follow and args.json:
        return _usage("--follow redraws tables for people and cannot be used with --json")
    if args.json and (args.all or args.width is not None):
        return _usage("--all and --width shape the tables; --json prints everything anyway")
    if args.demo and name is not None:
        return _usage("--demo replays the bundled example: give it no FILE")
    args.demo = args.demo or (name is None and _stdin_is_terminal())
    # The document is the complete state ("nothing else is lost"): no caps, memory grows with
    # the log. --follow may run for days and shows the latest calls only: the default caps;
    # --bounded asks for them without --follow.
    limits = Limits() if args.follow or args.bounded else _UNCAPPED

    def make_store(version: VersionChoice | None = None) -> ToolCallStore:
        return ToolCallStore(version=version or cast(VersionChoice, args.protocol), limits=limits)

    max_line_bytes = MAX_LINE_BYTES if args.max_line_bytes is None else args.max_line_bytes
    replayer = Replayer(make_store(), _diagnostic, max_line_bytes)
    shown_name = "the bundled demo session" if args.demo else shown(name)
    read = 0
    try:
        with open_log(name, args.demo) as stream:
            if args.follow:
                return _follow(stream, replayer, _output(args.width), args, name, make_store)
            lines = json_lines(reading(read_lines(stream, max_line_bytes, early=True)))
            lines = log_messages(with_progress(lines, stream, "replaying"), _noted(args.strict))
            versions = _Versions(replayer, make_store, args.protocol)
            for number, data in side_lines(lines, args.side):
                read = number
                stopped = versions.feed(number, data, args.strict)
                if stopped is not None:
                    return _stopped(stopped)
            stopped = versions.settle(args.strict)
            if stopped is not None:
                return _stopped(stopped)
    except _Invalid as exc:
        return _stopped(exc.line)
    except (NotACapture, NoLineOfSide) as exc:
        print(f"{PROG}: {printable(exc.describe(shown_name))}", file=sys.stderr)
        return 2
    except ReadError as exc:  # any other OSError is the output's: the dispatcher says so
        reason = exc.error.strerror or str(exc.error)
        print(f"{PROG}: cannot read {shown_name}: {reason}", file=sys.stderr)
        return 2
    except NotJsonLines as exc:
        print(f"{PROG}: {exc.describe(name)}", file=sys.stderr)
        return 2
    if read == 0 and name is None and not args.demo:
        # `acp-toolcalls replay < /dev/null`, or a pipe that gave nothing.
        _diagnostic(
            f"{PROG}: nothing to read on standard input; `acp-toolcalls replay FILE` replays a "
            "log, `acp-toolcalls replay --demo` a bundled example session"
        )
        if not args.json:
            return 0
    if args.json:
        _write_json(replayer.store)
    else:
        _write_tables(_output(args.width), replayer.store, args.all)
    return 0
