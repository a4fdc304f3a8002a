"""``acp-toolcalls inspect``: a log's tool calls over time, as one self-contained HTML file.

Rules this module owns (issue 20):

- Input is read as ``replay`` and ``validate`` read it (``lines.read_lines``, bounded and
  numbered from 1; input that is not JSON Lines at all is one line on stderr and exit 2) and
  fed to ``report.model.ReportBuilder``; the page is ``report.page.page_chunks`` of its data,
  written as it is made.
- Every note ``replay`` gives on a line (unreadable, salvaged, over the limit) goes to stderr
  the same way, one line each, ``line N: PATH: reason`` (in a ``bridge --log`` file prefixed
  by its side); the report shows them with the ``validate`` findings. Never a traceback.
- The output is ``-o FILE`` (``-`` for stdout); by default the log's name with ``.html`` in
  the current directory (``report.html`` for stdin). It is created once the log is read, and
  written as the page is made; a failure meanwhile removes it, so a failed run leaves no half
  page. It is created with the log's permissions (a 0600 log makes a
  0600 report; input from a pipe, 0600; the demo, the umask's), an existing file is narrowed
  to them, and a symbolic link at the output path is refused (one line, exit 2), as
  ``bridge --log`` refuses one. Every stderr line goes through ``printable``. Exit 0; 2 for
  a usage error, an unreadable input or an output that cannot be written.
- ``--side client|agent`` reads one side of a ``bridge --log`` file; without it both sides
  are shown next to each other. ``--demo`` inspects the bundled example session.
- A wrapped capture (``report.captures``: acp-devtools, ACP-inspector, acp_debug) is read
  message by message, with who sent each and when (``CaptureReader``, fed to the builder with
  each line); JSON objects that are no log at all: one line on stderr, exit 2.
- ``--jobs 2`` (the default with two processors or more): the checks are computed by a second
  process fed the same lines (``_checks_process``) while this one records the history, and
  the page's parts are compressed two at a time (threads: zlib lets go of the GIL); the
  report is the same bytes as with ``--jobs 1``. If that process fails, one line says so and
  the exit status is 70 (a bug), never a report without its findings.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import io
import os
import stat
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO, cast

from ..codec import DEFAULT_MAX_BYTES
from ..models import VersionChoice
from ..records import Side
from ..report import printable
from ..report.captures import CaptureReader, NotACapture
from ..report.model import ReportBuilder
from ..report.page import compress_part, page_chunks
from . import _options
from ._checks_process import (
    ChecksFailed,
    ChecksProcess,
    can_fork,
    feed_line,
    finish_capture,
    forks,
)
from ._output import write_all, write_out
from .lines import (
    DEMO,
    NotJsonLines,
    ReadError,
    json_lines,
    open_log,
    read_lines,
    reading,
    shown,
    with_progress,
)

__all__ = ["EXIT_CODES", "default_output", "register", "run"]

PROG = "acp-toolcalls inspect"
_FREEZE_EVERY = 10_000  # lines between two gc.freeze() calls

EXIT_CODES = """\
exit status:
  0    the report was written; every line that could not be read whole is reported on
       stderr as "line N: PATH: reason" (and shown in the report)
  2    usage error, FILE cannot be read or is not a log, or the report cannot be written
  70   internal error (a bug in acp-toolcalls, or the checks' process failed: one line on
       stderr says so)
  130  interrupted (Ctrl-C; with --serve, the way to stop serving)
"""


def register(subparsers: Any) -> None:
    """Add the ``inspect`` subcommand to the dispatcher's subparsers."""
    parser = subparsers.add_parser(
        "inspect",
        help="write an HTML report of a log's tool calls over time (history, timeline, "
        "permissions, findings)",
        description=(
            "Read JSON Lines of ACP JSON-RPC messages (or a `bridge --log` file, or a capture "
            "of acp-devtools, ACP-inspector or acp_debug) and write one "
            "self-contained HTML file that opens in any browser, with no server and no "
            "network: every tool call with its final state and its history, a timeline to see "
            "the state after any line, permission requests with their answers, schema and lint "
            "findings on the lines that caused them, and both sides of a bridge log."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default=None,
        help="the HTML file to write, - for stdout (default: the log's name with .html, in "
        "the current directory; report.html for stdin)",
    )
    _options.add_protocol(parser)
    _options.add_side(
        parser,
        None,
        "in a log of `acp-toolcalls bridge --log`, show one side only (default: both, "
        "next to each other); other logs are read whole",
    )
    _options.add_max_line_bytes(parser, DEFAULT_MAX_BYTES)
    parser.add_argument("--demo", action="store_true", help="inspect the bundled example session")
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        choices=(1, 2),
        default=None,
        help="processes to use: 2 checks the lines in a second process while the first records "
        "the history (default: 2 when the machine has two processors or more, else 1)",
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="serve the report live on 127.0.0.1 (a URL with a token is printed on stderr) "
        "instead of writing a file; needs the inspect extra: pip install "
        "'acp-toolcalls[inspect]'",
    )
    parser.add_argument(
        "--follow",
        action="store_true",
        help="with --serve: keep reading the log as it grows, and show its new lines live",
    )
    parser.add_argument(
        "--port",
        type=_options.port_number,
        default=0,
        metavar="PORT",
        help="with --serve: the port on 127.0.0.1 (default: a free one)",
    )
    parser.add_argument(
        "file", nargs="?", default=None, metavar="FILE", help="log, or - for stdin (default: stdin)"
    )
    parser.set_defaults(handler=run)


def default_output(name: str | None, demo: bool) -> str:
    """Where the report goes without ``-o``."""
    if demo:
        return "demo-session.html"
    if name in (None, "-"):
        return "report.html"
    stem = os.path.splitext(os.path.basename(name))[0] or "report"
    return stem + ".html"


def _say(text: str) -> None:
    print(printable(text), file=sys.stderr, flush=True)


def _mode_of(stream: BinaryIO) -> int:
    """The mode the report is created with: the log's permissions (a private log makes a
    private report); 0600 when the input is no regular file (a pipe: whose data it is, is not
    known)."""
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return 0o600
    return stat.S_IMODE(status.st_mode) & 0o666 if stat.S_ISREG(status.st_mode) else 0o600


def _create(path: str, mode: int) -> int:
    """``path`` opened to write from its start: created with ``mode`` (less the umask), never
    through a symbolic link at its last component; an existing file is narrowed to ``mode``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):
        raise OSError(errno.ELOOP, "Too many levels of symbolic links")
    fd = os.open(path, flags, mode)
    try:
        status = os.fstat(fd)
        if stat.S_ISREG(status.st_mode) and stat.S_IMODE(status.st_mode) & ~mode:
            os.fchmod(fd, stat.S_IMODE(status.st_mode) & mode)
    except OSError:
        os.close(fd)
        raise
    return fd


def _write_page(report: dict[str, Any], threads: bool, write: Callable[[bytes], None]) -> int:
    """The page of ``report`` written as it is made; returns its size in bytes."""
    size = 0
    # zlib lets go of the GIL: with --jobs 2, parts are compressed two at a time.
    with ThreadPoolExecutor(2 if threads else 1) as pool:
        for chunk in page_chunks(report, lambda parts: list(pool.map(compress_part, parts))):
            data = chunk.encode("utf-8")
            write(data)
            size += len(data)
    return size


def _refusal(path: str, exc: OSError) -> str:
    if os.path.islink(path):
        return f"{path} is a symbolic link: refused (name the file itself)"
    return f"cannot write {path}: {exc.strerror or exc}"


def _usage(message: str) -> int:
    _say(f"{PROG}: error: {message} (see {PROG} --help)")
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``inspect`` for parsed arguments; returns the exit code."""
    name = cast("str | None", args.file)
    if args.demo and name is not None:
        return _usage("--demo inspects the bundled example: give it no FILE")
    if args.serve:
        return _serve(args, name)
    if args.follow or args.port:
        return _usage("--follow and --port go with --serve")
    output = cast("str | None", args.output) or default_output(name, args.demo)
    shown_name = "the bundled demo session" if args.demo else shown(name)
    title = DEMO if args.demo else ("stdin" if name in (None, "-") else name)
    options: dict[str, Any] = {
        "version": cast(VersionChoice, args.protocol),
        "side": cast("Side | None", args.side),
        "max_line_bytes": cast(int, args.max_line_bytes),
        "name": os.path.basename(title),
    }
    jobs = cast("int | None", args.jobs) or (2 if can_fork() else 1)
    if jobs == 2 and not forks():
        return _usage("--jobs 2 needs processes started by fork, which this system lacks")
    checks = ChecksProcess(options) if jobs == 2 else None
    builder = ReportBuilder(report=_say, part="whole" if checks is None else "history", **options)
    try:
        return _write(builder, checks, name, args.demo, shown_name, output)
    except ChecksFailed as exc:
        _say(f"{PROG}: internal error: the checks' process failed ({exc}); this is a bug")
        return 70
    finally:
        if checks is not None:
            checks.stop()
        gc.unfreeze()


def _serve(args: argparse.Namespace, name: str | None) -> int:
    if args.output is not None or args.jobs is not None:
        return _usage("--serve writes no file and runs one process: give no -o or --jobs")
    if not 0 <= args.port <= 65535:
        return _usage(f"--port {args.port}: not a port")
    from ._inspect_live import serve

    return serve(
        name,
        demo=args.demo,
        follow=args.follow,
        port=args.port,
        version=cast(VersionChoice, args.protocol),
        side=cast("Side | None", args.side),
        max_line_bytes=cast(int, args.max_line_bytes),
    )


def _write(
    builder: ReportBuilder,
    checks: ChecksProcess | None,
    name: str | None,
    demo: bool,
    shown_name: str,
    output: str,
) -> int:
    try:
        with open_log(name, demo) as stream:
            lines = json_lines(reading(read_lines(stream, builder.max_line_bytes)))
            mode = 0o666 if demo else _mode_of(stream)
            capture = CaptureReader()
            for number, data in with_progress(lines, stream, "inspecting"):
                if checks is not None:
                    checks.feed(number, data)
                feed_line(builder, capture, number, data)
                if number % _FREEZE_EVERY == 0:
                    # What was read stays until the end: the collector need not walk it again.
                    gc.freeze()
            finish_capture(builder, capture)
    except ReadError as exc:
        _say(f"{PROG}: cannot read {shown_name}: {exc.error.strerror or exc.error}")
        return 2
    except NotACapture as exc:
        _say(f"{PROG}: {exc.describe(shown_name)}")
        return 2
    except NotJsonLines as exc:
        _say(f"{PROG}: {exc.describe(name)}")
        return 2
    if checks is not None:
        builder.take_checks(checks.result())
    report = builder.finish()
    gc.freeze()
    calls = len(report["cards"])
    findings = len(report["findings"])
    if output == "-":
        _write_page(report, checks is not None, lambda data: write_out(sys.stdout, data))
        return 0
    try:
        fd = _create(output, mode)
    except OSError as exc:
        _say(f"{PROG}: error: {_refusal(output, exc)}")
        return 2
    regular = stat.S_ISREG(os.fstat(fd).st_mode)
    try:
        with os.fdopen(fd, "wb") as out:
            size = _write_page(report, checks is not None, lambda data: write_all(out, data))
    except BaseException:
        # Never a report cut short that looks whole: a failure leaves no file (a file: not a
        # device or a pipe named as the output).
        if regular:
            with contextlib.suppress(OSError):
                os.unlink(output)
        raise
    _say(
        f"{PROG}: wrote {output} ({calls} tool call{'s' if calls != 1 else ''}, "
        f"{findings} finding{'s' if findings != 1 else ''}, {size:,} bytes); open it "
        "in a browser"
    )
    return 0
