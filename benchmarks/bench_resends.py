"""What a long command's output costs a v2 editor through ``acp-toolcalls bridge`` from a v1
agent (issue 26, item 7): bytes to the editor over bytes of output.

    python benchmarks/bench_resends.py [--lines 35000] [--every 100] [--line-bytes 80]
        [--modes delta,cumulative,items,text] [--before TREE]

A scripted v1 agent (this file with ``--agent MODE``) answers ``initialize`` and
``session/new`` and, on ``session/prompt``, runs one command: ``--lines`` lines of
``--line-bytes`` bytes of test-runner output, reported every ``--every`` lines, then the exit
and ``completed``, then the prompt's answer. How it reports the output (``MODE``):

- ``delta``: ``_meta.terminal_output_delta``, the lines added (codex-acp, claude-agent-acp when
  the client declares the delta key, as the bridge does);
- ``cumulative``: ``_meta.terminal_output``, the whole output so far each time;
- ``items``: ``content`` resent whole each time, one text item more per report (a v1 agent that
  streams content the only way v1 can);
- ``text``: ``content`` resent whole each time, one text item whose text grows.

The driver is the v2 editor: it runs ``acp-toolcalls bridge --agent-version 1 --
python bench_resends.py --agent MODE ...``, sends ``initialize``, ``session/new`` and the
prompt, and counts the bytes of every line it reads until the turn is idle. It folds them into a
v2 ``ToolCallStore`` and checks that the terminal holds the output (or the call the content)
exactly. In the same process, for each mode: the output's bytes, the bytes the agent wrote,
and the bytes a v2 agent would send natively for the same reports (each report's new bytes as
one ``terminal_output_chunk``, or one ``tool_call_content_chunk``, encoded here): the floor.
``--before TREE`` runs the bridge of another checkout's ``src`` too (``PYTHONPATH``), for the
"before" column. Target (issue 26): editor bytes / output bytes <= 1.2.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `benchmarks.*`
from benchmarks.environment import print_environment

HERE = Path(__file__).resolve()
SID = "sess-bench"
CALL = "run"
MODES = ("delta", "cumulative", "items", "text")
_WORDS = ("tests/store/test_store.py::test_case", "PASSED", "FAILED", "collected", "[ 42%]", "ok")


def output_lines(count: int, size: int) -> list[str]:
    """``count`` lines of test-runner output, each ``size`` bytes with its newline."""
    out = []
    for n in range(count):
        text = f"{n:06d} " + " ".join(_WORDS[(n + i) % len(_WORDS)] for i in range(12))
        out.append(text[: size - 1].ljust(size - 1) + "\n")
    return out


def _update(body: dict[str, Any]) -> bytes:
    params = {"sessionId": SID, "update": body}
    message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _text(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def reports(mode: str, lines: list[str], every: int) -> list[bytes]:
    """The agent's lines for one command in ``mode`` (generated one at a time by the agent)."""
    return list(_reports(mode, lines, every))


def _reports(mode: str, lines: list[str], every: int) -> Any:
    terminal = mode in ("delta", "cumulative")
    first: dict[str, Any] = {
        "sessionUpdate": "tool_call",
        "toolCallId": CALL,
        "title": "pytest",
        "kind": "execute",
        "status": "in_progress",
    }
    if terminal:
        first["content"] = [{"type": "terminal", "terminalId": CALL}]
        first["_meta"] = {"terminal_info": {"terminal_id": CALL, "cwd": "/work/repo"}}
    yield _update(first)
    parts = ["".join(lines[i : i + every]) for i in range(0, len(lines), every)]
    whole = ""
    for index, part in enumerate(parts):
        whole += part
        body: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": CALL}
        if mode == "delta":
            body["_meta"] = {"terminal_output_delta": {"terminal_id": CALL, "data": part}}
        elif mode == "cumulative":
            body["_meta"] = {"terminal_output": {"terminal_id": CALL, "data": whole}}
        elif mode == "items":
            body["content"] = [_text(p) for p in parts[: index + 1]]
        else:
            body["content"] = [_text(whole)]
        yield _update(body)
    last: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": CALL}
    last["status"] = "completed"
    if terminal:
        last["_meta"] = {"terminal_exit": {"terminal_id": CALL, "exit_code": 0, "signal": None}}
    yield _update(last)


def native_v2(mode: str, lines: list[str], every: int) -> int:
    """The bytes a v2 agent would send for the same reports: the floor."""
    parts = ["".join(lines[i : i + every]) for i in range(0, len(lines), every)]
    total = 0
    terminal = mode in ("delta", "cumulative")
    first: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": CALL,
        "title": "pytest",
        "kind": "execute",
        "status": "in_progress",
    }
    if terminal:
        first["content"] = [{"type": "terminal", "terminalId": CALL}]
        total += len(_update({"sessionUpdate": "terminal_update", "terminalId": CALL, "cwd": "/w"}))
    total += len(_update(first))
    for part in parts:
        body: dict[str, Any]
        if terminal:
            data = base64.b64encode(part.encode()).decode()
            body = {"sessionUpdate": "terminal_output_chunk", "terminalId": CALL, "data": data}
        else:
            body = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": CALL}
            body["content"] = _text(part)
        total += len(_update(body))
    if terminal:
        exit_ = {
            "sessionUpdate": "terminal_update",
            "terminalId": CALL,
            "exitStatus": {"exitCode": 0},
        }
        total += len(_update(exit_))
    total += len(
        _update({"sessionUpdate": "tool_call_update", "toolCallId": CALL, "status": "completed"})
    )
    return total


# --------------------------------------------------------------------------------------------
# The agent


def agent_main(mode: str, count: int, every: int, size: int) -> None:
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": 1,
                "agentInfo": {"name": "bench", "version": "0"},
            }
        elif method == "session/new":
            result = {"sessionId": SID}
        elif method == "session/prompt":
            for data in _reports(mode, output_lines(count, size), every):
                out.write(data)
            result = {"stopReason": "end_turn"}
        else:
            continue
        answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()


# --------------------------------------------------------------------------------------------
# The driver: a v2 editor


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def run_bridge(mode: str, args: argparse.Namespace, src: str | None) -> tuple[int, float, Any]:
    """(bytes the editor read during the turn, seconds, its v2 store) for one run."""
    from acp_toolcalls import ToolCallStore

    agent = [
        sys.executable, str(HERE), "--agent", mode, "--lines", str(args.lines),
        "--every", str(args.every), "--line-bytes", str(args.line_bytes),
    ]  # fmt: skip
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    command = [sys.executable, "-m", "acp_toolcalls.cli", "bridge", "--agent-version", "1"]
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [*command, "--", *agent],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
        )
        assert process.stdout is not None
        info = {"name": "bench-editor", "version": "0"}
        params = {"protocolVersion": 2, "info": info, "capabilities": {}}
        _send(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        _read_until(process, lambda m: m.get("id") == 0)
        _send(
            process, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp"}}
        )
        _read_until(process, lambda m: m.get("id") == 1)
        store = ToolCallStore(version="v2")
        started = time.perf_counter()
        prompt = {"sessionId": SID, "prompt": [{"type": "text", "text": "run the tests"}]}
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
        received = 0
        while True:
            line = process.stdout.readline()
            if not line:
                err.seek(0)
                raise SystemExit(f"the bridge closed its stdout: {err.read().decode()[-2000:]}")
            received += len(line)
            message = json.loads(line)
            store.apply(message)
            body = (message.get("params") or {}).get("update") or {}
            if body.get("sessionUpdate") == "state_update" and body.get("state") == "idle":
                break
        seconds = time.perf_counter() - started
        process.stdin.close()  # type: ignore[union-attr]
        process.wait(60)
    return received, seconds, store


def _read_until(process: subprocess.Popen[bytes], found: Any) -> dict[str, Any]:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise SystemExit("the bridge closed its stdout")
        message: dict[str, Any] = json.loads(line)
        if found(message):
            return message


def check(mode: str, store: Any, lines: list[str], every: int) -> str:
    """Whether the editor holds what the agent meant: the terminal's bytes or the content."""
    session = store.sessions.get(SID)
    if session is None:
        return "no session"
    if mode in ("delta", "cumulative"):
        terminal = session.terminals.get(CALL)
        held = bytes(terminal.output or b"") if terminal is not None else b""
        return "exact" if held == "".join(lines).encode() else "differs (no terminal before)"
    parts = ["".join(lines[i : i + every]) for i in range(0, len(lines), every)]
    wanted = parts if mode == "items" else ["".join(lines)]
    call = store.snapshot(SID, CALL)
    texts = [item.content.text for item in call.content]
    return "exact" if texts == wanted else "differs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=35_000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--line-bytes", type=int, default=80)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--before", help="another checkout: its src/ runs the 'before' bridge")
    parser.add_argument("--agent", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.agent:
        agent_main(args.agent, args.lines, args.every, args.line_bytes)
        return
    print_environment()
    lines = output_lines(args.lines, args.line_bytes)
    output = sum(len(line) for line in lines)
    print(
        f"\n{args.lines:,} lines of {args.line_bytes} bytes ({output:,} bytes), reported every "
        f"{args.every} lines ({-(-args.lines // args.every)} reports)\n"
    )
    head = "| mode | agent wrote / output | v2 native / output | editor / output"
    if args.before:
        head += " | before: editor / output"
    print(head + " | editor / v2 native | editor holds | seconds |")
    print("|---" * (head.count("|") + 3) + "|")
    for mode in args.modes.split(","):
        wrote = sum(len(data) for data in reports(mode, lines, args.every))
        native = native_v2(mode, lines, args.every)
        received, seconds, store = run_bridge(mode, args, None)
        row = f"| {mode} | {wrote / output:.2f} | {native / output:.3f} | {received / output:.3f}"
        if args.before:
            before, _, _ = run_bridge(mode, args, str(Path(args.before) / "src"))
            row += f" | {before / output:.2f}"
        holds = check(mode, store, lines, args.every)
        print(f"{row} | {received / native:.3f} | {holds} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
