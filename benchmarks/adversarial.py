"""Adversarial ACP v2 logs for the robustness figures (docs/robustness.md), streamed to stdout.

Every scenario is JSON Lines framed by valid messages: line 1 reports tool call ``before``
(title "before", completed), then the adversarial part, then a last line reporting ``after``,
so a reader that survives shows both. Lines are generated lazily and written in 1 MiB blocks:
a scenario of any size costs this script a few MiB, never the size of its output.

Scenarios (``N`` is ``--n``, default in brackets):

- ``long-line``: one valid-JSON message of N MiB [64] (a title of that many ``x``).
- ``endless``: a line of N GiB [4] with no newline, then the newline and the last line;
  ``--n 0`` never ends it (pipe it through ``head -c``).
- ``deep``: ``rawInput`` nested N deep [100000] (arrays).
- ``mixed``: one line each of: invalid UTF-8, a raw UTF-8 surrogate, an escaped lone
  surrogate (``"\\ud800"``), NaN, Infinity, duplicate keys (``title`` twice), a location
  ``line`` of 2**64 and of 10**30, a terminal chunk with bad base64 padding (``"YQ"``) between
  two good chunks, and a terminal snapshot with bad base64.
- ``ids``: N distinct tool-call ids [1000000] in one session, each one update with a title;
  every tenth stays ``in_progress``, the others complete.
- ``sessions``: N distinct sessions [1000000], one tool call and one terminal each.
- ``terminals``: N distinct terminal ids [1000000] in one session, one output chunk each.
- ``chunks``: one tool call receiving N text content chunks [1000000] of 16 bytes each.
- ``options``: one permission request with N options [100000] on a tool-call subject.
- ``permissions``: N permission requests [100000] with distinct ids that are never answered.

Usage::

    python benchmarks/adversarial.py SCENARIO [--n N] > log.jsonl
    python benchmarks/adversarial.py ids | /usr/bin/time -v acp-toolcalls replay --json >/dev/null

``python benchmarks/adversarial.py --list`` prints the scenarios; ``measure`` runs every
scenario through every command under ``/usr/bin/time -v`` and prints the table of
docs/robustness.md (see ``--help``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

_BLOCK = 1024 * 1024


def _message(update: dict[str, Any], session: str = "s1") -> bytes:
    body = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }
    return json.dumps(body, separators=(",", ":")).encode()


def _call(tool_call_id: str, session: str = "s1", **fields: Any) -> bytes:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}
    return _message(update, session)


BEFORE = _call("before", title="before", status="completed")
AFTER = _call("after", title="after", status="completed")


def _framed(middle: Iterator[bytes]) -> Iterator[bytes]:
    yield BEFORE + b"\n"
    yield from middle
    yield AFTER + b"\n"


def long_line(n: int) -> Iterator[bytes]:
    head, tail = _call("huge", title="\0").split(b"\\u0000")
    yield head
    for _ in range(n):
        yield b"x" * _BLOCK
    yield tail + b"\n"


def endless(n: int) -> Iterator[bytes]:
    block = b"x" * _BLOCK
    count = 0
    while n == 0 or count < n * 1024:
        yield block
        count += 1
    yield b"\n"


def deep(n: int) -> Iterator[bytes]:
    head, tail = _call("deep", title="deep", rawInput=0).split(b"0}")
    yield head + b"[" * n + b"]" * n + b"}" + tail + b"\n"


def mixed(_n: int) -> Iterator[bytes]:
    title = _call("m", title="TITLE")
    yield title.replace(b"TITLE", b"bad \xff utf-8") + b"\n"
    yield title.replace(b"TITLE", b"raw \xed\xa0\x80 surrogate") + b"\n"
    yield title.replace(b"TITLE", b"escaped \\ud800 surrogate") + b"\n"
    raw = _call("m", title="m", rawInput=0)
    yield raw.replace(b'"rawInput":0', b'"rawInput":NaN') + b"\n"
    yield raw.replace(b'"rawInput":0', b'"rawInput":Infinity') + b"\n"
    yield title.replace(b'"title":"TITLE"', b'"title":"first","title":"second"') + b"\n"
    for line in (2**64, 10**30):
        where = [{"path": "/big", "line": line}, {"path": "/ok", "line": 2}]
        yield _call("m", locations=where) + b"\n"
    yield _call("m", content=[{"type": "terminal", "terminalId": "t"}]) + b"\n"
    for data in ("YWJj", "YQ", "ZGVm"):  # abc, a with bad padding, def
        chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": data}
        yield _message(chunk) + b"\n"
    snapshot = {"sessionUpdate": "terminal_update", "terminalId": "t", "output": {"data": "Y"}}
    yield _message(snapshot) + b"\n"


def _blocks(lines: Iterator[bytes]) -> Iterator[bytes]:
    buffer = bytearray()
    for line in lines:
        buffer += line
        if len(buffer) >= _BLOCK:
            yield bytes(buffer)
            buffer.clear()
    if buffer:
        yield bytes(buffer)


def ids(n: int) -> Iterator[bytes]:
    def lines() -> Iterator[bytes]:
        for i in range(n):
            status = "in_progress" if i % 10 == 0 else "completed"
            yield _call(f"call_{i}", title=f"call {i}", kind="read", status=status) + b"\n"

    return _blocks(lines())


def sessions(n: int) -> Iterator[bytes]:
    def lines() -> Iterator[bytes]:
        for i in range(n):
            sid = f"session_{i}"
            yield _call("c", sid, title="c", status="completed") + b"\n"
            chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "b2sK"}
            yield _message(chunk, sid) + b"\n"

    return _blocks(lines())


def terminals(n: int) -> Iterator[bytes]:
    def lines() -> Iterator[bytes]:
        for i in range(n):
            chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": f"t{i}"}
            yield _message({**chunk, "data": "b2sK"}) + b"\n"

    return _blocks(lines())


def chunks(n: int) -> Iterator[bytes]:
    def lines() -> Iterator[bytes]:
        yield _call("stream", title="stream", status="in_progress") + b"\n"
        for i in range(n):
            item = {"type": "content", "content": {"type": "text", "text": f"chunk {i:010d}"}}
            update = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "stream"}
            yield _message({**update, "content": item}) + b"\n"
        yield _call("stream", status="completed") + b"\n"

    return _blocks(lines())


def _permission(request_id: int, options: int, tool_call_id: str) -> bytes:
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "title": "Allow?",
            "subject": {
                "type": "tool_call",
                "toolCall": {"toolCallId": tool_call_id, "title": "Edit a file", "kind": "edit"},
            },
            "options": [
                {"optionId": f"o{i}", "name": f"option {i}", "kind": "allow_once"}
                for i in range(options)
            ],
        },
    }
    return json.dumps(body, separators=(",", ":")).encode()


def options(n: int) -> Iterator[bytes]:
    yield _permission(1, n, "edit") + b"\n"


def permissions(n: int) -> Iterator[bytes]:
    return _blocks(_permission(i, 2, f"call_{i}") + b"\n" for i in range(n))


SCENARIOS: dict[str, tuple[Callable[[int], Iterator[bytes]], int]] = {
    "long-line": (long_line, 64),
    "endless": (endless, 4),
    "deep": (deep, 100_000),
    "mixed": (mixed, 0),
    "ids": (ids, 1_000_000),
    "sessions": (sessions, 1_000_000),
    "terminals": (terminals, 1_000_000),
    "chunks": (chunks, 1_000_000),
    "options": (options, 100_000),
    "permissions": (permissions, 100_000),
}


def stream(name: str, n: int | None = None) -> Iterator[bytes]:
    """The scenario's bytes, in pieces, framed by the ``before`` and ``after`` lines."""
    make, default = SCENARIOS[name]
    return _framed(make(default if n is None else n))


def write(name: str, n: int | None, out: Any) -> None:
    try:
        for piece in stream(name, n):
            out.write(piece)
        out.flush()
    except BrokenPipeError:  # `| head -c ...`: the reader has what it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())


# --------------------------------------------------------------------------------------------
# Measuring: every scenario through every command under /usr/bin/time -v

COMMANDS: dict[str, list[str]] = {
    "replay --json": ["replay", "--json"],
    "replay --json --bounded": ["replay", "--json", "--bounded"],
    "validate --json": ["validate", "--json"],
    "convert --to v1": ["convert", "--to", "v1"],
    "convert --to v1 --coalesce": ["convert", "--to", "v1", "--coalesce"],
}


def _time_v(argv: list[str], source: list[str] | None, path: str | None) -> dict[str, str]:
    """Run ``argv`` under ``/usr/bin/time -v``, fed from ``path`` or from the generator.

    Reported: exit status, wall time, peak RSS, and the diagnostics: replay and convert write
    them on stderr (``line N: ...``); validate --json in its document (counted by code).
    """
    timed = ["/usr/bin/time", "-v", *argv]
    validate = "validate" in argv
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        sink: Any = out if validate else subprocess.DEVNULL
        if path is not None:
            with open(path, "rb") as data:
                done = subprocess.run(timed, stdin=data, stdout=sink, stderr=err)
        else:
            assert source is not None
            producer = subprocess.Popen(source, stdout=subprocess.PIPE)
            done = subprocess.run(timed, stdin=producer.stdout, stdout=sink, stderr=err)
            assert producer.stdout is not None
            producer.stdout.close()
            producer.wait()
        wall = time.perf_counter() - started
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
        out.seek(0)
        document = json.loads(out.read() or b"null") if validate else None
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    lines = [row for row in text.splitlines() if row.startswith(("line ", "acp-toolcalls"))]
    reported = str(len(lines))
    first = lines[0] if lines else ""
    if isinstance(document, dict):
        reported = ", ".join(f"{code} {n:,}" for code, n in document["summary"].items()) or "0"
        if document["findings"]:
            finding = document["findings"][0]
            first = f"line {finding['line']}: {finding['path']}: {finding['message']}"
    return {
        "exit": str(done.returncode),
        "wall": f"{wall:.1f}",
        "rss": f"{int(rss.group(1)) / 1024:.0f}" if rss else "?",
        "reported": reported,
        "first": first[:120],
    }


def measure(names: list[str], commands: list[str], n: int | None, skip: set[str]) -> None:
    exe = shutil.which("acp-toolcalls")
    if exe is None:
        sys.exit("acp-toolcalls is not on PATH: activate the virtual environment")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from benchmarks.environment import print_environment

    print_environment()
    print()
    print("| scenario | input | command | exit | wall s | peak RSS MiB | reported | first |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            # The endless line is piped from the generator (never on disk); the others are
            # written once and read from the file by every command.
            piped = name == "endless"
            path = None if piped else os.path.join(tmp, f"{name}.jsonl")
            size = "streamed"
            if path is not None:
                with open(path, "wb") as f:
                    write(name, n, f)
                size = f"{os.path.getsize(path) / 1e6:,.2f} MB"
            else:
                size = f"{(SCENARIOS[name][1] if n is None else n)} GiB line, piped"
            source = [sys.executable, os.path.abspath(__file__), name]
            if n is not None:
                source += ["--n", str(n)]
            for command in commands:
                if f"{name}/{command}" in skip:
                    continue
                row = _time_v([exe, *COMMANDS[command]], source if piped else None, path)
                first = row["first"].replace("|", "\\|")
                print(
                    f"| {name} | {size} | `{command}` | {row['exit']} | {row['wall']} | "
                    f"{row['rss']} | {row['reported']} | `{first}` |",
                    flush=True,
                )
            if path is not None:
                os.unlink(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", nargs="?", help="a scenario, or 'measure'")
    parser.add_argument("--n", type=int, default=None, help="size (see the module docstring)")
    parser.add_argument("--list", action="store_true", help="list the scenarios")
    parser.add_argument(
        "--only", action="append", default=None, help="measure: these scenarios only"
    )
    parser.add_argument(
        "--command",
        action="append",
        default=None,
        choices=sorted(COMMANDS),
        help="measure: these commands only",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="SCENARIO/COMMAND",
        help="measure: leave this pair out (e.g. 'chunks/convert --to v1': v1 resends the whole "
        "content on every chunk, so a million chunks uncoalesced write about 700 GB)",
    )
    args = parser.parse_args(argv)
    if args.list or args.scenario is None:
        for name, (_, default) in SCENARIOS.items():
            print(f"{name:12} default n = {default}")
        return 0
    if args.scenario == "measure":
        measure(
            args.only or list(SCENARIOS), args.command or list(COMMANDS), args.n, set(args.skip)
        )
        return 0
    if args.scenario not in SCENARIOS:
        parser.error(f"unknown scenario {args.scenario!r}; --list shows them")
    write(args.scenario, args.n, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
