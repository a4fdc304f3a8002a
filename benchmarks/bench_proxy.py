"""What ``acp-toolcalls bridge`` costs per message, against an asyncio ``cat`` proxy.

    python benchmarks/bench_proxy.py [--only throughput|latency|breakdown] [--reps R]
        [--burst N] [--messages N] [--interval-ms MS] [--profile DIR]

A scripted agent (this file with ``--agent``) answers ``initialize`` and ``session/new`` and,
on ``session/prompt``, sends N tool-call and message updates (per tool call: first report,
content chunk, agent message chunk, progress, completion; 300-460 bytes each). Every measured
message maps to exactly one message on the other side (``--coalesce-ms 0``), in order.

Setups, for each direction (v2 agent -> v1 client, v1 agent -> v2 client), run interleaved:
- ``direct``: the driver reads the agent itself (no proxy): the pipe hops' floor;
- ``cat proxy``: a minimal asyncio proxy in this file that forwards lines unread (a
  ``readline``, a ``write`` and a ``drain`` per line): the limit of issue 19;
- ``bridge, same version``: ``acp-toolcalls bridge`` where both sides speak the agent's
  version (pass-through: forwarded byte for byte);
- ``bridge, converting``: ``acp-toolcalls bridge`` between a client and an agent of different
  versions.

Throughput (``--burst`` messages, default 50,000): the agent writes them all at once; the
time from the prompt to the end of the turn, read by the driver in 1 MiB chunks. Each setup's
time over the cat proxy's in the same run (= cat's msgs/s over the setup's); targets: same
version <= 1.3x, converting v2 -> v1 <= 3x.

Latency (``--messages``, one every ``--interval-ms``): the agent stamps each message with
``time.monotonic_ns()`` as it writes it, the driver as it reads it (a buffered reader: a raw
pipe's ``readline`` reads a byte per system call); both are CLOCK_MONOTONIC. Per run, the
converting bridge's median minus the cat proxy's; target: under 50 µs.

Breakdown: in this process, per line of the same traffic, what the proxy does between a read
and a write: splitting lines, the connection core a batch at a time (pass-through and
converting), and of converting, reading each line once as the core does, the bridge alone
(``convert`` of what was read, ``encode``) and the rest (by difference); best of ``--reps``.

``--profile DIR``: one throughput run of each bridge setup under cProfile (``DIR/*.prof``).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment

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


def agent_main(version: int, count: int, interval: float, stamps: str | None) -> None:
    """The scripted agent: raw JSON lines on stdin/stdout. ``interval`` 0: the N updates are
    written at once, in one write (the throughput runs; nothing is stamped)."""
    out = sys.stdout.buffer
    sent: list[int] = []
    burst = b"".join(_line(m) for m in _messages(version, count, "sess-1")) if not interval else b""
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
            if burst:
                out.write(burst)
                out.flush()
            else:
                lines = [_line(m) for m in _messages(version, count, "sess-1")]
                deadline = time.monotonic()
                for data in lines:
                    deadline += interval
                    time.sleep(max(0.0, deadline - time.monotonic()))  # no spinning: 2 cores
                    sent.append(time.monotonic_ns())
                    out.write(data)
                    out.flush()
                assert stamps is not None
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


Watch = Callable[[str], None]
"""Given the URL a ``bridge --inspect`` said, before the client says anything."""
AtEnd = Callable[[subprocess.Popen[bytes]], None]
"""Given the process at the end of the turn, before its input is closed."""


def _start(
    command: list[str], client_version: int, watch: Watch | None = None
) -> subprocess.Popen[bytes]:
    """``command`` started, initialized and given a session; the prompt is next. With
    ``watch``, the command is a ``bridge --inspect``: the URL on its stderr's first line goes
    to ``watch``, the rest of its stderr is read (and dropped) by a thread."""
    # Buffered: a raw pipe's readline reads one byte per system call (issue 19); a buffered
    # reader's returns as soon as a whole line has arrived, so the stamps are not delayed.
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if watch is not None else None,
    )
    assert process.stdin is not None and process.stdout is not None
    if watch is not None:
        assert process.stderr is not None
        first = process.stderr.readline().decode()
        if " live at " not in first:
            raise RuntimeError(f"{command[:3]}: no URL on stderr: {first!r}")
        threading.Thread(target=process.stderr.read, daemon=True).start()
        watch(first.split(" live at ")[1].split()[0])
    init: dict[str, Any]
    new: dict[str, Any]
    if client_version == 2:
        init = {"protocolVersion": 2, "info": {"name": "driver", "version": "0"}}
        new = {"cwd": "/tmp"}
    else:
        init = {"protocolVersion": 1, "clientCapabilities": {}}
        new = {"cwd": "/tmp", "mcpServers": []}
    _send(process, _request(0, "initialize", init))
    json.loads(process.stdout.readline())
    _send(process, _request(1, "session/new", new))
    json.loads(process.stdout.readline())
    return process


def _send(process: subprocess.Popen[bytes], line: bytes) -> None:
    assert process.stdin is not None
    process.stdin.write(line)
    process.stdin.flush()


_PROMPT = {"sessionId": "sess-1", "prompt": [{"type": "text", "text": "go"}]}


def measure(
    command: list[str],
    client_version: int,
    count: int,
    watch: Watch | None = None,
    at_end: AtEnd | None = None,
) -> list[float]:
    """Latencies in µs of the N measured messages through ``command`` (a proxy or the agent)."""
    process = _start(command, client_version, watch)
    assert process.stdin is not None and process.stdout is not None
    reader = process.stdout  # an io.BufferedReader (Popen's default bufsize)
    _send(process, _request(2, "session/prompt", _PROMPT))
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
    if at_end is not None:
        at_end(process)
    process.stdin.close()
    process.wait(timeout=30)
    return [(r - s) / 1000.0 for r, s in zip(received, _stamps(command), strict=True)]


def rate(
    command: list[str],
    client_version: int,
    count: int,
    watch: Watch | None = None,
    at_end: AtEnd | None = None,
) -> float:
    """Seconds from the prompt to the end of its turn through ``command``: the agent writes
    the N updates at once, and the driver reads in 1 MiB chunks, counting lines, so that the
    proxy is what takes the time."""
    process = _start(command, client_version, watch)
    assert process.stdin is not None and process.stdout is not None
    fd = process.stdout.fileno()
    start = time.perf_counter()
    _send(process, _request(2, "session/prompt", _PROMPT))
    lines, tail = 0, b""
    while True:
        data = os.read(fd, 1 << 20)
        if not data:
            raise RuntimeError(f"{command[:3]}: output ended after {lines} lines")
        lines += data.count(b"\n")
        if b'"stopReason"' in tail + data:  # the end of the turn, in either version
            break
        tail = data[-16:]
    elapsed = time.perf_counter() - start
    if lines < count:
        raise RuntimeError(f"{command[:3]}: {lines} lines for {count} messages")
    if at_end is not None:
        at_end(process)
    process.stdin.close()
    process.wait(timeout=30)
    return elapsed


def _stamps(command: list[str]) -> list[int]:
    path = command[command.index("--stamps") + 1]
    stamps: list[int] = json.loads(Path(path).read_text(encoding="utf-8"))
    return stamps


def _agent(version: int, count: int, interval: float, stamps: str | None) -> list[str]:
    command = [
        sys.executable, str(HERE), "--agent", str(version), "--messages", str(count),
        "--interval-ms", str(interval * 1000),
    ]  # fmt: skip
    return [*command, "--stamps", stamps] if stamps is not None else command


def _bridge(agent: list[str], agent_version: int) -> list[str]:
    return [
        sys.executable, "-m", "acp_toolcalls.cli", "bridge", "--agent-version", str(agent_version),
        "--coalesce-ms", "0", "--", *agent,
    ]  # fmt: skip


DIRECTIONS = (("v2 agent -> v1 client", 2, 1), ("v1 agent -> v2 client", 1, 2))


def _cat_proxy(agent: list[str]) -> list[str]:
    return [sys.executable, str(HERE), "--cat", "--", *agent]


def _setups(agent: list[str], agent_version: int, client_version: int) -> dict[str, Any]:
    return {
        "direct (no proxy)": (agent, agent_version),
        "cat proxy (pass-through)": (_cat_proxy(agent), agent_version),
        "bridge, same version": (_bridge(agent, agent_version), agent_version),
        "bridge, converting": (_bridge(agent, agent_version), client_version),
    }  # fmt: skip


def latency_main(args: argparse.Namespace) -> None:
    print(
        f"latency      {args.messages} messages per run, one every {args.interval_ms} ms; "
        f"{args.reps} runs per setup, interleaved"
    )
    interval = args.interval_ms / 1000.0
    stamps = os.path.join(tempfile.mkdtemp(prefix="bench_proxy_"), "stamps.json")
    results: dict[tuple[str, str], list[float]] = {}
    medians: dict[tuple[str, str], list[float]] = {}
    for direction, agent_version, client_version in DIRECTIONS:
        agent = _agent(agent_version, args.messages, interval, stamps)
        setups = _setups(agent, agent_version, client_version)
        for rep in range(args.reps):
            for name, (command, speaks) in setups.items():
                latencies = measure(command, speaks, args.messages)
                results.setdefault((direction, name), []).extend(latencies)
                medians.setdefault((direction, name), []).append(statistics.median(latencies))
            print(f"  {direction}: run {rep + 1}/{args.reps} done", file=sys.stderr)

    print()
    print(f"{'direction':24} {'setup':28} {'median µs':>10} {'p90 µs':>8} {'p99 µs':>8}")
    for (direction, name), values in results.items():
        values.sort()
        p90 = values[int(len(values) * 0.9)]
        p99 = values[int(len(values) * 0.99)]
        print(f"{direction:24} {name:28} {statistics.median(values):10.1f} {p90:8.1f} {p99:8.1f}")
    print()
    for direction, _agent_version, _client_version in DIRECTIONS:
        converting = medians[(direction, "bridge, converting")]
        cat = medians[(direction, "cat proxy (pass-through)")]
        same = medians[(direction, "bridge, same version")]
        over_cat = [c - k for c, k in zip(converting, cat, strict=True)]
        over_same = [c - k for c, k in zip(converting, same, strict=True)]
        same_cat = [c - k for c, k in zip(same, cat, strict=True)]
        print(
            f"{direction}: converting - cat, per run: {_spread(over_cat)} µs (target < 50); "
            f"converting - same-version: {_spread(over_same)} µs; "
            f"same-version - cat: {_spread(same_cat)} µs"
        )


def _spread(values: list[float]) -> str:
    """min / median / max of per-run figures."""
    return f"min {min(values):.1f} med {statistics.median(values):.1f} max {max(values):.1f}"


def throughput_main(args: argparse.Namespace) -> None:
    count = args.burst
    print(
        f"throughput   {count} messages written at once per run; {args.reps} runs per setup, "
        "interleaved; the driver reads 1 MiB chunks"
    )
    times: dict[tuple[str, str], list[float]] = {}
    for direction, agent_version, client_version in DIRECTIONS:
        agent = _agent(agent_version, count, 0.0, None)
        setups = _setups(agent, agent_version, client_version)
        for rep in range(args.reps):
            for name, (command, speaks) in setups.items():
                times.setdefault((direction, name), []).append(rate(command, speaks, count))
            print(f"  {direction}: run {rep + 1}/{args.reps} done", file=sys.stderr)

    print()
    print(
        f"{'direction':24} {'setup':28} {'best msgs/s':>12} {'median':>9} "
        f"{'vs cat: min':>12} {'median':>7} {'max':>6}"
    )
    for (direction, name), values in times.items():
        cat = times[(direction, "cat proxy (pass-through)")]
        ratios = [t / c for t, c in zip(values, cat, strict=True)]  # same run: time over cat's
        print(
            f"{direction:24} {name:28} {count / min(values):12,.0f} "
            f"{count / statistics.median(values):9,.0f} {min(ratios):11.2f}x "
            f"{statistics.median(ratios):6.2f}x {max(ratios):5.2f}x"
        )
    print()
    print("slower than cat = the setup's time / cat's time in the same run (msgs/s of cat over")
    print("the setup's); targets (issue 19): same version <= 1.3x, converting v2 -> v1 <= 3x")


def breakdown_main(args: argparse.Namespace) -> None:
    """Per line, in this process: the proxy's work between a read and a write."""
    count = args.burst
    print(f"breakdown    {count} lines, best of {args.reps}; the core {_BATCH} lines per call")
    print(f"{'direction':24} {'step':48} {'µs/line':>8}")
    for direction, agent_version, client_version in DIRECTIONS:
        lines = [_line(m)[:-1] for m in _messages(agent_version, count, "sess-1")]
        steps: dict[str, Callable[[], object]] = {
            "split the lines of a read": functools.partial(
                (b"\n".join(lines) + b"\n").split, b"\n"
            ),
            "core, same version (pass-through)": functools.partial(
                _core_run, lines, agent_version, agent_version
            ),
            "core, converting": functools.partial(_core_run, lines, client_version, agent_version),
            "  reading each line once, as the core does": functools.partial(
                _decoded, lines, agent_version
            ),
            "  the bridge: convert what was read, encode": functools.partial(
                _bridge_run, _decoded(lines, agent_version), agent_version
            ),
        }
        best = {
            name: min(_timed(run) for _ in range(args.reps)) / count * 1e6
            for name, run in steps.items()
        }
        best["  the rest: routing, sessions, the line limit"] = (
            best["core, converting"]
            - best["  reading each line once, as the core does"]
            - best["  the bridge: convert what was read, encode"]
        )
        for name, value in best.items():
            print(f"{direction:24} {name:48} {value:8.2f}")


_BATCH = 150  # about the lines of one 64 KiB read


def _core_run(lines: list[bytes], client: int, agent: int) -> None:
    connection = _ready_core(client, agent)
    if not hasattr(connection, "from_agent_lines"):  # a core from before issue 19: by line
        for line in lines:
            connection.from_agent(line, 0.0)
        return
    for start in range(0, len(lines), _BATCH):
        connection.from_agent_lines(lines[start : start + _BATCH], 0.0)


def _decoded(lines: list[bytes], agent: int) -> list[Any]:
    """Each line as the core hands it to the bridge: a tool-call update typed by the codec's
    strict decoder, another update read whole into the typed message of an opaque update."""
    from acp_toolcalls.codec import FAST_PATH_MISSES, fast_message_decoder
    from acp_toolcalls.proxy import rpc

    decode = fast_message_decoder("v2" if agent == 2 else "v1")
    out: list[Any] = []
    for line in lines:
        try:
            out.append(decode(line))
        except FAST_PATH_MISSES:
            out.append(rpc.opaque_message(rpc.whole(line), 2 if agent == 2 else 1) or line)
    return out


def _bridge_run(messages: list[Any], agent: int) -> None:
    from acp_toolcalls.bridge import V1ToV2Bridge, V2ToV1Bridge
    from acp_toolcalls.codec import encode

    convert = (V2ToV1Bridge(coalesce=False) if agent == 2 else V1ToV2Bridge()).convert
    for message in messages:
        for out in convert(message).messages:
            encode(out)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _ready_core(client: int, agent: int) -> Any:
    """A ``ConnectionCore`` past initialize with session ``sess-1`` and a prompt running."""
    from acp_toolcalls.proxy import ConnectionCore

    core = ConnectionCore(
        client_version=1 if client == 1 else 2,
        agent_version=1 if agent == 1 else 2,
        coalesce_interval=0.0,
    )
    init: dict[str, Any]
    new: dict[str, Any]
    if client == 2:
        init, new = {"protocolVersion": 2, "info": {"name": "d", "version": "0"}}, {"cwd": "/"}
    else:
        init = {"protocolVersion": 1, "clientCapabilities": {}}
        new = {"cwd": "/", "mcpServers": []}
    info: dict[str, Any] = (
        {"info": {"name": "bench", "version": "0"}, "capabilities": {"session": {}}}
        if agent == 2
        else {"agentInfo": {"name": "bench", "version": "0"}}
    )
    for request_id, method, params in ((0, "initialize", init), (1, "session/new", new)):
        out = core.from_client(_request(request_id, method, params)[:-1], 0.0)
        asked = json.loads(out.to_agent[0])["id"]
        value = {"protocolVersion": agent, **info} if method == "initialize" else None
        answer = {"jsonrpc": "2.0", "id": asked, "result": value or {"sessionId": "sess-1"}}
        core.from_agent(_line(answer)[:-1], 0.0)
    core.from_client(_request(2, "session/prompt", _PROMPT)[:-1], 0.0)
    return core


def profile_main(args: argparse.Namespace) -> None:
    """One throughput run of each bridge setup under cProfile."""
    os.makedirs(args.profile, exist_ok=True)
    for direction, agent_version, client_version in DIRECTIONS:
        agent = _agent(agent_version, args.burst, 0.0, None)
        for name, speaks in (("same", agent_version), ("converting", client_version)):
            path = os.path.join(args.profile, f"v{agent_version}-agent-{name}.prof")
            command = _bridge(agent, agent_version)
            command[1:1] = ["-m", "cProfile", "-o", path]
            elapsed = rate(command, speaks, args.burst)
            print(f"{direction:24} {name:11} {args.burst / elapsed:9,.0f} msgs/s profiled: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000, help="per latency run")
    parser.add_argument("--interval-ms", type=float, default=1.0, help="latency runs' pacing")
    parser.add_argument("--burst", type=int, default=50000, help="messages per throughput run")
    parser.add_argument("--reps", type=int, default=3, help="runs per setup, interleaved")
    parser.add_argument(
        "--only",
        choices=("throughput", "latency", "breakdown"),
        help="one of them (default: all three)",
    )
    parser.add_argument("--profile", metavar="DIR", help="profile the bridge setups instead")
    parser.add_argument("--agent", type=int, choices=(1, 2), help=argparse.SUPPRESS)
    parser.add_argument("--cat", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--stamps", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.agent is not None:
        agent_main(args.agent, args.messages, args.interval_ms / 1000.0, args.stamps)
        return
    if args.cat:
        asyncio.run(cat_main(rest[rest.index("--") + 1 :] if "--" in rest else rest))
        return

    print_environment()
    if args.profile:
        profile_main(args)
        return
    for name, run in (
        ("throughput", throughput_main),
        ("breakdown", breakdown_main),
        ("latency", latency_main),
    ):
        if args.only in (None, name):
            print()
            run(args)
            print(f"load         {_load()} (1, 5, 15 min) at the end of the {name} runs")


if __name__ == "__main__":
    main()
