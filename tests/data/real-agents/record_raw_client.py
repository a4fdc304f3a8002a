"""Record the real agents through a plain JSON-RPC client: history replays, declined calls.

    .venv/bin/python tests/data/real-agents/record_raw_client.py [DIR [NAME ...]]

Each session: ``initialize``, ``session/new``, one prompt (the fake model's one scripted tool
call; the permission approved or declined, as the session's name says) and the turn's end;
then, for ``*-load-*`` and ``*-resume-*``, the history asked again on the same connection:
``session/load`` in v1, ``session/resume`` with ``replayFrom: {"type": "start"}`` in v2. A plain
JSON-RPC client
(here, no SDK, no bridge) talks to the agent; the lines are written as the agent side of a
``bridge --log`` (``proxy->agent`` what the client sent, ``agent->proxy`` what the agent sent),
so ``validate --side agent`` and ``replay --side agent`` read them. Needs ``npm ci --prefix
tests/interop/agents``; runs in a fresh ``/tmp/acp-real-agents`` like record_real_agents.py.
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # the repository, for tests.interop

from acp_toolcalls.models import VersionName  # noqa: E402
from tests.interop.fake_models import FakeMessagesServer, FakeResponsesServer, Turn  # noqa: E402
from tests.interop.real_agents import AgentSetup, claude_agent, codex_agent  # noqa: E402

BASE = Path("/tmp/acp-real-agents")
FILES = {"notes.txt": "one\ntwo\nthree\n"}
COMMAND = "touch made.txt && echo hello"
PROMPT = "Please do the scripted thing."
TIMEOUT = 90.0

PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n"

# name: (agent, protocol, tool, the permission's answer: "allow" or "reject", history replayed)
SESSIONS = {
    "claude-bash-v1-load-direct": ("claude", 1, "Bash", "allow", True),
    "codex-exec-v1-load-direct": ("codex", 1, "exec_command", "allow", True),
    "claude-bash-v2-resume-direct": ("claude", 2, "Bash", "allow", True),
    "codex-exec-v2-resume-direct": ("codex", 2, "exec_command", "allow", True),
    "claude-bash-v2-reject-direct": ("claude", 2, "Bash", "reject", False),
    "codex-patch-v2-reject-direct": ("codex", 2, "apply_patch", "reject", False),
    "codex-patch-v1-reject-direct": ("codex", 1, "apply_patch", "reject", False),
}

TOOL_INPUT: dict[str, dict[str, str] | str] = {
    "Bash": {"command": COMMAND, "description": "Make a file"},
    "exec_command": {
        "cmd": COMMAND,
        "sandbox_permissions": "require_escalated",
        "justification": "Make it",
    },
    "apply_patch": PATCH,
}


class Wire:
    """The agent over stdio: every line both ways kept, in order."""

    def __init__(self, setup: AgentSetup, answer: str) -> None:
        self.answer = answer  # the kind of option chosen: "allow" or "reject"
        self.process = subprocess.Popen(
            setup.command,
            cwd=setup.cwd,
            env=setup.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: list[tuple[str, Any]] = []
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.strip():
                message = json.loads(line)
                self.lines.append(("agent->proxy", message))
                self.inbox.put(message)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.lines.append(("proxy->agent", message))
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request; return its result (answering permission requests meanwhile)."""
        sent = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": sent, "method": method, "params": params})
        answer = self.until(lambda m: "method" not in m and m.get("id") == sent)
        if "error" in answer:
            raise SystemExit(f"{method}: {answer['error']}")
        return answer["result"]

    def until(self, found: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The next message ``found`` accepts; the agent's permission requests are answered
        meanwhile with their first option of the kind ``answer`` names."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self.inbox.get(timeout=max(0.1, deadline - time.monotonic()))
            if message.get("method") == "session/request_permission":
                options = message["params"]["options"]
                chosen = next(o for o in options if o["kind"].startswith(self.answer))
                outcome = {"outcome": "selected", "optionId": chosen["optionId"]}
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})
            elif found(message):
                return message

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _idle(message: dict[str, Any]) -> bool:
    update = message.get("params", {}).get("update", {}) if "method" in message else {}
    return update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"


def _initialize(protocol: int) -> dict[str, Any]:
    if protocol == 1:
        fs = {"readTextFile": False, "writeTextFile": False}
        return {"protocolVersion": 1, "clientCapabilities": {"fs": fs, "terminal": False}}
    info = {"name": "acp-toolcalls-replay-recorder", "version": "0.1.0"}
    return {"protocolVersion": 2, "info": info, "capabilities": {}}


def record(name: str, out: Path) -> None:
    agent, protocol, tool, answer, replayed = SESSIONS[name]
    shutil.rmtree(BASE, ignore_errors=True)
    BASE.mkdir(parents=True)
    server = FakeResponsesServer() if agent == "codex" else FakeMessagesServer()
    pinned: VersionName = "v1" if protocol == 1 else "v2"
    with server:
        setup = (
            codex_agent(BASE, server, FILES, pinned)
            if isinstance(server, FakeResponsesServer)
            else claude_agent(BASE, server, FILES, pinned)
        )
        server.turn = Turn(tool, TOOL_INPUT[tool])
        wire = Wire(setup, answer)
        try:
            wire.request("initialize", _initialize(protocol))
            cwd = str(setup.cwd)
            session = wire.request("session/new", {"cwd": cwd, "mcpServers": []})["sessionId"]
            prompt = [{"type": "text", "text": PROMPT}]
            wire.request("session/prompt", {"sessionId": session, "prompt": prompt})
            if protocol == 2:  # v2 answers the prompt at once; the turn ends in `idle`
                wire.until(_idle)
            if replayed and protocol == 1:
                wire.request("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []})
            elif replayed:
                replay = {"type": "start"}
                params = {"sessionId": session, "cwd": cwd, "replayFrom": replay}
                wire.request("session/resume", params)
            time.sleep(1.0)  # what the agent sends after its answer
        finally:
            wire.close()
    text = "".join(
        json.dumps({"time": 0, "direction": d, "protocol": protocol, "message": m}) + "\n"
        for d, m in wire.lines
    )
    (out / f"{name}.jsonl").write_text(text, encoding="utf-8")
    print(f"{name}.jsonl: {len(wire.lines)} lines")


def main() -> None:
    out = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE
    out.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[2:] or SESSIONS:
        record(name, out)
    shutil.rmtree(BASE, ignore_errors=True)


if __name__ == "__main__":
    main()
