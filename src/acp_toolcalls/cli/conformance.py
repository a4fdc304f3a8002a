"""``acp-toolcalls conformance``: check a client's fold of tool-call updates against the vectors,
or an agent's recorded stream against the tool-call rules (issue 32; docs/conformance.md).

Rules this module owns (what a vector is, how states compare and what the report says are
``acp_toolcalls.conformance``'s):

- ``--reducer CMD``: CMD is split with ``shlex`` (never run through a shell) and started once
  per prefix of each case (``conformance.prefixes``) with that prefix on stdin as JSON Lines; it
  must print the folded state, one JSON document, and exit 0. The runs go ``--jobs`` at a time
  (default: the CPU count), each in a process group of its own, killed whole past ``--timeout``
  seconds (or on Ctrl-C). A reducer that cannot start is a usage error; one that crashes, hangs,
  exits non-zero or prints no JSON fails that case with the reason, never the runner.
- ``--vectors DIR`` reads another suite (default: the bundled one); ``--tag T`` (repeatable)
  keeps the cases carrying any of the tags given. ``--final-only`` runs only each whole stream
  (faster; a failure is then reported at the last message).
- ``--agent-log LOG``: ``validate``'s checks over the log (plain or a ``bridge --log`` file,
  ``--side`` of it, default ``agent``; any capture ``validate`` reads), sorted per tool-call rule
  (``conformance.AGENT_RULES``).
- Output: rich tables per tag and per rule, then each failure (its first difference, or the
  reason); or with ``--json`` one document. Text from a reducer, a log or a suite is shown
  through ``printable`` in plain ``Text`` (never markup, never a control sequence).
- Exit status: ``EXIT_CODES``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

from ..conformance import (
    TAGS,
    VECTORS,
    CaseResult,
    Output,
    RuleFindings,
    Tally,
    Vector,
    VectorError,
    agent_document,
    judge,
    load_vectors,
    prefixes,
    report_document,
    shown_value,
    sort_findings,
    tally_by_rule,
    tally_by_tag,
)
from . import _options
from ._output import write_out
from .lines import (
    NoLineOfSide,
    NotACapture,
    NotJsonLines,
    ReadError,
    json_lines,
    log_messages,
    open_input,
    printable,
    read_lines,
    reading,
    shown,
    side_lines,
)

__all__ = ["DEFAULT_TIMEOUT", "EXIT_CODES", "check_agent_log", "register", "run", "run_reducer"]

PROG = "acp-toolcalls conformance"
DEFAULT_TIMEOUT = 10.0
"""Seconds one reducer run may take before it is killed and its case fails."""
STDERR_CHARS = 200
"""Longest part of a failed reducer's stderr quoted in the reason."""

EXIT_CODES = """\
exit status:
  0    every case passed (--agent-log: every rule)
  1    some case failed (--agent-log: some rule)
  2    usage error: no or unreadable vectors, no case with the tags given, a reducer that
       cannot be started, a log that cannot be read
  70   internal error (a bug in acp-toolcalls: one line on stderr says so)
  130  interrupted (Ctrl-C)
"""


def register(subparsers: Any) -> None:
    """Add the ``conformance`` subcommand to the dispatcher's subparsers."""
    parser = subparsers.add_parser(
        "conformance",
        help="check a client's tool-call fold against the conformance vectors, or an "
        "agent's log against the tool-call rules",
        description=(
            "Run a reducer (any command that reads JSON Lines of ACP messages on stdin and "
            "prints its folded state as the `replay --json` document) on every case of the "
            "conformance vectors, message by message, and report per rule what passed and the "
            "first difference of each failure. With --agent-log, check an agent's recorded "
            "stream against the tool-call rules of `validate` instead."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--reducer",
        metavar="CMD",
        help="the reducer's command line, split as a POSIX shell would but never run by one "
        "(e.g. 'node reducer.js' or 'acp-toolcalls replay --json')",
    )
    what.add_argument(
        "--agent-log",
        metavar="LOG",
        help="an agent's recorded stream (a log `validate` reads; - for stdin)",
    )
    parser.add_argument(
        "--vectors",
        metavar="DIR",
        type=Path,
        default=None,
        help="a folder of vectors (<id>.json) to run instead of the bundled suite",
    )
    parser.add_argument(
        "--tag",
        action="append",
        choices=TAGS,
        default=None,
        metavar="TAG",
        help=f"only the cases carrying TAG (repeatable): one of {', '.join(TAGS)}",
    )
    parser.add_argument(
        "--jobs",
        type=_options.positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="reducer runs at a time (default: the CPU count, %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="how long one reducer run may take before it is killed and its case fails "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--final-only",
        action="store_true",
        help="run each case's whole stream only, not every prefix of it (faster; a wrong "
        "intermediate state that comes right again is not seen)",
    )
    _options.add_side(
        parser, "agent", "with --agent-log, the side of a `bridge --log` log to check"
    )
    _options.add_json(parser)
    parser.set_defaults(handler=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < 86_400:
        raise argparse.ArgumentTypeError(f"{text!r}: give more than 0 and less than a day")
    return value


def _fail(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run ``conformance`` for parsed arguments; returns the exit code."""
    if args.agent_log is not None:
        if args.vectors is not None or args.tag or args.final_only:
            return _fail("--vectors, --tag and --final-only are for --reducer, not --agent-log")
        return check_agent_log(args.agent_log, args.side, bool(args.json))
    argv = _command(cast(str, args.reducer))
    if isinstance(argv, str):
        return _fail(argv)
    folder = cast("Path | None", args.vectors)
    try:
        vectors = load_vectors(folder if folder is not None else VECTORS)
    except VectorError as exc:
        return _fail(printable(str(exc)))
    tags = cast("list[str] | None", args.tag)
    if tags:
        vectors = [v for v in vectors if set(v.tags) & set(tags)]
        if not vectors:
            return _fail(f"no vector has the tag {' or '.join(tags)}")
    results = run_reducer(argv, vectors, args.jobs, args.timeout, args.final_only)
    suite = str(folder) if folder is not None else "bundled"
    if args.json:
        document = report_document(
            results, suite=suite, reducer=args.reducer, final_only=args.final_only
        )
        write_out(sys.stdout, json.dumps(document, ensure_ascii=False).encode() + b"\n")
    else:
        _print_report(results, args.reducer, suite, args.final_only)
    return 0 if all(r.passed for r in results) else 1


def _command(text: str) -> list[str] | str:
    """The reducer's argv, or what is wrong with it (a usage error)."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        return f"--reducer {printable(text)!r} cannot be split into words: {exc}"
    if not argv:
        return "--reducer is empty: give the command that runs your reducer"
    if shutil.which(argv[0]) is None:
        return (
            f"cannot run the reducer: {printable(argv[0])!r} is not an executable file "
            "or a command found on PATH"
        )
    return argv


# --------------------------------------------------------------------------------------------
# Running the reducer


class _Processes:
    """The reducer processes running now, so that Ctrl-C can kill them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self.stopped = False

    def start(self, argv: list[str]) -> subprocess.Popen[bytes] | None:
        with self._lock:
            if self.stopped:
                return None
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # a group of its own: killed whole on a timeout
            )
            self._running.add(process)
            return process

    def done(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.discard(process)

    def stop(self) -> None:
        with self._lock:
            self.stopped = True
            for process in self._running:
                _kill(process)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the process and what it started (its process group)."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows has no process groups to kill
            process.kill()
    except OSError:
        pass  # gone already


def _run_once(processes: _Processes, argv: list[str], stdin: bytes, timeout: float) -> Output:
    try:
        process = processes.start(argv)
    except OSError as exc:
        return Output(reason=f"could not start: {exc.strerror or exc}")
    if process is None:
        return Output(reason="not run (interrupted)")
    try:
        try:
            out, err = process.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            process.communicate()
            return Output(reason=f"timed out after {timeout:g} s (killed)")
    finally:
        processes.done(process)
    status = process.returncode
    if status != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()
        tail = f": {said[-1][:STDERR_CHARS]}" if said else ""
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        return Output(reason=f"{how}{tail}")
    try:
        return Output(document=json.loads(out))
    except RecursionError:
        return Output(reason="printed JSON nested too deep to read")
    except ValueError:
        text = out.decode("utf-8", "replace").strip()
        if not text:
            return Output(reason="printed nothing on stdout")
        return Output(reason=f"printed no JSON document: {text[:60]!r}")


def run_reducer(
    argv: list[str], vectors: Sequence[Vector], jobs: int, timeout: float, final_only: bool
) -> list[CaseResult]:
    """Every case of ``vectors`` judged on the reducer ``argv``, in ``vectors`` order."""
    processes = _Processes()
    runs: list[tuple[int, int, bytes]] = []  # (vector index, message count, stdin)
    for index, vector in enumerate(vectors):
        lines = [json.dumps(m, ensure_ascii=False).encode() + b"\n" for m in vector.messages]
        runs += [(index, count, b"".join(lines[:count])) for count in prefixes(vector, final_only)]
    outputs: list[list[tuple[int, Output]]] = [[] for _ in vectors]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [
            (index, count, pool.submit(_run_once, processes, argv, stdin, timeout))
            for index, count, stdin in runs
        ]
        try:
            for index, count, future in futures:
                outputs[index].append((count, future.result()))
        except KeyboardInterrupt:
            processes.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return [judge(vector, found) for vector, found in zip(vectors, outputs, strict=True)]


# --------------------------------------------------------------------------------------------
# The report for people


def _count_cell(tally: Tally) -> Any:
    from rich.text import Text

    total = len(tally.passed) + len(tally.failed)
    return Text(f"{len(tally.passed)}/{total}", style="green" if not tally.failed else "bold red")


def _print_report(results: list[CaseResult], reducer: str, suite: str, final_only: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=sys.stdout, highlight=False, soft_wrap=True)
    failed = [r for r in results if not r.passed]
    checked = "the final state" if final_only else "the state after each message"
    head = Text()
    head.append(printable(reducer), style="bold")
    head.append(f" on {len(results)} cases of the {printable(suite)} suite ({checked}): ")
    head.append(f"{len(results) - len(failed)} passed", style="green")
    if failed:
        head.append(", ")
        head.append(f"{len(failed)} failed", style="bold red")
    console.print(head)
    tags = Table(title="Per tag", title_justify="left", show_edge=False)
    tags.add_column("Tag")
    tags.add_column("Passed", justify="right")
    for tally in tally_by_tag(results):
        tags.add_row(tally.name, _count_cell(tally))
    console.print(tags)
    rules = Table(title="Per rule", title_justify="left", show_edge=False)
    rules.add_column("Source", no_wrap=True)
    rules.add_column("Rule")
    rules.add_column("Passed", justify="right")
    for tally in tally_by_rule(results):
        rules.add_row(
            Text(printable(tally.source)), Text(printable(tally.name)), _count_cell(tally)
        )
    console.print(rules)
    for result in failed:
        console.print(_failure_text(result))


def _failure_text(result: CaseResult) -> Any:
    from rich.text import Text

    vector = result.vector
    text = Text()
    text.append("FAIL ", style="bold red")
    text.append(printable(vector.id), style="bold")
    text.append(f" [{printable(', '.join(vector.tags))}] v{vector.protocol}")
    text.append(f", after message {result.failed_at}: ")
    if result.reason is not None:
        text.append("the reducer " + printable(result.reason))
    elif result.difference is not None:
        difference = result.difference
        text.append(printable(difference.path), style="cyan")
        text.append(f": expected {shown_value(difference.expected)}")
        text.append(f", got {shown_value(difference.got)}")
    return text


# --------------------------------------------------------------------------------------------
# --agent-log


def check_agent_log(name: str, side: str, as_json: bool) -> int:
    """``--agent-log``: ``validate``'s checks over the log ``name``, reported per rule."""
    from ..check import Finding, Validator

    validator = Validator("auto")
    findings: list[Finding] = []
    try:
        with open_input(name) as stream:
            lines = json_lines(reading(read_lines(stream, validator.max_line_bytes)))

            def note(line: int, why: str) -> None:  # a line of another shape in a capture
                findings.append(Finding(line, "$", "not-a-message", why, "decode"))

            for line, data in side_lines(log_messages(lines, note), cast(Any, side)):
                findings += validator.feed(line, data)
    except NotJsonLines as exc:
        return _fail(exc.describe(name))
    except (NotACapture, NoLineOfSide) as exc:
        return _fail(printable(exc.describe(shown(name))))
    except ReadError as exc:
        return _fail(f"cannot read {shown(name)}: {exc.error.strerror or exc.error}")
    findings += validator.finish()
    rules, other = sort_findings(findings)
    head = {
        "log": name,
        "side": side,
        "protocol": validator.version,
        "lines": validator.lines,
        "messages": validator.messages,
    }
    if as_json:
        document = agent_document(rules, other, head)
        write_out(sys.stdout, json.dumps(document, ensure_ascii=False).encode() + b"\n")
    else:
        _print_agent_report(rules, other, head)
    return 0 if all(r.passed for r in rules) else 1


def _print_agent_report(
    rules: list[RuleFindings], other: RuleFindings, head: dict[str, Any]
) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=sys.stdout, highlight=False, soft_wrap=True)
    failed = sum(1 for r in rules if not r.passed)
    title = Text()
    title.append(printable(shown(head["log"])), style="bold")
    title.append(
        f" ({head['side']} side, protocol {head['protocol']}, {head['messages']} messages): "
    )
    title.append(f"{len(rules) - failed} rules passed", style="green")
    if failed:
        title.append(", ")
        title.append(f"{failed} failed", style="bold red")
    console.print(title)
    table = Table(show_edge=False)
    table.add_column("Rule")
    table.add_column("Source", no_wrap=True)
    table.add_column("Findings", justify="right")
    for found in rules:
        cell = Text("pass", style="green") if found.passed else Text(str(found.count), "bold red")
        table.add_row(Text(found.name), Text(found.source), cell)
    console.print(table)
    for found in [*rules, other]:
        for finding in found.listed:
            line = Text()
            line.append(f"line {finding.line}", style="bold")
            line.append(": ")
            line.append(printable(finding.path), style="cyan")
            line.append(f": {printable(finding.message)} [{finding.code}]")
            if found.rule is not None:
                line.append(f" ({found.name})", style="red")
            console.print(line)
        if found.count > len(found.listed):
            console.print(Text(f"... and {found.count - len(found.listed)} more ({found.name})"))
    if other.count:
        console.print(
            Text(
                f"{other.count} other findings (schema, unreadable lines) decide no rule here: "
                "`acp-toolcalls validate` reports them"
            )
        )
