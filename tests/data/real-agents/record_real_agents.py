"""Record what the real agents of tests/test_real_agents.py send, as JSON Lines samples.

    .venv/bin/python tests/data/real-agents/record_real_agents.py [DIR]

Needs ``npm ci --prefix tests/interop/node`` and ``npm ci --prefix tests/interop/agents``. Each
session runs in a fresh ``/tmp/acp-real-agents`` (so the paths in the files do not depend on
where they were made) against the fake model servers of ``tests/interop/fake_models.py``, and
is written to DIR (default: beside this script) in the ``--log`` format of
``acp-toolcalls bridge``: ``{"time", "direction", "protocol", "message"}`` per line.

- ``*-bridge.jsonl``: the bridge's own ``--log`` (both of its conversations);
- ``*-direct.jsonl``: the TypeScript SDK's v1 client talking to the agent with no bridge; its
  lines are written as the agent side of a log (``proxy->agent`` is what the client sent,
  ``agent->proxy`` what the agent sent), so ``replay --side agent`` and ``validate`` read them.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # the repository, for tests.interop

from acp_toolcalls.models import VersionName  # noqa: E402
from tests.interop.fake_models import FakeMessagesServer, FakeResponsesServer, Turn  # noqa: E402
from tests.interop.real_agents import (  # noqa: E402
    AgentSetup,
    bridge_command,
    claude_agent,
    codex_agent,
    leftover_processes,
)
from tests.interop.ts_client import run_ts_client  # noqa: E402

BASE = Path("/tmp/acp-real-agents")
FILES = {"notes.txt": "one\ntwo\nthree\n"}
COMMAND = "touch made.txt && echo hello"
PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n"
PROMPT = "Please do the scripted thing."

# name: (agent, tool, editor version, through the bridge, terminal_output offered)
SESSIONS = {
    "claude-bash-v2-bridge": ("claude", "Bash", 1, True, False),
    "claude-edit-v2-bridge": ("claude", "Edit", 1, True, False),
    "codex-patch-v2-bridge": ("codex", "apply_patch", 1, True, False),
    "codex-exec-v2-bridge": ("codex", "exec_command", 1, True, False),
    "claude-bash-v1-bridge": ("claude", "Bash", 2, True, False),
    "codex-exec-v1-bridge": ("codex", "exec_command", 2, True, False),
    "claude-bash-v1-terminal-output-direct": ("claude", "Bash", 1, False, True),
    "codex-exec-v1-terminal-output-direct": ("codex", "exec_command", 1, False, True),
    "codex-exec-v1-direct": ("codex", "exec_command", 1, False, False),
}


def _input(tool: str, cwd: Path) -> dict[str, str] | str:
    if tool == "Bash":
        return {"command": COMMAND, "description": "Make a file"}
    if tool == "Edit":
        return {"file_path": str(cwd / "notes.txt"), "old_string": "two", "new_string": "TWO"}
    if tool == "exec_command":
        return {
            "cmd": COMMAND,
            "sandbox_permissions": "require_escalated",
            "justification": "Make a file",
        }
    return PATCH


def record(name: str, out: Path) -> None:
    agent, tool, editor, bridged, terminal_output = SESSIONS[name]
    shutil.rmtree(BASE, ignore_errors=True)
    BASE.mkdir(parents=True)
    server = FakeResponsesServer() if agent == "codex" else FakeMessagesServer()
    with server:
        protocol: VersionName = "v2" if editor == 1 and bridged else "v1"
        setup: AgentSetup
        if isinstance(server, FakeResponsesServer):
            setup = codex_agent(BASE, server, FILES, protocol)
        else:
            setup = claude_agent(BASE, server, FILES, protocol)
        server.turn = Turn(tool, _input(tool, setup.cwd))
        log = BASE / "bridge.jsonl"
        command = setup.command
        if bridged:
            command = bridge_command(setup, agent_version=2 if editor == 1 else 1, log=log)
        run = run_ts_client(
            editor, command, setup.cwd, PROMPT, "approve", 90.0,
            terminal_output=terminal_output, env=setup.env, run_in=setup.cwd,
        )  # fmt: skip
        time.sleep(0.5)
        if leftover_processes(setup.marker):
            raise SystemExit(f"{name}: processes left: {leftover_processes(setup.marker)}")
    if bridged:
        text = log.read_text(encoding="utf-8")
    else:
        lines = []
        for entry in run.wire:
            direction = "proxy->agent" if entry["direction"] == "outgoing" else "agent->proxy"
            record = {"time": 0, "direction": direction, "protocol": 1, "message": entry["message"]}
            lines.append(json.dumps(record, separators=(",", ":")) + "\n")
        text = "".join(lines)
    (out / f"{name}.jsonl").write_text(text, encoding="utf-8")
    print(f"{name}.jsonl: {len(text.splitlines())} lines, stop reason {run.stop_reason}")


def main() -> None:
    out = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE
    out.mkdir(parents=True, exist_ok=True)
    for name in SESSIONS:
        record(name, out)
    shutil.rmtree(BASE, ignore_errors=True)


if __name__ == "__main__":
    main()
