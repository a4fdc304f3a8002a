"""Latency added by ``acp-toolcalls bridge`` per message, against pass-through proxies.

    python benchmarks/bench_proxy.py [--messages N] [--interval-ms MS] [--reps R]

A scripted agent (this file with ``--agent``) answers ``initialize`` and ``session/new`` and,
on ``session/prompt``, sends N tool-call and message updates paced ``--interval-ms`` apart (so
that what is measured is the handling of one message, not a queue), stamping each with
``time.monotonic_ns()`` as it writes it; the driver stamps each as it reads it from the proxy.
Both clocks are the system's CLOCK_MONOTONIC. Every measured message maps to exactly one
message on the other side (``--coalesce-ms 0``), in order.

Setups, for each direction (v2 agent -> v1 client, v1 agent -> v2 client):
- ``direct``: the driver reads the agent itself (no proxy): the pipe hops' floor;
- ``cat proxy``: a minimal asyncio proxy that forwards lines unread (the pass-through baseline
  of the issue);
- ``bridge, same version``: ``acp-toolcalls bridge`` where both sides speak the agent's
  version, so it forwards byte for byte;
- ``bridge, converting``: ``acp-toolcalls bridge`` between a client and an agent of different
  versions.
The figure of the issue is the converting bridge's median latency minus the cat proxy's, in
the same run (target: under 100 µs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from environment import print_environment

HERE = Path(__file__).resolve()
TEXT = "Checked 214 files; no issues in src/acp_toolcalls/connection.py. " * 3


# --------------------------------------------------------------------------------------------
# The scripted agent


def _messages(version: int, count: int, session: str) -> list[dict[str, Any]]:
    """The N measured updates: per tool call, a first report, a content chunk, an agent
    message chunk, a progress update and the completion."""
    out: list[dict[str, Any]] = []
    for k in range(count):
        call, step = f"call_{k // 5}", k % 5
        path = f"/home/user/project/src/module_{k // 5}.py"
        if step == 0:
            body: dict[str, Any] = {
                "sessionUpdate": "tool_call_update" if version == 2 else "tool_call",
                "toolCallId": call,
                "title": f"Read {path}",
                "kind": "read",
                "status": "pending",
                "rawInput": {"path": path},
            }
        elif step == 1:
            item = {"type": "content", "content": {"type": "text", "text": TEXT}}
            body = (
                {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call, "content": item}
                if version == 2
                else {"sessionUpdate": "tool_call_update", "toolCallId": call, "content": [item]}
            )
        elif step == 2:
            body = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": TEXT},
            }
            if version == 2:
                body["messageId"] = f"msg_{k // 5}"
        elif step == 3:
            body = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call,
                "status": "in_progress",
                "locations": [{"path": path, "line": 12}],
            }
        else:
            body = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call,
                "status": "completed",
                "rawOutput": {"lines": 120, "bytes": 4096},
            }
        out.append(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": session, "update": body},
            }
        )
    return out


def agent_main(version: int, count: int, interval: float, stamps: str) -> None:
    """The scripted agent: raw JSON lines on stdin/stdout."""
    out = sys.stdout.buffer
    sent: list[int] = []
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            info: dict[str, Any] = (
                {"info": {"name": "bench", "version": "0"}, "capabilities": {"session": {}}}
                if version == 2
                else {"agentInfo": {"name": "bench", "version": "0"}}
            )
            result = {"protocolVersion": version, **info}
        elif method == "session/new":
            result = {"sessionId": "sess-1"}
        elif method == "session/prompt":
            if version == 2:
                out.write(_line({"jsonrpc": "2.0", "id": request_id, "result": {"messageId": "u"}}))
                out.flush()
            lines = [_line(m) for m in _messages(version, count, "sess-1")]
            deadline = time.monotonic()
            for data in lines:
                deadline += interval
                time.sleep(max(0.0, deadline - time.monotonic()))  # no spinning: 2 cores
                sent.append(time.monotonic_ns())
                out.write(data)
                out.flush()
            Path(stamps).write_text(json.dumps(sent), encoding="utf-8")
            end: dict[str, Any]
            if version == 2:
                idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
                end = {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": "sess-1", "update": idle},
                }
            else:
                end = {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}}
            out.write(_line(end))
            out.flush()
            continue
        else:
            continue
        out.write(_line({"jsonrpc": "2.0", "id": request_id, "result": result}))
        out.flush()


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


# --------------------------------------------------------------------------------------------
# The minimal pass-through proxy


async def _cat(reader: asyncio.StreamReader, writer: Any) -> None:
    while line := await reader.readline():
        writer.write(line)
        await writer.drain()
    writer.close()


async def cat_main(command: list[str]) -> None:
    """Forward lines both ways, unread: the plumbing any stdio proxy has."""
    loop = asyncio.get_running_loop()
    agent = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 24
    )
    stdin = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    stdout = asyncio.StreamWriter(transport, protocol, None, loop)
    assert agent.stdout is not None and agent.stdin is not None
    await asyncio.gather(_cat(stdin, agent.stdin), _cat(agent.stdout, stdout))
    await agent.wait()


# --------------------------------------------------------------------------------------------
# The driver


def _request(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def measure(command: list[str], client_version: int, count: int) -> list[float]:
    """Latencies in µs of the N measured messages through ``command`` (a proxy or the agent)."""
    # Buffered: a raw pipe's readline reads one byte per system call (issue 19); a buffered
    # reader's returns as soon as a whole line has arrived, so the stamps are not delayed.
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    reader = process.stdout

    def send(line: bytes) -> None:
        assert process.stdin is not None
        process.stdin.write(line)
        process.stdin.flush()

    if client_version == 2:
        init = {"protocolVersion": 2, "info": {"name": "driver", "version": "0"}}
        new = {"cwd": "/tmp"}
    else:
        init = {"protocolVersion": 1, "clientCapabilities": {}}
        new = {"cwd": "/tmp", "mcpServers": []}
    send(_request(0, "initialize", init))
    json.loads(reader.readline())
    send(_request(1, "session/new", new))
    json.loads(reader.readline())
    prompt = {"sessionId": "sess-1", "prompt": [{"type": "text", "text": "go"}]}
    send(_request(2, "session/prompt", prompt))
    received: list[int] = []
    while len(received) < count:
        line = reader.readline()
        stamp = time.monotonic_ns()
        if not line:
            raise RuntimeError(f"{command[:3]}: output ended after {len(received)} messages")
        message = json.loads(line)
        if message.get("method") == "session/update":
            update = message["params"]["update"]["sessionUpdate"]
            if update not in ("user_message", "state_update"):
                received.append(stamp)
    reader.readline()  # the end of the turn
    process.stdin.close()
    process.wait(timeout=30)
    return [(r - s) / 1000.0 for r, s in zip(received, _stamps(command), strict=True)]


def _stamps(command: list[str]) -> list[int]:
    path = command[command.index("--stamps") + 1]
    stamps: list[int] = json.loads(Path(path).read_text(encoding="utf-8"))
    return stamps


def _agent(version: int, count: int, interval: float, stamps: str) -> list[str]:
    return [
        sys.executable, str(HERE), "--agent", str(version), "--messages", str(count),
        "--interval-ms", str(interval * 1000), "--stamps", stamps,
    ]  # fmt: skip


def _bridge(agent: list[str], agent_version: int) -> list[str]:
    return [
        sys.executable, "-m", "acp_toolcalls.cli", "bridge", "--agent-version", str(agent_version),
        "--coalesce-ms", "0", "--", *agent,
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--interval-ms", type=float, default=1.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--agent", type=int, choices=(1, 2), help=argparse.SUPPRESS)
    parser.add_argument("--cat", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--stamps", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    interval = args.interval_ms / 1000.0
    if args.agent is not None:
        agent_main(args.agent, args.messages, interval, args.stamps)
        return
    if args.cat:
        asyncio.run(cat_main(rest[rest.index("--") + 1 :] if "--" in rest else rest))
        return

    print_environment()
    print(
        f"messages     {args.messages} per run, one every {args.interval_ms} ms; "
        f"{args.reps} runs per setup, interleaved"
    )
    stamps = os.path.join(tempfile.mkdtemp(prefix="bench_proxy_"), "stamps.json")
    results: dict[tuple[str, str], list[float]] = {}
    for direction, agent_version, client_version in (
        ("v2 agent -> v1 client", 2, 1),
        ("v1 agent -> v2 client", 1, 2),
    ):
        agent = _agent(agent_version, args.messages, interval, stamps)
        setups = {
            "direct (no proxy)": (agent, agent_version),
            "cat proxy (pass-through)": (
                [sys.executable, str(HERE), "--cat", "--", *agent],
                agent_version,
            ),
            "bridge, same version": (_bridge(agent, agent_version), agent_version),
            "bridge, converting": (_bridge(agent, agent_version), client_version),
        }
        for rep in range(args.reps):
            for name, (command, speaks) in setups.items():
                latencies = measure(command, speaks, args.messages)
                results.setdefault((direction, name), []).extend(latencies)
            print(f"  {direction}: run {rep + 1}/{args.reps} done", file=sys.stderr)

    print()
    print(f"{'direction':24} {'setup':28} {'median µs':>10} {'p90 µs':>8} {'p99 µs':>8}")
    for (direction, name), values in results.items():
        values.sort()
        p90 = values[int(len(values) * 0.9)]
        p99 = values[int(len(values) * 0.99)]
        print(f"{direction:24} {name:28} {statistics.median(values):10.1f} {p90:8.1f} {p99:8.1f}")
    print()
    for direction in ("v2 agent -> v1 client", "v1 agent -> v2 client"):
        converting = statistics.median(results[(direction, "bridge, converting")])
        cat = statistics.median(results[(direction, "cat proxy (pass-through)")])
        same = statistics.median(results[(direction, "bridge, same version")])
        print(
            f"{direction}: converting bridge - cat proxy = {converting - cat:.1f} µs "
            f"(target < 100); converting - same-version bridge = {converting - same:.1f} µs"
        )


if __name__ == "__main__":
    main()
