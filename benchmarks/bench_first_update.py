"""The first turn through ``acp-toolcalls bridge``: does a rare update make it wait? (issue 26, 10)

    python benchmarks/bench_first_update.py [--runs N] [--direction v2-v1|v1-v2|both]

A converter used to import jsonschema and build a validator on the first ``plan_update`` /
``usage_update`` / ``session_info_update`` / ``config_option_update`` /
``available_commands_update`` of a session (50-155 ms), everything behind it waiting. This
measures, through the real bridge subprocess (fresh for every run: what it pays once per
process is the point), the first turn of a session: the editor initializes, opens a session
and prompts; the scripted agent (this file with ``--agent``) answers with its first updates of
the turn in one write, stamped with ``time.monotonic_ns()`` as it writes them, and the driver
stamps each as it reads it (both CLOCK_MONOTONIC).

Setups, run interleaved, ``--runs`` fresh bridges each:

- ``message only`` (the baseline): the turn opens with an agent message chunk;
- ``<rare> first``: the same turn opened by one rare update, the message right behind it.

Printed per setup: the median and max, over the runs, of the time from the agent's write to
the editor's read of the message chunk, and of the rare update itself; then each setup's
median minus the baseline's (target: within +5 ms) and their ratio. ``--direction``: a v2
agent and a v1 editor (``v2-v1``, the default), a v1 agent and a v2 editor (``v1-v2``), or
both. To measure another tree's bridge, run this with ``PYTHONPATH=<tree>/src``: the bridge
subprocess inherits it.

``--costs``: instead, what the first check costs, each in a fresh interpreter that has
imported the bridge (median and max of ``--runs``): jsonschema's way (importing
``schema.validate_payload``, then the first call, which builds the validators: what a
conversion did mid-stream before issue 26) and the structure checks' (reading both schema
files, building the checks the conversions use, the first check: what the bridge does as it
starts).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment

HERE = Path(__file__).resolve()
SID = "sess-1"

# --------------------------------------------------------------------------------------------
# The scripted agent


def _rare(version: int, tag: str) -> dict[str, Any]:
    """A valid rare update of ``version`` (``tag`` names it in v2; a v1 agent's plan is
    ``plan``)."""
    entry = {"content": "Run the tests", "priority": "high", "status": "in_progress"}
    option = {
        "type": "select",
        "name": "Model",
        "currentValue": "fast",
        "options": [{"value": "fast", "name": "Fast"}, {"value": "deep", "name": "Deep"}],
    }
    command = {"name": "review", "description": "Review the diff"}
    bodies: dict[str, dict[str, Any]] = {
        "usage_update": {"used": 5123, "size": 200000, "cost": {"amount": 0.4, "currency": "USD"}},
        "session_info_update": {"title": "Fix the tests", "updatedAt": "2026-12-06T10:00:00Z"},
        "plan_update": (
            {"plan": {"type": "items", "planId": "p1", "entries": [entry]}}
            if version == 2
            else {"entries": [entry]}
        ),
        "config_option_update": {
            "configOptions": [
                {**option, "configId": "model"} if version == 2 else {**option, "id": "model"}
            ]
        },
        "available_commands_update": {
            "availableCommands": [{**command, "type": "command"} if version == 2 else command]
        },
    }  # fmt: skip
    name = "plan" if (tag == "plan_update" and version == 1) else tag
    return {"sessionUpdate": name, **bodies[tag]}


def _update(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SID, "update": body},
    }


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def agent_main(version: int, first: str) -> None:
    """Answers ``initialize`` and ``session/new``; on the prompt, writes its first updates in
    one write (``first``: a rare update's tag, or ``-``: none), each stamped, and ends the turn."""
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            info: dict[str, Any] = (
                {"info": {"name": "bench", "version": "0"}, "capabilities": {"session": {}}}
                if version == 2
                else {"agentInfo": {"name": "bench", "version": "0"}}
            )
            answer = {"protocolVersion": version, **info}
            out.write(_line({"jsonrpc": "2.0", "id": request_id, "result": answer}))
        elif method == "session/new":
            out.write(_line({"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": SID}}))
        elif method == "session/prompt":
            if version == 2:
                out.write(_line({"jsonrpc": "2.0", "id": request_id, "result": {"messageId": "u"}}))
                out.flush()
            bodies = [] if first == "-" else [_rare(version, first)]
            chunk: dict[str, Any] = {"sessionUpdate": "agent_message_chunk"}
            if version == 2:
                chunk["messageId"] = "m1"
            stamp = time.monotonic_ns()
            bodies.append({**chunk, "content": {"type": "text", "text": str(stamp)}})
            for body in bodies:
                body["_meta"] = {"sent": stamp}
            out.write(b"".join(_line(_update(body)) for body in bodies))
            out.flush()
            if version == 2:
                idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
                out.write(_line(_update(idle)))
            else:
                end = {"stopReason": "end_turn"}
                out.write(_line({"jsonrpc": "2.0", "id": request_id, "result": end}))
        out.flush()


# --------------------------------------------------------------------------------------------
# The driver


def _request(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def one_turn(agent_version: int, first: str) -> tuple[float, float | None]:
    """A fresh bridge, one session, its first turn: ms from the agent's write to the editor's
    read of the message chunk, and of the rare update (``None``: there is none)."""
    editor = 1 if agent_version == 2 else 2
    agent = [sys.executable, str(HERE), "--agent", str(agent_version), "--first", first]
    command = [
        sys.executable, "-m", "acp_toolcalls.cli", "bridge",
        "--agent-version", str(agent_version), "--", *agent,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    if editor == 1:
        init: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": {}}
        new: dict[str, Any] = {"cwd": "/tmp", "mcpServers": []}
    else:
        init = {"protocolVersion": 2, "info": {"name": "driver", "version": "0"}}
        new = {"cwd": "/tmp"}
    for request_id, method, params in ((0, "initialize", init), (1, "session/new", new)):
        process.stdin.write(_request(request_id, method, params))
        process.stdin.flush()
        json.loads(process.stdout.readline())
    prompt = {"sessionId": SID, "prompt": [{"type": "text", "text": "go"}]}
    process.stdin.write(_request(2, "session/prompt", prompt))
    process.stdin.flush()
    chunk: float | None = None
    rare: float | None = None
    while chunk is None:
        line = process.stdout.readline()
        now = time.monotonic_ns()
        if not line:
            raise RuntimeError(f"the bridge's output ended ({first})")
        message = json.loads(line)
        if message.get("method") != "session/update":
            continue
        body = message["params"]["update"]
        sent = (body.get("_meta") or {}).get("sent")
        if sent is None:
            continue  # the editor's own prompt echoed (v2), the turn's state
        elapsed = (now - sent) / 1e6
        if body["sessionUpdate"] == "agent_message_chunk":
            chunk = elapsed
        else:
            rare = elapsed
    process.stdin.close()
    process.wait(timeout=30)
    if first != "-" and rare is None:
        raise RuntimeError(f"{first} did not reach the editor")
    return chunk, rare


_JSONSCHEMA_WAY = """
import json, time, acp_toolcalls.proxy._stdio
t0 = time.perf_counter()
from acp_toolcalls.schema import validate_payload
t1 = time.perf_counter()
validate_payload({"sessionUpdate": "usage_update", "used": 1, "size": 2}, "UsageUpdate", "v1")
t2 = time.perf_counter()
print(json.dumps([(t1 - t0) * 1e3, (t2 - t1) * 1e3]))
"""
_STRUCTURE_WAY = """
import json, time, acp_toolcalls.proxy._stdio
from acp_toolcalls.convert import prepare_update_checks
from acp_toolcalls.schema import _checks
t0 = time.perf_counter()
_checks.document("v1"), _checks.document("v2")
t1 = time.perf_counter()
prepare_update_checks()
t2 = time.perf_counter()
usage = {"sessionUpdate": "usage_update", "used": 1, "size": 2}
_checks.first_violation(usage, "UsageUpdate", "v1")
t3 = time.perf_counter()
print(json.dumps([(t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3]))
"""


def costs_main(runs: int) -> None:
    def measure(code: str) -> list[str]:
        rows = []
        for _ in range(runs):
            done = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            )
            rows.append(json.loads(done.stdout))
        return [f"{statistics.median(c):7.2f} ({max(c):6.2f})" for c in zip(*rows, strict=True)]

    print(f"costs        ms, median (max) of {runs} fresh interpreters")
    found = measure(_JSONSCHEMA_WAY)
    print(f"jsonschema   import schema.validate_payload {found[0]}; first call {found[1]}")
    found = measure(_STRUCTURE_WAY)
    print(
        f"structure    read both schema files {found[0]}; build the checks {found[1]}; "
        f"first check {found[2]}"
    )


RARE = (
    "session_info_update",
    "usage_update",
    "config_option_update",
    "available_commands_update",
    "plan_update",
)
DIRECTIONS = {"v2-v1": (2, "v2 agent -> v1 editor"), "v1-v2": (1, "v1 agent -> v2 editor")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh bridges per setup")
    parser.add_argument("--direction", choices=(*DIRECTIONS, "both"), default="v2-v1")
    parser.add_argument("--agent", type=int, choices=(1, 2), help=argparse.SUPPRESS)
    parser.add_argument("--first", default="-", help=argparse.SUPPRESS)
    parser.add_argument("--costs", action="store_true", help="what a first check costs, instead")
    args = parser.parse_args()
    if args.agent is not None:
        agent_main(args.agent, args.first)
        return

    print_environment()
    if args.costs:
        costs_main(args.runs)
        return
    directions = list(DIRECTIONS) if args.direction == "both" else [args.direction]
    setups = ("-", *RARE)
    print(
        f"first turn   {args.runs} fresh bridges per setup, interleaved; PYTHONPATH="
        f"{os.environ.get('PYTHONPATH', '(unset)')}"
    )
    for direction in directions:
        agent_version, title = DIRECTIONS[direction]
        chunks: dict[str, list[float]] = {setup: [] for setup in setups}
        rares: dict[str, list[float]] = {setup: [] for setup in setups}
        for run in range(args.runs):
            for setup in setups:
                chunk, rare = one_turn(agent_version, setup)
                chunks[setup].append(chunk)
                if rare is not None:
                    rares[setup].append(rare)
            print(f"  {title}: run {run + 1}/{args.runs} done", file=sys.stderr)
        base = statistics.median(chunks["-"])
        print()
        print(f"{title}: ms from the agent's write to the editor's read, median (max) of the runs")
        print(
            f"{'the turn opens with':30} {'message':>16} {'rare update':>16} "
            f"{'message - baseline':>19} {'ratio':>6}"
        )
        for setup in setups:
            name = "message only (baseline)" if setup == "-" else f"{setup} first"
            median = statistics.median(chunks[setup])
            message = f"{median:7.2f} ({max(chunks[setup]):6.2f})"
            rare_text = (
                f"{statistics.median(rares[setup]):7.2f} ({max(rares[setup]):6.2f})"
                if rares[setup]
                else ""
            )
            print(
                f"{name:30} {message:>16} {rare_text:>16} {median - base:+18.2f} "
                f"{median / base:5.2f}x"
            )
        print("target: a turn opened by a rare update reaches the editor within +5 ms")
    if hasattr(os, "getloadavg"):
        print(f"load         {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")


if __name__ == "__main__":
    main()
