"""Floods through ``acp-toolcalls bridge``: peak RSS, bytes to the editor, wall time.

Each scenario runs the real proxy (``python -m acp_toolcalls.cli bridge``) between a
flooding agent (this script in ``agent`` mode, which writes its lines lazily and stays a few
MiB) and an editor (this script, which drains the proxy's output on a thread). The flood ends
with an agent message chunk saying ``FLOOD-DONE``; the editor then closes the proxy's stdin.
Peak RSS is the proxy's ``ru_maxrss``, as ``/usr/bin/time -v`` prints it: this script in
``rusage`` mode starts the proxy and reports it (a process's peak counts the memory of the one
that started it, so that is a small one, not the editor; the agent, a child, counts only if it
grew larger). Sizes scale with ``--scale`` (1 = the issue's
sizes); ``--scale-caps`` scales the proxy's memory caps by the same factor (``--limit``), as
tests/proxy/test_floods.py runs them.

Scenarios (editor version / agent version; at scale 1):

- ``rawinput`` (v1/v2): 200 finished calls with an 8 MB ``rawInput`` each.
- ``terminals`` (v1/v2): 150 terminals no call references, 5 MB of output each.
- ``chunks`` (v1/v2): 30 calls x 40 text chunks of 1 MB.
- ``titles`` (v2/v1): a v1 agent's 150 calls with 8 MB titles.
- ``meta`` (v1/v2): 20 ``_meta`` patches of 100,000 new keys on one call.
- ``unknown-items`` (v1/v2): 400 content items of 1 MB of an unknown type.
- ``sessions`` (v1/v2): 1,000,000 distinct sessions, one tool call each.
- ``message-ids`` (v1/v2): 1,000,000 agent message chunks with distinct ``messageId``s.
- ``permissions`` (v1/v2): 1,000,000 permission requests the editor never answers.
- ``agent-requests`` (v1/v2): 1,000,000 extension requests the editor never answers.
- ``client-requests`` (v1/v2): the editor's 1,000,000 extension requests the agent never
  answers.
- ``alternating`` (v1/v2): 10,000 small chunks alternating between two calls; the figure
  that matters is bytes to the editor over bytes in.

Usage::

    python benchmarks/floods.py measure                 # every scenario, full size
    python benchmarks/floods.py measure chunks --scale 0.1
    python benchmarks/floods.py measure --scale 0.1 --scale-caps
    python benchmarks/floods.py agent chunks 2 1.0      # the agent side (the proxy runs it)
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

SID = "sess-1"
DONE = "FLOOD-DONE"
_RSS_PREFIX = "floods: peak RSS kB "
MB = 1_000_000


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _update(body: dict[str, Any], session: str = SID) -> bytes:
    params = {"sessionId": session, "update": body}
    return _line({"jsonrpc": "2.0", "method": "session/update", "params": params})


def _text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


def _n(base: int, scale: float) -> int:
    return max(1, round(base * scale))


# --------------------------------------------------------------------------------------------
# The floods (what the agent writes after session/new)


def rawinput(scale: float) -> Iterator[bytes]:
    big = "r" * _n(8 * MB, min(scale * 4, 1.0))
    for i in range(_n(200, scale)):
        body = {"sessionUpdate": "tool_call_update", "toolCallId": f"c{i}", "title": f"Call {i}"}
        yield _update({**body, "kind": "read", "status": "completed", "rawInput": {"data": big}})


def terminals(scale: float) -> Iterator[bytes]:
    data = base64.b64encode(b"o" * _n(5 * MB, min(scale * 4, 1.0))).decode()
    for i in range(_n(150, scale)):
        yield _update({"sessionUpdate": "terminal_update", "terminalId": f"t{i}", "command": "x"})
        yield _update(
            {"sessionUpdate": "terminal_output_chunk", "terminalId": f"t{i}", "data": data}
        )


def chunks(scale: float) -> Iterator[bytes]:
    piece = "c" * _n(MB, min(scale * 4, 1.0))
    calls = _n(30, scale)
    for i in range(calls):
        body = {"sessionUpdate": "tool_call_update", "toolCallId": f"c{i}", "title": f"Call {i}"}
        yield _update({**body, "status": "in_progress"})
    for _ in range(_n(40, scale)):
        for i in range(calls):
            body = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": f"c{i}"}
            yield _update({**body, "content": _text(piece)})


def titles(scale: float) -> Iterator[bytes]:
    big = "t" * _n(8 * MB, min(scale * 4, 1.0))
    for i in range(_n(150, scale)):
        body = {"sessionUpdate": "tool_call", "toolCallId": f"c{i}", "title": big}
        yield _update({**body, "status": "completed"})


def meta(scale: float) -> Iterator[bytes]:
    keys = _n(100_000, scale)
    yield _update({"sessionUpdate": "tool_call_update", "toolCallId": "m", "title": "Meta"})
    for patch in range(_n(20, scale)):
        patch_meta = {f"k{patch}_{j}": j for j in range(keys)}
        yield _update({"sessionUpdate": "tool_call_update", "toolCallId": "m", "_meta": patch_meta})


def unknown_items(scale: float) -> Iterator[bytes]:
    blob = "u" * _n(MB, min(scale * 4, 1.0))
    yield _update({"sessionUpdate": "tool_call_update", "toolCallId": "u", "title": "Blobs"})
    for _ in range(_n(400, scale)):
        item = {"type": "_vendor_blob", "data": blob}
        yield _update(
            {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "u", "content": item}
        )


def sessions(scale: float) -> Iterator[bytes]:
    for i in range(_n(1_000_000, scale)):
        body = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "title": f"Call {i}"}
        yield _update(body, session=f"s{i}")


def message_ids(scale: float) -> Iterator[bytes]:
    for i in range(_n(1_000_000, scale)):
        body = {"sessionUpdate": "agent_message_chunk", "messageId": f"m{i}"}
        yield _update({**body, "content": {"type": "text", "text": "hi"}})


def permissions(scale: float) -> Iterator[bytes]:
    options = [{"optionId": "a", "name": "Allow", "kind": "allow_once"}]
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "p"}}
    params = {"sessionId": SID, "title": "Allow?", "subject": subject, "options": options}
    for i in range(_n(1_000_000, scale)):
        method = "session/request_permission"
        yield _line({"jsonrpc": "2.0", "id": i + 10, "method": method, "params": params})


def agent_requests(scale: float) -> Iterator[bytes]:
    for i in range(_n(1_000_000, scale)):
        yield _line({"jsonrpc": "2.0", "id": i + 10, "method": "_vendor/ask", "params": {"n": i}})


def alternating(scale: float) -> Iterator[bytes]:
    for call in ("a", "b"):
        yield _update({"sessionUpdate": "tool_call_update", "toolCallId": call, "title": call})
    for i in range(_n(10_000, scale)):
        body = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "ab"[i % 2]}
        yield _update({**body, "content": _text(f"line {i} of the output of a tool\n")})


def client_requests(scale: float) -> Iterator[bytes]:
    return iter(())  # the editor floods (see `Scenario.editor_flood`)


def _client_flood(scale: float) -> Iterator[bytes]:
    for i in range(_n(1_000_000, scale)):
        yield _line({"jsonrpc": "2.0", "id": i + 10, "method": "_vendor/ping", "params": {}})


@dataclass(frozen=True)
class Scenario:
    agent_flood: Callable[[float], Iterator[bytes]]
    editor: int = 1
    agent: int = 2
    editor_flood: Callable[[float], Iterator[bytes]] | None = None


SCENARIOS: dict[str, Scenario] = {
    "rawinput": Scenario(rawinput),
    "terminals": Scenario(terminals),
    "chunks": Scenario(chunks),
    "titles": Scenario(titles, editor=2, agent=1),
    "meta": Scenario(meta),
    "unknown-items": Scenario(unknown_items),
    "sessions": Scenario(sessions),
    "message-ids": Scenario(message_ids),
    "permissions": Scenario(permissions),
    "agent-requests": Scenario(agent_requests),
    "client-requests": Scenario(client_requests, editor_flood=_client_flood),
    "alternating": Scenario(alternating),
}


# --------------------------------------------------------------------------------------------
# The agent


def _init_result(version: int) -> dict[str, Any]:
    if version == 1:
        return {"protocolVersion": 1, "agentInfo": {"name": "flood", "version": "0"}}
    return {"protocolVersion": 2, "info": {"name": "flood", "version": "0"}, "capabilities": {}}


def _done(version: int) -> bytes:
    """The end of the flood: a v2 agent's idle state first (what a v1 client is sent of held
    back changes goes out before it), then a message chunk the editor waits for."""
    body: dict[str, Any] = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": DONE},
    }
    if version == 1:
        return _update(body)
    body["messageId"] = "flood-done"
    return _update({"sessionUpdate": "state_update", "state": "idle"}) + _update(body)


def run_agent(name: str, version: int, scale: float) -> None:
    """Answer initialize and session/new, write the flood, and say when it is done. Lines are
    read on a thread while the flood is written, as an agent on an SDK reads its answers."""
    scenario = SCENARIOS[name]
    out = sys.stdout.buffer
    lines: queue.Queue[bytes | None] = queue.Queue()

    def read() -> None:
        for raw in sys.stdin.buffer:
            if b'"method"' in raw:  # requests and notifications; answers are only read
                lines.put(raw)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    while (raw := lines.get()) is not None:
        message = json.loads(raw)
        method = message.get("method")
        if method == "initialize":
            out.write(
                _line({"jsonrpc": "2.0", "id": message["id"], "result": _init_result(version)})
            )
            out.flush()
        elif method == "session/new":
            out.write(_line({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": SID}}))
            block = bytearray()
            for line in scenario.agent_flood(scale):
                block += line
                if len(block) >= MB:
                    out.write(block)
                    block.clear()
            out.write(bytes(block))
            if scenario.editor_flood is None:
                out.write(_done(version))
            out.flush()
        elif method == "_vendor/done":
            out.write(_done(version))
            out.flush()


# --------------------------------------------------------------------------------------------
# The editor and the measurement


@dataclass
class Result:
    scenario: str
    exit: int | None
    finished: bool  # the editor saw the end of the flood
    wall: float
    rss_mib: float
    bytes_in: int
    bytes_out: int
    longest_line: int
    stderr_lines: int
    first_note: str
    notes: list[str]


def _editor_lines(version: int) -> list[bytes]:
    if version == 1:
        init: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": {}}
        new: dict[str, Any] = {"cwd": "/tmp", "mcpServers": []}
    else:
        init = {
            "protocolVersion": 2,
            "info": {"name": "editor", "version": "0"},
            "capabilities": {},
        }
        new = {"cwd": "/tmp"}
    return [
        _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        _line({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new}),
    ]


def run(name: str, scale: float, extra: list[str], timeout: float = 3600.0) -> Result:
    scenario = SCENARIOS[name]
    agent = [
        sys.executable,
        os.path.abspath(__file__),
        "agent",
        name,
        str(scenario.agent),
        str(scale),
    ]
    proxy = [sys.executable, "-m", "acp_toolcalls.cli", "bridge", *extra, "--", *agent]
    bytes_in = sum(len(line) for line in scenario.agent_flood(scale))
    started = time.monotonic()
    measured = [sys.executable, os.path.abspath(__file__), "rusage", *proxy]
    process = subprocess.Popen(
        measured,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    counted = {"bytes": 0, "longest": 0, "done": 0}
    done = threading.Event()
    session = threading.Event()  # session/new answered
    err_chunks: list[bytes] = []

    def drain() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            counted["bytes"] += len(line)
            counted["longest"] = max(counted["longest"], len(line))
            if not session.is_set() and b'"sessionId"' in line and b'"result"' in line:
                session.set()
            if DONE.encode() in line:
                counted["done"] += 1
                done.set()
        done.set()

    def drain_err() -> None:
        assert process.stderr is not None
        err_chunks.append(process.stderr.read())

    threads = [
        threading.Thread(target=drain, daemon=True),
        threading.Thread(target=drain_err, daemon=True),
    ]
    for thread in threads:
        thread.start()
    for line in _editor_lines(scenario.editor):
        process.stdin.write(line)
    process.stdin.flush()
    if scenario.editor_flood is not None:
        session.wait(60)  # an editor's requests go to a session it has
        for line in scenario.editor_flood(scale):
            process.stdin.write(line)
            bytes_in += len(line)
        done_line = {"jsonrpc": "2.0", "id": 9, "method": "_vendor/done", "params": {}}
        process.stdin.write(_line(done_line))
        process.stdin.flush()
    finished = done.wait(timeout) and counted["done"] > 0
    process.stdin.close()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for thread in threads:
        thread.join(60)
    err = b"".join(err_chunks).decode(errors="replace")
    rss = re.search(rf"^{_RSS_PREFIX}(\d+)$", err, re.MULTILINE)
    notes = [line for line in err.splitlines() if line.startswith("acp-toolcalls bridge:")]
    return Result(
        scenario=name,
        exit=process.returncode,
        finished=finished,
        wall=time.monotonic() - started,
        rss_mib=int(rss.group(1)) / 1024 if rss else float("nan"),
        bytes_in=bytes_in,
        bytes_out=counted["bytes"],
        longest_line=counted["longest"],
        stderr_lines=len(notes),
        first_note=notes[0][len("acp-toolcalls bridge: ") :][:100] if notes else "",
        notes=notes,
    )


def run_measured(command: list[str]) -> None:
    """Run ``command`` on this process's stdin, stdout and stderr, then write its peak RSS on
    stderr and exit with its status."""
    process = subprocess.Popen(command)
    _, status, rusage = os.wait4(process.pid, 0)
    sys.stderr.write(f"{_RSS_PREFIX}{rusage.ru_maxrss}\n")
    sys.stderr.flush()
    code = os.waitstatus_to_exitcode(status)
    sys.exit(code if code >= 0 else 128 - code)


def scaled_limits(scale: float) -> list[str]:
    """``--limit`` options setting every memory cap of the proxy to ``scale`` times its
    default (at least 1)."""
    from acp_toolcalls import Limits

    defaults = Limits()
    options = []
    for name in Limits.__struct_fields__:
        value = getattr(defaults, name)
        if value is not None:
            options += ["--limit", f"{name}={max(1, round(value * scale))}"]
    return options


def measure(names: list[str], scale: float, extra: list[str]) -> None:
    print(f"scale {scale}; proxy options {' '.join(extra) or '(defaults)'}")
    print(
        "| flood | in | to the editor | longest line | wall s | peak RSS MiB | stderr lines "
        "| first |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        r = run(name, scale, extra)
        if not r.finished:
            print(f"| {name} | did not finish (exit {r.exit}) |", flush=True)
            continue
        ratio = f" ({r.bytes_out / r.bytes_in:.2f}x)" if r.bytes_in else ""
        print(
            f"| {name} | {r.bytes_in / MB:.1f} MB | {r.bytes_out / MB:.1f} MB{ratio} | "
            f"{r.longest_line / MB:.2f} MB | {r.wall:.1f} | {r.rss_mib:.0f} | {r.stderr_lines} | "
            f"`{r.first_note}` |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="mode", required=True)
    agent = sub.add_parser("agent")
    agent.add_argument("scenario", choices=list(SCENARIOS))
    agent.add_argument("version", type=int)
    agent.add_argument("scale", type=float)
    rusage = sub.add_parser("rusage")
    rusage.add_argument("command", nargs=argparse.REMAINDER)
    m = sub.add_parser("measure")
    m.add_argument("scenarios", nargs="*", metavar="SCENARIO", help=", ".join(SCENARIOS))
    m.add_argument("--scale", type=float, default=1.0)
    m.add_argument("--proxy-option", action="append", default=[], dest="extra")
    m.add_argument(
        "--scale-caps", action="store_true", help="scale the memory caps with --scale too"
    )
    args = parser.parse_args()
    if args.mode == "agent":
        run_agent(args.scenario, args.version, args.scale)
        return
    if args.mode == "rusage":
        run_measured(args.command)
    unknown = [name for name in args.scenarios if name not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}: one of {', '.join(SCENARIOS)}")
    extra = args.extra + (scaled_limits(args.scale) if args.scale_caps else [])
    measure(args.scenarios or list(SCENARIOS), args.scale, extra)


if __name__ == "__main__":
    main()
