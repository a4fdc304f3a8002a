"""``acp-toolcalls validate``: check a JSON Lines log of ACP JSON-RPC messages.

Rules this module owns (issue 2, item 5); what each line is checked for is the validator
core's (``acp_toolcalls.check.Validator``):

- Input is JSON Lines: one JSON-RPC message or batch array per line; blank lines are skipped;
  ``-`` or no FILE reads stdin. Lines are numbered from 1 and read one at a time in bounded
  pieces: a line over ``--max-line-bytes`` (default ``DEFAULT_MAX_BYTES``, counted without its
  ``\\n``) is reported as ``line-too-long`` and skipped without ever being held whole. Input
  that is not JSON Lines at all (``lines.json_lines``) is one line on stderr and exit 2.
- A wrapped capture (``report.captures``: acp-devtools, ACP-inspector, acp_debug) is checked
  message by message (``lines.log_messages``); a line of another shape in it is a
  ``not-a-message`` finding on its line. JSON objects that are no log at all: one line on
  stderr, exit 2; so is a ``bridge --log`` file with no line of the ``--side`` asked for.
- ``--protocol auto`` (default): the protocol is that of the latest ``initialize`` request or
  response with ``protocolVersion`` 1 or 2; before any ``initialize``, the first message that
  exists in only one version decides (``DETECTION_HINTS``).
- ``--unstable``: messages are checked against the version's ``schema.unstable.json``
  (subagent, session message and plan removal updates), which the lint then knows too;
  without it, the stable file, against which those updates are unknown or custom values.
- Output: human (rich) ``line N: PATH: message [code]`` lines, then a summary naming the
  protocol and the bundled schema file (package, version, SHA-256, overlays applied); or with
  ``--json`` one document ``{protocol, protocol_source, lines, messages, findings, summary,
  schema}``.
  Exit 0 without findings, 1 with findings, 2 when the input cannot be read at all (one line on
  stderr, never a traceback); ``EXIT_CODES`` lists them all (the ``--help`` epilog). Findings
  of a JSON document are spooled (to disk past a few MiB), so memory does not grow with the
  log.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, Protocol, cast

from rich.console import Console
from rich.text import Text

from ..check import (
    DECODE_CODES,
    DETECTION_HINTS,
    LOOKAHEAD_BYTES,
    LOOKAHEAD_LINES,
    CountedFinding,
    Finding,
    ProtocolDetector,
    Validator,
)
from ..codec import DEFAULT_MAX_BYTES
from ..models import VersionChoice
from ..records import Side
from ..schema import schema_record
from ._options import positive_int
from .lines import (
    NoLineOfSide,
    NotACapture,
    NotJsonLines,
    ReadError,
    json_lines,
    log_messages,
    open_input,
    overlong,
    printable,
    read_lines,
    reading,
    shown,
    side_lines,
    with_progress,
)

__all__ = [
    "DECODE_CODES",
    "DETECTION_HINTS",
    "EXIT_CODES",
    "LOOKAHEAD_BYTES",
    "LOOKAHEAD_LINES",
    "ProtocolDetector",
    "ReadError",
    "Validator",
    "overlong",
    "read_lines",
    "reading",
    "register",
    "run",
]

_CHUNK = 64 * 1024  # copy size of the spooled JSON findings
_SPOOL_BYTES = 4 * 1024 * 1024  # JSON findings kept in memory before spilling to a temp file

EXIT_CODES = """\
exit status:
  0    no findings
  1    findings (on stdout, one per line: "line N: PATH: message [code]"; or --json)
  2    usage error, or FILE cannot be read or is not a log (one line on stderr), or
       stdout cannot be written
  70   internal error (a bug in acp-toolcalls: one line on stderr says so)
  130  interrupted (Ctrl-C)
A closed stdout (`| head`) ends quietly with status 1.
"""


# --------------------------------------------------------------------------------------------
# Output


class _Report(Protocol):
    count: int

    def add(self, finding: Finding) -> None: ...

    def close(self, validator: Validator) -> None: ...


@dataclass
class _Counts:
    by_code: dict[str, int]

    def add(self, code: str, count: int = 1) -> None:
        self.by_code[code] = self.by_code.get(code, 0) + count


def _alike(finding: Finding) -> int:
    """How many findings ``finding`` stands for (batch elements alike are counted in one)."""
    return finding.alike if isinstance(finding, CountedFinding) else 1


_STYLES: Mapping[str, str] = {"schema": "red", "decode": "magenta", "lint": "yellow"}


class _HumanReport:
    """One rich line per finding as it is found, then a summary."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._counts = _Counts({})
        self.count = 0
        self.listed = 0

    def add(self, finding: Finding) -> None:
        alike = _alike(finding)
        self.count += alike
        self.listed += 1
        self._counts.add(finding.code, alike)
        text = Text()
        text.append(f"line {finding.line}", style="bold")
        text.append(": ")
        text.append(printable(finding.path), style="cyan")
        text.append(": " + printable(finding.message) + " ")
        text.append(f"[{finding.code}]", style=_STYLES.get(finding.kind, ""))
        self._console.print(text)

    def close(self, validator: Validator) -> None:
        counts = self._counts.by_code
        listed = ", ".join(f"{code}: {counts[code]}" for code in sorted(counts))
        summary = Text()
        summary.append(
            f"{validator.lines} line{'s' if validator.lines != 1 else ''} read, "
            f"{validator.messages} message{'s' if validator.messages != 1 else ''}, "
        )
        if self.count:
            summary.append(f"{self.count} finding{'s' if self.count != 1 else ''}", style="bold")
            summary.append(f" ({listed})")
            if self.listed != self.count:
                summary.append(f", {self.count - self.listed} of them counted, not listed")
        else:
            summary.append("no findings", style="bold green")
        self._console.print(summary)
        version = Text("protocol ")
        version.append(validator.version, style="bold")
        version.append(f" ({printable(validator.version_source)})")
        schema = schema_record(validator.version, validator.unstable)
        overlays = ", ".join(schema["overlays"]) or "none"
        version.append(
            f"; schema {schema['file']} of {schema['package']} {schema['version']} "
            f"(sha256 {schema['sha256'][:12]}…), overlays: {overlays}"
        )
        self._console.print(version)


class _JsonReport:
    """One JSON document; findings are spooled until the summary is known."""

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES, mode="w+")  # noqa: SIM115
        self._counts = _Counts({})
        self.count = 0

    def add(self, finding: Finding) -> None:
        self._spool.write(", " if self.count else "")
        alike = _alike(finding)
        self.count += alike
        self._counts.add(finding.code, alike)
        record: dict[str, Any] = {
            "line": finding.line,
            "path": finding.path,
            "code": finding.code,
            "kind": finding.kind,
            "message": finding.message,
        }
        if alike != 1:
            record["count"] = alike  # batch elements alike, in one finding
        self._spool.write(json.dumps(record))

    def close(self, validator: Validator) -> None:
        head = {
            "protocol": validator.version,
            "protocol_source": validator.version_source,
            "lines": validator.lines,
            "messages": validator.messages,
        }
        out = self._out
        out.write(json.dumps(head)[:-1] + ', "findings": [')  # head without its closing "}"
        self._spool.seek(0)
        while chunk := self._spool.read(_CHUNK):
            out.write(chunk)
        self._spool.close()
        summary = dict(sorted(self._counts.by_code.items()))
        out.write('], "summary": ' + json.dumps(summary))
        out.write(
            ', "schema": '
            + json.dumps(schema_record(validator.version, validator.unstable))
            + "}\n"
        )
        out.flush()

    def discard(self) -> None:
        self._spool.close()


# --------------------------------------------------------------------------------------------
# The command


def register(subparsers: Any) -> None:
    """Add the ``validate`` subcommand to the dispatcher's subparsers."""
    parser = subparsers.add_parser(
        "validate",
        help="check a JSON Lines log of ACP messages (schema and tool-call lint)",
        description=(
            "Read JSON Lines of ACP JSON-RPC messages (a line may be a batch) and report, per "
            "line, schema violations against the bundled upstream schema and tool-call lint. "
            "Exit 0 when clean, 1 with findings, 2 when the input cannot be read."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--protocol",
        choices=("v1", "v2", "auto"),
        default="auto",
        help="protocol version of the log (default: auto, from initialize or the first "
        "version-specific message; v2 when nothing tells)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--unstable",
        action="store_true",
        help="check against the version's unstable schema (schema.unstable.json: subagent_update, "
        "session_message, plan_removed, ...), whose updates the lint then knows",
    )
    parser.add_argument(
        "--side",
        choices=("client", "agent"),
        default="client",
        help="in a log of `acp-toolcalls bridge --log`, the side to check (default: client); "
        "other logs are read whole",
    )
    parser.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"longest line read, in bytes; longer ones are reported and skipped "
        f"(default: {DEFAULT_MAX_BYTES})",
    )
    parser.add_argument("file", nargs="?", default="-", metavar="FILE", help="log, or - for stdin")
    parser.set_defaults(handler=run)


def _fail(name: str, message: str) -> int:
    print(f"acp-toolcalls validate: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``validate`` for parsed arguments; returns the exit code."""
    name = cast(str, args.file)
    validator = Validator(
        cast(VersionChoice, args.protocol),
        cast(int, args.max_line_bytes),
        unstable=bool(args.unstable),
    )
    report: _Report
    if args.json:
        report = _JsonReport(sys.stdout)
    else:
        report = _HumanReport(Console(file=sys.stdout, soft_wrap=True, highlight=False))
    try:
        with open_input(name) as stream:
            lines = json_lines(reading(read_lines(stream, validator.max_line_bytes)))
            lines = with_progress(lines, stream, "validating")

            def note(line: int, why: str) -> None:  # a line of another shape in a capture
                report.add(Finding(line, "$", "not-a-message", why, "decode"))

            for line, data in side_lines(log_messages(lines, note), cast(Side, args.side)):
                for finding in validator.feed(line, data):
                    report.add(finding)
    except (
        ReadError,
        NotJsonLines,
        NotACapture,
        NoLineOfSide,
    ) as exc:  # any other OSError is the output's
        if isinstance(report, _JsonReport):
            report.discard()
        if isinstance(exc, NotJsonLines):
            return _fail(name, exc.describe(name))
        if isinstance(exc, (NotACapture, NoLineOfSide)):
            return _fail(name, printable(exc.describe(shown(name))))
        return _fail(name, f"cannot read {shown(name)}: {exc.error.strerror or exc.error}")
    for finding in validator.finish():
        report.add(finding)
    report.close(validator)
    return 1 if report.count else 0
